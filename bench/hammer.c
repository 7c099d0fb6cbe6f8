/* hammer.c - the traced program of bench/events: calls getppid() as fast
 * as it can, either N times or for S seconds, and reports what that
 * cost. Timed with CLOCK_MONOTONIC so the bench can line its numbers up
 * with the tracer's.
 *
 *   hammer calls N       N calls; prints "ns_per_call N total_ns"
 *   hammer seconds S     calls for S seconds; prints "start_ns end_ns calls"
 *
 * The report goes to the file named by $HAMMER_OUT (default stderr), so
 * a tracer's own output on stdout stays apart. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: hammer calls N | hammer seconds S\n");
		return 2;
	}
	const char *path = getenv("HAMMER_OUT");
	FILE *out = path ? fopen(path, "w") : stderr;
	if (!out)
		return 2;
	double arg = atof(argv[2]);
	long long start = now_ns(), end, n = 0;
	if (strcmp(argv[1], "calls") == 0) {
		for (n = 0; n < (long long)arg; n++)
			getppid();
		end = now_ns();
		fprintf(out, "%.1f %lld %lld\n", (double)(end - start) / (n ? n : 1),
			n, end - start);
	} else {
		long long stop = start + (long long)(arg * 1e9);
		do {
			for (int i = 0; i < 256; i++)
				getppid();
			n += 256;
			end = now_ns();
		} while (end < stop);
		fprintf(out, "%lld %lld %lld\n", start, end, n);
	}
	return out == stderr || fclose(out) == 0 ? 0 : 2;
}
