/* fuzz_region.c - libFuzzer target: sonde's reader of the shared region
 * (src/runtime/) on a region that a hostile traced process has written.
 *
 * The input's first byte picks the mode. Even: a valid region is laid
 * out (the maps a program has: a hash map, a per-CPU one, arrays, a
 * stack map, the event ring), opened as sonde opens it, and the rest of
 * the input is writes into it, as the traced process may make at any
 * time: [where: 2 bytes, in 8-byte units | count: 1 byte | the bytes],
 * again and again. Then sonde reads it as it does: the ring consumed to
 * its end, every map walked (dump, clear) and looked up, updated and
 * deleted from (END probes), stack ids taken. Odd: the rest of the input
 * is a whole region, opened as the agent opens what sonde sent (every
 * offset and size checked), then read the same way.
 *
 * Nothing may crash, read outside the region (ASan) or run unbounded;
 * a ring that no producer could leave must stop the reader with
 * -EBADMSG and keep it stopped. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "program.h"
#include "runtime/rt.h"
#include "runtime/rt_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NSLOTS 4
#define RING_SIZE 16384u
#define REGION_RAW_MAX (1u << 20)

static const struct {
	uint32_t kind, key, value, max;
} region_maps[] = {
	{ MAP_HASH, 8, 16, 32 },
	{ MAP_PERCPU_HASH, 20, 8, 16 },
	{ MAP_ARRAY, 4, 24, 8 },
	{ MAP_PERCPU_ARRAY, 4, 8, 4 },
	{ MAP_STACK_TRACE, 4, 64, 16 },
};
#define NMAPS (sizeof(region_maps) / sizeof(region_maps[0]))

/* A region with those maps and a ring, in a fresh memfd: its fd and
 * size, or -1. */
