/* agent_dl.c - libraries the program loads or unloads while traced.
 *
 * The sites of a library that comes later (dlopen: a JVM's libjvm.so, a
 * plugin) are patched when it comes, and a library that goes (dlclose)
 * takes its patched code with it: the patches there are forgotten, so a
 * library mapped later at the same address is patched afresh and nothing
 * is written into it at detach.
 *
 * Sonde's patches come first. When some probes' files were not mapped
 * at attach (PROTO_F_LATE: function probes, stock sys/sdt.h sites, which
 * sonde patches itself over ptrace), the thread whose dlopen() returned
 * asks sonde (PROTO_MAPPED, which names nothing) and waits, bounded, for
 * the answer, which the session's thread receives (it owns the socket's
 * reading) and hands over through a futex word; then the agent patches
 * its own sites (agent_scan_new), finding sonde's jump after a stock
 * site's nop where sonde made one. One question at a time; a question
 * sonde leaves unanswered for ASK_WAIT_MS (a stopped sonde) is not asked
 * again, so no dlopen() waits twice.
 *
 * The preloaded agent interposes dlopen() and dlclose(). One injected
 * after start (-p) cannot (its symbols come after the C library's), and
 * a library may call the loader's own: the session's thread sees the
 * loader's count of loaded objects change (dlpi_adds, checked between
 * its messages every AGENT_WATCH_MS) and asks then, scanning when the
 * answer comes. Hits in the meantime are not counted. */
#include <dlfcn.h>
#include <link.h>
#include <linux/futex.h>
#include <pthread.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "agent_int.h"
#include "proto.h"

#define EXPORT __attribute__((visibility("default")))

#define ASK_WAIT_MS 5000
#define ASK_CLOSED UINT32_MAX   /* ask_done: the session's thread ended */

static pthread_mutex_t ask_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t ask_seq;        /* the last question's number */
static uint32_t ask_done;       /* the last answered (a futex word) */
static bool ask_gave_up;        /* one question went unanswered */
/* the session's thread's own question (agent_loads_watch), 0 if none */
static uint32_t watch_seq;
static uint64_t watch_asked_ns;
/* the loader's count when the sites were last looked for */
static unsigned long long seen_adds;

static int adds_of(struct dl_phdr_info *info, size_t size, void *data)
{
	*(unsigned long long *)data = info->dlpi_adds;
	return 1;
}

/* How many objects the loader has loaded in the process's life: a change
 * says a library came, however it was loaded. Takes the loader's lock:
 * never called under the patch lock. */
