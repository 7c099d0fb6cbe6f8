/* usdt_signals.c - a traced program that does to signals what makes a
 * breakpoint or a fault-catching read dangerous: it installs its own
 * SIGSEGV handler after start (as Python's faulthandler does), and runs
 * the probes in a thread that blocks every signal (as worker threads of
 * many servers do). The thread passes a sys/sdt.h site (sig:stock, a
 * breakpoint for the process engine) and a sonde/sdt.h site whose
 * argument is a bad pointer (sig:bad), 3 times each. Then the program
 * faults for real, and its own handler must see that: it prints "own
 * handler" and exits 3. */
#include <sonde/sdt.h>
#include <sys/sdt.h>

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void on_segv(int sig)
{
	static const char msg[] = "own handler\n";
	if (write(1, msg, sizeof(msg) - 1) < 0)
		_exit(4);
	_exit(3);
}

static void *worker(void *arg)
{
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	for (long i = 0; i < 3; i++) {
		DTRACE_PROBE1(sig, stock, i);
		SONDE_PROBE(sig, bad, (const char *)16);
	}
	return NULL;
}

int main(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_segv;
	sigaction(SIGSEGV, &sa, NULL);
	pthread_t t;
	pthread_create(&t, NULL, worker, NULL);
	pthread_join(t, NULL);
	printf("threads done\n");
	fflush(stdout);
	*(volatile int *)8 = 1;
	return 0;
}
