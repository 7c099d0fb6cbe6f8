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
#include "../base/file.h"
#include "../base/log.h"
#include "../base/vec.h"
#include "tracee_int.h"

#define MAX_THREADS 65536
#define XSTATE_MAX (64 * 1024)

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Process-wide: waits give up when a stop signal comes (attaching), or
 * go on (detaching, which must finish). */
static bool waits_cancellable;

bool tracee_cancellable(bool on)
{
	bool was = waits_cancellable;
	waits_cancellable = on;
	return was;
}

/* waitpid for one traced thread, giving up after timeout_ms. SIGCHLD
 * (which the kernel sends the tracer at every stop) is blocked and waited
 * for, so there is no polling; one that was taken from sonde's own
 * handler is raised again afterwards. A stop signal interrupts the wait
 * (sigtimedwait is never restarted), which then ends while attaching.
 * Returns 0, -ETIMEDOUT, -ECANCELED or -errno. */
int tracee_wait_tid(pid_t tid, int *status, int timeout_ms)
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
		if (waits_cancellable && cancel_requested()) {
			ret = -ECANCELED;
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

ssize_t tracee_find_thread(const struct tracee *t, pid_t tid)
{
	for (size_t i = 0; i < t->nthreads; i++)
		if (t->threads[i].tid == tid)
			return (ssize_t)i;
	return -1;
}

static int add_thread(struct tracee *t, pid_t tid)
{
	if (t->nthreads >= MAX_THREADS)
		return -E2BIG;
	if (vec_reserve_arr(t->threads, t->cap, t->nthreads + 1))
		return -ENOMEM;
	t->threads[t->nthreads++] = (struct tracee_thread){ .tid = tid };
	return 0;
}

void tracee_drop_thread(struct tracee *t, size_t i)
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

void tracee_keep_signal(struct tracee_thread *th, int sig)
{
	for (int k = 0; k < th->npending; k++)
		if (th->pending[k] == sig && sig < SIGRTMIN)
			return;   /* standard signals do not queue anyway */
	if (th->npending < TRACEE_MAX_PENDING)
		th->pending[th->npending++] = sig;
}


enum stop_kind tracee_note_status(struct tracee *t, size_t i, int status)
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
		    tracee_find_thread(t, (pid_t)child) < 0)
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
int tracee_wait_stopped(struct tracee *t, size_t i, bool *gone)
{
	*gone = false;
	double deadline = now_ms() + STOP_TIMEOUT_MS;
	for (;;) {
		pid_t tid = t->threads[i].tid;
		int status, left = (int)(deadline - now_ms());
		int r = tracee_wait_tid(tid, &status, left > 0 ? left : 0);
		if (r == -ETIMEDOUT && thread_is_zombie(t->pid, tid))
			r = -ECHILD;
		if (r == -ECHILD) {   /* exited and reaped, or a zombie */
			tracee_drop_thread(t, i);
			*gone = true;
			return 0;
		}
		if (r == -ETIMEDOUT) {
			tracee_say(t, "thread %d of process %d did not stop within %d ms "
			    "(is it in an uninterruptible sleep?)", tid, t->pid,
			    STOP_TIMEOUT_MS);
			return r;
		}
		if (r < 0) {
			tracee_say(t, "waiting for thread %d: %s", tid, strerror(-r));
			return r;
		}
		switch (tracee_note_status(t, i, status)) {
		case GONE:
			tracee_drop_thread(t, i);
			*gone = true;
			return 0;
		case EXECED:
			tracee_say(t, "process %d ran a new program (exec) while sonde "
			    "was attaching", t->pid);
			return -ECHILD;
		case SIGNALLED:
			tracee_keep_signal(&t->threads[i], WSTOPSIG(status));
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

static const long seize_opts = PTRACE_O_TRACECLONE | PTRACE_O_TRACESYSGOOD;

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
			int r = tracee_wait_stopped(t, i, &gone);
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
			tracee_say(t, "process %d: %s", t->pid,
			    r == -ENOENT ? "no such process" : strerror(-r));
			return r == -ENOENT ? -ESRCH : r;
		}
		bool fresh = false;
		for (size_t k = 0; k < n; k++) {
			if (tracee_find_thread(t, tids[k]) >= 0)
				continue;
			bool borrowed;
			int e = seize(t, tids[k], &borrowed);
			if (e == -ESRCH)
				continue;   /* exited meanwhile */
			if (e < 0) {
				tracee_say(t, "cannot trace thread %d of process %d: %s",
				    tids[k], t->pid, strerror(-e));
				free(tids);
				return e;
			}
			if ((r = add_thread(t, tids[k])) < 0) {
				if (!borrowed)
					ptrace(PTRACE_DETACH, tids[k], 0, 0);
				free(tids);
				tracee_say(t, "process %d: too many threads", t->pid);
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
	tracee_say(t, "process %d keeps creating threads faster than sonde can stop them",
	    t->pid);
	return -EAGAIN;
}

int tracee_write_back(struct tracee *t, struct tracee_thread *th)
{
	if (!th->regs_dirty)
		return 0;
	if (ptrace(PTRACE_SETREGS, th->tid, 0, &th->regs) < 0) {
		int e = errno;
		tracee_say(t, "cannot set the registers of thread %d: %s", th->tid,
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
		int r = tracee_write_back(t, th);
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
	int r = tracee_write_back(t, th);
	if (r < 0)
		return r;
	for (int tries = 0; tries < 100; tries++) {
		if (ptrace(PTRACE_SINGLESTEP, th->tid, 0, 0) < 0)
			return -errno;
		th->stopped = false;
		th->regs_valid = false;
		int status;
		r = tracee_wait_tid(th->tid, &status, STOP_TIMEOUT_MS);
		if (r < 0)
			return r;
		enum stop_kind k = tracee_note_status(t, i, status);
		th = &t->threads[i];
		if (k == GONE) {
			tracee_drop_thread(t, i);
			return -ESRCH;
		}
		if (k == SIGNALLED && WSTOPSIG(status) != SIGTRAP) {
			tracee_keep_signal(th, WSTOPSIG(status));
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

int tracee_regs_flush(struct tracee *t, size_t i)
{
	return tracee_write_back(t, &t->threads[i]);
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

/* A process's name, as it chose it: printed escaped. */
static char *read_comm(pid_t pid, char *buf, size_t len)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	char *s = file_read(path, NULL);
	if (s)
		s[strcspn(s, "\n")] = 0;
	log_clean(buf, len, s ? s : "?");
	free(s);
	return buf;
}

/* Before seizing: states in which tracing cannot work, said plainly. */
static int check_state(struct tracee *t)
{
	char path[64], comm[80];
	snprintf(path, sizeof(path), "/proc/%d/status", t->pid);
	char *st = file_read(path, NULL);
	if (!st) {
		tracee_say(t, "no process %d", t->pid);
		return -ESRCH;
	}
	char state = status_state(st);
	long tracer = status_field(st, "TracerPid:");
	long tgid = status_field(st, "Tgid:");
	free(st);
	if (tgid > 0 && tgid != t->pid) {
		tracee_say(t, "%d is a thread of process %ld: give the process id",
		    t->pid, tgid);
		return -EINVAL;
	}
	if (state == 'Z' || state == 'X') {
		tracee_say(t, "process %d (%s) has exited (a zombie waiting for its "
		    "parent): there is nothing left to trace", t->pid,
		    read_comm(t->pid, comm, sizeof(comm)));
		return -ESRCH;
	}
	if (tracer > 0 && tracer != getpid()) {
		char tcomm[80];
		tracee_say(t, "process %d is already traced by process %ld (%s): a "
		    "process has one tracer at a time; detach that one first",
		    t->pid, tracer, read_comm((pid_t)tracer, tcomm, sizeof(tcomm)));
		return -EBUSY;
	}
	if (state == 'T') {
		tracee_say(t, "process %d is stopped (job control): continue it first "
		    "(kill -CONT %d)", t->pid, t->pid);
		return -EAGAIN;
	}
	snprintf(path, sizeof(path), "/proc/%d/exe", t->pid);
	char exe[8];
	if (readlink(path, exe, sizeof(exe)) < 0 && errno == ENOENT) {
		tracee_say(t, "process %d is a kernel thread: it has no user space to "
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
		char tcomm[80];
		tracee_say(t, "process %d is already traced by process %ld (%s): a "
		    "process has one tracer at a time; detach that one first",
		    t->pid, tracer, read_comm((pid_t)tracer, tcomm, sizeof(tcomm)));
	} else if (scope == 3) {
		tracee_say(t, "ptrace is disabled on this system "
		    "(kernel.yama.ptrace_scope=3, which only a reboot resets): "
		    "start the program under sonde with -c instead of -p");
	} else if (scope == 2 && !cap) {
		tracee_say(t, "kernel.yama.ptrace_scope=2 lets only processes with "
		    "CAP_SYS_PTRACE attach: run sonde as root, or start the "
		    "program under sonde with -c");
	} else if (uid >= 0 && (uid_t)uid != geteuid() && !cap) {
		tracee_say(t, "process %d belongs to uid %ld, not to you (uid %u): "
		    "trace your own processes, or run sonde as root",
		    t->pid, uid, (unsigned)geteuid());
	} else if (scope == 1 && !cap) {
		tracee_say(t, "kernel.yama.ptrace_scope=1 lets a process attach only "
		    "to its own descendants: start the program under sonde "
		    "with -c, run sonde as root (or give it CAP_SYS_PTRACE), "
		    "or allow it with 'sysctl kernel.yama.ptrace_scope=0'");
	} else {
		tracee_say(t, "process %d may not be traced: it is not dumpable (a "
		    "set-user-ID program, one with file capabilities, or one "
		    "that called prctl(PR_SET_DUMPABLE, 0)); only root can "
		    "trace it", t->pid);
	}
}

int tracee_precheck(pid_t pid, char *why, size_t whylen)
{
	struct tracee t = { .pid = pid, .mem_fd = -1 };
	int r = check_state(&t);
	if (r == 0 && pid == getpid()) {
		tracee_say(&t, "sonde cannot trace itself");
		r = -EINVAL;
	}
	if (r == 0) {
		/* opening its memory is ptrace's own permission check (Yama
		 * included), made without touching the process */
		char path[64];
		snprintf(path, sizeof(path), "/proc/%d/mem", pid);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0)
			close(fd);
		else if (errno == EACCES || errno == EPERM) {
			explain_eperm(&t);
			r = -EPERM;
		} else if (errno == ENOENT || errno == ESRCH) {
			tracee_say(&t, "no process %d", pid);
			r = -ESRCH;
		}
	}
	if (r < 0)
		snprintf(why, whylen, "%s", t.why);
	return r;
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
		tracee_say(t, "sonde cannot trace itself");
		r = -EINVAL;
		goto fail;
	}
	bool borrowed;
	if ((r = seize(t, pid, &borrowed)) < 0) {
		if (r == -EPERM)
			explain_eperm(t);
		else if (r == -ESRCH)
			tracee_say(t, "no process %d", pid);
		else
			tracee_say(t, "cannot trace process %d: %s", pid, strerror(-r));
		goto fail;
	}
	if ((r = add_thread(t, pid)) < 0) {
		if (!borrowed)
			ptrace(PTRACE_DETACH, pid, 0, 0);
		tracee_say(t, "%s", strerror(-r));
		goto fail;
	}
	t->threads[0].borrowed = borrowed;
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	t->mem_fd = open(path, O_RDWR | O_CLOEXEC);
	if (t->mem_fd < 0) {
		r = -errno;
		tracee_say(t, "cannot open %s: %s", path, strerror(errno));
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
	/* ptrace wants a tracee in a stop to detach it: these waits go on
	 * after a stop signal (each is bounded) */
	bool was = tracee_cancellable(false);
	if (t->nthreads)
		tracee_stop_all(t);
	tracee_cancellable(was);
	for (size_t i = 0; i < t->nthreads; i++) {
		struct tracee_thread *th = &t->threads[i];
		tracee_write_back(t, th);
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
