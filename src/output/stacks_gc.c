/* stacks_gc.c - what the maps still refer to, so that stacks.c can let go
 * of the rest: canonical user stacks and processes that have exited.
 *
 * `profile:hz:99 { @[ustack] = count(); } interval:s:1 { clear(@); }` on
 * a host that starts many short processes reached 1.4 GB and 7,000 open
 * descriptors in a minute: every sampled process kept its mappings, a
 * descriptor per mapped file and its symbol tables for the whole run, and
 * every distinct stack its frames. What still matters is what can still
 * be printed: the map keys and values holding a user stack (its id and
 * pid) or a user symbol (its pid). Every few seconds those are collected
 * from the maps (the same dumps compaction makes) and handed to
 * stacks_gc(), which keeps them and lets go of the rest. */
#include "output_int.h"

#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "../base/log.h"
#include "../base/vec.h"

/* How often the maps are walked for references. */
#define SWEEP_INTERVAL_MS 2000

struct refs {
	VEC(uint64_t) canon;
	VEC(int32_t) pids;          /* of stacks read from stack maps */
	VEC(struct usym_ref) usyms;
};

static uint64_t ld64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

/* The user stacks and symbols in a value of type T at P (SIZE bytes). */
static void collect(struct output *o, const struct type *t, const uint8_t *p,
		    uint32_t size, struct refs *r)
{
	if (!t || t->size > size)
		return;
	if (t->kind == TYPE_USTACK || t->kind == TYPE_USYM) {
		/* a USYM's pid word may carry a probe site above the pid
		 * (stacks.c's hook_sym) */
		int64_t pid = t->kind == TYPE_USYM ?
			(int64_t)(uint32_t)ld64(p + 8) : (int64_t)ld64(p + 8);
		bool valid = pid > 0 && pid <= INT32_MAX;
		if (t->kind == TYPE_USYM) {
			struct usym_ref u = { (int32_t)pid, ld64(p) };
			if (valid)
				vec_push(&r->usyms, u);
			return;
		}
		uint64_t id = ld64(p), canon;
		if ((int64_t)id >= 0 && (id & USTACK_ID_SAMPLE) &&
		    stacks_canon_of(o->stacks, id, &canon, NULL) == 0)
			id = canon;
		/* a canonical stack names its process itself */
		if ((int64_t)id >= 0 && (id & USTACK_ID_CANON))
			vec_push(&r->canon, id);
		else if (valid)
			vec_push(&r->pids, (int32_t)pid);
		return;
	}
	if (t->kind == TYPE_TUPLE)
		for (uint32_t i = 0; i < t->nfields; i++)
			if (t->offsets[i] < size)
				collect(o, t->fields[i], p + t->offsets[i],
					size - t->offsets[i], r);
}

static bool holds_user_refs(const struct type *t)
{
	return type_has_kind(t, TYPE_USTACK) || type_has_kind(t, TYPE_USYM);
}

/* Add the references in map M's entries; -errno if it cannot be read
 * (then nothing may be let go: what it holds is unknown). */
static int collect_map(struct output *o, uint32_t id, struct refs *r)
{
	const struct map_spec *m = &o->prog->maps[id];
	bool in_key = holds_user_refs(m->key_type);
	bool in_value = holds_user_refs(m->value_type);
	if (!in_key && !in_value)
		return 0;
	struct map_snapshot snap = { 0 };
	int err = o->maps.dump(o->maps.ctx, id, &snap);
	if (err < 0)
		return err;
	size_t vbytes = (size_t)snap.nvalues * snap.value_stride;
	for (uint32_t i = 0; i < snap.n; i++) {
		if (in_key)
			collect(o, m->key_type, snap.keys + (size_t)i * snap.key_size,
				snap.key_size, r);
		/* per-CPU values are aggregations, which hold no stacks */
		if (in_value && snap.nvalues == 1)
			collect(o, m->value_type, snap.values + i * vbytes,
				snap.value_size, r);
	}
	map_snapshot_free(&snap);
	return 0;
}

static void collect_key(void *ctx, struct output *o, const struct map_spec *m,
			const uint8_t *key, uint32_t size)
{
	if (holds_user_refs(m->key_type))
		collect(o, m->key_type, key, size, ctx);
}

static int cmp_usym_ref(const void *a, const void *b)
{
	const struct usym_ref *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

int output_sweep(struct output *o, bool now)
{
	if (!o || !o->stacks || !o->have_maps || !o->maps.dump)
		return 0;
	double t = log_now_ms();
	if (!now && t - o->last_sweep_ms < SWEEP_INTERVAL_MS)
		return 0;
	o->last_sweep_ms = t;
	struct refs r = { 0 };
	int err = 0;
	for (uint32_t i = 0; i < o->prog->nmaps && err == 0; i++)
		if (o->prog->maps[i].name && o->prog->maps[i].name[0] == '@')
			err = collect_map(o, i, &r);
	/* an exporter's walk still to finish holds keys of its snapshot
	 * that the maps may have let go of since (entries.c) */
	if (err == 0)
		output_walks_keys(o, collect_key, &r);
	if (err == 0 && r.usyms.n)
		qsort(r.usyms.v, r.usyms.n, sizeof(*r.usyms.v), cmp_usym_ref);
	if (err == 0)
		err = stacks_gc(o->stacks, r.canon.v, r.canon.n, r.pids.v,
				r.pids.n, r.usyms.v, r.usyms.n);
	vec_free(&r.canon);
	vec_free(&r.pids);
	vec_free(&r.usyms);
	/* What was let go is free in the heap but still resident: the
	 * Dwfls of exited processes (megabytes each, python's) come and go
	 * in between longer-lived blocks, and the soak's RssAnon climbed
	 * in steps to 45 MB while under 7 MB was in use. Give the free
	 * pages back, as the sweep does its work every few seconds. */
	if (err > 0)
		malloc_trim(0);
	return err < 0 ? err : 0;
}
