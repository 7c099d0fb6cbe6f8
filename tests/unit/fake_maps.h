/* fake_maps.h - for output tests: a hand-built compiled program and a
 * map_reader over in-memory maps, with the aggregation updates a probe
 * would make (spread over several CPUs so that output has to merge
 * them). Bucket numbering mirrors bpftrace 0.17's code generation. */
#ifndef SONDE_TEST_FAKE_MAPS_H
#define SONDE_TEST_FAKE_MAPS_H

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/file.h"
#include "compile.h"
#include "output/output.h"

#define FAKE_NCPU 3
#define FAKE_MAXMAPS 32
#define FAKE_STRLEN 64

struct fmap {
	uint32_t id;
	uint32_t ksize, vsize, stride, ncpu;
	size_t n, cap;
	size_t limit;           /* a full map's size for updates (0: none) */
	uint8_t *keys, *vals;
};

struct fake {
	struct arena arena;
	struct program prog;
	struct fmap maps[FAKE_MAXMAPS];
	unsigned cpu;          /* rotates: each update lands on another CPU */
	struct map_reader reader;
};

/* ---- keys ----------------------------------------------------------- */

struct kb {
	uint8_t b[512];
	uint32_t n;
};

static inline void kb_int(struct kb *k, int64_t v)
{
	memcpy(k->b + k->n, &v, 8);
	k->n += 8;
}

static inline void kb_str(struct kb *k, const char *s)
{
	memset(k->b + k->n, 0, FAKE_STRLEN);
	strncpy((char *)k->b + k->n, s, FAKE_STRLEN - 1);
	k->n += FAKE_STRLEN;
}

static inline struct kb key0(void)
{
	struct kb k = { .n = 0 };
	kb_int(&k, 0);
	return k;
}

static inline struct kb keyi(int64_t v)
{
	struct kb k = { .n = 0 };
	kb_int(&k, v);
	return k;
}

static inline struct kb keys_(const char *s)
{
	struct kb k = { .n = 0 };
	kb_str(&k, s);
	return k;
}

/* ---- types ---------------------------------------------------------- */

static inline const struct type *t_str(struct fake *f)
{
	return type_str(&f->arena, FAKE_STRLEN);
}

static inline const struct type *t_int(struct fake *f, unsigned bits,
				       bool sg)
{
	return type_int(&f->arena, bits, sg);
}

static inline const struct type *t_agg(struct fake *f, enum type_kind k,
				       bool sg)
{
	struct type *t = arena_new(&f->arena, struct type);
	t->kind = k;
	t->size = 8;
	t->is_signed = sg;
	return t;
}

static inline const struct type *t_lhist(struct fake *f, int64_t min,
					 int64_t max, int64_t step)
{
	struct type *t = arena_new(&f->arena, struct type);
	t->kind = TYPE_LHIST;
	t->size = 8;
	t->lhist_min = min;
	t->lhist_max = max;
	t->lhist_step = step;
	return t;
}

static inline const struct type *t_tuple(struct fake *f, uint32_t n, ...)
{
	const struct type *fields[16];
	va_list ap;
	va_start(ap, n);
	for (uint32_t i = 0; i < n && i < 16; i++)
		fields[i] = va_arg(ap, const struct type *);
	va_end(ap);
	return type_tuple(&f->arena, n, fields);
}

/* ---- the reader ----------------------------------------------------- */

static int fake_dump(void *ctx, uint32_t id, struct map_snapshot *out)
{
	struct fake *f = ctx;
	if (id >= f->prog.nmaps)
		return -EINVAL;
	struct fmap *m = &f->maps[id];
	memset(out, 0, sizeof(*out));
	out->n = (uint32_t)m->n;
	out->key_size = m->ksize;
	out->value_size = m->vsize;
	out->value_stride = m->stride;
	out->nvalues = m->ncpu;
	size_t kb = m->n * m->ksize, vb = m->n * m->stride * m->ncpu;
	out->keys = malloc(kb ? kb : 1);
	out->values = malloc(vb ? vb : 1);
	if (!out->keys || !out->values) {
		map_snapshot_free(out);
		return -ENOMEM;
	}
	if (kb)
		memcpy(out->keys, m->keys, kb);
	if (vb)
		memcpy(out->values, m->vals, vb);
	return 0;
}

static int fake_clear(void *ctx, uint32_t id)
{
	struct fake *f = ctx;
	f->maps[id].n = 0;
	return 0;
}

static int fake_zero(void *ctx, uint32_t id)
{
	struct fake *f = ctx;
	struct fmap *m = &f->maps[id];
	memset(m->vals, 0, m->n * m->stride * m->ncpu);
	return 0;
}

/* One key: lookup/update/remove, as the engine's reader does them. */
static inline long fake_find(struct fmap *m, const void *key)
{
	for (size_t i = 0; i < m->n; i++)
		if (memcmp(m->keys + i * m->ksize, key, m->ksize) == 0)
			return (long)i;
	return -1;
}

