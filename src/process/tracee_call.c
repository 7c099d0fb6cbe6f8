/* tracee_call.c - a function call made on one thread of a held process,
 * which the process survives whenever sonde dies.
 *
 * gdb's way (and sonde's first) is to point the thread at the function
 * with a return address of 0 and catch the fault when it returns. If the
 * tracer dies during the call, ptrace lets the thread go, it returns to
 * address 0 and the process dies with it: a SIGKILL of sonde at the
 * wrong moment killed the program it traced.
 *
 * Here the thread's whole state goes, before the call, into a signal
 * frame on its stack, the frame the kernel itself builds to run a
 * handler (struct rt_sigframe): every register, the vector and x87 state
 * (the XSAVE image ptrace gives, with the magic words the kernel checks)
 * and the signal mask. The function's return address is code ending in
 * rt_sigreturn with the stack pointer on that frame, as a handler's
 * return runs the C library's restorer. So the call is a signal handler
 * the thread runs: whether sonde is there or not when it returns, the
 * kernel puts every register back, the thread goes on where it was, and
 * a system call it slept in restarts (the frame holds the restart the
 * kernel would have made: the syscall instruction again, its number in
 * rax). Its signals stay blocked during the call and come once its mask
 * is back: none is lost, none runs a handler in the middle.
 *
 * sonde follows the thread with PTRACE_SYSCALL and knows the call is
 * done at that rt_sigreturn: its entry (the syscall instruction of the
 * return code, the frame's stack pointer) holds the result in rdi when
 * the return code moved it there (inject.c writes such code in the
 * process; the C library's restorer, used to map that code, gives none),
 * and its exit is the thread as it was. A call that does not end in time
 * is not torn out of the thread (it may hold the loader's lock): the
 * thread is stopped where it is and finishes the call, and restores
 * itself, once it runs again. */
#include "tracee.h"

#include <elf.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../base/cancel.h"
#include "tracee_int.h"

#define XSTATE_MAX (64 * 1024)
#define FXSAVE_SIZE 512
#define SW_BYTES_AT 464           /* struct _fpx_sw_bytes in the FXSAVE area */
#define XSTATE_MAGIC1 0x46505853u
#define XSTATE_MAGIC2 0x46505845u
/* ucontext's uc_flags: an XSAVE image; ss saved, restored as it is */
#define UC_FP_XSTATE 0x1
#define UC_SIGCONTEXT_SS 0x2
#define UC_STRICT_RESTORE_SS 0x4
/* the kernel's restart codes, as a stopped system call holds them */
#define ERESTARTSYS 512
#define ERESTARTNOINTR 513
#define ERESTARTNOHAND 514
#define ERESTART_RESTARTBLOCK 516

/* The kernel's struct rt_sigframe on x86-64: what rt_sigreturn reads,
 * from the stack pointer minus 8 (the handler's return address popped). */
struct sigframe {
	uint64_t pretcode;
	uint64_t uc_flags, uc_link;
	struct {
		uint64_t ss_sp;
		int32_t ss_flags, pad;
		uint64_t ss_size;
	} uc_stack;
	struct sigcontext mc;
	uint64_t uc_sigmask;
	uint8_t info[128];
};
_Static_assert(sizeof(struct sigframe) == 440, "the kernel's rt_sigframe");

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

void tracee_set_return(struct tracee *t, uint64_t addr, uint64_t end,
		       bool value)
{
	t->ret_addr = addr;
	t->ret_end = end;
	t->ret_value = value;
}

/* System calls a thread can sleep in without holding a lock of the C
 * library: a thread stopped in one of these is the safest to borrow. */
static bool idle_syscall(long nr)
{
	switch (nr) {
	case SYS_read: case SYS_poll: case SYS_select: case SYS_nanosleep:
	case SYS_clock_nanosleep: case SYS_pause: case SYS_wait4:
	case SYS_accept: case SYS_accept4: case SYS_recvfrom: case SYS_recvmsg:
	case SYS_epoll_wait: case SYS_epoll_pwait: case SYS_ppoll:
	case SYS_pselect6: case SYS_rt_sigtimedwait: case SYS_rt_sigsuspend:
	case SYS_waitid:
		return true;
	}
	return false;
}

