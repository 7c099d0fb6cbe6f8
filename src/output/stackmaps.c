/* stackmaps.c - maps keyed by copied user stacks: sample keys translated
 * to canonical stacks and merged, when printed and periodically in the
 * kernel map itself (compaction). */

/*
 * With copied user stacks (prog->ustack_copy) every ustack evaluation
 * has its own sample id, so @[ustack] = count() makes one map entry per
 * sample. Output knows which samples are the same stack (stacks.c), so:
 *  - when a map is printed, the snapshot's sample ids become canonical
 *    ids and entries with equal keys are merged, value by value, the way
 *    per-CPU values are (counts and sums add, min/max keep the extreme,
 *    avg/stats add count and total, histogram buckets add);
 *  - output_compact(), called from the event loop, does the same inside
 *    the kernel map so it does not fill up: each sample entry is added
 *    into its canonical entry and deleted. Probes never write canonical
 *    keys (only sample keys), so the read-modify-write of a canonical
 *    entry races with nothing. A sample entry is moved only when its
 *    record arrived in an earlier generation, by which time the probe
 *    that created the entry has long finished updating it.
 */
#include "output_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../base/log.h"

#define MAX_USTACK_FIELDS 16

static uint64_t ld64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

static void st64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

/* Offsets of the USTACK fields of a key type, nested tuples included. */
static unsigned ustack_offsets(const struct type *t, uint32_t base,
			       uint32_t *offs, unsigned n)
{
	if (!t)
		return n;
	if (t->kind == TYPE_USTACK) {
		if (n < MAX_USTACK_FIELDS)
			offs[n++] = base;
		return n;
	}
	if (t->kind == TYPE_TUPLE)
		for (uint32_t i = 0; i < t->nfields; i++)
			n = ustack_offsets(t->fields[i], base + t->offsets[i],
					   offs, n);
	return n;
}

bool stackmaps_keyed_by_samples(const struct output *o,
				const struct map_spec *m)
{
	uint32_t offs[MAX_USTACK_FIELDS];
	return o->stacks && o->prog->ustack_copy && m->name &&
	       m->name[0] == '@' &&
	       ustack_offsets(m->key_type, 0, offs, 0) > 0;
}

/* Rewrite the sample ids of KEY to canonical ids. Returns 1 if KEY held
 * a sample that can be translated (and every sample in it is older than
 * generation BEFORE, when BEFORE is not UINT32_MAX), 0 if it holds none
 * or one that cannot be translated yet. For printing (BEFORE is
 * UINT32_MAX), a sample whose record never came is a lost one: its id
 * becomes the lost samples' (-1), so that all of them make one entry,
 * the empty stack, as records lost to a full ring do. */
static int translate_key(struct output *o, const struct map_spec *m,
			 uint8_t *key, uint32_t key_size, uint32_t before)
{
	uint32_t offs[MAX_USTACK_FIELDS];
	unsigned n = ustack_offsets(m->key_type, 0, offs, 0);
	int any = 0;
	for (unsigned i = 0; i < n; i++) {
		if (offs[i] + 8 > key_size)
			continue;
		uint64_t id = ld64(key + offs[i]), canon;
		uint32_t gen;
		if ((int64_t)id < 0 || !(id & USTACK_ID_SAMPLE))
			continue;
		if (stacks_canon_of(o->stacks, id, &canon, &gen) < 0) {
			if (before != UINT32_MAX)
				return 0;
			canon = (uint64_t)-1;
			gen = 0;
		}
		if (before != UINT32_MAX && gen >= before)
			return 0;
		st64(key + offs[i], canon);
		any = 1;
	}
	return any;
}

