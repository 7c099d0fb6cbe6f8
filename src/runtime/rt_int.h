/* rt_int.h - the runtime's data layouts inside the region, shared by its
 * files (region.c sizes them, maps.c uses them). Not for other parts. */
#ifndef SONDE_RT_INT_H
#define SONDE_RT_INT_H

#include <stdint.h>

#define RT_ALIGN(v, a) (((v) + (uint64_t)(a) - 1) & ~((uint64_t)(a) - 1))
#define RT_ALIGN8(v) ((uint32_t)RT_ALIGN((uint64_t)(v), 8))

/* Hash maps: a header, then nbuckets buckets, then max_entries elements.
 *
 * Readers (lookups from bytecode) take no lock: they follow a bucket's
 * chain with acquire loads and bounds-check every index. Writers (insert,
 * delete, in-place update) take the bucket's lock; taking an element from
 * the free list takes the map's alloc lock. A deleted element keeps its
 * chain link (`next`) so a reader standing on it goes on to the rest of
 * its old chain; it is reused first-in first-out (`fnext`), so a reader
 * rarely meets an element that changed under it, and when it does it
 * sees a wrong key (skipped: the hash and key are compared and `live`
 * checked) or at worst adds to an entry being deleted: a lost update,
 * as a value written by a BPF program racing a delete is in the kernel. */
struct rt_hash_hdr {
	uint32_t alloc_lock;
	uint32_t hwm;              /* elements never used start here */
	uint32_t free_head;        /* index + 1 of the oldest free element */
	uint32_t free_tail;
	uint32_t count;            /* live elements */
	uint32_t pad[11];
};

struct rt_bucket {
	uint32_t head;             /* index + 1 of the first element, 0: none */
	uint32_t lock;
};

struct rt_elem {
	uint32_t next;             /* index + 1 in the bucket's chain */
	uint32_t fnext;            /* index + 1 in the free list */
	uint32_t hash;
	uint32_t live;
	/* key (8-aligned), then the value: one per slot for per-CPU maps */
};

/* Stack-trace maps: nbuckets entries, found by the frames' hash (as the
 * kernel's BPF_MAP_TYPE_STACK_TRACE: an entry taken by other frames is
 * replaced only with BPF_F_REUSE_STACKID). */
struct rt_stack_entry {
	uint32_t hash;
	uint32_t nr;               /* frames; 0: empty */
	/* value_size bytes of frames follow */
};

/* maps.c: the map helpers (helpers.c's table points at them) */
uint64_t rt_helper_map_lookup(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t);
uint64_t rt_helper_map_lookup_percpu(uint64_t, uint64_t, uint64_t, uint64_t,
				     uint64_t);
uint64_t rt_helper_map_update(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t);
uint64_t rt_helper_map_delete(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t);
uint64_t rt_helper_for_each_map_elem(uint64_t, uint64_t, uint64_t, uint64_t,
				     uint64_t);
uint64_t rt_helper_loop(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t);

#endif