/* A thread sleeping in an idle system call (-1: none), else in *any the
 * main thread, else any thread (-1: none at all). A thread left inside
 * an unfinished call is none of them. */
static ssize_t idle_thread(struct tracee *t, ssize_t *any)
{
	*any = -1;
	for (size_t i = 0; i < t->nthreads; i++) {
		if (t->threads[i].in_call)
			continue;
		struct user_regs_struct *r = tracee_regs(t, i);
		if (!r)
			continue;
		if (idle_syscall((long)r->orig_rax))
			return (ssize_t)i;
		if (*any < 0 || t->threads[i].tid == t->pid)
			*any = (ssize_t)i;
	}
	return -1;
}

/* The thread calls run on: one sleeping in an idle system call if there
 * is one (the main thread first), else the main thread, else any. A
 * thread stopped anywhere else may hold a lock of the C library that the
 * call needs (malloc's, the loader's), so the process runs a little and
 * is stopped again, a few times, to find one idle (a process whose
 * threads all compute gets the main thread a few ms later). */
#define IDLE_TRIES 6
static int choose_call_thread(struct tracee *t)
{
	if (t->call_thread_chosen && t->call_thread < t->nthreads &&
	    !t->threads[t->call_thread].in_call)
		return 0;
	ssize_t any, best = idle_thread(t, &any);
	/* a -c command held before it starts (borrowed) must not run yet */
	bool may_run = true;
	for (size_t i = 0; i < t->nthreads; i++)
		may_run &= !t->threads[i].borrowed;
	for (int k = 0; may_run && best < 0 && any >= 0 && k < IDLE_TRIES; k++) {
		if (tracee_resume_all(t) < 0)
			break;
		usleep(1000);
		int r = tracee_stop_all(t);
		if (r < 0)
			return r == -ECANCELED ? r : -ESRCH;
		best = idle_thread(t, &any);
	}
	if (best < 0)
		best = any;
	if (best < 0) {
		tracee_say(t, "process %d has no thread to run a call on", t->pid);
		return -ESRCH;
	}
	t->call_thread = (size_t)best;
	t->call_thread_chosen = true;
	return 0;
}

/* The thread's vector and x87 state as a signal frame holds it: the XSAVE
 * image (its software bytes saying so, and the second magic word after
 * it), else the FXSAVE area alone. */
struct fpimage {
	uint8_t *buf;
	size_t len;                /* bytes to write on the stack */
};

static int fpimage_get(pid_t tid, struct fpimage *f)
{
	f->buf = calloc(1, XSTATE_MAX + 4);
	if (!f->buf)
		return -ENOMEM;
	struct iovec iov = { f->buf, XSTATE_MAX };
	if (ptrace(PTRACE_GETREGSET, tid, NT_X86_XSTATE, &iov) == 0 &&
	    iov.iov_len >= FXSAVE_SIZE + 64) {
		/* ptrace fills the software bytes as a signal frame has them
		 * (magic1, extended size, features, size); made so if not */
		uint32_t have[4];
		memcpy(have, f->buf + SW_BYTES_AT, sizeof(have));
		if (have[0] != XSTATE_MAGIC1 || have[3] != iov.iov_len) {
			uint32_t sw[2] = { XSTATE_MAGIC1, (uint32_t)iov.iov_len + 4 };
			memcpy(f->buf + SW_BYTES_AT, sw, sizeof(sw));
			/* the features the image holds: its header's XSTATE_BV */
			memcpy(f->buf + SW_BYTES_AT + 8, f->buf + FXSAVE_SIZE, 8);
			uint32_t size = (uint32_t)iov.iov_len;
			memcpy(f->buf + SW_BYTES_AT + 16, &size, 4);
		}
		uint32_t magic2 = XSTATE_MAGIC2;
		memcpy(f->buf + iov.iov_len, &magic2, 4);
		f->len = iov.iov_len + 4;
		return 0;
	}
	/* no XSAVE: the legacy area, which says it is one (magic1 0) */
	struct user_fpregs_struct fp;
	if (ptrace(PTRACE_GETFPREGS, tid, 0, &fp) < 0) {
		int e = errno;
		free(f->buf);
		f->buf = NULL;
		return -e;
	}
	memset(f->buf, 0, FXSAVE_SIZE);
	memcpy(f->buf, &fp, sizeof(fp) < FXSAVE_SIZE ? sizeof(fp) : FXSAVE_SIZE);
	memset(f->buf + SW_BYTES_AT, 0, FXSAVE_SIZE - SW_BYTES_AT);
	f->len = FXSAVE_SIZE;
	return 0;
}

