/* shm.h - the shared-memory region of the process engine: what sonde
 * creates (a memfd) and both sonde and the agent in the traced process
 * map. It holds every map of the program, the event ring, and the program
 * itself (bytecode and sites, src/agent/proto.h); this header is its
 * layout.
 *
 *   offset 0      struct rt_header: sizes, offsets, the ring's positions
 *   maps_off      struct rt_map_desc[nmaps]
 *   desc.off      each map's data (64-byte aligned)
 *   prog_off      the program section (proto.h)
 *   ring_off      the ring's data, page aligned, a power of two in size;
 *                 every side maps it twice in a row so that a record
 *                 never wraps (as the kernel maps a BPF ring buffer)
 *
 * Trust. The region is writable by both sides, so neither trusts what
 * it reads there beyond "bytes": a side copies the header and the
 * descriptors once, checks every offset and size against the region's
 * size (rt_open), and keeps the checked copy in its own memory. Data read
 * later (hash chains, ring headers) is bounds-checked on every use, so a
 * corrupted region costs lost or wrong values, never a crash. sonde,
 * which may be root reading another user's program, trusts it least: it
 * keeps the ring's read position to itself, reads each record's length
 * once and hands records over as private copies (ring.c), bounds every
 * walk by the map's size, seals the memfd's size before handing it over
 * (src/process/layout.c), and ends the session of a process whose region
 * no writer could have left (src/process/engine.c). sonde's own probes
 * write a ring of their own (rt_ring_private), not this one.
 *
 * Per-CPU maps. The kernel keeps one value per CPU; the process engine
 * keeps one per "slot": slot 0 is sonde's own (BEGIN, END, interval),
 * and each thread of a traced process takes a slot of its own the first
 * time it runs a probe, so aggregations need no atomic operations and
 * counts are exact. Output merges the slots as it merges CPUs. */
#ifndef SONDE_RT_SHM_H
#define SONDE_RT_SHM_H

#include <stdint.h>

#define RT_MAGIC 0x3165646e6f735f52ull    /* "R_sonde1" */
#define RT_VERSION 1

/* Slots of per-CPU maps: sonde's, then the threads of the traced
 * process. A thread beyond the last takes the last slot, shared, under
 * a lock (agent). */
#define RT_SLOTS_DEFAULT 64
#define RT_SLOTS_MAX 1024

#define RT_CACHELINE 64

struct rt_map_desc {
	uint32_t kind;             /* enum map_kind (program.h) */
	uint32_t key_size;         /* hash: 8 for a map without keys */
	uint32_t value_size;
	uint32_t max_entries;
	uint32_t nbuckets;         /* hash: a power of two; stack: entries */
	uint32_t elem_size;        /* hash: bytes per element */
	uint64_t off, size;        /* its data in the region */
	char name[32];             /* for messages */
};

struct rt_header {
	uint64_t magic;
	uint32_t version;
	uint32_t header_size;      /* sizeof(struct rt_header) */
	uint64_t size;             /* the whole region */
	uint32_t nmaps;
	uint32_t nslots;           /* per-CPU value slots */
	uint64_t maps_off;         /* struct rt_map_desc[nmaps] */
	int32_t ring_map;          /* the ring's map index, or -1 */
	int32_t globals_map;       /* .globals, or -1 */
	uint64_t ring_off, ring_size;
	uint64_t prog_off, prog_size;
	/* The ring's positions, in bytes since the start, each on a line of
	 * its own: producers (the agent's threads, sonde) advance prod with
	 * a compare-and-swap, the reader (sonde) advances cons. */
	_Alignas(RT_CACHELINE) uint64_t ring_prod;
	_Alignas(RT_CACHELINE) uint64_t ring_cons;
	/* Rare events the agent counts (sonde prints them with -v). */
	_Alignas(RT_CACHELINE) uint64_t nested;           /* hits skipped: a probe was running in
				    * that thread already (signal handler) */
	uint64_t aborted;          /* runs stopped by the VM's budget */
	uint64_t slot_waits;       /* runs that waited for the shared slot */
};

/* A record in the ring: an 8-byte header, then the data, padded to 8.
 * A header of 0 is space not reserved yet (the reader zeroes what it
 * consumed). */
#define RT_RING_BUSY    (1u << 31)   /* reserved, being written */
#define RT_RING_DISCARD (1u << 30)   /* written, but to be skipped */
#define RT_RING_HDR 8
#define RT_RING_LEN_MASK 0x3fffffffu

#endif
