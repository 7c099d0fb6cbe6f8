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
	/* Stopped inside a call that did not end in time: its registers are
	 * the call's, and it finishes the call (restoring itself) once it
	 * runs again; no other call is made on it. */
	bool in_call;
};

struct tracee {
	pid_t pid;
	int mem_fd;                /* /proc/PID/mem, read-write */
	struct tracee_thread *threads;
	size_t nthreads, cap;
	size_t call_thread;        /* index of the thread calls run on */
	bool call_thread_chosen;
	/* Where calls return to (tracee_set_return): code ending in the
	 * rt_sigreturn system call, whose syscall instruction ends at
	 * ret_end; ret_value: the call's result is in rdi there. */
	uint64_t ret_addr, ret_end;
	bool ret_value;
	char why[256];             /* the last failure, said for a user */
};

/* Whether the waits of tracee and its calls end when a stop signal
 * (SIGINT, SIGTERM: base/cancel.h) comes, with -ECANCELED: on while
 * attaching, so that a signal stops sonde at any moment; off (the
 * default) while detaching, which must finish to leave the process as
 * it was. Process-wide; returns what it was. */
bool tracee_cancellable(bool on);

/* Could tracee_attach hold pid? The same checks and reasons, made
 * without touching the process (before anything is compiled). 0 or
 * -errno with why. */
int tracee_precheck(pid_t pid, char *why, size_t whylen);

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
/* Write thread i's changed registers now. 0 or -errno (why said). */
int tracee_regs_flush(struct tracee *t, size_t i);

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
 * TRACEE_ARG_DATA is replaced by its address.
 *
 * The thread is left, at every moment, in a state it can go on from on
 * its own, should sonde die (SIGKILL) and ptrace let it go: below the
 * call's frame is a signal frame holding everything the thread had
 * (registers, vector and x87 state, signal mask), and the function
 * returns into code that ends in rt_sigreturn (tracee_set_return), which
 * puts it all back; the system call it slept in, if any, restarts. Its
 * signals are blocked during the call (they wait, none is lost). sonde
 * sees the call end at that rt_sigreturn (PTRACE_SYSCALL), with the
 * result in rdi (ret_value). timeout_ms bounds the wait: a call that does
 * not end in time is left to end on its own once the process runs
 * (in_call). Returns 0 with *ret set (0 when the return code gives no
 * value), or -errno with why filled (-ETIMEDOUT, -EFAULT if the call
 * crashed, -ESRCH if the process died, -ECANCELED on a stop signal while
 * cancellable, -EINVAL before tracee_set_return). */
#define TRACEE_ARG_DATA 0xd47ad47ad47ad47aull
int tracee_call(struct tracee *t, uint64_t fn, const uint64_t *args,
		int nargs, const void *data, size_t datalen,
		unsigned timeout_ms, uint64_t *ret);

/* The code calls return to: at addr, ending in a syscall instruction
 * that ends at `end` and makes rt_sigreturn; value: it moves the
 * result into rdi first (src/process/inject.c writes such code; the C
 * library's signal restorer, `mov $15, %rax; syscall`, gives none). */
void tracee_set_return(struct tracee *t, uint64_t addr, uint64_t end,
		       bool value);

#endif