/* Put the thread back by hand (the call crashed: no rt_sigreturn will). */
static void restore_by_hand(pid_t tid, const struct user_regs_struct *saved,
			    const struct fpimage *f, uint64_t mask)
{
	ptrace(PTRACE_SETREGS, tid, 0, saved);
	struct iovec iov = { f->buf, f->len >= 4 && f->len > FXSAVE_SIZE ?
			     f->len - 4 : f->len };
	if (f->len > FXSAVE_SIZE)
		ptrace(PTRACE_SETREGSET, tid, NT_X86_XSTATE, &iov);
	else
		ptrace(PTRACE_SETFPREGS, tid, 0, f->buf);
	ptrace(PTRACE_SETSIGMASK, tid, sizeof(mask), &mask);
}

/* The registers the thread goes on with after the call: those it had,
 * with the restart the kernel would make of a system call a stop
 * interrupted (rt_sigreturn itself restarts nothing). */
static void resume_regs(const struct user_regs_struct *s, struct sigcontext *mc)
{
	memset(mc, 0, sizeof(*mc));
	mc->r8 = s->r8; mc->r9 = s->r9; mc->r10 = s->r10; mc->r11 = s->r11;
	mc->r12 = s->r12; mc->r13 = s->r13; mc->r14 = s->r14; mc->r15 = s->r15;
	mc->rdi = s->rdi; mc->rsi = s->rsi; mc->rbp = s->rbp; mc->rbx = s->rbx;
	mc->rdx = s->rdx; mc->rax = s->rax; mc->rcx = s->rcx; mc->rsp = s->rsp;
	mc->rip = s->rip;
	mc->eflags = s->eflags;
	mc->cs = (unsigned short)s->cs;
	mc->__pad0 = (unsigned short)s->ss;     /* ss */
	if ((long long)s->orig_rax < 0)
		return;
	switch (-(long long)s->rax) {
	case ERESTARTSYS: case ERESTARTNOINTR: case ERESTARTNOHAND:
		mc->rax = s->orig_rax;
		mc->rip -= 2;
		break;
	case ERESTART_RESTARTBLOCK:
		mc->rax = SYS_restart_syscall;
		mc->rip -= 2;
		break;
	}
}

/* Run thread i until the call returns through rt_sigreturn at the
 * frame's stack pointer (frame_sp), and through that rt_sigreturn. */
