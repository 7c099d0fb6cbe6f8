/* agent_patch.c - the patch table and writing code while other threads
 * run it (the protocol is described in agent.h). Every change of code or
 * of the table happens under one lock; the table is read without it by
 * hits and by the trap handler (entries are published once, complete,
 * and never removed). */
#include <errno.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../runtime/rt.h"
#include "agent.h"
#include "agent_int.h"

static struct agent_patch patches[AGENT_PATCH_MAX];
static uint32_t npatches;
/* Open addressing by address: id + 1, 0 for empty. */
#define INDEX_SIZE (2 * AGENT_PATCH_MAX)
static uint32_t index_of[INDEX_SIZE];

static pthread_mutex_t patch_lock = PTHREAD_MUTEX_INITIALIZER;

void agent_patch_lock(void)
{
	pthread_mutex_lock(&patch_lock);
}

void agent_patch_unlock(void)
{
	pthread_mutex_unlock(&patch_lock);
}

static uint32_t addr_hash(uint64_t a)
{
	a *= 0x9e3779b97f4a7c15ull;
	return (uint32_t)(a >> 40) & (INDEX_SIZE - 1);
}

struct agent_patch *agent_patch_get(uint32_t id)
{
	return id < __atomic_load_n(&npatches, __ATOMIC_ACQUIRE) ?
		&patches[id] : NULL;
}

struct agent_patch *agent_patch_find(uint64_t addr)
{
	for (uint32_t i = addr_hash(addr), n = 0; n < INDEX_SIZE;
	     i = (i + 1) & (INDEX_SIZE - 1), n++) {
		uint32_t v = __atomic_load_n(&index_of[i], __ATOMIC_ACQUIRE);
		if (!v)
			return NULL;
		if (patches[v - 1].addr == addr)
			return &patches[v - 1];
	}
	return NULL;
}

/* The trampoline of a 5-byte nop: the hit, then back past the nop.
 *
 * Where it goes makes the jump's displacement end in 1f 44 (little
 * endian): a kernel uprobe that comes and goes on the site writes the
 * nop's first byte (0f) back over the jump's, and 0f 1f 44 SIB disp8 is
 * a nop of 5 bytes again, whatever the other two (agent_watch.c then
 * makes it the jump again). */
#define NOP5_REL_LOW 0x441fu
static int tramp_nop(struct agent_patch *p, uint32_t id)
{
	uint8_t *t = agent_tramp_alloc_mod(p->addr, AGENT_TRAMP_HIT_MAX + 8,
					   (uint32_t)(p->addr + 5 + NOP5_REL_LOW));
	if (!t)
		return -ENOMEM;
	size_t n = agent_tramp_emit_hit(t, p->addr, id);
	if (n > AGENT_TRAMP_HIT_MAX)
		return -EOVERFLOW;   /* cannot happen: the emitter's bound */
	int r = agent_emit_jmp(t + n, (uint64_t)(uintptr_t)(t + n),
			       p->addr + p->len);
	if (r < 0)
		return r;
	p->tramp = t;
	p->code[0] = 0xe9;
	return agent_emit_jmp(p->code, p->addr, (uint64_t)(uintptr_t)t);
}

uint32_t agent_patch_next_id(void)
{
	return npatches;
}

/* Publish patch n (filled in). */
static void publish(uint32_t n, uint32_t *id)
{
	uint32_t i = addr_hash(patches[n].addr);
	while (index_of[i])
		i = (i + 1) & (INDEX_SIZE - 1);
	__atomic_store_n(&npatches, n + 1, __ATOMIC_RELEASE);
	__atomic_store_n(&index_of[i], n + 1, __ATOMIC_RELEASE);
	*id = n;
}

