/* tracee.c - a running process held over ptrace.
 *
 * Holding a process means every thread is in a ptrace stop: each is
 * seized (PTRACE_SEIZE, which unlike PTRACE_ATTACH sends no SIGSTOP and
 * leaves job control alone) and interrupted. Threads can be created while
 * we do this, so the task list is read again until a pass finds no thread
 * we do not hold; threads created by a thread we hold are attached by the
 * kernel (PTRACE_O_TRACECLONE) and announced by a clone event.
 *
 * A signal that reaches a held thread shows up as a signal-delivery stop;
 * it is kept and given back when the thread is let go, so the program
 * sees it late but sees it.
 *
 * Function calls (tracee_call) borrow one thread, as gdb does: its
 * registers and extended state are saved, the call is set up as the ABI
 * wants (arguments in registers, a 16-byte aligned stack below the red
 * zone of the interrupted code, a return address of 0), the thread runs
 * until the return faults at address 0, and everything is put back. The
 * other threads run meanwhile, so a lock one of them held when it was
 * stopped (the loader's, malloc's) does not deadlock the call. A thread
 * that was inside a system call gets orig_rax = -1 for the call, so the
 * kernel does not restart that system call into our function; the
 * restored registers restart it afterwards as if nothing happened. */
#include "tracee.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../base/file.h"

#define STOP_TIMEOUT_MS 2000
#define MAX_THREADS 65536
#define XSTATE_MAX (64 * 1024)

