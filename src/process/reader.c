/* reader.c - the process engine's maps as output reads them (struct
 * map_reader, output.h): snapshots, clear, zero and single keys, over the
 * maps in the shared region, with every slot of a per-CPU map as one of
 * the snapshot's values (output merges them as it merges CPUs). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <linux/bpf.h>

#include "proc_int.h"

static const struct rt_map *map_of(struct engine *e, uint32_t id)
{
	if (id >= e->rt.nmaps || e->rt.maps[id].kind == MAP_RINGBUF)
		return NULL;
	return &e->rt.maps[id];
}

static bool is_percpu(const struct rt_map *m)
{
	return map_kind_percpu(m->kind);
}

/* One entry as the snapshot (and lookup/update) lay it out: a value per
 * slot for per-CPU maps, 8-aligned; else the value itself. */
static size_t entry_bytes(const struct rt_map *m)
{
	return is_percpu(m) ? (size_t)m->stride * m->nslots : m->value_size;
}

struct dump {
	const struct rt_map *m;
	uint8_t *keys, *values;
	uint32_t n, cap;
	int err;
};

static int dump_one(void *arg, const void *key, const void *values)
{
	struct dump *d = arg;
	const struct rt_map *m = d->m;
	size_t vb = entry_bytes(m);
	if (d->n == d->cap) {
		uint32_t cap = d->cap ? d->cap * 2 : 64;
		uint8_t *k = realloc(d->keys, (size_t)cap * m->key_size);
		if (k)
			d->keys = k;
		uint8_t *v = k ? realloc(d->values, cap * vb) : NULL;
		if (!v) {
			d->err = -ENOMEM;
			return 1;
		}
		d->values = v;
		d->cap = cap;
	}
	memcpy(d->keys + (size_t)d->n * m->key_size, key, m->key_size);
	memcpy(d->values + d->n * vb, values, vb);
	d->n++;
	return 0;
}

static int reader_dump(void *ctx, uint32_t map_id, struct map_snapshot *out)
{
	struct engine *e = ctx;
	memset(out, 0, sizeof(*out));
	const struct rt_map *m = map_of(e, map_id);
	if (!m)
		return -EINVAL;
	struct dump d = { .m = m };
	if (rt_map_walk(m, dump_one, &d) == -EBADMSG)
		d.err = proc_region_broken(e, "the links of map %s lead round "
					   "and round", e->prog->maps[map_id].name);
	if (d.err) {
		free(d.keys);
		free(d.values);
		return d.err;
	}
	out->n = d.n;
	out->key_size = m->key_size;
	out->value_size = m->value_size;
	out->value_stride = is_percpu(m) ? m->stride : m->value_size;
	out->nvalues = is_percpu(m) ? m->nslots : 1;
	out->keys = d.keys;
	out->values = d.values;
	return 0;
}

/* Operations on one map that may each find its lock taken, before the
 * map counts as broken: the agent's threads hold one for a few hundred
 * instructions (a thread preempted with it makes one fail, rarely). */
#define LOCKED_MAX 16

static int locked(struct engine *e, const struct rt_map *m)
{
	return proc_region_broken(e, "the locks of map %s are never released",
				  e->prog->maps[m->id].name);
}

struct keys {
	uint8_t *v;
	uint32_t n, cap, size;
	int err;
};

static int collect_key(void *arg, const void *key, const void *values)
{
	struct keys *k = arg;
	if (k->n == k->cap) {
		uint32_t cap = k->cap ? k->cap * 2 : 64;
		uint8_t *v = realloc(k->v, (size_t)cap * k->size);
		if (!v) {
			k->err = -ENOMEM;
			return 1;
		}
		k->v = v;
		k->cap = cap;
	}
	memcpy(k->v + (size_t)k->n++ * k->size, key, k->size);
	return 0;
}

