/* rt.h - the process engine's runtime: what the compiled bytecode needs
 * when it runs outside the kernel. Linked into sonde (which runs BEGIN,
 * END and interval probes itself and reads the maps) and into the agent
 * library in the traced process (which runs the other probes).
 *
 *   region   the shared memory of shm.h, mapped and checked (rt_open)
 *   maps     hash, array, their per-CPU forms, stack-trace maps
 *   ring     the event ring: many producers, one reader
 *   helpers  the BPF helpers the compiler emits, in user space, as the
 *            table src/vm/ calls through (indexed by BPF_FUNC_*)
 *   memory   probe_read_*: reads that never crash on a bad address
 *
 * Nothing here allocates from the C heap, takes a lock that can block
 * forever, or uses a vector register: the agent runs this code in the
 * middle of the target's functions (src/agent/ builds it with
 * -mgeneral-regs-only and hidden visibility). Locks between threads and
 * between the two processes are spin locks with a bound: an operation
 * that cannot get one in time fails (a map update counts as failed),
 * so a thread stopped or killed while holding one (sonde killed with
 * SIGKILL, say) never hangs the target. */
#ifndef SONDE_RT_H
#define SONDE_RT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shm.h"

/* ---- the region and its maps (region.c, maps.c) ---- */

struct rt_ring {
	uint8_t *data;             /* size bytes, mapped twice in a row */
	uint64_t size, mask;
	uint64_t *prod, *cons;     /* in the shared header */
	int wake_fd;               /* eventfd the reader sleeps on, or -1 */
	uint64_t wake_ino;         /* its inode: the descriptor is written to
				    * only while it is still that eventfd */
	/* The reader's own state (sonde's), in its private memory: its
	 * position (the shared cons is only published), the copy each
	 * record is handed over in, a record it waits for, and what it
	 * found wrong (then it reads no more). */
	uint64_t read_pos;
	uint8_t *copy;
	uint64_t copy_len;
	uint64_t stuck_pos, stuck_since;
	const char *bad;
	uint64_t bad_pos, bad_value;
	uint64_t area_len;         /* rt_ring_private's mapping, else 0 */
};

/* One map: the checked copy of its descriptor, and where its data is.
 * The bytecode's map references (LD_IMM64 map[i]) load the address of
 * this struct; helpers receive it as r1. */
struct rt_map {
	uint32_t id;               /* index in the program's maps */
	uint32_t kind;             /* enum map_kind */
	uint32_t key_size, value_size, max_entries;
	uint32_t stride;           /* bytes per value slot (8-aligned) */
	uint32_t nslots;           /* per-CPU kinds: slots; else 1 */
	uint32_t nbuckets, elem_size;
	uint32_t key_off, value_off;  /* hash: inside an element */
	uint8_t *data;
	uint64_t size;
	struct rt_ring *ring;      /* MAP_RINGBUF */
};

struct rt {
	uint8_t *base;             /* the region, mapped read-write */
	uint64_t size;
	struct rt_header *shared;  /* == base */
	struct rt_header hdr;      /* the checked copy */
	struct rt_map *maps;
	uint32_t nmaps;
	uint64_t *map_addrs;       /* [i] = (uint64_t)&maps[i], for the VM */
	struct rt_ring ring;
	void *ring_area;           /* the double mapping */
	size_t ring_area_len;
	void *priv;                /* maps, map_addrs (one anonymous mapping) */
	size_t priv_len;
};

/* Map a region from its memfd and check it: every descriptor's data
 * inside the region, sizes consistent with the kind, the ring a power of
 * two. 0, or -errno (-EINVAL: a malformed region). */
int rt_open(int fd, uint64_t size, struct rt *out);
void rt_close(struct rt *rt);

/* A ring of `size` bytes (a power of two, at least a page) that no other
 * process maps, with its positions in private memory: where the probes
 * sonde runs itself write, apart from what a traced process can touch.
 * 0 or -errno; rt_ring_private_close frees it. */
int rt_ring_private(uint64_t size, struct rt_ring *r);
void rt_ring_private_close(struct rt_ring *r);

/* Bytes a map of this shape needs in the region, and the geometry
 * stored in its descriptor (nbuckets, elem_size). 0 for the ring, whose
 * data lives apart. -EINVAL for a shape the runtime cannot hold. */
int rt_map_geometry(uint32_t kind, uint32_t key_size, uint32_t value_size,
		    uint32_t max_entries, uint32_t nslots,
		    struct rt_map_desc *d);

/* Map operations. `slot` is the per-CPU slot a program sees; the reader
 * passes RT_ALL_SLOTS to read or write every slot (its VALUE then holds
 * nslots values of `stride` bytes, as the kernel's syscalls do). */
#define RT_ALL_SLOTS UINT32_MAX
void *rt_map_lookup(const struct rt_map *m, const void *key, uint32_t slot);
int rt_map_update(const struct rt_map *m, const void *key, const void *value,
		  uint64_t flags, uint32_t slot);
int rt_map_delete(const struct rt_map *m, const void *key);
/* Every entry, in no particular order: fn(key, values of every slot);
 * fn returning non-zero stops the walk and is returned. At most
 * max_entries entries are visited; -EBADMSG when the links lead round
 * and round (a map no writer left). */
