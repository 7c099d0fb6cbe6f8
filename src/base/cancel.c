/* cancel.c - see cancel.h. */
#include "cancel.h"

#include <string.h>

volatile sig_atomic_t cancel_signal;

void cancel_die(void)
{
	int sig = cancel_signal;
	if (!sig)
		return;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	raise(sig);
}