static int reader_zero(void *ctx, uint32_t map_id)
{
	struct engine *e = ctx;
	const struct rt_map *m = map_of(e, map_id);
	if (!m)
		return -EINVAL;
	struct keys k = { .size = m->key_size };
	rt_map_walk(m, collect_key, &k);
	uint8_t *zero = calloc(1, entry_bytes(m));
	int r = k.err ? k.err : zero ? 0 : -ENOMEM;
	uint32_t busy = 0;
	for (uint32_t i = 0; r == 0 && i < k.n; i++) {
		int u = rt_map_update(m, k.v + (size_t)i * k.size, zero,
				      m->kind == MAP_HASH ||
				      m->kind == MAP_PERCPU_HASH ? BPF_EXIST :
				      BPF_ANY, RT_ALL_SLOTS);
		if (u == -EBUSY && ++busy > LOCKED_MAX)
			r = locked(e, m);
		else if (u < 0 && u != -ENOENT && u != -EBUSY)
			r = u;
	}
	free(zero);
	free(k.v);
	return r;
}

static int reader_clear(void *ctx, uint32_t map_id)
{
	struct engine *e = ctx;
	const struct rt_map *m = map_of(e, map_id);
	if (!m)
		return -EINVAL;
	if (m->kind != MAP_HASH && m->kind != MAP_PERCPU_HASH)
		return reader_zero(ctx, map_id);   /* array slots cannot go */
	struct keys k = { .size = m->key_size };
	rt_map_walk(m, collect_key, &k);
	int r = k.err;
	uint32_t busy = 0;
	for (uint32_t i = 0; r == 0 && i < k.n; i++) {
		int d = rt_map_delete(m, k.v + (size_t)i * k.size);
		if (d == -EBUSY && ++busy > LOCKED_MAX)
			r = locked(e, m);
		else if (d < 0 && d != -ENOENT && d != -EBUSY)
			r = d;
	}
	free(k.v);
	return r;
}

static uint64_t reader_failures(void *ctx, uint32_t map_id)
{
	struct engine *e = ctx;
	int f = program_find_map(e->prog, SONDE_MAPFAIL_MAP);
	if (f < 0)
		return 0;
	const uint64_t *v = rt_map_array_value(&e->rt.maps[f], map_id);
	return v ? __atomic_load_n(v, __ATOMIC_RELAXED) : 0;
}

static uint32_t reader_capacity(void *ctx, uint32_t map_id)
{
	struct engine *e = ctx;
	const struct rt_map *m = map_of(e, map_id);
	return m ? m->max_entries : 0;
}

static int reader_lookup(void *ctx, uint32_t map_id, const void *key,
			 void *value)
{
	struct engine *e = ctx;
	const struct rt_map *m = map_of(e, map_id);
	if (!m)
		return -EINVAL;
	const uint8_t *v = rt_map_lookup(m, key, RT_ALL_SLOTS);
	if (!v)
		return -ENOENT;
	memcpy(value, v, entry_bytes(m));
	return 0;
}

static int reader_update(void *ctx, uint32_t map_id, const void *key,
			 const void *value)
{
	struct engine *e = ctx;
	const struct rt_map *m = map_of(e, map_id);
	if (!m)
		return -EINVAL;
	return rt_map_update(m, key, value, BPF_ANY, RT_ALL_SLOTS);
}

static int reader_remove(void *ctx, uint32_t map_id, const void *key)
{
	struct engine *e = ctx;
	const struct rt_map *m = map_of(e, map_id);
	return m ? rt_map_delete(m, key) : -EINVAL;
}

void proc_reader_init(struct engine *e)
{
	e->reader = (struct map_reader){
		.ctx = e,
		.dump = reader_dump,
		.clear = reader_clear,
		.zero = reader_zero,
		.failures = reader_failures,
		.capacity = reader_capacity,
		.lookup = reader_lookup,
		.update = reader_update,
		.remove = reader_remove,
	};
}
