/* tracee_int.h - what tracee.c (holding a process) and tracee_call.c
 * (calls on one of its threads) share. Private to those two files. */
#ifndef SONDE_PROCESS_TRACEE_INT_H
#define SONDE_PROCESS_TRACEE_INT_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "tracee.h"

#define STOP_TIMEOUT_MS 2000

/* t->why, formatted (snprintf: the one way process/ words a reason;
 * x86reloc.c writes the caller's buffer the same way). */
#define tracee_say(t, ...) \
	((void)snprintf((t)->why, sizeof((t)->why), __VA_ARGS__))
/* waitpid for one traced thread, up to timeout_ms (a stop signal ends
 * the wait: -ECANCELED). 0, -ETIMEDOUT or -errno. */
int tracee_wait_tid(pid_t tid, int *status, int timeout_ms);
ssize_t tracee_find_thread(const struct tracee *t, pid_t tid);
void tracee_drop_thread(struct tracee *t, size_t i);
/* A signal a held thread was about to get, given back when it is let
 * go. */
void tracee_keep_signal(struct tracee_thread *th, int sig);

/* What a wait status says about thread i. */
enum stop_kind { STOPPED, GONE, SIGNALLED, EXECED };
enum stop_kind tracee_note_status(struct tracee *t, size_t i, int status);
/* Wait until thread i is in a stop (or gone: dropped, *gone set). */
int tracee_wait_stopped(struct tracee *t, size_t i, bool *gone);
/* Write back thread th's changed registers. */
int tracee_write_back(struct tracee *t, struct tracee_thread *th);

#endif
