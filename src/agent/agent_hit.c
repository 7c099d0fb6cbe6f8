/* agent_hit.c - a hit: the one function every patched site reaches, and
 * the per-thread records it keeps (agent.h states its rules).
 *
 * Ending a session safely. A hit marks its thread busy, then reads the
 * session pointer; the session's end unpublishes the pointer, makes every
 * running thread execute a full barrier (agent_barrier_all: an expedited
 * membarrier, so hits need no fence of their own), and waits for every
 * busy flag to clear. A hit that marked itself after the barrier reads no
 * session; one that read it before is waited for. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>

#include "agent_int.h"
#include "fprobe.h"

struct agent_thread agent_threads[AGENT_THREADS_MAX];
uint32_t agent_threads_hwm;
uint32_t agent_shared_lock;
bool agent_fence_hits = true;     /* until agent_patch_register */

/* This thread's record (NULL: none yet), and for a thread without one,
 * whether it is in a hit now (a record's own busy flag says it). */
static __thread struct agent_thread *me_rec;
static __thread uint32_t me_busy;

static pthread_key_t thread_key;
static bool have_key;

/* At thread exit: give the record back (its slot's values stay in the
 * maps, and the next thread to take it adds to them). */
static void thread_gone(void *v)
{
	uintptr_t rec = (uintptr_t)v;
	if (rec && rec <= AGENT_THREADS_MAX)
		__atomic_store_n(&agent_threads[rec - 1].used, 0,
				 __ATOMIC_RELEASE);
	me_rec = NULL;
}

int agent_threads_init(void)
{
	if (have_key)
		return 0;
	int r = pthread_key_create(&thread_key, thread_gone);
	have_key = r == 0;
	return -r;
}

void agent_threads_child(void)
{
	/* only the thread that forked lives on: every record is free, its
	 * own too (it takes the first again at its next hit), and nobody
	 * holds the shared slot */
	for (uint32_t i = 0; i < AGENT_THREADS_MAX; i++)
		agent_threads[i].used = agent_threads[i].busy = 0;
	agent_threads_hwm = 0;
	agent_shared_lock = 0;
	me_rec = NULL;
	me_busy = 0;
	if (have_key)
		pthread_setspecific(thread_key, NULL);
	rt_self.tid = 0;     /* its tid is the child's now */
}

/* A record for this thread, or NULL (all taken: the shared slot). */
static struct agent_thread *thread_register(void)
{
	for (uint32_t i = 0; i < AGENT_THREADS_MAX; i++) {
		uint32_t free = 0;
		if (__atomic_load_n(&agent_threads[i].used, __ATOMIC_RELAXED) ||
		    !__atomic_compare_exchange_n(&agent_threads[i].used, &free,
						 1, false, __ATOMIC_ACQUIRE,
						 __ATOMIC_RELAXED))
			continue;
		uint32_t hwm = __atomic_load_n(&agent_threads_hwm,
					       __ATOMIC_RELAXED);
		while (hwm < i + 1 &&
		       !__atomic_compare_exchange_n(&agent_threads_hwm, &hwm,
						    i + 1, false,
						    __ATOMIC_RELEASE,
						    __ATOMIC_RELAXED))
			;
		me_rec = &agent_threads[i];
		if (have_key)
			pthread_setspecific(thread_key, (void *)(uintptr_t)(i + 1));
		return &agent_threads[i];
	}
	return NULL;
}

/* One program, by its index in the session's. */
static inline __attribute__((always_inline))
void run_one(struct agent_session *s, struct agent_regs *regs,
	     vm_native_fn fn, uint32_t prog)
{
	int err = 0;
	uint64_t ret;
	if (fn)
		fn(regs, &err);
	else if (prog < s->nprogs)
		err = vm_prog_run(s->progs[prog], regs, &ret);
	if (__builtin_expect(err != 0, 0))
		__atomic_add_fetch(&s->rt.shared->aborted, 1, __ATOMIC_RELAXED);
}

/* Run the programs of a patch, or (patch UINT32_MAX) the one program
 * `only` (a function probe's, src/agent/fprobe.c). */
