/* usdt_phases.c - a traced program whose phases the test decides, so
 * that what a check sees does not depend on timing: it passes ph:hit
 * (a sonde/sdt.h site behind a semaphore) with its phase as arg0, every
 * millisecond. Phase 0 lasts until SIGUSR1, phase 1 until SIGTERM.
 * It prints "sem=ADDR" first (after main began, so after the process
 * engine's agent patched its site) and "phase 1 hits N" at the end. */
#include <sonde/sdt.h>

#include <signal.h>
#include <stdio.h>
#include <unistd.h>

static volatile sig_atomic_t phase, stop;

static void on_usr1(int sig)
{
	phase = 1;
}

static void on_term(int sig)
{
	stop = 1;
}

int main(void)
{
	signal(SIGUSR1, on_usr1);
	signal(SIGTERM, on_term);
	extern volatile unsigned short sonde_sem__ph__hit
		__attribute__((visibility("hidden")));
	(void)SONDE_PROBE_ENABLED(ph, hit);
	printf("sem=%p\n", (void *)&sonde_sem__ph__hit);
	fflush(stdout);
	long late = 0;
	while (!stop) {
		long p = phase;
		if (SONDE_PROBE_ENABLED(ph, hit))
			SONDE_PROBE(ph, hit, p);
		late += p;
		usleep(1000);
	}
	printf("phase 1 hits %ld\n", late);
	return 0;
}
