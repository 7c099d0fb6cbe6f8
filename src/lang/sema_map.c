/* sema_map.c - the semantic pass for maps: the program-wide map table,
 * key and value types (and how slots keep or widen their types), reads
 * and assignments, and the map specs handed to the program. */
#include "sema_int.h"

#include <stdlib.h>
#include <string.h>

#include "../program.h"

#define MAP_MAX_ENTRIES 4096
/* bpftrace 0.17's log2 buckets: below 0, 0, then [2^k, 2^(k+1)) for k up
 * to 31 and everything from 2^32 on (cg_map.c hist_bucket). */
#define HIST_BUCKETS 34

/* Values that can live in a variable, a map or a record. */
bool sema_storable(const struct type *t)
{
	return t && t->kind != TYPE_NONE && t->kind != TYPE_RECORD &&
	       !type_is_agg(t);
}

/* A pointer with a C type (a cast, curtask, a struct's pointer member):
 * it keeps that type in maps, where bpftrace prints it as a signed
 * number in values (map_int) and in hex in keys (output/value.c). */
static bool is_typed_ptr(const struct type *t)
{
	return is_int(t) && t->is_ptr && t->ctype && t->ctype->kind == CT_PTR;
}

/* The type a variable, key or map value keeps when another value is
 * stored: as in bpftrace, an integer slot keeps the type it was first
 * given (later integers are converted to it); strings widen; tuples
 * merge field by field. NULL if the types cannot share a slot. */
const struct type *sema_merge(struct sema *s, const struct type *old,
			      const struct type *t)
{
	if (is_int(old) && is_int(t))
		return old;
	if (old->kind == TYPE_TUPLE && t->kind == TYPE_TUPLE &&
	    old->nfields == t->nfields && type_names_match(old, t)) {
		const struct type **f = arena_array(s->a, const struct type *,
						    old->nfields);
		for (uint32_t i = 0; i < old->nfields; i++) {
			int j = old->names ?
				type_field_index(t, old->names[i]) : (int)i;
			if (!(f[i] = sema_merge(s, old->fields[i], t->fields[j])))
				return NULL;
		}
		const struct type *u = old->names ?
			type_record(s->a, old->nfields, f, old->names) :
			type_tuple(s->a, old->nfields, f);
		return type_equal(u, old) ? old : u;
	}
	return type_unify(s->a, old, t);
}

/* An integer of an enum type, which 0.26 prints by the enumerator's
 * name: maps keep the enum (only under --dialect=0.26, so 0.17's types
 * stay as they were). */
static bool is_enum_int(struct sema *s, const struct type *t)
{
	return is_int(t) && !t->is_ptr && t->ctype &&
	       t->ctype->kind == CT_ENUM && s->prog->dialect >= DIALECT_026;
}

/* Maps hold integers as 64 bits (with the signedness of the first value
 * stored), as bpftrace does. */
static const struct type *map_int(struct sema *s, const struct type *t)
{
	if (is_typed_ptr(t) && !t->is_signed) {
		/* keeps its C type (@p->field follows it); printed signed */
		struct type *p = arena_new(s->a, struct type);
		*p = *t;
		p->is_signed = true;
		return p;
	}
	if (is_typed_ptr(t) || (t->kind == TYPE_INT && t->is_bool))
		return t;
	if (is_enum_int(s, t)) {
		struct type *e = arena_new(s->a, struct type);
		*e = *type_int(s->a, 64, t->is_signed);
		e->ctype = t->ctype;
		return e;
	}
	return is_int(t) ? type_int(s->a, 64, t->is_signed) : t;
}

/* ---------------------------------------------------------------- */
/* maps                                                              */

struct sema_map *sema_map_find(struct sema *s, const char *name)
{
	int64_t i = strmap_get(&s->map_index, name);
	return i < 0 ? NULL : &s->maps.v[i];
}

/* The map n names, added on first sight; n learns its id. */
static struct sema_map *map_entry(struct sema *s, struct node *n)
{
	struct sema_map *m = sema_map_find(s, n->u.map.name);
	if (!m) {
		struct sema_map nm = { .name = n->u.map.name, .pos = n->pos,
				       .id = -1 };
		if (vec_push(&s->maps, nm))
			return NULL;
		if (strmap_put(&s->map_index, nm.name,
			       (uint32_t)(s->maps.n - 1)) < 0) {
			s->maps.n--;
			return NULL;
		}
		m = &s->maps.v[s->maps.n - 1];
		s->changed = true;
	}
	n->u.map.map_id = m->id;
	return m;
}

/* A map key's type as stored: integers are int64 whatever their source
 * (bpftrace 0.17 prints @k[(uint64)-1] as @k[-1]), in tuples too. */