static int fake_lookup(void *ctx, uint32_t id, const void *key, void *value)
{
	struct fake *f = ctx;
	struct fmap *m = &f->maps[id];
	long i = fake_find(m, key);
	if (i < 0)
		return -ENOENT;
	memcpy(value, m->vals + (size_t)i * m->stride * m->ncpu,
	       m->stride * m->ncpu);
	return 0;
}

static int fake_update(void *ctx, uint32_t id, const void *key,
		       const void *value)
{
	struct fake *f = ctx;
	struct fmap *m = &f->maps[id];
	long i = fake_find(m, key);
	if (i < 0 && m->limit && m->n >= m->limit)
		return -E2BIG;
	if (i < 0) {
		if (m->n == m->cap) {
			m->cap = m->cap ? m->cap * 2 : 8;
			m->keys = realloc(m->keys, m->cap * m->ksize);
			m->vals = realloc(m->vals, m->cap * m->stride * m->ncpu);
			if (!m->keys || !m->vals)
				abort();
		}
		i = (long)m->n++;
		memcpy(m->keys + (size_t)i * m->ksize, key, m->ksize);
	}
	memcpy(m->vals + (size_t)i * m->stride * m->ncpu, value,
	       m->stride * m->ncpu);
	return 0;
}

static int fake_remove(void *ctx, uint32_t id, const void *key)
{
	struct fake *f = ctx;
	struct fmap *m = &f->maps[id];
	long i = fake_find(m, key);
	if (i < 0)
		return -ENOENT;
	size_t rest = m->n - (size_t)i - 1;
	memmove(m->keys + (size_t)i * m->ksize, m->keys + (size_t)(i + 1) * m->ksize,
		rest * m->ksize);
	memmove(m->vals + (size_t)i * m->stride * m->ncpu,
		m->vals + (size_t)(i + 1) * m->stride * m->ncpu,
		rest * m->stride * m->ncpu);
	m->n--;
	return 0;
}

static inline void fake_init(struct fake *f)
{
	memset(f, 0, sizeof(*f));
	arena_init(&f->arena);
	f->prog.arena = &f->arena;
	f->prog.ringbuf_map = -1;
	f->prog.globals_map = -1;
	f->prog.strlen = FAKE_STRLEN;
	f->reader = (struct map_reader){ .ctx = f, .dump = fake_dump,
					 .clear = fake_clear,
					 .zero = fake_zero,
					 .lookup = fake_lookup,
					 .update = fake_update,
					 .remove = fake_remove };
}

static inline void fake_fini(struct fake *f)
{
	for (uint32_t i = 0; i < f->prog.nmaps; i++) {
		free(f->maps[i].keys);
		free(f->maps[i].vals);
	}
	arena_free(&f->arena);
}

static inline uint32_t agg_vsize(const struct type *t)
{
	switch (t->kind) {
	case TYPE_MIN: case TYPE_MAX: case TYPE_AVG: case TYPE_STATS:
		return 16;
	case TYPE_COUNT: case TYPE_SUM: case TYPE_HIST: case TYPE_LHIST:
		return 8;
	default:
		return t->size;
	}
}

/* A user map as sema would declare it; key NULL means no keys. */
static inline struct fmap *fake_map(struct fake *f, const char *name,
				    const struct type *key,
				    const struct type *value)
{
	bool agg = type_is_agg(value);
	bool bucket = value->kind == TYPE_HIST || value->kind == TYPE_LHIST;
	struct map_spec s = {
		.name = name,
		.kind = agg ? MAP_PERCPU_HASH : MAP_HASH,
		.key_type = key,
		.key_size = (key ? key->size : 8) + (bucket ? 8 : 0),
		.value_type = value,
		.value_size = agg_vsize(value),
		.max_entries = 4096,
		.nkeys = key ? (key->kind == TYPE_TUPLE ? key->nfields : 1) : 0,
	};
	int id = program_add_map(&f->prog, &s);
	struct fmap *m = &f->maps[id];
	m->id = (uint32_t)id;
	m->ksize = s.key_size;
	m->vsize = s.value_size;
	m->ncpu = agg ? FAKE_NCPU : 1;
	m->stride = agg ? (s.value_size + 7) & ~7u : s.value_size;
	return m;
}

static inline uint8_t *fake_slot(struct fake *f, struct fmap *m,
				 const struct kb *k, bool percpu)
{
	size_t i;
	for (i = 0; i < m->n; i++)
		if (memcmp(m->keys + i * m->ksize, k->b, m->ksize) == 0)
			break;
	if (i == m->n) {
		if (m->n == m->cap) {
			m->cap = m->cap ? m->cap * 2 : 8;
			m->keys = realloc(m->keys, m->cap * m->ksize);
			m->vals = realloc(m->vals, m->cap * m->stride * m->ncpu);
			if (!m->keys || !m->vals)
				abort();
		}
		memcpy(m->keys + i * m->ksize, k->b, m->ksize);
		memset(m->vals + i * m->stride * m->ncpu, 0,
		       m->stride * m->ncpu);
		m->n++;
	}
	unsigned cpu = percpu ? f->cpu++ % m->ncpu : 0;
	return m->vals + (i * m->ncpu + cpu) * m->stride;
}

