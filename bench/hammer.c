/* hammer.c - the traced program of bench/events: calls getppid() as fast
 * as it can, either N times or for S seconds, and reports what that
 * cost. Timed with CLOCK_MONOTONIC so the bench can line its numbers up
 * with the tracer's.
 *
 *   hammer calls N       N calls; prints "ns_per_call N total_ns
 *                        cpu_ns_per_call"
 *   hammer seconds S     calls for S seconds; prints "start_ns end_ns calls"
 *
 * cpu_ns_per_call is the thread's CPU time (user and system: a probe's
 * program runs as the thread's system time) per call, which time spent
 * waiting for a CPU another process holds does not inflate.
 *
 * The report goes to the file named by $HAMMER_OUT (default stderr), so
 * a tracer's own output on stdout stays apart. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static long long clock_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static long long now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
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
		long long cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID);
		for (n = 0; n < (long long)arg; n++)
			getppid();
		cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu;
		end = now_ns();
		fprintf(out, "%.1f %lld %lld %.1f\n",
			(double)(end - start) / (n ? n : 1), n, end - start,
			(double)cpu / (n ? n : 1));
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