static int run_call(struct tracee *t, size_t i, uint64_t frame_sp,
		    unsigned timeout_ms, uint64_t *ret, bool *crashed)
{
	double deadline = now_ms() + timeout_ms;
	pid_t tid = t->threads[i].tid;
	bool returned = false;
	*crashed = false;
	for (;;) {
		struct tracee_thread *th = &t->threads[i];
		if (ptrace(PTRACE_SYSCALL, tid, 0, 0) < 0) {
			int e = errno;
			tracee_say(t, "cannot resume thread %d: %s", tid, strerror(e));
			return -e;
		}
		th->stopped = false;
		th->regs_valid = false;
		int status, left = (int)(deadline - now_ms());
		int r = tracee_wait_tid(tid, &status, left > 0 ? left : 0);
		if (r == -ETIMEDOUT || r == -ECANCELED) {
			if (r == -ETIMEDOUT)
				tracee_say(t, "the call in thread %d of process %d did "
					   "not return within %u ms", tid, t->pid,
					   timeout_ms);
			else
				tracee_say(t, "stopped by a signal during a call in "
					   "process %d", t->pid);
			/* held where it is: it ends the call on its own later */
			th->in_call = !returned;
			ptrace(PTRACE_INTERRUPT, tid, 0, 0);
			bool gone, was = tracee_cancellable(false);
			tracee_wait_stopped(t, i, &gone);
			tracee_cancellable(was);
			return gone ? -ESRCH : r;
		}
		if (r < 0) {
			tracee_say(t, "waiting for thread %d: %s", tid, strerror(-r));
			return r;
		}
		enum stop_kind k = tracee_note_status(t, i, status);
		th = &t->threads[i];
		if (k == GONE) {
			tracee_say(t, "process %d died during a call", t->pid);
			tracee_drop_thread(t, i);
			return -ESRCH;
		}
		if (k == EXECED) {
			tracee_say(t, "process %d ran a new program during a call", t->pid);
			return -ECHILD;
		}
		/* a system call's stop (SIGTRAP, or SIGTRAP | 0x80 with
		 * PTRACE_O_TRACESYSGOOD, which a thread borrowed from main.c's
		 * tracing of a -c command does not have) */
		siginfo_t si;
		if (k == SIGNALLED && (WSTOPSIG(status) & 0x7f) == SIGTRAP &&
		    ptrace(PTRACE_GETSIGINFO, tid, 0, &si) == 0 &&
		    (si.si_code == SIGTRAP || si.si_code == (SIGTRAP | 0x80))) {
			struct user_regs_struct *regs = tracee_regs(t, i);
			if (!regs)
				return -ESRCH;
			if (returned)
				return 0;    /* its exit: the thread as it was */
			if (regs->orig_rax == SYS_rt_sigreturn &&
			    regs->rip == t->ret_end && regs->rsp == frame_sp + 8 &&
			    (long long)regs->rax == -ENOSYS) {
				*ret = t->ret_value ? regs->rdi : 0;
				returned = true;
			}
			continue;    /* through it, or the call's own calls */
		}
		if (k != SIGNALLED)
			continue;    /* a new thread, an interrupt */
		int sig = WSTOPSIG(status);
		if (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL ||
		    sig == SIGFPE || sig == SIGABRT || sig == SIGTRAP ||
		    sig == SIGSYS) {
			struct user_regs_struct *regs = tracee_regs(t, i);
			tracee_say(t, "the call in process %d stopped with signal "
				   "%d (%s) at 0x%llx", t->pid, sig, strsignal(sig),
				   regs ? regs->rip : 0);
			*crashed = true;
			return -EFAULT;
		}
		/* blocked signals do not stop it; what does is the program's,
		 * given back later */
		tracee_keep_signal(th, sig);
	}
}