static const struct type *key_type(struct sema *s, const struct type *t)
{
	if (is_enum_int(s, t)) {
		struct type *e = arena_new(s->a, struct type);
		*e = *type_s64();
		e->ctype = t->ctype;
		return e;
	}
	if (is_int(t) && !is_typed_ptr(t) && !t->is_bool)
		return type_s64();
	if (t->kind != TYPE_TUPLE)
		return t;
	const struct type **f = arena_array(s->a, const struct type *,
					    t->nfields ? t->nfields : 1);
	for (uint32_t i = 0; i < t->nfields; i++)
		f[i] = key_type(s, t->fields[i]);
	return t->names ? type_record(s->a, t->nfields, f, t->names) :
		type_tuple(s->a, t->nfields, f);
}

struct sema_map *sema_map_ref(struct sema *s, struct node *n)
{
	/* Keys first: they may mention other maps, which can grow the
	 * table and move the entries. */
	uint32_t nk = n->u.map.keys.n;
	const struct type **kt = arena_array(s->a, const struct type *,
					     nk ? nk : 1);
	bool known = true;
	for (uint32_t i = 0; i < nk; i++) {
		struct node *k = n->u.map.keys.v[i];
		kt[i] = sema_expr(s, k);
		if (!kt[i]) {
			known = false;
		} else if (!sema_storable(kt[i]) ||
			   type_has_kind(kt[i], TYPE_RECORD)) {
			sema_error(s, k->pos, "MAP_KEY_MISMATCH",
				   "a value of type '%s' cannot be a map key",
				   sema_tname(s, kt[i]));
			known = false;
		}
	}
	/* @m[(a, b)] is @m[a, b] (bpftrace 0.2x: the keys of a map are one
	 * tuple), so a tuple value can name an entry of a map of several
	 * keys; codegen stores it field by field as the key type. A
	 * record stays one key. */
	if (known && nk == 1 && kt[0]->kind == TYPE_TUPLE &&
	    !kt[0]->names && kt[0]->nfields > 1) {
		nk = kt[0]->nfields;
		kt = (const struct type **)kt[0]->fields;
	}

	struct sema_map *m = map_entry(s, n);
	if (!m)
		return NULL;
	if (m->keys_known && m->nkeys != nk) {
		sema_error(s, n->pos, "MAP_KEY_MISMATCH",
			   "%s used with %u key%s here but %u at line %u",
			   m->name, nk, nk == 1 ? "" : "s", m->nkeys,
			   m->key_pos.line);
		return m;
	}
	if (!known)
		return m;
	const struct type **norm = arena_array(s->a, const struct type *,
					       nk ? nk : 1);
	for (uint32_t i = 0; i < nk; i++)
		norm[i] = key_type(s, kt[i]);
	kt = norm;
	if (!m->keys_known) {
		m->keys_known = true;
		m->nkeys = nk;
		m->key_pos = n->pos;
		m->key = nk ? type_tuple(s->a, nk, kt) : NULL;
		s->changed = true;
		return m;
	}
	if (!nk)
		return m;
	const struct type *kn = type_tuple(s->a, nk, kt);
	const struct type *u = sema_merge(s, m->key, kn);
	if (!u) {
		sema_error(s, n->pos, "MAP_KEY_MISMATCH",
			   "%s has key type '%s' (line %u), used here with '%s'",
			   m->name, sema_tname(s, m->key), m->key_pos.line,
			   sema_tname(s, kn));
	} else if (!type_equal(u, m->key)) {
		m->key = u;
		s->changed = true;
	}
	return m;
}

struct sema_map *sema_map_defined(struct sema *s, struct node *n)
{
	struct sema_map *m = sema_map_ref(s, n);
	if (m && !m->value) {
		sema_error(s, n->pos, "UNDEF_MAP",
			   "map %s is used but never assigned", n->u.map.name);
		return NULL;
	}
	return m;
}

struct sema_map *sema_map_whole(struct sema *s, struct node *n)
{
	struct sema_map *m = map_entry(s, n);
	if (!m)
		return NULL;
	if (!m->value) {
		sema_error(s, n->pos, "UNDEF_MAP",
			   "map %s is used but never assigned", n->u.map.name);
		return NULL;
	}
	n->type = m->value;
	return m;
}

void sema_map_assign(struct sema *s, struct node *map, const struct type *t,
		     struct pos at)
{
	sema_map_set(s, sema_map_ref(s, map), map, t, at);
}

