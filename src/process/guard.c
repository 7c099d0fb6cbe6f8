/* guard.c - sonde survives its shared region being cut short under it.
 *
 * The region is a memfd that the traced process holds too. sonde seals
 * its size before handing it over (layout.c), so the process cannot
 * shrink it; should sealing ever fail, a process that truncates the
 * memfd would make sonde's next read of it a SIGBUS. This handler turns
 * that into a report: a fault inside a guarded mapping replaces the
 * whole mapping with zeroed private memory (the faulting read then
 * completes, reading zeros, which every reader of the region already
 * treats as data it checks) and raises a flag that the engine reads
 * after each poll to end the session with an error. A fault anywhere
 * else goes to the handler that was there before, or kills sonde as
 * SIGBUS would have.
 *
 * Process-wide state, as a signal handler needs: a few ranges, written
 * only while no fault can be handled (the handler is installed after the
 * first range is added and removed with the last). */
#include "guard.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#define GUARD_RANGES 4

static struct { uintptr_t start, len; } ranges[GUARD_RANGES];
static volatile sig_atomic_t tripped;
static struct sigaction previous;
static int installed;

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	uintptr_t a = (uintptr_t)si->si_addr;
	for (int i = 0; i < GUARD_RANGES; i++) {
		if (!ranges[i].len || a < ranges[i].start ||
		    a - ranges[i].start >= ranges[i].len)
			continue;
		void *p = mmap((void *)ranges[i].start, ranges[i].len,
			       PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		if (p != MAP_FAILED) {
			tripped = 1;
			return;    /* the read runs again, on zeros */
		}
		break;
	}
	/* not ours: as it would have been without us */
	if (previous.sa_flags & SA_SIGINFO && previous.sa_sigaction) {
		previous.sa_sigaction(sig, si, uc);
		return;
	}
	if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
		previous.sa_handler(sig);
		return;
	}
	signal(SIGBUS, SIG_DFL);   /* the fault comes again, and kills */
}

int guard_add(void *start, size_t len)
{
	for (int i = 0; i < GUARD_RANGES; i++) {
		if (ranges[i].len)
			continue;
		ranges[i].start = (uintptr_t)start;
		ranges[i].len = len;
		if (installed++ == 0) {
			struct sigaction sa;
			memset(&sa, 0, sizeof(sa));
			sa.sa_sigaction = on_sigbus;
			sa.sa_flags = SA_SIGINFO | SA_RESTART;
			sigemptyset(&sa.sa_mask);
			if (sigaction(SIGBUS, &sa, &previous) < 0) {
				int e = errno;
				installed--;
				ranges[i].len = 0;
				return -e;
			}
		}
		return 0;
	}
	return -ENOSPC;
}

void guard_remove(void *start)
{
	for (int i = 0; i < GUARD_RANGES; i++) {
		if (!ranges[i].len || ranges[i].start != (uintptr_t)start)
			continue;
		ranges[i].len = 0;
		if (--installed == 0)
			sigaction(SIGBUS, &previous, NULL);
		return;
	}
}

bool guard_tripped(void)
{
	return tripped != 0;
}

void guard_reset(void)
{
	tripped = 0;
}
