/* cancel.h - a run stopped by SIGINT or SIGTERM, whatever it is doing.
 *
 * The one process-wide flag every long step asks: the signal handler
 * sets it, and the steps after compiling that take a while (loading
 * programs, attaching probes, one by one or spread over threads) check
 * it between units of work and give up with -ECANCELED, leaving their
 * caller to release what was made. No step blocks signals, so a check
 * is never further away than one system call. */
#ifndef SONDE_CANCEL_H
#define SONDE_CANCEL_H

#include <signal.h>
#include <stdbool.h>

/* The first stop signal received (SIGINT, SIGTERM), 0 if none. */
extern volatile sig_atomic_t cancel_signal;

static inline bool cancel_requested(void)
{
	return cancel_signal != 0;
}

/* From a signal handler: remember SIG (the first one wins). */
static inline void cancel_request(int sig)
{
	if (!cancel_signal)
		cancel_signal = sig;
}

/* At start: SIGINT and SIGTERM with their default action and unblocked,
 * whatever was inherited (a shell starts background commands with
 * SIGINT ignored), so that they stop sonde in every phase alike. */
void cancel_reset_signals(void);

/* After everything was released: end the process the way the signal
 * would have (its default action), so the parent sees it killed by that
 * signal (the shell's 130 for SIGINT), as with bpftrace interrupted
 * before its run. Returns only if that did not kill it: then the caller
 * exits with 128 + the signal. */
void cancel_die(void);

#endif