static unsigned long long loaded_adds(void)
{
	unsigned long long v = 0;
	dl_iterate_phdr(adds_of, &v);
	return v;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint32_t next_seq(void)
{
	uint32_t seq = ++ask_seq;
	if (seq == ASK_CLOSED || seq == 0)
		seq = ask_seq = 1;
	return seq;
}

/* The agent's sites, after sonde's: the loader's count first, so a
 * library loaded while they are looked for is looked for again. */
static void scan(void)
{
	__atomic_store_n(&seen_adds, loaded_adds(), __ATOMIC_RELAXED);
	agent_scan_new();
}

static void answered(uint32_t seq)
{
	__atomic_store_n(&ask_done, seq, __ATOMIC_RELEASE);
	syscall(SYS_futex, &ask_done, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
}

/* Ask sonde to patch what is its own in what the process maps now, and
 * wait (bounded) for its answer. */
static void ask_sonde(void)
{
	int fd;
	uint64_t ino;
	bool late;
	if (!agent_channel(&fd, &ino, &late) || !late || ask_gave_up)
		return;
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += ASK_WAIT_MS / 1000;
	if (pthread_mutex_timedlock(&ask_lock, &until) != 0)
		return;
	uint32_t seq = next_seq();
	if (__atomic_load_n(&ask_done, __ATOMIC_ACQUIRE) != ASK_CLOSED) {
		struct proto_mapped m = { .type = PROTO_MAPPED, .seq = seq };
		agent_send(fd, ino, &m, sizeof(m));
		uint64_t t0 = mono_ns();
		for (;;) {
			uint32_t v = __atomic_load_n(&ask_done, __ATOMIC_ACQUIRE);
			if (v == seq || v == ASK_CLOSED)
				break;
			uint64_t spent = mono_ns() - t0;
			if (spent >= ASK_WAIT_MS * 1000000ull) {
				/* sonde stopped (SIGSTOP, a debugger): the
				 * program's next dlopen() does not wait */
				ask_gave_up = true;
				break;
			}
			uint64_t left = ASK_WAIT_MS * 1000000ull - spent;
			struct timespec ts = { (time_t)(left / 1000000000),
					       (long)(left % 1000000000) };
			syscall(SYS_futex, &ask_done, FUTEX_WAIT_PRIVATE, v, &ts,
				NULL, 0);
		}
	}
	pthread_mutex_unlock(&ask_lock);
}

void agent_loads_session(void)
{
	__atomic_store_n(&seen_adds, loaded_adds(), __ATOMIC_RELAXED);
	__atomic_store_n(&ask_done, 0, __ATOMIC_RELEASE);
}

void agent_loads_answered(uint32_t seq)
{
	if (watch_seq && seq == watch_seq) {
		watch_seq = 0;
		scan();
	} else {
		answered(seq);
	}
}

void agent_loads_closed(void)
{
	answered(ASK_CLOSED);
}

void agent_loads_child(void)
{
	/* one thread now: a question its parent's thread was asking is
	 * not this process's */
	pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
	memcpy(&ask_lock, &fresh, sizeof(fresh));
	ask_done = 0;
	watch_seq = 0;
	ask_gave_up = false;
}

bool agent_loads_untold(void)
{
	return watch_seq ||
	       loaded_adds() != __atomic_load_n(&seen_adds, __ATOMIC_RELAXED);
}

void agent_loads_watch(void)
{
	if (watch_seq) {
		/* unanswered in time: the agent's own patches, as before */
		if (mono_ns() - watch_asked_ns > ASK_WAIT_MS * 1000000ull) {
			watch_seq = 0;
			ask_gave_up = true;
			scan();
		}
		return;
	}
	if (loaded_adds() == __atomic_load_n(&seen_adds, __ATOMIC_RELAXED))
		return;
	int fd;
	uint64_t ino;
	bool late;
	if (!agent_channel(&fd, &ino, &late))
		return;
	if (!late || ask_gave_up) {
		scan();
		return;
	}
	if (pthread_mutex_trylock(&ask_lock) != 0)
		return;           /* a dlopen() asks: it scans after */
	struct proto_mapped m = { .type = PROTO_MAPPED, .seq = next_seq() };
	agent_send(fd, ino, &m, sizeof(m));
	watch_seq = m.seq;
	watch_asked_ns = mono_ns();
	pthread_mutex_unlock(&ask_lock);
}

/* After the program loaded a library (its dlopen() returned). */
static void loaded(void)
{
	if (!agent_live || !__atomic_load_n(&agent_live->session, __ATOMIC_ACQUIRE))
		return;
	ask_sonde();
	scan();
}

typedef void *(*dlopen_fn)(const char *, int);
typedef int (*dlclose_fn)(void *);

EXPORT void *dlopen(const char *file, int flags)
{
	static dlopen_fn real;
	if (!real)
		real = (dlopen_fn)dlsym(RTLD_NEXT, "dlopen");
	void *h = real ? real(file, flags) : NULL;
	if (h)
		loaded();
	return h;
}

EXPORT int dlclose(void *handle)
{
	static dlclose_fn real;
	if (!real)
		real = (dlclose_fn)dlsym(RTLD_NEXT, "dlclose");
	int r = real ? real(handle) : -1;
	if (r == 0)
		agent_unmapped();
	return r;
}
