/* region.c - mapping the shared region (shm.h) and checking it: the maps'
 * geometry, every offset and size against the region, the ring mapped
 * twice in a row. What a side keeps is its own checked copy. */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../program.h"
#include "rt.h"
#include "rt_int.h"

/* The most a region may hold: maps are sparse in the memfd, but every
 * byte must be addressable on both sides. */
#define RT_REGION_MAX (16ull << 30)

static uint64_t pow2_at_least(uint64_t v)
{
	uint64_t p = 1;
	while (p < v)
		p <<= 1;
	return p;
}

int rt_map_geometry(uint32_t kind, uint32_t key_size, uint32_t value_size,
		    uint32_t max_entries, uint32_t nslots,
		    struct rt_map_desc *d)
{
	memset(d, 0, sizeof(*d));
	d->kind = kind;
	d->key_size = key_size;
	d->value_size = value_size;
	d->max_entries = max_entries;
	if (max_entries == 0 || max_entries > (1u << 28) || nslots == 0 ||
	    nslots > RT_SLOTS_MAX || value_size > (1u << 24) ||
	    key_size > (1u << 16))
		return kind == MAP_RINGBUF ? 0 : -EINVAL;
	uint64_t stride = RT_ALIGN8(value_size);
	uint64_t slots = map_kind_percpu(kind) ? nslots : 1;
	uint64_t size;
	switch (kind) {
	case MAP_HASH:
	case MAP_PERCPU_HASH: {
		if (key_size == 0)
			return -EINVAL;
		uint64_t elem = sizeof(struct rt_elem) + RT_ALIGN8(key_size) +
				stride * slots;
		d->nbuckets = (uint32_t)pow2_at_least(max_entries);
		d->elem_size = (uint32_t)elem;
		size = sizeof(struct rt_hash_hdr) +
		       (uint64_t)d->nbuckets * sizeof(struct rt_bucket) +
		       elem * max_entries;
		break;
	}
	case MAP_ARRAY:
	case MAP_PERCPU_ARRAY:
		if (key_size != 4)
			return -EINVAL;
		size = stride * slots * max_entries;
		break;
	case MAP_STACK_TRACE:
		if (key_size != 4 || value_size % 8 || !value_size)
			return -EINVAL;
		d->nbuckets = (uint32_t)pow2_at_least(max_entries);
		d->elem_size = (uint32_t)(sizeof(struct rt_stack_entry) + value_size);
		size = (uint64_t)d->nbuckets * d->elem_size;
		break;
	case MAP_RINGBUF:
		return 0;
	default:
		return -EINVAL;
	}
	if (size > RT_REGION_MAX)
		return -E2BIG;
	d->size = RT_ALIGN(size, RT_CACHELINE);
	return 0;
}

/* Is [off, off + len) inside a region of `size` bytes? */
static bool inside(uint64_t off, uint64_t len, uint64_t size)
{
	return off <= size && len <= size - off;
}

/* Check one descriptor (already copied) and make its private map. */
static int map_check(const struct rt_header *h, const struct rt_map_desc *d,
		     uint32_t id, uint8_t *base, struct rt_map *m)
{
	struct rt_map_desc want;
	if (d->kind == MAP_RINGBUF) {
		memset(m, 0, sizeof(*m));
		m->id = id;
		m->kind = d->kind;
		return 0;
	}
	int r = rt_map_geometry(d->kind, d->key_size, d->value_size,
				d->max_entries, h->nslots, &want);
	if (r < 0 || want.nbuckets != d->nbuckets ||
	    want.elem_size != d->elem_size || want.size > d->size ||
	    d->off % RT_CACHELINE || !inside(d->off, d->size, h->size))
		return -EINVAL;
	memset(m, 0, sizeof(*m));
	m->id = id;
	m->kind = d->kind;
	m->key_size = d->key_size;
	m->value_size = d->value_size;
	m->max_entries = d->max_entries;
	m->stride = RT_ALIGN8(d->value_size);
	m->nslots = map_kind_percpu(d->kind) ? h->nslots : 1;
	m->nbuckets = d->nbuckets;
	m->elem_size = d->elem_size;
	m->key_off = sizeof(struct rt_elem);
	m->value_off = sizeof(struct rt_elem) + RT_ALIGN8(d->key_size);
	m->data = base + d->off;
	m->size = d->size;
	return 0;
}

