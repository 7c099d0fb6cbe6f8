/* maps.c - the maps of the process engine, in the shared region: hash
 * maps (chained, fixed capacity, lock-free lookups), arrays, their
 * per-CPU forms with one value per slot, and stack-trace maps. The
 * layouts and the concurrency rules are in rt_int.h. */
#include <errno.h>
#include <linux/bpf.h>
#include <sched.h>

#include "../program.h"
#include "rt.h"
#include "rt_int.h"

/* Spins before yielding, and yields before giving up: a lock is held for
 * a few hundred instructions, so only a holder that is not running (a
 * stopped or killed process, a preempted thread) makes anyone wait. */
#define LOCK_SPINS 1000
#define LOCK_YIELDS 20000

bool rt_lock(uint32_t *lock)
{
	unsigned yields = rt_proc.lock_yields ? rt_proc.lock_yields : LOCK_YIELDS;
	for (unsigned i = 0; i < LOCK_SPINS + yields; i++) {
		uint32_t free = 0;
		if (__atomic_load_n(lock, __ATOMIC_RELAXED) == 0 &&
		    __atomic_compare_exchange_n(lock, &free, 1, false,
						__ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			return true;
		if (i < LOCK_SPINS)
			__asm__ __volatile__("pause" ::: "memory");
		else
			sched_yield();
	}
	return false;
}

void rt_unlock(uint32_t *lock)
{
	__atomic_store_n(lock, 0, __ATOMIC_RELEASE);
}

typedef uint64_t __attribute__((aligned(1), may_alias)) u64_unaligned;

/* 8-byte keys (u64s, a keyless map's zero, pids) are most keys: one
 * multiply, the high half (Fibonacci hashing). */
static inline uint32_t hash8(uint64_t k)
{
	return (uint32_t)((k * 0x9e3779b97f4a7c15ull) >> 32);
}

static inline __attribute__((always_inline))
uint32_t key_hash(const void *key, uint32_t n)
{
	if (n == 8)
		return hash8(*(const u64_unaligned *)key);
	const uint8_t *p = key;
	uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
	for (; n >= 8; n -= 8, p += 8) {
		h ^= *(const u64_unaligned *)p;
		h *= 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	uint64_t tail = 0;
	for (uint32_t i = 0; i < n; i++)
		tail |= (uint64_t)p[i] << (8 * i);
	h ^= tail;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 29;
	return (uint32_t)h;
}

static struct rt_hash_hdr *hash_hdr(const struct rt_map *m)
{
	return (struct rt_hash_hdr *)m->data;
}

static struct rt_bucket *hash_bucket(const struct rt_map *m, uint32_t h)
{
	struct rt_bucket *b = (struct rt_bucket *)(m->data +
						   sizeof(struct rt_hash_hdr));
	return &b[h & (m->nbuckets - 1)];
}

/* Element idx + 1 (a chain link), or NULL for 0 or a link out of range. */
static struct rt_elem *hash_elem(const struct rt_map *m, uint32_t link)
{
	if (link == 0 || link > m->max_entries)
		return NULL;
	return (struct rt_elem *)(m->data + sizeof(struct rt_hash_hdr) +
				  (uint64_t)m->nbuckets * sizeof(struct rt_bucket) +
				  (uint64_t)(link - 1) * m->elem_size);
}

static uint32_t elem_link(const struct rt_map *m, const struct rt_elem *e)
{
	const uint8_t *first = m->data + sizeof(struct rt_hash_hdr) +
		(uint64_t)m->nbuckets * sizeof(struct rt_bucket);
	return (uint32_t)(((const uint8_t *)e - first) / m->elem_size) + 1;
}

static uint8_t *elem_key(const struct rt_map *m, struct rt_elem *e)
{
	return (uint8_t *)e + m->key_off;
}

static uint8_t *elem_value(const struct rt_map *m, struct rt_elem *e)
{
	return (uint8_t *)e + m->value_off;
}

/* The live element with this key, following the chain from `head`; at
 * most max_entries steps, whatever the links say. */
static struct rt_elem *chain_find(const struct rt_map *m, uint32_t head,
				  uint32_t h, const void *key,
				  struct rt_elem **prev)
{
	struct rt_elem *p = NULL;
	uint32_t link = head;
	for (uint32_t steps = 0; link && steps < m->max_entries; steps++) {
		struct rt_elem *e = hash_elem(m, link);
		if (!e)
			return NULL;
		if (__atomic_load_n(&e->hash, __ATOMIC_RELAXED) == h &&
		    __atomic_load_n(&e->live, __ATOMIC_ACQUIRE) &&
		    rt_memeq(elem_key(m, e), key, m->key_size)) {
			if (prev)
				*prev = p;
			return e;
		}
		p = e;
		link = __atomic_load_n(&e->next, __ATOMIC_ACQUIRE);
	}
	return NULL;
}

/* chain_find for the common 8-byte key (a u64, a keyless map's zero, a
 * pid): the hash and the compare inlined, the same walk. */
static struct rt_elem *hash_find8(const struct rt_map *m, const void *key)
{
	uint64_t k = *(const u64_unaligned *)key;
	uint32_t h = hash8(k);
	struct rt_bucket *b = hash_bucket(m, h);
	uint32_t link = __atomic_load_n(&b->head, __ATOMIC_ACQUIRE);
	for (uint32_t steps = 0; link && steps < m->max_entries; steps++) {
		struct rt_elem *e = hash_elem(m, link);
		if (!e)
			return NULL;
		if (e->hash == h && __atomic_load_n(&e->live, __ATOMIC_ACQUIRE) &&
		    *(const u64_unaligned *)elem_key(m, e) == k)
			return e;
		link = __atomic_load_n(&e->next, __ATOMIC_ACQUIRE);
	}
	return NULL;
}

static struct rt_elem *hash_find(const struct rt_map *m, const void *key)
{
	if (m->key_size == 8)
		return hash_find8(m, key);
	uint32_t h = key_hash(key, m->key_size);
	struct rt_bucket *b = hash_bucket(m, h);
	return chain_find(m, __atomic_load_n(&b->head, __ATOMIC_ACQUIRE), h,
			  key, NULL);
}

static bool percpu(const struct rt_map *m)
{
	return map_kind_percpu(m->kind);
}

/* The value of one slot, or of every slot (RT_ALL_SLOTS: slot 0 first). */
static void *slot_value(const struct rt_map *m, uint8_t *values,
			uint32_t slot)
{
	if (!percpu(m) || slot == RT_ALL_SLOTS)
		return values;
	if (slot >= m->nslots)
		return NULL;
	return values + (uint64_t)slot * m->stride;
}

static void *array_values(const struct rt_map *m, const void *key)
{
	uint32_t idx = *(const uint32_t *)key;
	if (idx >= m->max_entries)
		return NULL;
	return m->data + (uint64_t)idx * m->stride * m->nslots;
}

static struct rt_stack_entry *stack_entry(const struct rt_map *m, uint32_t id)
{
	return (struct rt_stack_entry *)(m->data + (uint64_t)id * m->elem_size);
}

/* Claiming an entry sets nr to this while its frames are written. */
#define STACK_WRITING UINT32_MAX

/* A stack map's frames by id (the reader's lookup), or NULL. */
static void *stack_lookup(const struct rt_map *m, const void *key)
{
	uint32_t id = *(const uint32_t *)key;
	if (id >= m->nbuckets)
		return NULL;
	struct rt_stack_entry *e = stack_entry(m, id);
	uint32_t nr = __atomic_load_n(&e->nr, __ATOMIC_ACQUIRE);
	return nr && nr != STACK_WRITING ? (void *)(e + 1) : NULL;
}

static inline __attribute__((always_inline))
void *map_lookup(const struct rt_map *m, const void *key, uint32_t slot)
{
	/* aggregations first: count() is the hit everyone measures */
	if (__builtin_expect(m->kind == MAP_PERCPU_HASH, 1)) {
		struct rt_elem *e = m->key_size == 8 ? hash_find8(m, key) :
			hash_find(m, key);
		if (!e)
			return NULL;
		if (slot >= m->nslots)   /* RT_ALL_SLOTS: slot 0 and on */
			return slot == RT_ALL_SLOTS ? elem_value(m, e) : NULL;
		return elem_value(m, e) + (uint64_t)slot * m->stride;
	}
	switch (m->kind) {
	case MAP_HASH:
	case MAP_PERCPU_HASH: {
		struct rt_elem *e = hash_find(m, key);
		return e ? slot_value(m, elem_value(m, e), slot) : NULL;
	}
	case MAP_ARRAY:
	case MAP_PERCPU_ARRAY: {
		uint8_t *v = array_values(m, key);
		return v ? slot_value(m, v, slot) : NULL;
	}
	case MAP_STACK_TRACE:
		return stack_lookup(m, key);
	default:
		return NULL;
	}
}

void *rt_map_lookup(const struct rt_map *m, const void *key, uint32_t slot)
{
	return map_lookup(m, key, slot);
}

/* The map helpers, here so the lookup inlines into them. */
uint64_t rt_helper_map_lookup(uint64_t map, uint64_t key, uint64_t a3,
			      uint64_t a4, uint64_t a5)
{
	return (uint64_t)(uintptr_t)map_lookup((const struct rt_map *)map,
					       (const void *)key, rt_self.slot);
}

/* bpf_map_lookup_percpu_elem: slot CPU's value (a thread slot here), NULL
 * past the last slot or for a map that is not per-CPU, as the kernel. */
uint64_t rt_helper_map_lookup_percpu(uint64_t map, uint64_t key, uint64_t cpu,
				     uint64_t a4, uint64_t a5)
{
	const struct rt_map *m = (const struct rt_map *)map;
	if (!percpu(m) || cpu >= m->nslots)
		return 0;
	return (uint64_t)(uintptr_t)map_lookup(m, (const void *)key,
					       (uint32_t)cpu);
}

uint64_t rt_helper_map_update(uint64_t map, uint64_t key, uint64_t value,
			      uint64_t flags, uint64_t a5)
{
	return (uint64_t)(int64_t)rt_map_update((const struct rt_map *)map,
						(const void *)key,
						(const void *)value, flags,
						rt_self.slot);
}

uint64_t rt_helper_map_delete(uint64_t map, uint64_t key, uint64_t a3,
			      uint64_t a4, uint64_t a5)
{
	return (uint64_t)(int64_t)rt_map_delete((const struct rt_map *)map,
						(const void *)key);
}

/* bpf_for_each_map_elem(map, callback, ctx, flags): the callback is
 * the VM's (vm.h struct vm_callback), called through its first member
 * with (map, key, value, ctx); a non-zero return stops the walk. The
 * value is the first slot's for a per-CPU map (codegen reads count()
 * and sum() values through map_lookup_percpu_elem instead). Returns
 * the entries visited, the last included, as the kernel counts. */
struct each_elem {
	uint64_t map, cb, ctx, n;
};

static int each_elem(void *arg, const void *key, const void *values)
{
	struct each_elem *e = arg;
	rt_callback_fn call = *(const rt_callback_fn *)(uintptr_t)e->cb;
	e->n++;
	return call((const void *)(uintptr_t)e->cb, e->map,
		    (uint64_t)(uintptr_t)key, (uint64_t)(uintptr_t)values,
		    e->ctx) != 0;
}

uint64_t rt_helper_for_each_map_elem(uint64_t map, uint64_t cb, uint64_t ctx,
				     uint64_t flags, uint64_t a5)
{
	if (flags || !cb)
		return (uint64_t)-EINVAL;
	struct each_elem e = { .map = map, .cb = cb, .ctx = ctx };
	int r = rt_map_walk((const struct rt_map *)map, each_elem, &e);
	return r < 0 ? (uint64_t)(int64_t)r : e.n;
}

/* bpf_loop(nr, callback, ctx, flags): the callback (as above) with
 * (i, ctx) for i from 0 until it returns non-zero, at most nr times (the
 * kernel's limit, 1 << 23). Returns the calls made. */
uint64_t rt_helper_loop(uint64_t nr, uint64_t cb, uint64_t ctx, uint64_t flags,
			uint64_t a5)
{
	if (flags || !cb || nr > (1u << 23))
		return (uint64_t)-EINVAL;
	rt_callback_fn call = *(const rt_callback_fn *)(uintptr_t)cb;
	uint64_t i = 0;
	while (i < nr) {
		uint64_t r = call((const void *)(uintptr_t)cb, i, ctx, 0, 0);
		i++;
		if (r)
			break;
	}
	return i;
}

void *rt_map_array_value(const struct rt_map *m, uint32_t index)
{
	if (m->kind != MAP_ARRAY && m->kind != MAP_PERCPU_ARRAY)
		return NULL;
	return array_values(m, &index);
}

/* Write a value: one slot's (the others of a new per-CPU element are
 * zeroed, as the kernel does), or every slot's. */
static void value_write(const struct rt_map *m, uint8_t *values,
			const void *value, uint32_t slot, bool fresh)
{
	if (!percpu(m)) {
		rt_memcpy(values, value, m->value_size);
		return;
	}
	if (slot == RT_ALL_SLOTS) {
		rt_memcpy(values, value, (size_t)m->stride * m->nslots);
		return;
	}
	if (fresh)
		rt_memset(values, 0, (size_t)m->stride * m->nslots);
	rt_memcpy(values + (uint64_t)slot * m->stride, value, m->value_size);
}

static struct rt_elem *elem_alloc(const struct rt_map *m)
{
	struct rt_hash_hdr *hh = hash_hdr(m);
	struct rt_elem *e = NULL;
	if (!rt_lock(&hh->alloc_lock))
		return NULL;
	if (hh->free_head) {
		e = hash_elem(m, hh->free_head);
		if (e) {
			hh->free_head = e->fnext;
			if (!hh->free_head)
				hh->free_tail = 0;
		} else {       /* a corrupted list: forget it */
			hh->free_head = hh->free_tail = 0;
		}
	}
	if (!e && hh->hwm < m->max_entries)
		e = hash_elem(m, ++hh->hwm);
	rt_unlock(&hh->alloc_lock);
	return e;
}

static void elem_free(const struct rt_map *m, struct rt_elem *e)
{
	struct rt_hash_hdr *hh = hash_hdr(m);
	if (!rt_lock(&hh->alloc_lock))
		return;          /* leaked: the map holds one entry fewer */
	uint32_t link = elem_link(m, e);
	e->fnext = 0;
	struct rt_elem *tail = hash_elem(m, hh->free_tail);
	if (tail)
		tail->fnext = link;
	else
		hh->free_head = link;
	hh->free_tail = link;
	rt_unlock(&hh->alloc_lock);
}

static int hash_update(const struct rt_map *m, const void *key,
		       const void *value, uint64_t flags, uint32_t slot)
{
	if (slot != RT_ALL_SLOTS && percpu(m) && slot >= m->nslots)
		return -EINVAL;
	uint32_t h = key_hash(key, m->key_size);
	struct rt_bucket *b = hash_bucket(m, h);
	if (!rt_lock(&b->lock))
		return -EBUSY;
	int r = 0;
	struct rt_elem *e = chain_find(m, b->head, h, key, NULL);
	if (e) {
		if (flags == BPF_NOEXIST)
			r = -EEXIST;
		else
			value_write(m, elem_value(m, e), value, slot, false);
		goto out;
	}
	if (flags == BPF_EXIST) {
		r = -ENOENT;
		goto out;
	}
	e = elem_alloc(m);
	if (!e) {
		r = -E2BIG;
		goto out;
	}
	rt_memset(elem_key(m, e), 0, RT_ALIGN8(m->key_size));
	rt_memcpy(elem_key(m, e), key, m->key_size);
	value_write(m, elem_value(m, e), value, slot, true);
	e->hash = h;
	__atomic_store_n(&e->live, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&e->next, b->head, __ATOMIC_RELEASE);
	__atomic_store_n(&b->head, elem_link(m, e), __ATOMIC_RELEASE);
	__atomic_add_fetch(&hash_hdr(m)->count, 1, __ATOMIC_RELAXED);
out:
	rt_unlock(&b->lock);
	return r;
}

static int hash_delete(const struct rt_map *m, const void *key)
{
	uint32_t h = key_hash(key, m->key_size);
	struct rt_bucket *b = hash_bucket(m, h);
	if (!rt_lock(&b->lock))
		return -EBUSY;
	struct rt_elem *prev = NULL;
	struct rt_elem *e = chain_find(m, b->head, h, key, &prev);
	if (!e) {
		rt_unlock(&b->lock);
		return -ENOENT;
	}
	uint32_t next = e->next;
	if (prev)
		__atomic_store_n(&prev->next, next, __ATOMIC_RELEASE);
	else
		__atomic_store_n(&b->head, next, __ATOMIC_RELEASE);
	__atomic_store_n(&e->live, 0, __ATOMIC_RELEASE);
	rt_unlock(&b->lock);
	__atomic_sub_fetch(&hash_hdr(m)->count, 1, __ATOMIC_RELAXED);
	elem_free(m, e);
	return 0;
}

int rt_map_update(const struct rt_map *m, const void *key, const void *value,
		  uint64_t flags, uint32_t slot)
{
	if (flags > BPF_EXIST)
		return -EINVAL;
	switch (m->kind) {
	case MAP_HASH:
	case MAP_PERCPU_HASH:
		return hash_update(m, key, value, flags, slot);
	case MAP_ARRAY:
	case MAP_PERCPU_ARRAY: {
		uint8_t *v = array_values(m, key);
		if (!v)
			return -E2BIG;
		if (flags == BPF_NOEXIST)
			return -EEXIST;
		if (slot != RT_ALL_SLOTS && percpu(m) && slot >= m->nslots)
			return -EINVAL;
		value_write(m, v, value, slot, false);
		return 0;
	}
	default:
		return -EINVAL;
	}
}

int rt_map_delete(const struct rt_map *m, const void *key)
{
	switch (m->kind) {
	case MAP_HASH:
	case MAP_PERCPU_HASH:
		return hash_delete(m, key);
	default:
		return -EINVAL;
	}
}


int64_t rt_stack_id(const struct rt_map *m, const uint64_t *ips, uint32_t n,
		    uint64_t flags)
{
	if (m->kind != MAP_STACK_TRACE)
		return -EINVAL;
	uint32_t depth = m->value_size / 8;
	if (n > depth)
		n = depth;
	if (n == 0)
		return -EFAULT;
	uint32_t h = key_hash(ips, n * 8);
	uint32_t id = h & (m->nbuckets - 1);
	struct rt_stack_entry *e = stack_entry(m, id);
	uint64_t *frames = (uint64_t *)(e + 1);
	uint32_t nr = __atomic_load_n(&e->nr, __ATOMIC_ACQUIRE);
	if (nr == n && e->hash == h && rt_memeq(frames, ips, n * 8))
		return id;
	if (nr == STACK_WRITING)
		return -EBUSY;
	if (nr && !(flags & BPF_F_REUSE_STACKID))
		return -EEXIST;
	if (!__atomic_compare_exchange_n(&e->nr, &nr, STACK_WRITING, false,
					 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return -EBUSY;
	rt_memcpy(frames, ips, n * 8);
	rt_memset(frames + n, 0, (size_t)(depth - n) * 8);
	e->hash = h;
	__atomic_store_n(&e->nr, n, __ATOMIC_RELEASE);
	return id;
}

/* A walk follows at most every bucket's head and each element's link a
 * few times over (chains change while it walks): a map whose links say
 * more is not one the runtime wrote. */
static int walk_hash(const struct rt_map *m,
		     int (*fn)(void *, const void *, const void *), void *arg)
{
	uint32_t visited = 0;
	uint64_t budget = (uint64_t)m->nbuckets + 4ull * m->max_entries;
	for (uint32_t i = 0; i < m->nbuckets; i++) {
		struct rt_bucket *b = hash_bucket(m, i);
		uint32_t link = __atomic_load_n(&b->head, __ATOMIC_ACQUIRE);
		for (uint32_t steps = 0; link && steps < m->max_entries; steps++) {
			if (budget-- == 0)
				return -EBADMSG;
			struct rt_elem *e = hash_elem(m, link);
			if (!e)
				break;
			/* a chain that moved under us (a delete and a reuse)
			 * may lead into another bucket: count only its own */
			if (__atomic_load_n(&e->live, __ATOMIC_ACQUIRE) &&
			    (e->hash & (m->nbuckets - 1)) == i) {
				if (++visited > m->max_entries)
					return 0;
				int r = fn(arg, elem_key(m, e), elem_value(m, e));
				if (r)
					return r;
			}
			link = __atomic_load_n(&e->next, __ATOMIC_ACQUIRE);
		}
	}
	return 0;
}

int rt_map_walk(const struct rt_map *m,
		int (*fn)(void *arg, const void *key, const void *values),
		void *arg)
{
	switch (m->kind) {
	case MAP_HASH:
	case MAP_PERCPU_HASH:
		return walk_hash(m, fn, arg);
	case MAP_ARRAY:
	case MAP_PERCPU_ARRAY:
		for (uint32_t i = 0; i < m->max_entries; i++) {
			int r = fn(arg, &i, array_values(m, &i));
			if (r)
				return r;
		}
		return 0;
	case MAP_STACK_TRACE:
		for (uint32_t i = 0; i < m->nbuckets; i++) {
			struct rt_stack_entry *e = stack_entry(m, i);
			uint32_t nr = __atomic_load_n(&e->nr, __ATOMIC_ACQUIRE);
			if (!nr || nr == STACK_WRITING)
				continue;
			int r = fn(arg, &i, e + 1);
			if (r)
				return r;
		}
		return 0;
	default:
		return -EINVAL;
	}
}