int agent_patch_add_tramp(uint64_t addr, const uint8_t *orig, uint32_t len,
			  void *tramp, uint64_t trap_resume, uint32_t *id)
{
	if (agent_patch_find(addr))
		return -EEXIST;
	if (len < 5 || len > AGENT_PATCH_BYTES)
		return -EINVAL;
	if (npatches == AGENT_PATCH_MAX)
		return -ENOSPC;
	uint32_t n = npatches;
	struct agent_patch *p = &patches[n];
	rt_memset(p, 0, sizeof(*p));
	p->addr = addr;
	p->len = len;
	p->kind = PATCH_JMP;
	p->tramp = tramp;
	p->resume = trap_resume;
	rt_memcpy(p->orig, orig, len);
	rt_memset(p->code, 0xcc, len);
	int r = agent_emit_jmp(p->code, addr, (uint64_t)(uintptr_t)tramp);
	if (r < 0)
		return r;
	publish(n, id);
	return 0;
}

int agent_patch_add(uint64_t addr, const uint8_t *orig, uint32_t len,
		    enum agent_patch_kind kind, uint32_t *id)
{
	struct agent_patch *old = agent_patch_find(addr);
	if (old) {
		if (old->len != len || old->kind != kind ||
		    !rt_memeq(old->orig, orig, len))
			return -EEXIST;
		*id = (uint32_t)(old - patches);
		return 0;
	}
	if (len == 0 || len > AGENT_PATCH_BYTES)
		return -EINVAL;
	if (npatches == AGENT_PATCH_MAX)
		return -ENOSPC;
	uint32_t n = npatches;
	struct agent_patch *p = &patches[n];
	rt_memset(p, 0, sizeof(*p));
	p->addr = addr;
	p->len = len;
	p->kind = kind;
	rt_memcpy(p->orig, orig, len);
	rt_memcpy(p->code, orig, len);
	p->resume = addr + len;
	if (kind == PATCH_INT3) {
		p->code[0] = 0xcc;
	} else {
		if (len != 5)
			return -EINVAL;
		int r = tramp_nop(p, n);
		if (r < 0)
			return r;
	}
	publish(n, id);
	return 0;
}

/* ---- writing code ---- */

static int membarrier(int cmd)
{
	return (int)syscall(SYS_membarrier, cmd, 0, 0);
}

static bool have_sync_core, have_expedited, register_tried;

void agent_patch_register(void)
{
	if (__atomic_exchange_n(&register_tried, true, __ATOMIC_ACQ_REL))
		return;
	bool sync_core = membarrier(
		MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE) == 0;
	bool expedited = membarrier(
		MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
	/* under the lock: no session ends (agent_barrier_all) half-way
	 * through the switch, and hits stop fencing only once a barrier
	 * does it for them */
	agent_patch_lock();
	__atomic_store_n(&have_sync_core, sync_core, __ATOMIC_RELAXED);
	__atomic_store_n(&have_expedited, expedited, __ATOMIC_RELEASE);
	__atomic_store_n(&agent_fence_hits, !expedited, __ATOMIC_RELEASE);
	agent_patch_unlock();
}

void agent_sync_core(void)
{
	/* Without it, the mprotect around every write has already sent
	 * each CPU running the process a TLB shootdown, whose interrupt
	 * return serializes it. */
	if (__atomic_load_n(&have_sync_core, __ATOMIC_RELAXED))
		membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE);
}

void agent_barrier_all(void)
{
	if (__atomic_load_n(&have_expedited, __ATOMIC_ACQUIRE))
		membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED);
	else
		__atomic_thread_fence(__ATOMIC_SEQ_CST);   /* hits fence too */
}

/* Make the pages of [a, a + len) writable (or executable again). Text
 * is read+execute; a write to it makes the page a private copy. */
static int text_protect(uint64_t a, uint64_t len, bool writable)
{
	uint64_t start = a & ~4095ull, end = (a + len + 4095) & ~4095ull;
	int prot = PROT_READ | PROT_EXEC | (writable ? PROT_WRITE : 0);
	return mprotect((void *)start, end - start, prot) < 0 ? -errno : 0;
}