/* Merge entry B's values into A's (NV per-CPU values of STRIDE bytes). */
static void merge_values(const struct type *vt, uint8_t *a, const uint8_t *b,
			 uint32_t nv, uint32_t stride, uint32_t size)
{
	for (uint32_t c = 0; c < nv; c++) {
		uint8_t *x = a + (size_t)c * stride;
		const uint8_t *y = b + (size_t)c * stride;
		switch (vt ? vt->kind : TYPE_NONE) {
		case TYPE_COUNT: case TYPE_SUM: case TYPE_HIST: case TYPE_LHIST:
			st64(x, ld64(x) + ld64(y));
			break;
		case TYPE_AVG: case TYPE_STATS:
			st64(x, ld64(x) + ld64(y));
			st64(x + 8, ld64(x + 8) + ld64(y + 8));
			break;
		case TYPE_STDDEV: {
			st64(x, ld64(x) + ld64(y));
			st64(x + 8, ld64(x + 8) + ld64(y + 8));
			unsigned __int128 sq =
				((unsigned __int128)ld64(x + 24) << 64 |
				 ld64(x + 16)) +
				((unsigned __int128)ld64(y + 24) << 64 |
				 ld64(y + 16));
			st64(x + 16, (uint64_t)sq);
			st64(x + 24, (uint64_t)(sq >> 64));
			break;
		}
		case TYPE_MIN: case TYPE_MAX: {
			if (!ld64(y + 8))
				break;
			uint64_t u = ld64(x), v = ld64(y);
			bool less = vt->is_signed ? (int64_t)v < (int64_t)u : v < u;
			bool better = vt->kind == TYPE_MIN ? less :
				(!less && u != v);
			if (!ld64(x + 8) || better) {
				st64(x, v);
				st64(x + 8, 1);
			}
			break;
		}
		default:
			/* a plain value: the sample's (the later one) wins */
			memcpy(x, y, size);
			break;
		}
	}
}

/* D's keys of func()/sym()/mod() and their user forms: the key fields'
 * offsets (and types), as ustack_offsets. */
static unsigned sym_offsets(const struct type *t, uint32_t base,
			    uint32_t *offs, const struct type **types,
			    unsigned n)
{
	if (!t)
		return n;
	if (t->kind == TYPE_KSYM || t->kind == TYPE_USYM) {
		if (n < MAX_USTACK_FIELDS) {
			types[n] = t;
			offs[n++] = base;
		}
		return n;
	}
	if (t->kind == TYPE_TUPLE)
		for (uint32_t i = 0; i < t->nfields; i++)
			n = sym_offsets(t->fields[i], base + t->offsets[i],
					offs, types, n);
	return n;
}

/* A module's first address seen: the one its mod()/umod() keys take. */
struct mod_seen {
	const char *module;
	int64_t pid;
	uint64_t addr;
};
#define MODS_SEEN_MAX 256

/* D's consumer makes the keys of one function (func, sym) or one
 * module (mod, umod) one entry; so does this: each such address becomes
 * its symbol's start, or its module's first address seen. Whether a key
 * changed. */
static bool canon_sym_key(struct output *o, const uint32_t *offs,
			  const struct type **types, unsigned n, uint8_t *key,
			  uint32_t key_size, struct mod_seen *mods,
			  unsigned *nmods)
{
	bool changed = false;
	for (unsigned i = 0; i < n; i++) {
		bool user = types[i]->kind == TYPE_USYM;
		if (offs[i] + (user ? 16 : 8) > key_size)
			continue;
		uint64_t addr = ld64(key + offs[i]), start;
		int64_t pid = user ? (int64_t)ld64(key + offs[i] + 8) : -1;
		const char *module;
		if (stacks_sym_of(o->stacks, addr, pid, user, &start,
				  &module) < 0)
			continue;
		uint64_t canon = start;
		if (types[i]->sym_module) {
			unsigned k = 0;
			for (; k < *nmods; k++)
				if (mods[k].pid == pid &&
				    (mods[k].module == module ||
				     (module && mods[k].module &&
				      !strcmp(mods[k].module, module))))
					break;
			if (k == *nmods && k < MODS_SEEN_MAX)
				mods[(*nmods)++] = (struct mod_seen){ module,
								     pid, addr };
			canon = k < *nmods ? mods[k].addr : addr;
		}
		if (canon != addr) {
			st64(key + offs[i], canon);
			changed = true;
		}
	}
	return changed;
}

