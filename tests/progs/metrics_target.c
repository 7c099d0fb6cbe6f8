/* metrics_target.c - a program whose own counts the metrics tests check
 * sonde's (and Prometheus's) figures against.
 *   metrics_target SECONDS RATE
 * Prints "ready", waits for SIGUSR1, then for SECONDS calls tick() RATE
 * times a second on absolute deadlines (a late wake-up catches up), and
 * observe(v) once per tick with v = 1 + i % 300 (i counting the ticks);
 * every 100 ms it prints "at WALLCLOCK TICKS". At the end it prints
 * "ticks N", "sum S" and the count of its values in each bucket of
 * hist()'s log2 scale, "bucket INDEX COUNT", then "done", and sleeps
 * until it is killed (so sonde -p keeps serving the maps). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t go;

static void on_usr1(int sig)
{
	(void)sig;
	go = 1;
}

__attribute__((noinline)) void tick(long i)
{
	__asm__ volatile("" ::"r"(i) : "memory");
}

__attribute__((noinline)) void observe(long v)
{
	__asm__ volatile("" ::"r"(v) : "memory");
}

/* hist()'s bucket of v (program.h): 0 below 0, 1 for 0, 2 for 1, k+2
 * for [2^k, 2^(k+1)). */
static int bucket(long v)
{
	if (v < 0)
		return 0;
	if (v == 0)
		return 1;
	int k = 0;
	while (v >> (k + 1))
		k++;
	return k + 2;
}

static double wall(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	int seconds = argc > 1 ? atoi(argv[1]) : 5;
	int rate = argc > 2 ? atoi(argv[2]) : 200;
	long counts[64] = { 0 };
	long n = 0, sum = 0;
	signal(SIGUSR1, on_usr1);
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("ready\n");
	while (!go)
		pause();
	struct timespec next;
	clock_gettime(CLOCK_MONOTONIC, &next);
	long period = 1000000000L / rate, total = (long)seconds * rate;
	for (long i = 0; i < total; i++) {
		long v = 1 + i % 300;
		tick(i);
		observe(v);
		n++;
		sum += v;
		counts[bucket(v)]++;
		if (i % (rate / 10 ? rate / 10 : 1) == 0)
			printf("at %.3f %ld\n", wall(), n);
		next.tv_nsec += period;
		while (next.tv_nsec >= 1000000000L) {
			next.tv_nsec -= 1000000000L;
			next.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
	}
	printf("at %.3f %ld\n", wall(), n);
	printf("ticks %ld\nsum %ld\n", n, sum);
	for (int b = 0; b < 64; b++)
		if (counts[b])
			printf("bucket %d %ld\n", b, counts[b]);
	printf("done\n");
	for (;;)
		pause();
}
