/* tracee.h - a running process held over ptrace: every thread seized and
 * stopped, their registers, the process's memory through /proc/PID/mem,
 * and function calls made on one of its threads. What the injector and
 * the live patcher stand on; private to src/process/. */
#ifndef SONDE_PROCESS_TRACEE_H
#define SONDE_PROCESS_TRACEE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

#define TRACEE_MAX_PENDING 4

struct tracee_thread {
	pid_t tid;
	bool stopped;              /* in a ptrace stop */
	bool regs_valid;           /* regs read since it last ran */
	bool regs_dirty;           /* regs changed: written back before it runs */
	/* Already traced by sonde itself (a -c command held at its exit):
	 * used, not seized, and resumed rather than detached at the end. */
	bool borrowed;
	struct user_regs_struct regs;
	/* Signals it was about to get when it stopped (signal-delivery
	 * stops): suppressed while held, given back when it is let go. */
	int pending[TRACEE_MAX_PENDING];
	int npending;
};

struct tracee {
	pid_t pid;
	int mem_fd;                /* /proc/PID/mem, read-write */
	struct tracee_thread *threads;
	size_t nthreads, cap;
	size_t call_thread;        /* index of the thread calls run on */
	bool call_thread_chosen;
	char why[256];             /* the last failure, said for a user */
};

/* Seize every thread of pid and stop them all (threads created meanwhile
 * are caught as well). On failure returns -errno, and *out is NULL and a
 * message that says why and what to do is in why (a buffer of whylen
 * bytes): not ours to trace, Yama's ptrace_scope, already traced, a
 * zombie, stopped by job control. */
int tracee_attach(pid_t pid, struct tracee **out, char *why, size_t whylen);
/* Write back changed registers, give back suppressed signals, and let
 * every thread go. NULL is a no-op. */
void tracee_detach(struct tracee *t);

/* Resume the threads while the tracee keeps them traced, and stop them
 * all again (new threads included). */
int tracee_resume_all(struct tracee *t);
int tracee_stop_all(struct tracee *t);

/* Run thread i for one instruction (the others stay stopped). 0, or
 * -errno (-ESRCH: it exited). */
int tracee_step(struct tracee *t, size_t i);

/* Registers of a stopped thread (read on first use). */
struct user_regs_struct *tracee_regs(struct tracee *t, size_t i);
/* Mark thread i's registers changed (written back before it runs). */
void tracee_regs_changed(struct tracee *t, size_t i);

/* Memory of the process. Return 0, or -EFAULT for unmapped addresses,
 * -EIO for a short transfer. Writes reach read-only code too
 * (/proc/PID/mem writes as a debugger does, copy-on-write). */
int tracee_read(struct tracee *t, uint64_t addr, void *buf, size_t len);
int tracee_write(struct tracee *t, uint64_t addr, const void *buf, size_t len);
/* A NUL-terminated string of at most max - 1 bytes; 0 or -errno. */
int tracee_read_str(struct tracee *t, uint64_t addr, char *buf, size_t max);

/* Call fn(args...) on one thread of the stopped process (the System V
 * ABI: up to 6 integer arguments, the stack aligned to 16 bytes at the
 * call, the red zone of the interrupted code left alone) while its other
 * threads run, so that locks they hold are released. data (if not NULL)
 * is copied onto that thread's stack and an argument equal to
 * TRACEE_ARG_DATA is replaced by its address. The function returns into
 * an unmapped address (0), whose fault is caught and suppressed; then the
 * thread's registers, vector and x87 state included, are restored as
 * they were. timeout_ms bounds the call. Returns 0 with *ret set, or
 * -errno with why filled (-ETIMEDOUT, -EFAULT if the call crashed,
 * -ESRCH if the process died). */
#define TRACEE_ARG_DATA 0xd47ad47ad47ad47aull
int tracee_call(struct tracee *t, uint64_t fn, const uint64_t *args,
		int nargs, const void *data, size_t datalen,
		unsigned timeout_ms, uint64_t *ret);

#endif