void sema_map_set(struct sema *s, struct sema_map *m, struct node *map,
		  const struct type *t, struct pos at)
{
	if (m && !t)
		m->assigned_untyped = true;
	if (!m || !t)
		return;
	t = map_int(s, t);
	if (!m->value) {
		m->value = t;
		s->changed = true;
	} else {
		const struct type *u = sema_merge(s, m->value, t);
		if (!u) {
			sema_error(s, at, "TYPE_MISMATCH",
				   "type mismatch for %s: assigning '%s' to a map "
				   "holding '%s'", m->name, sema_tname(s, t),
				   sema_tname(s, m->value));
			return;
		}
		if (!type_equal(u, m->value)) {
			m->value = u;
			s->changed = true;
		}
	}
	map->type = m->value;
}

const struct type *sema_map_read(struct sema *s, struct node *n)
{
	struct sema_map *m = sema_map_defined(s, n);
	if (!m)
		return NULL;
	switch (m->value ? m->value->kind : TYPE_INT) {
	case TYPE_COUNT:
	case TYPE_SUM:
	case TYPE_MIN:
	case TYPE_MAX:
	case TYPE_AVG:
		/* as in bpftrace 0.17, an integer; codegen merges the
		 * per-CPU values (bpftrace reads this CPU's alone); avg()
		 * as bpftrace 0.21 reads it ("Enable count, sum, min, and
		 * max map reads in kernel space"; 0.26 reads avg too) */
		return n->type = type_int(s->a, 64, m->value->kind != TYPE_COUNT &&
					  m->value->is_signed);
	default:
		break;
	}
	if (type_is_agg(m->value)) {
		sema_error(s, n->pos, "AGG_READ",
			   "%s holds a %s() aggregation, which cannot be used "
			   "as a value (print() it instead)", m->name,
			   type_kind_name(m->value->kind));
		return NULL;
	}
	return n->type = m->value;
}

/* Entries a map needs. A keyed map gets the default capacity; a keyless
 * one has one key, or one per bucket for a histogram, so it is sized to
 * that: the kernel allocates a hash map's buckets up front, and 4096 of
 * them cost ~0.1 ms to create where one costs ~5 us (bench/run's
 * 1,000-line script has hundreds of keyless maps). */
static uint32_t max_entries(const struct sema_map *m)
{
	if (m->nkeys)
		return MAP_MAX_ENTRIES;
	switch (m->value->kind) {
	case TYPE_HIST:
		return HIST_BUCKETS;
	case TYPE_TSERIES:
		return m->value->ts_intervals;
	case TYPE_LHIST: {
		const struct type *t = m->value;
		int64_t step = t->lhist_step > 0 ? t->lhist_step : 1;
		uint64_t n = (uint64_t)(t->lhist_max - t->lhist_min) /
			(uint64_t)step + 2;
		return n < MAP_MAX_ENTRIES ? (uint32_t)n : MAP_MAX_ENTRIES;
	}
	default:
		return 1;
	}
}

static int cmp_map_name(const void *a, const void *b)
{
	const struct sema_map *const *x = a, *const *y = b;
	return strcmp((*x)->name, (*y)->name);
}

/* Add the user maps to the program, sorted by name: bpftrace 0.17 prints
 * maps at exit in name order, and output walks prog->maps in order. */
void sema_add_maps(struct sema *s)
{
	size_t n = s->maps.n;
	struct sema_map **v = arena_array(s->a, struct sema_map *, n ? n : 1);
	for (size_t i = 0; i < n; i++)
		v[i] = &s->maps.v[i];
	qsort(v, n, sizeof(*v), cmp_map_name);
	for (size_t i = 0; i < n; i++) {
		struct sema_map *m = v[i];
		if (!m->value || !m->keys_known)
			continue;
		bool agg = type_is_agg(m->value);
		bool bucket = m->value->kind == TYPE_HIST ||
			m->value->kind == TYPE_LHIST ||
			m->value->kind == TYPE_TSERIES;
		/* A keyless count() is one per-CPU slot that always exists,
		 * as in bpftrace 0.17: never fired, it prints `@c: 0`, and
		 * clear()/delete() zero it. bpftrace 0.26 keeps it as any
		 * other map, so a cleared one is gone (its tests: basic
		 * "clear count-map", stdlib "delete count-map"). D's
		 * aggregation never written has no entry, and prints
		 * nothing, as in DTrace. */
		bool slot = !m->nkeys && m->value->kind == TYPE_COUNT &&
			!s->prog->dtrace.on && s->prog->dialect < DIALECT_026;
		struct map_spec spec = {
			.name = m->name,
			.kind = slot ? MAP_PERCPU_ARRAY :
				agg ? MAP_PERCPU_HASH : MAP_HASH,
			.key_type = m->nkeys ? m->key : NULL,
			.key_size = slot ? 4 : (m->nkeys ? m->key->size : 8) +
				(bucket ? 8 : 0),
			.value_type = m->value,
			.value_size = type_map_value_size(m->value),
			.max_entries = max_entries(m),
			.nkeys = m->nkeys,
		};
		m->id = program_add_map(s->prog, &spec);
	}
}