int tracee_call(struct tracee *t, uint64_t fn, const uint64_t *args,
		int nargs, const void *data, size_t datalen,
		unsigned timeout_ms, uint64_t *ret)
{
	*ret = 0;
	if (nargs > 6 || datalen > 65536)
		return -EINVAL;
	if (!t->ret_addr) {
		tracee_say(t, "process %d: no code to return calls to", t->pid);
		return -EINVAL;
	}
	int r = choose_call_thread(t);
	if (r < 0)
		return r;
	size_t i = t->call_thread;
	pid_t tid = t->threads[i].tid;
	struct user_regs_struct *cur = tracee_regs(t, i);
	if (!cur) {
		tracee_say(t, "cannot read the registers of thread %d", tid);
		return -ESRCH;
	}
	/* what was changed in it is part of what it goes on with */
	struct user_regs_struct saved = *cur;
	uint64_t mask = 0;
	struct fpimage fp = { 0 };
	if (ptrace(PTRACE_GETSIGMASK, tid, sizeof(mask), &mask) < 0 ||
	    (r = fpimage_get(tid, &fp)) < 0) {
		r = r < 0 ? r : -errno;
		tracee_say(t, "cannot read the state of thread %d: %s", tid,
			   strerror(-r));
		return r;
	}
	/* below the red zone of whatever the thread was doing: the data,
	 * the vector state (64-byte aligned, as XRSTOR wants it), then the
	 * frame, whose end (sp + 8 at rt_sigreturn, the function's rsp + 8
	 * at its entry) is 16-byte aligned */
	uint64_t sp = (saved.rsp - 128 - datalen) & ~15ull;
	uint64_t data_at = sp;
	uint64_t fp_at = (sp - fp.len) & ~63ull;
	uint64_t frame_at = ((fp_at - sizeof(struct sigframe)) & ~15ull) - 8;
	struct sigframe frame;
	memset(&frame, 0, sizeof(frame));
	frame.pretcode = t->ret_addr;
	frame.uc_flags = UC_SIGCONTEXT_SS | UC_STRICT_RESTORE_SS |
			 (fp.len > FXSAVE_SIZE ? UC_FP_XSTATE : 0);
	/* an alternate stack rt_sigreturn refuses to set: the thread's own
	 * stays as it is */
	frame.uc_stack.ss_flags = 4;
	resume_regs(&saved, &frame.mc);
	frame.mc.fpstate = (struct _fpstate *)(uintptr_t)fp_at;
	frame.uc_sigmask = mask;
	if ((data && (r = tracee_write(t, data_at, data, datalen)) < 0) ||
	    (r = tracee_write(t, fp_at, fp.buf, fp.len)) < 0 ||
	    (r = tracee_write(t, frame_at, &frame, sizeof(frame))) < 0) {
		tracee_say(t, "cannot write to the stack of thread %d: %s", tid,
			   strerror(-r));
		free(fp.buf);
		return r;
	}
	struct user_regs_struct c = saved;
	unsigned long long *argregs[6] = { &c.rdi, &c.rsi, &c.rdx, &c.rcx, &c.r8, &c.r9 };
	for (int k = 0; k < nargs; k++)
		*argregs[k] = args[k] == TRACEE_ARG_DATA ? data_at : args[k];
	c.rip = fn;
	c.rsp = frame_at;                /* the return address: pretcode */
	c.rax = 0;                       /* no vector arguments (varargs) */
	c.orig_rax = (unsigned long long)-1;   /* no system call to restart */
	c.eflags &= ~0x500ull;           /* DF and TF clear, as the ABI says */
	/* the frame is in place before the thread can run the call: from
	 * here on, whatever happens to sonde, it returns through it */
	uint64_t all = ~0ull;
	if (ptrace(PTRACE_SETSIGMASK, tid, sizeof(all), &all) < 0 ||
	    ptrace(PTRACE_SETREGS, tid, 0, &c) < 0) {
		r = -errno;
		tracee_say(t, "cannot set the registers of thread %d: %s", tid,
			   strerror(errno));
		ptrace(PTRACE_SETSIGMASK, tid, sizeof(mask), &mask);
		free(fp.buf);
		return r;
	}
	t->threads[i].regs_dirty = false;
	t->threads[i].regs_valid = false;
	/* the others run meanwhile (one whose registers cannot be written
	 * back stays stopped) */
	for (size_t k = 0; k < t->nthreads; k++) {
		struct tracee_thread *th = &t->threads[k];
		if (k == i || !th->stopped || tracee_write_back(t, th) < 0)
			continue;
		if (ptrace(PTRACE_CONT, th->tid, 0, 0) == 0) {
			th->stopped = false;
			th->regs_valid = false;
		}
	}
	bool crashed = false;
	r = run_call(t, i, frame_at, timeout_ms, ret, &crashed);
	/* the call thread may have moved in the array (threads came, went) */
	ssize_t at = tracee_find_thread(t, tid);
	if (crashed && at >= 0 && t->threads[at].stopped) {
		restore_by_hand(tid, &saved, &fp, mask);
		t->threads[at].regs = saved;
		t->threads[at].regs_valid = true;
	}
	free(fp.buf);
	int s = tracee_stop_all(t);
	return r < 0 ? r : s;
}
