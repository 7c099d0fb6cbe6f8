/* cpu_hot.c - a CPU-bound program with one known hot function, for
 * profiling tests: main -> work -> hot_spin takes nine tenths of the
 * time, work -> warm_spin the rest.
 *   cpu_hot [SECONDS]   (default 2; fractions allowed)
 * SECONDS are of its own CPU time, not the clock's: on a loaded machine
 * it runs longer and a profile of it gets as many samples. */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

__attribute__((noinline)) static void hot_spin(unsigned long n)
{
	unsigned long x = 0;
	for (unsigned long i = 0; i < n; i++)
		x += i * i ^ (x >> 3);
	sink = x;
}

__attribute__((noinline)) static void warm_spin(unsigned long n)
{
	unsigned long x = 1;
	for (unsigned long i = 0; i < n; i++)
		x = x * 31 + i;
	sink = x;
}

__attribute__((noinline)) static void work(void)
{
	hot_spin(900000);
	warm_spin(100000);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 2.0;
	double end = now() + secs;
	while (now() < end)
		work();
	return 0;
}