static inline void fake_delete(struct fmap *m, const struct kb *k)
{
	for (size_t i = 0; i < m->n; i++) {
		if (memcmp(m->keys + i * m->ksize, k->b, m->ksize))
			continue;
		memmove(m->keys + i * m->ksize, m->keys + (i + 1) * m->ksize,
			(m->n - i - 1) * m->ksize);
		memmove(m->vals + i * m->stride * m->ncpu,
			m->vals + (i + 1) * m->stride * m->ncpu,
			(m->n - i - 1) * m->stride * m->ncpu);
		m->n--;
		return;
	}
}

static inline void ld_add(uint8_t *p, uint64_t v)
{
	uint64_t x;
	memcpy(&x, p, 8);
	x += v;
	memcpy(p, &x, 8);
}

/* @m[k] = v (integer value) */
static inline void op_set_int(struct fake *f, struct fmap *m,
			      struct kb k, int64_t v)
{
	memcpy(fake_slot(f, m, &k, false), &v, 8);
}

/* @m[k] = bytes (any value layout) */
static inline void op_set(struct fake *f, struct fmap *m, struct kb k,
			  const struct kb *v)
{
	memcpy(fake_slot(f, m, &k, false), v->b, m->vsize);
}

static inline void op_count(struct fake *f, struct fmap *m, struct kb k)
{
	ld_add(fake_slot(f, m, &k, true), 1);
}

static inline void op_sum(struct fake *f, struct fmap *m, struct kb k,
			  int64_t v)
{
	ld_add(fake_slot(f, m, &k, true), (uint64_t)v);
}

static inline void op_minmax(struct fake *f, struct fmap *m, struct kb k,
			     int64_t v, bool is_min)
{
	uint8_t *p = fake_slot(f, m, &k, true);
	int64_t cur;
	uint64_t set;
	memcpy(&cur, p, 8);
	memcpy(&set, p + 8, 8);
	if (!set || (is_min ? v < cur : v > cur)) {
		memcpy(p, &v, 8);
		set = 1;
		memcpy(p + 8, &set, 8);
	}
}

static inline void op_avg(struct fake *f, struct fmap *m, struct kb k,
			  int64_t v)
{
	uint8_t *p = fake_slot(f, m, &k, true);
	ld_add(p, 1);
	ld_add(p + 8, (uint64_t)v);
}

/* bpftrace 0.17's log2: a 5-step binary search from 2^16 down, so
 * every value from 2^31 up lands in bucket 33, "[2G, 4G)". */
static inline uint64_t hist_bucket(int64_t v)
{
	if (v < 0)
		return 0;
	if (v == 0)
		return 1;
	uint64_t n = (uint64_t)v, r = 0;
	for (int i = 16; i > 0; i /= 2) {
		if (n >= (1ull << i)) {
			n >>= i;
			r += (uint64_t)i;
		}
	}
	return r + 2;
}

static inline void op_hist(struct fake *f, struct fmap *m, struct kb k,
			   int64_t v)
{
	kb_int(&k, (int64_t)hist_bucket(v));
	ld_add(fake_slot(f, m, &k, true), 1);
}

/* Bucket 0 below min, 1..n the steps, n+1 from max up; as bpftrace
 * 0.17 computes it, a value in a last partial step joins the top. */
static inline void op_lhist(struct fake *f, struct fmap *m, struct kb k,
			    int64_t v, int64_t min, int64_t max, int64_t step)
{
	int64_t n = (max - min) / step, b;
	if (v < min)
		b = 0;
	else if (v >= max)
		b = n + 1;
	else {
		b = (v - min) / step + 1;
		if (b > n + 1)
			b = n + 1;
	}
	kb_int(&k, b);
	ld_add(fake_slot(f, m, &k, true), 1);
}

/* ---- events --------------------------------------------------------- */

static inline uint64_t ev_print_map(struct fake *f, struct fmap *m,
				    uint64_t top, uint64_t div)
{
	struct event_spec e = { .kind = EV_PRINT_MAP, .map_id = (int32_t)m->id,
				.top = top, .div = div };
	return (uint64_t)program_add_event(&f->prog, &e);
}

static inline uint64_t ev_simple(struct fake *f, enum event_kind k,
				 const char *fmt, const struct type *args,
				 int32_t map_id)
{
	struct event_spec e = { .kind = k, .fmt = fmt, .args = args,
				.map_id = map_id };
	return (uint64_t)program_add_event(&f->prog, &e);
}

/* Send a record: the event id, then `n` bytes of arguments. */
static inline int fake_send(struct output *o, uint64_t id, const void *args,
			    size_t n)
{
	uint8_t rec[4096];
	memcpy(rec, &id, 8);
	if (n)
		memcpy(rec + 8, args, n);
	return output_event(o, rec, 8 + n);
}

/* ---- golden files --------------------------------------------------- */

static inline char *read_golden(const char *name)
{
	const char *dir = getenv("SONDE_SRCDIR");
	char path[1024];
	snprintf(path, sizeof(path), "%s/tests/data/output/%s",
		 dir ? dir : ".", name);
	return file_read(path, NULL);
}

#endif