static void say(struct tracee *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void say(struct tracee *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(t->why, sizeof(t->why), fmt, ap);
	va_end(ap);
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* waitpid for one traced thread, giving up after timeout_ms. SIGCHLD
 * (which the kernel sends the tracer at every stop) is blocked and waited
 * for, so there is no polling; one that was taken from sonde's own
 * handler is raised again afterwards. Returns 0, -ETIMEDOUT or -errno. */
static int wait_tid(pid_t tid, int *status, int timeout_ms)
{
	pid_t r = waitpid(tid, status, __WALL | WNOHANG);
	if (r == tid)
		return 0;
	if (r < 0)
		return -errno;
	sigset_t chld, old;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	pthread_sigmask(SIG_BLOCK, &chld, &old);
	double deadline = now_ms() + timeout_ms;
	bool took = false;
	int ret;
	for (;;) {
		r = waitpid(tid, status, __WALL | WNOHANG);
		if (r == tid) {
			ret = 0;
			break;
		}
		if (r < 0 && errno != EINTR) {
			ret = -errno;
			break;
		}
		double left = deadline - now_ms();
		if (left <= 0) {
			ret = -ETIMEDOUT;
			break;
		}
		struct timespec ts = { .tv_sec = (time_t)(left / 1000),
				       .tv_nsec = (long)((left - (time_t)(left / 1000) * 1000.0) * 1e6) };
		if (sigtimedwait(&chld, NULL, &ts) == SIGCHLD)
			took = true;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (took) {
		struct sigaction sa;
		if (sigaction(SIGCHLD, NULL, &sa) == 0 &&
		    sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN)
			raise(SIGCHLD);
	}
	return ret;
}

static ssize_t find_thread(const struct tracee *t, pid_t tid)
{
	for (size_t i = 0; i < t->nthreads; i++)
		if (t->threads[i].tid == tid)
			return (ssize_t)i;
	return -1;
}

static int add_thread(struct tracee *t, pid_t tid)
{
	if (t->nthreads == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 16;
		if (cap > MAX_THREADS)
			return -E2BIG;
		void *p = realloc(t->threads, cap * sizeof(*t->threads));
		if (!p)
			return -ENOMEM;
		t->threads = p;
		t->cap = cap;
	}
	t->threads[t->nthreads++] = (struct tracee_thread){ .tid = tid };
	return 0;
}

static void drop_thread(struct tracee *t, size_t i)
{
	if (t->call_thread_chosen) {
		if (t->call_thread == i)
			t->call_thread_chosen = false;
		else if (t->call_thread > i)
			t->call_thread--;
	}
	memmove(&t->threads[i], &t->threads[i + 1],
		(t->nthreads - i - 1) * sizeof(*t->threads));
	t->nthreads--;
}

static void keep_signal(struct tracee_thread *th, int sig)
{
	for (int k = 0; k < th->npending; k++)
		if (th->pending[k] == sig && sig < SIGRTMIN)
			return;   /* standard signals do not queue anyway */
	if (th->npending < TRACEE_MAX_PENDING)
		th->pending[th->npending++] = sig;
}

/* What a wait status says about thread i. */
enum stop_kind { STOPPED, GONE, SIGNALLED, EXECED };

static enum stop_kind note_status(struct tracee *t, size_t i, int status)
{
	struct tracee_thread *th = &t->threads[i];
	if (WIFEXITED(status) || WIFSIGNALED(status))
		return GONE;
	if (!WIFSTOPPED(status))
		return STOPPED;
	th->stopped = true;
	th->regs_valid = false;
	int event = status >> 16;
	if (event == PTRACE_EVENT_CLONE) {
		unsigned long child = 0;
		if (ptrace(PTRACE_GETEVENTMSG, th->tid, 0, &child) == 0 &&
		    find_thread(t, (pid_t)child) < 0)
			add_thread(t, (pid_t)child);   /* attached by the kernel */
		return STOPPED;
	}
	if (event == PTRACE_EVENT_EXEC)
		return EXECED;
	if (event == 0)
		return SIGNALLED;
	return STOPPED;   /* PTRACE_EVENT_STOP: interrupt, group stop, new thread */
}

static bool thread_is_zombie(pid_t pid, pid_t tid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	char *s = file_read(path, NULL);
	if (!s)
		return true;
	char *p = strrchr(s, ')');
	bool z = !p || (p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X'));
	free(s);
	return z;
}

/* Wait until thread i is in a stop (or gone: then it is dropped and
 * *gone set). Signals it meets are kept for later. */
static int wait_stopped(struct tracee *t, size_t i, bool *gone)
{
	*gone = false;
	double deadline = now_ms() + STOP_TIMEOUT_MS;
	for (;;) {
		pid_t tid = t->threads[i].tid;
		int status, left = (int)(deadline - now_ms());
		int r = wait_tid(tid, &status, left > 0 ? left : 0);
		if (r == -ETIMEDOUT && thread_is_zombie(t->pid, tid))
			r = -ECHILD;
		if (r == -ECHILD) {   /* exited and reaped, or a zombie */
			drop_thread(t, i);
			*gone = true;
			return 0;
		}
		if (r == -ETIMEDOUT) {
			say(t, "thread %d of process %d did not stop within %d ms "
			    "(is it in an uninterruptible sleep?)", tid, t->pid,
			    STOP_TIMEOUT_MS);
			return r;
		}
		if (r < 0) {
			say(t, "waiting for thread %d: %s", tid, strerror(-r));
			return r;
		}
		switch (note_status(t, i, status)) {
		case GONE:
			drop_thread(t, i);
			*gone = true;
			return 0;
		case EXECED:
			say(t, "process %d ran a new program (exec) while sonde "
			    "was attaching", t->pid);
			return -ECHILD;
		case SIGNALLED:
			keep_signal(&t->threads[i], WSTOPSIG(status));
			return 0;
		case STOPPED:
			return 0;
		}
	}
}

static int read_tids(pid_t pid, pid_t **out, size_t *n)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	DIR *d = opendir(path);
	if (!d)
		return -errno;
	size_t cap = 16, cnt = 0;
	pid_t *v = malloc(cap * sizeof(*v));
	struct dirent *de;
	while (v && (de = readdir(d))) {
		char *end;
		long tid = strtol(de->d_name, &end, 10);
		if (*end || tid <= 0)
			continue;
		if (cnt == cap) {
			if (cap >= MAX_THREADS) {
				free(v);
				v = NULL;
				break;
			}
			pid_t *p = realloc(v, (cap *= 2) * sizeof(*v));
			if (!p) {
				free(v);
				v = NULL;
				break;
			}
			v = p;
		}
		v[cnt++] = (pid_t)tid;
	}
	closedir(d);
	if (!v)
		return -ENOMEM;
	*out = v;
	*n = cnt;
	return 0;
}

static const long seize_opts = PTRACE_O_TRACECLONE;

static long tracer_of(pid_t pid, pid_t tid);

/* Seize a thread, or find it traced by sonde already (borrowed). 0, or
 * -errno. */
static int seize(struct tracee *t, pid_t tid, bool *borrowed)
{
	*borrowed = false;
	if (ptrace(PTRACE_SEIZE, tid, 0, seize_opts) == 0)
		return 0;
	int e = errno;
	if (e == EPERM && tracer_of(t->pid, tid) == getpid()) {
		*borrowed = true;
		return 0;
	}
	return -e;
}

int tracee_stop_all(struct tracee *t)
{
	for (int round = 0; round < 1000; round++) {
		/* every thread we hold that runs: interrupt, then wait */
		for (size_t i = 0; i < t->nthreads; i++)
			if (!t->threads[i].stopped)
				ptrace(PTRACE_INTERRUPT, t->threads[i].tid, 0, 0);
		for (size_t i = 0; i < t->nthreads; i++) {
			if (t->threads[i].stopped)
				continue;
			bool gone;
			int r = wait_stopped(t, i, &gone);
			if (r < 0)
				return r;
			if (gone)
				i--;
		}
		/* threads made before their maker was held */
		pid_t *tids = NULL;
		size_t n = 0;
		int r = read_tids(t->pid, &tids, &n);
		if (r < 0) {
			say(t, "process %d: %s", t->pid,
			    r == -ENOENT ? "no such process" : strerror(-r));
			return r == -ENOENT ? -ESRCH : r;
		}
		bool fresh = false;
		for (size_t k = 0; k < n; k++) {
			if (find_thread(t, tids[k]) >= 0)
				continue;
			bool borrowed;
			int e = seize(t, tids[k], &borrowed);
			if (e == -ESRCH)
				continue;   /* exited meanwhile */
			if (e < 0) {
				say(t, "cannot trace thread %d of process %d: %s",
				    tids[k], t->pid, strerror(-e));
				free(tids);
				return e;
			}
			if ((r = add_thread(t, tids[k])) < 0) {
				if (!borrowed)
					ptrace(PTRACE_DETACH, tids[k], 0, 0);
				free(tids);
				say(t, "process %d: too many threads", t->pid);
				return r;
			}
			t->threads[t->nthreads - 1].borrowed = borrowed;
			fresh = true;
		}
		free(tids);
		bool all = true;
		for (size_t i = 0; i < t->nthreads; i++)
			all &= t->threads[i].stopped;
		if (!fresh && all)
			return t->nthreads ? 0 : -ESRCH;
	}
	say(t, "process %d keeps creating threads faster than sonde can stop them",
	    t->pid);
	return -EAGAIN;
}

static int write_back(struct tracee *t, struct tracee_thread *th)
{
	if (!th->regs_dirty)
		return 0;
	if (ptrace(PTRACE_SETREGS, th->tid, 0, &th->regs) < 0) {
		int e = errno;
		say(t, "cannot set the registers of thread %d: %s", th->tid,
		    strerror(e));
		return -e;
	}
	th->regs_dirty = false;
	return 0;
}

int tracee_resume_all(struct tracee *t)
{
	for (size_t i = 0; i < t->nthreads; i++) {
		struct tracee_thread *th = &t->threads[i];
		if (!th->stopped)
			continue;
		int r = write_back(t, th);
		if (r < 0)
			return r;
		if (ptrace(PTRACE_CONT, th->tid, 0, 0) < 0 && errno != ESRCH)
			return -errno;
		th->stopped = false;
		th->regs_valid = false;
	}
	return 0;
}

int tracee_step(struct tracee *t, size_t i)
{
	struct tracee_thread *th = &t->threads[i];
	int r = write_back(t, th);
	if (r < 0)
		return r;
	for (int tries = 0; tries < 100; tries++) {
		if (ptrace(PTRACE_SINGLESTEP, th->tid, 0, 0) < 0)
			return -errno;
		th->stopped = false;
		th->regs_valid = false;
		int status;
		r = wait_tid(th->tid, &status, STOP_TIMEOUT_MS);
		if (r < 0)
			return r;
		enum stop_kind k = note_status(t, i, status);
		th = &t->threads[i];
		if (k == GONE) {
			drop_thread(t, i);
			return -ESRCH;
		}
		if (k == SIGNALLED && WSTOPSIG(status) != SIGTRAP) {
			keep_signal(th, WSTOPSIG(status));
			continue;   /* a signal came first: step again */
		}
		return 0;
	}
	return -EAGAIN;
}

struct user_regs_struct *tracee_regs(struct tracee *t, size_t i)
{
	struct tracee_thread *th = &t->threads[i];
	if (!th->stopped)
		return NULL;
	if (!th->regs_valid) {
		if (ptrace(PTRACE_GETREGS, th->tid, 0, &th->regs) < 0)
			return NULL;
		th->regs_valid = true;
	}
	return &th->regs;
}

void tracee_regs_changed(struct tracee *t, size_t i)
{
	t->threads[i].regs_dirty = true;
}

int tracee_read(struct tracee *t, uint64_t addr, void *buf, size_t len)
{
	if (addr > INT64_MAX - len)
		return -EFAULT;
	ssize_t r = pread(t->mem_fd, buf, len, (off_t)addr);
	if (r < 0)
		return errno == EIO ? -EFAULT : -errno;
	return (size_t)r == len ? 0 : -EIO;
}

int tracee_write(struct tracee *t, uint64_t addr, const void *buf, size_t len)
{
	if (addr > INT64_MAX - len)
		return -EFAULT;
	ssize_t r = pwrite(t->mem_fd, buf, len, (off_t)addr);
	if (r < 0)
		return errno == EIO ? -EFAULT : -errno;
	return (size_t)r == len ? 0 : -EIO;
}

int tracee_read_str(struct tracee *t, uint64_t addr, char *buf, size_t max)
{
	if (!max)
		return -EINVAL;
	size_t got = 0;
	while (got + 1 < max) {
		/* by pieces that do not cross a page: the string may end
		 * just before an unmapped page */
		size_t room = 4096 - ((addr + got) & 4095);
		size_t want = max - 1 - got < room ? max - 1 - got : room;
		int r = tracee_read(t, addr + got, buf + got, want);
		if (r < 0)
			return got ? (buf[got] = 0, 0) : r;
		void *nul = memchr(buf + got, 0, want);
		if (nul)
			return 0;
		got += want;
	}
	buf[got] = 0;
	return 0;
}

/* ---- attaching, with the reason when it is not allowed ---- */

/* A field of /proc/PID/status ("TracerPid:"), as a number; -1 if absent. */
static long status_field(const char *status, const char *name)
{
	const char *p = status;
	size_t len = strlen(name);
	while (p && *p) {
		if (strncmp(p, name, len) == 0)
			return strtol(p + len, NULL, 10);
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -1;
}

static char status_state(const char *status)
{
	const char *p = strstr(status, "\nState:");
	if (!p)
		return '?';
	p += 7;
	while (*p == ' ' || *p == '\t')
		p++;
	return *p;
}

/* TracerPid of a thread, -1 if unknown. */
static long tracer_of(pid_t pid, pid_t tid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", pid, tid);
	char *st = file_read(path, NULL);
	long v = st ? status_field(st, "TracerPid:") : -1;
	free(st);
	return v;
}

static bool have_cap_sys_ptrace(void)
{
	char *s = file_read("/proc/self/status", NULL);
	if (!s)
		return false;
	const char *p = strstr(s, "\nCapEff:");
	bool has = p && (strtoull(p + 8, NULL, 16) >> 19) & 1;   /* CAP_SYS_PTRACE */
	free(s);
	return has;
}

static int yama_scope(void)
{
	char *s = file_read("/proc/sys/kernel/yama/ptrace_scope", NULL);
	if (!s)
		return -1;
	int v = atoi(s);
	free(s);
	return v;
}

static char *read_comm(pid_t pid, char *buf, size_t len)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	char *s = file_read(path, NULL);
	snprintf(buf, len, "%s", s ? s : "?");
	buf[strcspn(buf, "\n")] = 0;
	free(s);
	return buf;
}

/* Before seizing: states in which tracing cannot work, said plainly. */
static int check_state(struct tracee *t)
{
	char path[64], comm[32];
	snprintf(path, sizeof(path), "/proc/%d/status", t->pid);
	char *st = file_read(path, NULL);
	if (!st) {
		say(t, "no process %d", t->pid);
		return -ESRCH;
	}
	char state = status_state(st);
	long tracer = status_field(st, "TracerPid:");
	long tgid = status_field(st, "Tgid:");
	free(st);
	if (tgid > 0 && tgid != t->pid) {
		say(t, "%d is a thread of process %ld: give the process id",
		    t->pid, tgid);
		return -EINVAL;
	}
	if (state == 'Z' || state == 'X') {
		say(t, "process %d (%s) has exited (a zombie waiting for its "
		    "parent): there is nothing left to trace", t->pid,
		    read_comm(t->pid, comm, sizeof(comm)));
		return -ESRCH;
	}
	if (tracer > 0 && tracer != getpid()) {
		char tcomm[32];
		say(t, "process %d is already traced by process %ld (%s): a "
		    "process has one tracer at a time; detach that one first",
		    t->pid, tracer, read_comm((pid_t)tracer, tcomm, sizeof(tcomm)));
		return -EBUSY;
	}
	if (state == 'T') {
		say(t, "process %d is stopped (job control): continue it first "
		    "(kill -CONT %d)", t->pid, t->pid);
		return -EAGAIN;
	}
	snprintf(path, sizeof(path), "/proc/%d/exe", t->pid);
	char exe[8];
	if (readlink(path, exe, sizeof(exe)) < 0 && errno == ENOENT) {
		say(t, "process %d is a kernel thread: it has no user space to "
		    "trace", t->pid);
		return -EINVAL;
	}
	return 0;
}

/* PTRACE_SEIZE said EPERM: find out why, and what would help. */
static void explain_eperm(struct tracee *t)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/status", t->pid);
	char *st = file_read(path, NULL);
	long uid = -1, tracer = st ? status_field(st, "TracerPid:") : -1;
	if (st) {
		const char *u = strstr(st, "\nUid:");
		if (u)   /* real, effective, saved, fs: the real and effective */
			uid = strtol(u + 5, NULL, 10);
	}
	free(st);
	int scope = yama_scope();
	bool cap = have_cap_sys_ptrace();
	if (tracer > 0) {
		char tcomm[32];
		say(t, "process %d is already traced by process %ld (%s): a "
		    "process has one tracer at a time; detach that one first",
		    t->pid, tracer, read_comm((pid_t)tracer, tcomm, sizeof(tcomm)));
	} else if (scope == 3) {
		say(t, "ptrace is disabled on this system "
		    "(kernel.yama.ptrace_scope=3, which only a reboot resets): "
		    "start the program under sonde with -c instead of -p");
	} else if (scope == 2 && !cap) {
		say(t, "kernel.yama.ptrace_scope=2 lets only processes with "
		    "CAP_SYS_PTRACE attach: run sonde as root, or start the "
		    "program under sonde with -c");
	} else if (uid >= 0 && (uid_t)uid != geteuid() && !cap) {
		say(t, "process %d belongs to uid %ld, not to you (uid %u): "
		    "trace your own processes, or run sonde as root",
		    t->pid, uid, (unsigned)geteuid());
	} else if (scope == 1 && !cap) {
		say(t, "kernel.yama.ptrace_scope=1 lets a process attach only "
		    "to its own descendants: start the program under sonde "
		    "with -c, run sonde as root (or give it CAP_SYS_PTRACE), "
		    "or allow it with 'sysctl kernel.yama.ptrace_scope=0'");
	} else {
		say(t, "process %d may not be traced: it is not dumpable (a "
		    "set-user-ID program, one with file capabilities, or one "
		    "that called prctl(PR_SET_DUMPABLE, 0)); only root can "
		    "trace it", t->pid);
	}
}

int tracee_attach(pid_t pid, struct tracee **out, char *why, size_t whylen)
{
	*out = NULL;
	struct tracee *t = calloc(1, sizeof(*t));
	if (!t) {
		snprintf(why, whylen, "%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	t->pid = pid;
	t->mem_fd = -1;
	int r = check_state(t);
	if (r < 0)
		goto fail;
	if (pid == getpid()) {
		say(t, "sonde cannot trace itself");
		r = -EINVAL;
		goto fail;
	}
	bool borrowed;
	if ((r = seize(t, pid, &borrowed)) < 0) {
		if (r == -EPERM)
			explain_eperm(t);
		else if (r == -ESRCH)
			say(t, "no process %d", pid);
		else
			say(t, "cannot trace process %d: %s", pid, strerror(-r));
		goto fail;
	}
	if ((r = add_thread(t, pid)) < 0) {
		if (!borrowed)
			ptrace(PTRACE_DETACH, pid, 0, 0);
		say(t, "%s", strerror(-r));
		goto fail;
	}
	t->threads[0].borrowed = borrowed;
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	t->mem_fd = open(path, O_RDWR | O_CLOEXEC);
	if (t->mem_fd < 0) {
		r = -errno;
		say(t, "cannot open %s: %s", path, strerror(errno));
		goto fail;
	}
	if ((r = tracee_stop_all(t)) < 0)
		goto fail;
	*out = t;
	return 0;
fail:
	snprintf(why, whylen, "%s", t->why);
	tracee_detach(t);
	return r;
}

void tracee_detach(struct tracee *t)
{
	if (!t)
		return;
	/* ptrace wants a tracee in a stop to detach it */
	if (t->nthreads)
		tracee_stop_all(t);
	for (size_t i = 0; i < t->nthreads; i++) {
		struct tracee_thread *th = &t->threads[i];
		write_back(t, th);
		int sig = th->npending ? th->pending[0] : 0;
		ptrace(th->borrowed ? PTRACE_CONT : PTRACE_DETACH, th->tid, 0,
		       (void *)(uintptr_t)sig);
	}
	for (size_t i = 0; i < t->nthreads; i++)
		for (int k = 1; k < t->threads[i].npending; k++)
			syscall(SYS_tgkill, t->pid, t->threads[i].tid,
				t->threads[i].pending[k]);
	if (t->mem_fd >= 0)
		close(t->mem_fd);
	free(t->threads);
	free(t);
}

/* ---- calls ---- */

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
 * main thread, else any thread (-1: none at all). */
static ssize_t idle_thread(struct tracee *t, ssize_t *any)
{
	*any = -1;
	for (size_t i = 0; i < t->nthreads; i++) {
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
	if (t->call_thread_chosen && t->call_thread < t->nthreads)
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
		if (tracee_stop_all(t) < 0)
			return -ESRCH;
		best = idle_thread(t, &any);
	}
	if (best < 0)
		best = any;
	if (best < 0) {
		say(t, "process %d has no thread to run a call on", t->pid);
		return -ESRCH;
	}
	t->call_thread = (size_t)best;
	t->call_thread_chosen = true;
	return 0;
}

struct xstate {
	struct iovec iov;
	bool full;                 /* NT_X86_XSTATE, else the FXSAVE area */
	struct user_fpregs_struct fp;
};

static int xstate_save(pid_t tid, struct xstate *x)
{
	x->iov.iov_base = malloc(XSTATE_MAX);
	x->iov.iov_len = XSTATE_MAX;
	x->full = x->iov.iov_base &&
		  ptrace(PTRACE_GETREGSET, tid, NT_X86_XSTATE, &x->iov) == 0;
	if (x->full)
		return 0;
	free(x->iov.iov_base);
	x->iov.iov_base = NULL;
	return ptrace(PTRACE_GETFPREGS, tid, 0, &x->fp) < 0 ? -errno : 0;
}

static void xstate_restore(pid_t tid, struct xstate *x)
{
	if (x->full)
		ptrace(PTRACE_SETREGSET, tid, NT_X86_XSTATE, &x->iov);
	else
		ptrace(PTRACE_SETFPREGS, tid, 0, &x->fp);
	free(x->iov.iov_base);
}

/* Run thread i until the call returns to address 0. */
static int run_call(struct tracee *t, size_t i, uint64_t ret_sp,
		    unsigned timeout_ms, uint64_t *ret)
{
	double deadline = now_ms() + timeout_ms;
	for (;;) {
		struct tracee_thread *th = &t->threads[i];
		if (ptrace(PTRACE_CONT, th->tid, 0, 0) < 0) {
			say(t, "cannot resume thread %d: %s", th->tid, strerror(errno));
			return -errno;
		}
		th->stopped = false;
		int status, left = (int)(deadline - now_ms());
		int r = wait_tid(th->tid, &status, left > 0 ? left : 0);
		if (r == -ETIMEDOUT) {
			say(t, "the call in thread %d of process %d did not return "
			    "within %u ms (it may wait for a lock the thread "
			    "itself held when it was stopped)", th->tid, t->pid,
			    timeout_ms);
			/* get it back into a stop to put its registers back */
			ptrace(PTRACE_INTERRUPT, th->tid, 0, 0);
			bool gone;
			wait_stopped(t, i, &gone);
			return gone ? -ESRCH : -ETIMEDOUT;
		}
		if (r < 0) {
			say(t, "waiting for thread %d: %s", th->tid, strerror(-r));
			return r;
		}
		enum stop_kind k = note_status(t, i, status);
		th = &t->threads[i];
		if (k == GONE) {
			say(t, "process %d died during a call", t->pid);
			drop_thread(t, i);
			return -ESRCH;
		}
		if (k == EXECED) {
			say(t, "process %d ran a new program during a call", t->pid);
			return -ECHILD;
		}
		if (k != SIGNALLED)
			continue;
		int sig = WSTOPSIG(status);
		struct user_regs_struct *regs = tracee_regs(t, i);
		if (!regs)
			return -ESRCH;
		if (sig == SIGSEGV && regs->rip == 0 && regs->rsp == ret_sp + 8) {
			*ret = regs->rax;
			return 0;
		}
		if (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL ||
		    sig == SIGFPE || sig == SIGABRT || sig == SIGTRAP) {
			say(t, "the call in process %d stopped with signal %d (%s) "
			    "at 0x%llx", t->pid, sig, strsignal(sig), regs->rip);
			return -EFAULT;
		}
		keep_signal(th, sig);   /* the program's: given back later */
	}
}

int tracee_call(struct tracee *t, uint64_t fn, const uint64_t *args,
		int nargs, const void *data, size_t datalen,
		unsigned timeout_ms, uint64_t *ret)
{
	if (nargs > 6 || datalen > 65536)
		return -EINVAL;
	int r = choose_call_thread(t);
	if (r < 0)
		return r;
	size_t i = t->call_thread;
	pid_t tid = t->threads[i].tid;
	struct user_regs_struct *cur = tracee_regs(t, i);
	if (!cur) {
		say(t, "cannot read the registers of thread %d", tid);
		return -ESRCH;
	}
	struct user_regs_struct saved = *cur;
	struct xstate xs;
	if ((r = xstate_save(tid, &xs)) < 0) {
		say(t, "cannot read the FPU state of thread %d: %s", tid,
		    strerror(-r));
		return r;
	}
	/* below the red zone of whatever the thread was doing */
	uint64_t sp = (saved.rsp - 128 - datalen) & ~15ull;
	uint64_t data_at = sp;
	if (data && (r = tracee_write(t, sp, data, datalen)) < 0) {
		say(t, "cannot write to the stack of thread %d: %s", tid,
		    strerror(-r));
		goto restore;
	}
	/* the return address: at a function's entry rsp + 8 is aligned */
	uint64_t zero = 0;
	sp -= 8;
	if ((r = tracee_write(t, sp, &zero, sizeof(zero))) < 0) {
		say(t, "cannot write to the stack of thread %d: %s", tid,
		    strerror(-r));
		goto restore;
	}
	struct user_regs_struct c = saved;
	unsigned long long *argregs[6] = { &c.rdi, &c.rsi, &c.rdx, &c.rcx, &c.r8, &c.r9 };
	for (int k = 0; k < nargs; k++)
		*argregs[k] = args[k] == TRACEE_ARG_DATA ? data_at : args[k];
	c.rip = fn;
	c.rsp = sp;
	c.rax = 0;                       /* no vector arguments (varargs) */
	c.orig_rax = (unsigned long long)-1;   /* no system call to restart */
	c.eflags &= ~0x500ull;           /* DF and TF clear, as the ABI says */
	if (ptrace(PTRACE_SETREGS, tid, 0, &c) < 0) {
		r = -errno;
		say(t, "cannot set the registers of thread %d: %s", tid,
		    strerror(errno));
		goto restore;
	}
	t->threads[i].regs_dirty = false;
	/* the others run meanwhile */
	for (size_t k = 0; k < t->nthreads; k++) {
		struct tracee_thread *th = &t->threads[k];
		if (k == i || !th->stopped)
			continue;
		if ((r = write_back(t, th)) < 0)
			goto restore;
		if (ptrace(PTRACE_CONT, th->tid, 0, 0) == 0) {
			th->stopped = false;
			th->regs_valid = false;
		}
	}
	r = run_call(t, i, sp, timeout_ms, ret);
restore:;
	/* the call thread may have moved in the array (threads came, went) */
	ssize_t at = find_thread(t, tid);
	if (at >= 0 && t->threads[at].stopped) {
		if (ptrace(PTRACE_SETREGS, tid, 0, &saved) == 0) {
			t->threads[at].regs = saved;
			t->threads[at].regs_valid = true;
		}
		xstate_restore(tid, &xs);
	} else {
		free(xs.iov.iov_base);
	}
	int s = tracee_stop_all(t);
	return r < 0 ? r : s;
}