static int ring_map(int fd, struct rt *rt)
{
	uint64_t size = rt->hdr.ring_size;
	long page = sysconf(_SC_PAGESIZE);
	if (page <= 0)
		page = 4096;
	if (size < (uint64_t)page || (size & (size - 1)) ||
	    rt->hdr.ring_off % (uint64_t)page ||
	    !inside(rt->hdr.ring_off, size, rt->hdr.size))
		return -EINVAL;
	uint8_t *area = mmap(NULL, 2 * size, PROT_NONE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (area == MAP_FAILED)
		return -errno;
	for (int i = 0; i < 2; i++) {
		void *p = mmap(area + i * size, size, PROT_READ | PROT_WRITE,
			       MAP_SHARED | MAP_FIXED, fd, (off_t)rt->hdr.ring_off);
		if (p == MAP_FAILED) {
			int e = errno;
			munmap(area, 2 * size);
			return -e;
		}
	}
	rt->ring_area = area;
	rt->ring_area_len = 2 * size;
	rt->ring.data = area;
	rt->ring.size = size;
	rt->ring.mask = size - 1;
	rt->ring.prod = &rt->shared->ring_prod;
	rt->ring.cons = &rt->shared->ring_cons;
	rt->ring.wake_fd = -1;
	rt->ring.read_pos = rt->hdr.ring_cons;
	return 0;
}

int rt_ring_private(uint64_t size, struct rt_ring *r)
{
	memset(r, 0, sizeof(*r));
	r->wake_fd = -1;
	long page = sysconf(_SC_PAGESIZE);
	if (page <= 0)
		page = 4096;
	if (size < (uint64_t)page || (size & (size - 1)) || size > (1ull << 30))
		return -EINVAL;
	/* the data twice in a row, then a page for the two positions */
	size_t len = 2 * size + (size_t)page;
	uint8_t *area = mmap(NULL, len, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (area == MAP_FAILED)
		return -errno;
	int fd = memfd_create("sonde-ring", MFD_CLOEXEC);
	int e = fd < 0 ? errno : 0;
	if (fd >= 0 && ftruncate(fd, (off_t)size) < 0)
		e = errno;
	for (int i = 0; i < 2 && !e; i++)
		if (mmap(area + i * size, size, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED)
			e = errno;
	if (fd >= 0)
		close(fd);
	if (e) {
		munmap(area, len);
		return -e;
	}
	r->data = area;
	r->size = size;
	r->mask = size - 1;
	r->prod = (uint64_t *)(area + 2 * size);
	r->cons = r->prod + 8;     /* a cache line apart */
	r->area_len = len;
	return 0;
}

void rt_ring_private_close(struct rt_ring *r)
{
	if (!r)
		return;
	if (r->copy)
		munmap(r->copy, r->copy_len);
	if (r->data && r->area_len)
		munmap(r->data, r->area_len);
	memset(r, 0, sizeof(*r));
	r->wake_fd = -1;
}

int rt_open(int fd, uint64_t size, struct rt *rt)
{
	memset(rt, 0, sizeof(*rt));
	rt->ring.wake_fd = -1;
	if (size < sizeof(struct rt_header) || size > RT_REGION_MAX)
		return -EINVAL;
	uint8_t *base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED,
			     fd, 0);
	if (base == MAP_FAILED)
		return -errno;
	rt->base = base;
	rt->size = size;
	rt->shared = (struct rt_header *)base;
	rt_memcpy(&rt->hdr, base, sizeof(rt->hdr));
	const struct rt_header *h = &rt->hdr;
	int r = -EINVAL;
	if (h->magic != RT_MAGIC || h->version != RT_VERSION ||
	    h->header_size != sizeof(struct rt_header) || h->size != size ||
	    h->nslots == 0 || h->nslots > RT_SLOTS_MAX ||
	    h->nmaps > (1u << 16) ||
	    !inside(h->maps_off, (uint64_t)h->nmaps * sizeof(struct rt_map_desc),
		    size) ||
	    h->maps_off % 8 || !inside(h->prog_off, h->prog_size, size) ||
	    h->ring_map >= (int32_t)h->nmaps ||
	    h->globals_map >= (int32_t)h->nmaps)
		goto fail;

	rt->priv_len = RT_ALIGN((uint64_t)h->nmaps *
				(sizeof(struct rt_map) + 8) + 64, 4096);
	void *priv = mmap(NULL, rt->priv_len, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (priv == MAP_FAILED) {
		r = -errno;
		goto fail;
	}
	rt->priv = priv;
	rt->maps = priv;
	rt->map_addrs = (uint64_t *)(rt->maps + h->nmaps);
	rt->nmaps = h->nmaps;
	for (uint32_t i = 0; i < h->nmaps; i++) {
		struct rt_map_desc d;
		rt_memcpy(&d, base + h->maps_off + i * sizeof(d), sizeof(d));
		if ((r = map_check(h, &d, i, base, &rt->maps[i])) < 0)
			goto fail;
		rt->map_addrs[i] = (uint64_t)(uintptr_t)&rt->maps[i];
	}
	if (h->ring_map >= 0) {
		if (rt->maps[h->ring_map].kind != MAP_RINGBUF)
			goto fail;
		if ((r = ring_map(fd, rt)) < 0)
			goto fail;
		rt->maps[h->ring_map].ring = &rt->ring;
	}
	return 0;
fail:
	rt_close(rt);
	return r;
}

void rt_close(struct rt *rt)
{
	if (!rt)
		return;
	if (rt->ring.copy)
		munmap(rt->ring.copy, rt->ring.copy_len);
	if (rt->ring_area)
		munmap(rt->ring_area, rt->ring_area_len);
	if (rt->priv)
		munmap(rt->priv, rt->priv_len);
	if (rt->base)
		munmap(rt->base, rt->size);
	memset(rt, 0, sizeof(*rt));
	rt->ring.wake_fd = -1;
}
