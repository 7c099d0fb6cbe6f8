/* uprobe_bench.c - the traced program of bench/uprobes: runs one kind of
 * probe site N times in a tight loop and reports the time per iteration
 * (CLOCK_MONOTONIC around the loop only, so tracer start-up is not in
 * it). Each iteration passes i as the first argument, so hist(arg0) and
 * sum(arg0) see varying values.
 *
 *   uprobe_bench fn N      call a noinline function (uprobe, uretprobe)
 *   uprobe_bench sys N     pass a <sys/sdt.h> site (a 1-byte nop)
 *   uprobe_bench sonde N   pass a <sonde/sdt.h> site (a 5-byte nop)
 *
 * Prints "ns_per_iter X" to the file named by $BENCH_OUT (default
 * stderr), so the tracer's own output on stdout stays apart, and
 * "cpu_ns_per_iter X": the loop thread's CPU time (user and system: a
 * kernel uprobe's trap is the thread's system time) per iteration, which
 * time spent preempted by other work on a shared machine does not
 * inflate. */
#include <sonde/sdt.h>
#include <sys/sdt.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

__attribute__((noinline)) long bench_fn(long x)
{
	__asm__ volatile("" ::: "memory");
	return x + 1;
}

__attribute__((noinline)) static long loop_fn(long n)
{
	long s = 0;
	for (long i = 0; i < n; i++)
		s += bench_fn(i);
	return s;
}

__attribute__((noinline)) static long loop_sys(long n)
{
	long s = 0;
	for (long i = 0; i < n; i++) {
		DTRACE_PROBE1(bench, sys_site, i);
		s += i;
		__asm__ volatile("" ::: "memory");
	}
	return s;
}

__attribute__((noinline)) static long loop_sonde(long n)
{
	long s = 0;
	for (long i = 0; i < n; i++) {
		SONDE_PROBE(bench, sonde_site, i);
		s += i;
		__asm__ volatile("" ::: "memory");
	}
	return s;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: uprobe_bench fn|sys|sonde N\n");
		return 2;
	}
	long n = atol(argv[2]);
	long (*loop)(long) = strcmp(argv[1], "fn") == 0 ? loop_fn :
		strcmp(argv[1], "sys") == 0 ? loop_sys :
		strcmp(argv[1], "sonde") == 0 ? loop_sonde : NULL;
	if (!loop || n <= 0) {
		fprintf(stderr, "usage: uprobe_bench fn|sys|sonde N\n");
		return 2;
	}
	long long c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	long long t0 = now_ns();
	volatile long s = loop(n);
	long long t1 = now_ns();
	long long c1 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	(void)s;
	const char *path = getenv("BENCH_OUT");
	FILE *out = path ? fopen(path, "w") : stderr;
	if (!out)
		return 1;
	fprintf(out, "ns_per_iter %.1f\n", (double)(t1 - t0) / (double)n);
	fprintf(out, "cpu_ns_per_iter %.1f\n", (double)(c1 - c0) / (double)n);
	if (out != stderr)
		fclose(out);
	return 0;
}