int stackmaps_canonicalize(struct output *o, const struct map_spec *m,
			   struct map_snapshot *s)
{
	uint32_t soffs[MAX_USTACK_FIELDS];
	const struct type *stypes[MAX_USTACK_FIELDS];
	unsigned nsym = o->prog->dtrace.on && o->stacks && m->name &&
		m->name[0] == '@' ?
		sym_offsets(m->key_type, 0, soffs, stypes, 0) : 0;
	bool samples = stackmaps_keyed_by_samples(o, m);
	if ((!samples && !nsym) || s->n == 0)
		return 0;
	size_t vbytes = (size_t)s->nvalues * s->value_stride;
	bool changed = false;
	struct mod_seen *mods = NULL;
	unsigned nmods = 0;
	if (nsym && !(mods = calloc(MODS_SEEN_MAX, sizeof(*mods))))
		return -ENOMEM;
	for (uint32_t i = 0; i < s->n; i++) {
		uint8_t *k = s->keys + (size_t)i * s->key_size;
		if (samples && translate_key(o, m, k, s->key_size, UINT32_MAX))
			changed = true;
		if (nsym && canon_sym_key(o, soffs, stypes, nsym, k,
					  s->key_size, mods, &nmods))
			changed = true;
	}
	free(mods);
	if (!changed)
		return 0;
	/* Merge equal keys into their first occurrence (quadratic in the
	 * worst case only over entries sharing a hash bucket). */
	size_t cap = 16;
	while (cap < 2 * (size_t)s->n)
		cap *= 2;
	uint32_t *slot = calloc(cap, sizeof(*slot));
	if (!slot)
		return -ENOMEM;
	uint32_t out = 0;
	for (uint32_t i = 0; i < s->n; i++) {
		const uint8_t *k = s->keys + (size_t)i * s->key_size;
		uint64_t h = 1469598103934665603ull;
		for (uint32_t b = 0; b < s->key_size; b++)
			h = (h ^ k[b]) * 1099511628211ull;
		size_t j = h & (cap - 1);
		for (; slot[j]; j = (j + 1) & (cap - 1))
			if (memcmp(s->keys + (size_t)(slot[j] - 1) * s->key_size,
				   k, s->key_size) == 0)
				break;
		if (slot[j]) {
			merge_values(m->value_type,
				     s->values + (size_t)(slot[j] - 1) * vbytes,
				     s->values + (size_t)i * vbytes,
				     s->nvalues, s->value_stride, s->value_size);
			continue;
		}
		if (out != i) {
			memmove(s->keys + (size_t)out * s->key_size, k, s->key_size);
			memmove(s->values + (size_t)out * vbytes,
				s->values + (size_t)i * vbytes, vbytes);
		}
		slot[j] = ++out;
	}
	s->n = out;
	free(slot);
	return 0;
}

/* Move every old-enough sample entry of map MAP_ID into its canonical
 * entry. */