int rt_map_walk(const struct rt_map *m,
		int (*fn)(void *arg, const void *key, const void *values),
		void *arg);
/* Stack-trace maps: the id of these frames (bpf_get_stackid), or
 * -errno; the reader's walk gives key u32 id, value the frames. */
int64_t rt_stack_id(const struct rt_map *m, const uint64_t *ips, uint32_t n,
		    uint64_t flags);
/* The value of a single-entry array (.globals), or NULL. */
void *rt_map_array_value(const struct rt_map *m, uint32_t index);

/* ---- the ring (ring.c) ---- */

void *rt_ring_reserve(struct rt_ring *r, uint32_t size);
void rt_ring_submit(struct rt_ring *r, void *rec, uint64_t flags, bool discard);
uint64_t rt_ring_query(const struct rt_ring *r, uint64_t what);
/* The reader: call fn for each written record in order, up to budget
 * records, zeroing what it consumed. fn gets a private copy of the
 * record. Returns the number handled, or fn's non-zero value (the record
 * it stopped at is consumed); fn returning RT_RING_PAUSE stops the same
 * way but returns the number handled (a reader out of time, not done). A record left reserved but unwritten for
 * a second (its writer died) is skipped and counted in *stalled.
 * Everything read from the shared memory is checked once, against the
 * ring's size: a ring that is not what a writer leaves (a position out
 * of reach, a record longer than the ring, a header never written)
 * returns -EBADMSG, with what and where in r->bad, r->bad_pos and
 * r->bad_value, and then -EBADMSG for good. */
#define RT_RING_PAUSE 2
int rt_ring_consume(struct rt_ring *r, int (*fn)(void *arg, void *data,
						 uint32_t size),
		    void *arg, unsigned budget, uint64_t *stalled);
/* Bytes written and not read yet. */
uint64_t rt_ring_avail(const struct rt_ring *r);

/* ---- the running thread (helpers.c) ---- */

/* What helpers know about the probe being run on this thread. The agent
 * sets regs and slot around every run; sonde does for its own probes. */
struct rt_thread {
	const void *regs;          /* the context: struct pt_regs */
	uint32_t slot;             /* per-CPU value slot */
	uint32_t tid;              /* 0: not read yet */
	uint64_t rng;              /* bpf_get_prandom_u32's state */
	uint32_t comm_gen;         /* comm is valid while == rt_proc.comm_gen */
	char comm[16];
	/* the mapping of the stack the thread runs on, when known: reads
	 * between the stack pointer and its top cannot fault */
	uint64_t stack_lo, stack_hi;
};
extern __thread struct rt_thread rt_self;

/* Process-wide facts the helpers report (set once by sonde or the agent,
 * and again in a child after fork). */
struct rt_process {
	uint32_t pid;
	uint64_t cgroup_id;
	/* reads through the fault-catching copy (the agent has a SIGSEGV
	 * and SIGBUS handler that calls rt_nofault_fixup); else through
	 * process_vm_readv, slower but safe anywhere */
	bool nofault;
	uint32_t comm_gen;         /* bumped when a thread may be renamed */
	struct rt_ring *ring;      /* where ringbuf_submit's records are */
	/* How long rt_lock waits, in yields (0: its default, for the
	 * agent's threads, which wait on each other): sonde waits less on
	 * a lock the traced process may hold for good. */
	uint32_t lock_yields;
};
extern struct rt_process rt_proc;

/* Set rt_proc for this process (pid, cgroup id). */
void rt_process_init(bool nofault);

/* The helpers, indexed by BPF helper id; NULL where the runtime has none. */
typedef uint64_t (*rt_helper_fn)(uint64_t, uint64_t, uint64_t, uint64_t,
				 uint64_t);
extern const rt_helper_fn rt_helpers[];
/* How bpf_for_each_map_elem calls a callback: the VM's callback object
 * (vm.h, struct vm_callback) begins with this function, called with the
 * object and r1..r4. */
typedef uint64_t (*rt_callback_fn)(const void *cb, uint64_t, uint64_t,
				   uint64_t, uint64_t);
extern const uint32_t rt_nhelpers;

/* ---- memory (mem.c) ---- */

/* Copy n bytes from src; on a bad address dst is zeroed and -EFAULT
 * returned, as bpf_probe_read does. */
int rt_read(void *dst, const void *src, uint32_t n);
/* bpf_probe_read_str: the string's length with its NUL (at most n; a
 * longer one is cut and terminated), or -EFAULT with dst zeroed. */
int rt_read_str(void *dst, const void *src, uint32_t n);
/* For a SIGSEGV/SIGBUS handler: if *ip is inside the fault-catching
 * copy, point it at the copy's error return and say true. */
bool rt_nofault_fixup(uint64_t *ip);

/* Plain memory operations that the compiler cannot turn into calls to
 * the C library's (whose vector code the agent must not run). */
void rt_memcpy(void *dst, const void *src, size_t n);
void rt_memset(void *dst, int c, size_t n);
bool rt_memeq(const void *a, const void *b, size_t n);

/* ---- locks (maps.c) ---- */

/* Bounded spin lock: true when taken. */
bool rt_lock(uint32_t *lock);
void rt_unlock(uint32_t *lock);

#endif