static int region_make(uint64_t *size_out)
{
	struct rt_header h = { .magic = RT_MAGIC, .version = RT_VERSION,
			       .header_size = sizeof(h), .nslots = NSLOTS,
			       .ring_map = NMAPS, .globals_map = -1,
			       .nmaps = NMAPS + 1 };
	struct rt_map_desc d[NMAPS + 1];
	uint64_t off = RT_ALIGN(sizeof(h), 64);
	h.maps_off = off;
	off += (NMAPS + 1) * sizeof(struct rt_map_desc);
	for (uint32_t i = 0; i < NMAPS; i++) {
		if (rt_map_geometry(region_maps[i].kind, region_maps[i].key,
				    region_maps[i].value, region_maps[i].max,
				    NSLOTS, &d[i]) < 0)
			return -1;
		off = RT_ALIGN(off, 64);
		d[i].off = off;
		off += d[i].size;
	}
	rt_map_geometry(MAP_RINGBUF, 0, 0, 0, NSLOTS, &d[NMAPS]);
	h.ring_off = RT_ALIGN(off, 4096);
	h.ring_size = RING_SIZE;
	h.prog_off = h.ring_off + RING_SIZE;
	h.prog_size = 64;
	h.size = RT_ALIGN(h.prog_off + h.prog_size, 4096);
	int fd = memfd_create("fuzz-region", MFD_CLOEXEC);
	if (fd < 0)
		return -1;
	if (ftruncate(fd, (off_t)h.size) < 0 ||
	    pwrite(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
	    pwrite(fd, d, sizeof(d), (off_t)h.maps_off) != (ssize_t)sizeof(d)) {
		close(fd);
		return -1;
	}
	*size_out = h.size;
	return fd;
}

static uint64_t touched;

static int on_record(void *arg, void *rec, uint32_t n)
{
	const uint8_t *p = rec;
	for (uint32_t i = 0; i < n; i++)
		touched += p[i];
	return 0;
}

static int on_entry(void *arg, const void *key, const void *values)
{
	const struct rt_map *m = arg;
	const uint8_t *k = key, *v = values;
	for (uint32_t i = 0; i < m->key_size; i++)
		touched += k[i];
	uint64_t vb = (uint64_t)m->stride * m->nslots;
	if (m->kind == MAP_STACK_TRACE)
		vb = m->value_size;
	for (uint64_t i = 0; i < vb; i++)
		touched += v[i];
	return 0;
}

/* What sonde does with a region: read the ring to its end, then every
 * map as output and END probes do. */
static void read_region(struct rt *rt, const uint8_t *keys, size_t nkeys)
{
	for (int round = 0; round < 64; round++) {
		int r = rt_ring_consume(&rt->ring, on_record, NULL, 256, NULL);
		if (r == -EBADMSG) {
			/* found broken: it stays so, and the reason is said */
			if (!rt->ring.bad ||
			    rt_ring_consume(&rt->ring, on_record, NULL, 256,
					    NULL) != -EBADMSG)
				abort();
			break;
		}
		if (r <= 0)
			break;
	}
	(void)rt_ring_avail(&rt->ring);
	uint8_t key[64] = { 0 }, value[64 * NSLOTS] = { 0 };
	for (uint32_t i = 0; i < rt->nmaps; i++) {
		struct rt_map *m = &rt->maps[i];
		if (m->kind == MAP_RINGBUF)
			continue;
		rt_map_walk(m, on_entry, m);
		for (size_t k = 0; k + 4 <= nkeys && k < 64; k += 4) {
			memset(key, 0, sizeof(key));
			memcpy(key, keys + k, 4);
			const uint8_t *v = rt_map_lookup(m, key, k % (NSLOTS + 1));
			if (v)
				touched += v[0];
			v = rt_map_lookup(m, key, RT_ALL_SLOTS);
			if (v)
				touched += v[0];
			rt_map_update(m, key, value, k % 3, k & 4 ? RT_ALL_SLOTS : 0);
			if (k & 8)
				rt_map_delete(m, key);
		}
		if (m->kind == MAP_STACK_TRACE) {
			uint64_t ips[8] = { 1, 2, 3, (uint64_t)nkeys };
			rt_stack_id(m, ips, 4, 0);
			rt_stack_id(m, ips, 8, BPF_F_REUSE_STACKID);
		}
		if (m->kind == MAP_ARRAY || m->kind == MAP_PERCPU_ARRAY)
			(void)rt_map_array_value(m, (uint32_t)nkeys);
	}
}

static void hostile_writes(uint8_t *base, uint64_t size, const uint8_t *in,
			   size_t n)
{
	size_t i = 0;
	while (i + 3 <= n) {
		uint64_t at = (uint64_t)(in[i] | in[i + 1] << 8) * 8 % size;
		size_t len = in[i + 2];
		i += 3;
		if (len > n - i)
			len = n - i;
		if (len > size - at)
			len = size - at;
		memcpy(base + at, in + i, len);
		i += len;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	/* a lock the input left taken costs a few yields, not sonde's 200 */
	rt_proc.lock_yields = 4;
	uint8_t mode = data[0];
	data++;
	size--;
	struct rt rt;
	if (!(mode & 1)) {
		uint64_t rsize;
		int fd = region_make(&rsize);
		if (fd < 0)
			return 0;
		if (rt_open(fd, rsize, &rt) < 0)
			abort();     /* a region laid out right opens */
		close(fd);
		/* a producer's records first, as the agent writes them */
		for (uint32_t k = 0; k < (mode >> 1) % 8; k++) {
			uint64_t *rec = rt_ring_reserve(&rt.ring, 16 + 8 * k);
			if (rec) {
				rec[0] = k;
				rt_ring_submit(&rt.ring, rec, 0, k == 3);
			}
		}
		hostile_writes(rt.base, rt.size, data, size);
		read_region(&rt, data, size);
		rt_close(&rt);
		return 0;
	}
	if (size < sizeof(struct rt_header) || size > REGION_RAW_MAX)
		return 0;
	uint64_t rsize = RT_ALIGN(size, 4096);
	int fd = memfd_create("fuzz-region", MFD_CLOEXEC);
	if (fd < 0)
		return 0;
	if (ftruncate(fd, (off_t)rsize) < 0 ||
	    pwrite(fd, data, size, 0) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	/* with mode bit 1, the header's identity and size made right, so
	 * that the checks after them are reached */
	if (mode & 2) {
		struct rt_header h;
		memcpy(&h, data, sizeof(h));
		h.magic = RT_MAGIC;
		h.version = RT_VERSION;
		h.header_size = sizeof(h);
		h.size = rsize;
		if (pwrite(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h)) {
			close(fd);
			return 0;
		}
	}
	int r = rt_open(fd, rsize, &rt);
	close(fd);
	if (r < 0)
		return 0;
	read_region(&rt, data, size);
	rt_close(&rt);
	return 0;
}
