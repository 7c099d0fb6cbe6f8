/* cancel.c - see cancel.h. */
#include "cancel.h"

#include <string.h>

volatile sig_atomic_t cancel_signal;

static void set_default(int sig)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
}

void cancel_reset_signals(void)
{
	set_default(SIGINT);
	set_default(SIGTERM);
}

void cancel_die(void)
{
	int sig = cancel_signal;
	if (!sig)
		return;
	set_default(sig);
	raise(sig);
}