static int compact_map(struct output *o, uint32_t map_id, uint32_t before)
{
	const struct map_spec *m = &o->prog->maps[map_id];
	struct map_snapshot s = { 0 };
	int r = o->maps.dump(o->maps.ctx, map_id, &s);
	if (r < 0)
		return r;
	size_t vbytes = (size_t)s.nvalues * s.value_stride;
	uint8_t *key = malloc(s.key_size ? s.key_size : 1);
	uint8_t *cur = malloc(vbytes ? vbytes : 1);
	if (!key || !cur) {
		r = -ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < s.n && r == 0; i++) {
		const uint8_t *k = s.keys + (size_t)i * s.key_size;
		memcpy(key, k, s.key_size);
		if (!translate_key(o, m, key, s.key_size, before))
			continue;
		int l = o->maps.lookup(o->maps.ctx, map_id, key, cur);
		if (l == -ENOENT)
			memset(cur, 0, vbytes);
		else if (l < 0) {
			r = l;
			break;
		}
		/* The sample entry as it is now (the snapshot may be older
		 * by a few microseconds). */
		uint8_t *v = s.values + (size_t)i * vbytes;
		if (o->maps.lookup(o->maps.ctx, map_id, k, v) < 0)
			continue;
		merge_values(m->value_type, cur, v, s.nvalues, s.value_stride,
			     s.value_size);
		r = o->maps.update(o->maps.ctx, map_id, key, cur);
		if (r == -E2BIG && l == -ENOENT) {
			/* A full map (the probes' new keys are dropped and
			 * counted): the sample entry makes room for its
			 * canonical one. Failing here instead would stop
			 * every later round, and with it the pruning of
			 * samples, whose table, stacks and processes would
			 * then grow with every sample for the rest of the
			 * run. */
			r = o->maps.remove(o->maps.ctx, map_id, k);
			if (r == 0 || r == -ENOENT)
				r = o->maps.update(o->maps.ctx, map_id, key, cur);
			if (r == -E2BIG) {
				o->compact_lost++;      /* a probe was quicker */
				r = 0;
			}
			continue;
		}
		if (r == 0)
			r = o->maps.remove(o->maps.ctx, map_id, k);
		if (r == -ENOENT)
			r = 0;
	}
out:
	free(key);
	free(cur);
	map_snapshot_free(&s);
	return r;
}

/* Whether some map keeps ustack values (@x = ustack) or keys that
 * compaction cannot fold (arrays): their sample ids must stay known. */
static bool samples_kept_elsewhere(const struct output *o)
{
	for (uint32_t i = 0; i < o->prog->nmaps; i++) {
		const struct map_spec *m = &o->prog->maps[i];
		if (!m->name || m->name[0] != '@')
			continue;
		if (type_has_kind(m->value_type, TYPE_USTACK))
			return true;
		if (type_has_kind(m->key_type, TYPE_USTACK) &&
		    m->kind != MAP_HASH && m->kind != MAP_PERCPU_HASH)
			return true;
	}
	return false;
}

/* A quarter of a map's default size (4096 entries): compacting at that
 * pace leaves room for the samples still on their way. */
#define COMPACT_SAMPLES 1024


bool output_compact_due(struct output *o)
{
	return o && o->stacks && stacks_gen_samples(o->stacks) >= COMPACT_SAMPLES;
}

int output_compact(struct output *o)
{
	if (!o || !o->stacks || !o->have_maps || !o->maps.dump ||
	    !o->maps.lookup || !o->maps.update || !o->maps.remove)
		return 0;
	uint32_t before = stacks_gen(o->stacks);
	int ret = 0;
	for (uint32_t i = 0; i < o->prog->nmaps; i++) {
		const struct map_spec *m = &o->prog->maps[i];
		if (!stackmaps_keyed_by_samples(o, m) ||
		    (m->kind != MAP_HASH && m->kind != MAP_PERCPU_HASH))
			continue;
		int r = compact_map(o, i, before);
		if (r < 0 && !ret)
			ret = r;
	}
	/* Samples older than the stacks' grace (what may still be on its
	 * way) have been folded by now (events that carry them were printed
	 * as they came): only their canonical stacks matter from here on,
	 * so the sample table stays as small as a few seconds of samples.
	 * Counted in time, not generations (they come as fast as samples):
	 * the probe that made a sample may add its map entry well after its
	 * record was read (a probe preempted between the two: a traced
	 * process's thread under the process engine, a preemptible kernel),
	 * and an entry whose sample is forgotten could never be merged into
	 * its stack. Not after a failed round, whose entries still need
	 * their samples. */
	double now = log_now_ms();
	if (now - o->sample_mark_ms >= (double)stacks_grace(o->stacks) / 1e6) {
		if (ret == 0 && o->sample_mark_gen && !samples_kept_elsewhere(o))
			stacks_prune(o->stacks, o->sample_mark_gen);
		o->sample_mark_gen = before;
		o->sample_mark_ms = now;
	}
	stacks_next_gen(o->stacks);
	/* and now and then, let go of what no map refers to any more */
	int r = output_sweep(o, false);
	return ret ? ret : r;
}