/* The 8-byte window holding [a, a + len) inside one cache line, or 0. */
static uint64_t window_of(uint64_t a, uint32_t len)
{
	if (len > 8)
		return 0;
	uint64_t w = a & ~7ull;
	if (a + len <= w + 8)
		return w;
	w = a + len - 8;
	return (w & ~63ull) == ((w + 7) & ~63ull) ? w : 0;
}

static void store_byte(uint64_t a, uint8_t b)
{
	__atomic_store_n((uint8_t *)a, b, __ATOMIC_SEQ_CST);
}

/* Replace `from` with `to` at a (len bytes), safely for running threads. */
static int code_write(uint64_t a, const uint8_t *from, const uint8_t *to,
		      uint32_t len)
{
	uint64_t w = window_of(a, len);
	uint64_t lo = w && w < a ? w : a, hi = w && w + 8 > a + len ? w + 8 :
		a + len;
	int r = text_protect(lo, hi - lo, true);
	if (r < 0)
		return r;
	if (!rt_memeq((const void *)a, from, len)) {
		r = -EBUSY;          /* someone else changed it */
	} else if (len == 1) {
		store_byte(a, to[0]);
	} else if (w) {
		uint64_t *word = (uint64_t *)w, old, new;
		old = __atomic_load_n(word, __ATOMIC_SEQ_CST);
		rt_memcpy(&new, &old, 8);
		rt_memcpy((uint8_t *)&new + (a - w), to, len);
		if (!__atomic_compare_exchange_n(word, &old, new, false,
						 __ATOMIC_SEQ_CST,
						 __ATOMIC_SEQ_CST))
			r = -EBUSY;
	} else {
		/* int3 first: a thread that reaches it traps (agent_trap.c
		 * resumes it as the patch says), then the tail, then the
		 * first byte, each step seen by every thread */
		store_byte(a, 0xcc);
		agent_sync_core();
		for (uint32_t i = 1; i < len; i++)
			store_byte(a + i, to[i]);
		agent_sync_core();
		store_byte(a, to[0]);
	}
	text_protect(lo, hi - lo, false);
	agent_sync_core();
	return r;
}

int agent_code_write(uint64_t a, const uint8_t *from, const uint8_t *to,
		     uint32_t len)
{
	return code_write(a, from, to, len);
}

int agent_code_poke(uint64_t a, const uint8_t *bytes, uint32_t len)
{
	int r = text_protect(a, len, true);
	if (r < 0)
		return r;
	for (uint32_t i = 0; i < len; i++)
		store_byte(a + i, bytes[i]);
	text_protect(a, len, false);
	agent_sync_core();
	return 0;
}

int agent_patch_apply(struct agent_patch *p)
{
	if (p->applied)
		return 0;
	int r = code_write(p->addr, p->orig, p->code, p->len);
	if (r == 0) {
		p->applied = true;
		p->gone = false;
	}
	return r;
}

int agent_patch_restore(struct agent_patch *p)
{
	if (!p->applied)
		return 0;
	int r = code_write(p->addr, p->code, p->orig, p->len);
	if (r == 0)
		p->applied = false;
	return r;
}

/* After dlclose(): patches whose code is no longer there (unmapped, or
 * something else mapped in its place) are forgotten as applied. */
void agent_patch_forget_unmapped(void)
{
	for (uint32_t i = 0; i < npatches; i++) {
		struct agent_patch *p = &patches[i];
		uint8_t now[AGENT_PATCH_BYTES];
		if (!p->applied)
			continue;
		if (rt_read(now, (const void *)p->addr, p->len) < 0 ||
		    !rt_memeq(now, p->code, p->len)) {
			p->applied = false;
			p->gone = true;
		}
	}
}

/* In a fork()ed child (one thread): put every byte back, plainly. */
void agent_patch_restore_all_child(void)
{
	for (uint32_t i = 0; i < npatches; i++) {
		struct agent_patch *p = &patches[i];
		if (!p->applied)
			continue;
		if (text_protect(p->addr, p->len, true) == 0) {
			rt_memcpy((void *)p->addr, p->orig, p->len);
			text_protect(p->addr, p->len, false);
		}
		p->applied = false;
	}
}