static inline __attribute__((always_inline))
void run(struct agent_session *s, struct agent_regs *regs, uint32_t patch,
	 uint32_t only, uint32_t slot)
{
	rt_self.regs = regs;
	rt_self.slot = slot;
	if (patch == UINT32_MAX) {
		if (only < s->nprogs)
			run_one(s, regs, s->fns[only], only);
	} else if (patch < AGENT_PATCH_MAX) {
		uint64_t site = s->sites[patch];
		uint32_t first = (uint32_t)(site >> 32), n = (uint32_t)site;
		if (first <= s->nsite_progs && n <= s->nsite_progs - first)
			for (uint32_t k = first; k < first + n; k++)
				run_one(s, regs, s->site_fns[k], s->site_progs[k]);
	}
	rt_self.regs = NULL;
}

static void barrier(void)
{
	if (__builtin_expect(__atomic_load_n(&agent_fence_hits, __ATOMIC_RELAXED), 0))
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
	else
		__asm__ __volatile__("" ::: "memory");
}

static struct agent_session *session(void)
{
	return __atomic_load_n(&agent_live->session, __ATOMIC_ACQUIRE);
}

static void nested(void)
{
	struct agent_session *s = session();
	if (s)
		__atomic_add_fetch(&s->rt.shared->nested, 1, __ATOMIC_RELAXED);
}

/* A thread with no record (every one taken): the shared slot's lock is
 * its busy flag. */
static void hit_shared(struct agent_regs *regs, uint32_t patch, uint32_t only)
{
	if (me_busy) {
		nested();
		return;
	}
	me_busy = 1;
	__asm__ __volatile__("" ::: "memory");
	if (rt_lock(&agent_shared_lock)) {
		struct agent_session *s = session();
		if (s && s->slot_count)
			run(s, regs, patch, only,
			    s->slot_first + s->slot_count - 1);
		rt_unlock(&agent_shared_lock);
	}
	__asm__ __volatile__("" ::: "memory");
	me_busy = 0;
}

static inline __attribute__((always_inline))
void hit(struct agent_regs *regs, uint32_t patch, uint32_t only)
{
	struct agent_thread *th = me_rec;
	if (__builtin_expect(!th, 0)) {
		if (me_busy || !(th = thread_register())) {
			hit_shared(regs, patch, only);
			return;
		}
	}
	if (th->busy) {        /* a hit inside a hit: a signal handler */
		nested();
		return;
	}
	__atomic_store_n(&th->busy, 1, __ATOMIC_RELAXED);
	barrier();
	struct agent_session *s = session();
	if (s) {
		uint32_t index = (uint32_t)(th - agent_threads);
		uint32_t shared = s->slot_count ? s->slot_count - 1 : 0;
		if (index < shared) {
			run(s, regs, patch, only, s->slot_first + index);
		} else if (s->slot_count && rt_lock(&agent_shared_lock)) {
			run(s, regs, patch, only, s->slot_first + shared);
			rt_unlock(&agent_shared_lock);
		} else if (s->slot_count) {
			__atomic_add_fetch(&s->rt.shared->slot_waits, 1,
					   __ATOMIC_RELAXED);
		}
	}
	__atomic_store_n(&th->busy, 0, __ATOMIC_RELEASE);
}

void agent_hit(struct agent_regs *regs, uint32_t patch)
{
	hit(regs, patch, UINT32_MAX);
}

/* A function probe (fprobe.c): its program, by its index in the
 * session's programs, which sonde wrote into the site. */
_Static_assert(sizeof(struct fprobe_regs) == sizeof(struct agent_regs),
	       "fprobe_regs and agent_regs are both struct pt_regs");
void agent_fprobe_run(uint32_t prog, struct fprobe_regs *regs)
{
	/* with -p sonde patches the functions before the agent's session
	 * starts (and its first attach initializes the agent): a hit then
	 * runs nothing */
	if (__builtin_expect(!agent_live, 0))
		return;
	hit((struct agent_regs *)regs, UINT32_MAX, prog);
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

bool agent_quiesce(uint64_t timeout_ns)
{
	uint64_t deadline = now_ns() + timeout_ns;
	uint32_t hwm = __atomic_load_n(&agent_threads_hwm, __ATOMIC_ACQUIRE);
	for (uint32_t i = 0; i < hwm; i++) {
		while (__atomic_load_n(&agent_threads[i].busy, __ATOMIC_ACQUIRE)) {
			if (now_ns() > deadline)
				return false;
			sched_yield();
		}
	}
	while (__atomic_load_n(&agent_shared_lock, __ATOMIC_ACQUIRE)) {
		if (now_ns() > deadline)
			return false;
		sched_yield();
	}
	return true;
}
