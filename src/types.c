/* types.c - construction, comparison, unification and naming of types. */
#include "types.h"

#include <string.h>

static const char *const kind_names[] = {
#define X(k, s) s,
	TYPE_KINDS(X)
#undef X
};

const char *type_kind_name(enum type_kind k)
{
	return kind_names[k];
}

static const struct type t_none = { .kind = TYPE_NONE };
static const struct type t_u64 = { .kind = TYPE_INT, .size = 8, .bits = 64 };
static const struct type t_s64 = { .kind = TYPE_INT, .size = 8, .bits = 64,
				   .is_signed = true };
static const struct type t_bool = { .kind = TYPE_INT, .size = 8, .bits = 64,
				    .is_bool = true };

const struct type *type_none(void) { return &t_none; }
const struct type *type_u64(void) { return &t_u64; }
const struct type *type_s64(void) { return &t_s64; }
const struct type *type_bool(void) { return &t_bool; }

const struct type *type_int(struct arena *a, unsigned bits, bool is_signed)
{
	if (bits == 64)
		return is_signed ? &t_s64 : &t_u64;
	struct type *t = arena_new(a, struct type);
	t->kind = TYPE_INT;
	t->size = 8;
	t->bits = (uint8_t)bits;
	t->is_signed = is_signed;
	return t;
}

const struct type *type_str(struct arena *a, uint32_t size)
{
	struct type *t = arena_new(a, struct type);
	t->kind = TYPE_STR;
	t->size = size;
	return t;
}

const struct type *type_simple(struct arena *a, enum type_kind kind,
			       uint32_t size)
{
	struct type *t = arena_new(a, struct type);
	t->kind = kind;
	t->size = size;
	return t;
}

const struct type *type_tuple(struct arena *a, uint32_t n,
			      const struct type *const *fields)
{
	struct type *t = arena_new(a, struct type);
	t->kind = TYPE_TUPLE;
	t->nfields = n;
	t->fields = arena_array(a, const struct type *, n);
	t->offsets = arena_array(a, uint32_t, n);
	uint32_t off = 0;
	for (uint32_t i = 0; i < n; i++) {
		t->fields[i] = fields[i];
		t->offsets[i] = off;
		off += (fields[i]->size + 7) & ~7u;
	}
	t->size = off;
	return t;
}

const struct type *type_record(struct arena *a, uint32_t n,
			       const struct type *const *fields,
			       const char *const *names)
{
	struct type *t = (struct type *)type_tuple(a, n, fields);
	const char **nm = arena_array(a, const char *, n ? n : 1);
	for (uint32_t i = 0; i < n; i++)
		nm[i] = names[i];
	t->names = nm;
	return t;
}

/* Both plain tuples, or records of the same names in the same order. */
bool type_same_names(const struct type *a, const struct type *b)
{
	if (!a->names || !b->names)
		return !a->names && !b->names;
	for (uint32_t i = 0; i < a->nfields; i++)
		if (strcmp(a->names[i], b->names[i]) != 0)
			return false;
	return true;
}

int type_field_index(const struct type *t, const char *name)
{
	for (uint32_t i = 0; t->names && i < t->nfields; i++)
		if (strcmp(t->names[i], name) == 0)
			return (int)i;
	return -1;
}

bool type_names_match(const struct type *a, const struct type *b)
{
	if (!a->names || !b->names)
		return !a->names && !b->names;
	if (a->nfields != b->nfields)
		return false;
	for (uint32_t i = 0; i < a->nfields; i++)
		if (type_field_index(b, a->names[i]) < 0)
			return false;
	return true;
}

bool type_is_agg(const struct type *t)
{
	return t->kind >= TYPE_COUNT;
}

/* Arrays of the same integers, made apart (pton()'s uint8[4] and a
 * struct's u8 addr[4]) are one type. */
static bool same_int_array(const struct ctype *a, const struct ctype *b)
{
	if (!a || !b || a->kind != CT_ARRAY || b->kind != CT_ARRAY ||
	    a->nelems != b->nelems || !a->elem || !b->elem)
		return false;
	const struct ctype *x = a->elem, *y = b->elem;
	return x->kind == CT_INT && y->kind == CT_INT && x->size == y->size &&
	       x->is_signed == y->is_signed && x->is_char == y->is_char;
}

bool type_equal(const struct type *a, const struct type *b)
{
	if (a == b)
		return true;
	if (a->kind != b->kind || a->size != b->size)
		return false;
	switch (a->kind) {
	case TYPE_INT:
		return a->bits == b->bits && a->is_signed == b->is_signed &&
		       a->is_ptr == b->is_ptr && a->is_bool == b->is_bool &&
		       (!a->is_ptr || (a->ctype == b->ctype &&
				       a->space == b->space));
	case TYPE_STRUCT:
		return a->ctype == b->ctype;
	case TYPE_ARRAY:
		return a->ctype == b->ctype ||
		       same_int_array(a->ctype, b->ctype);
	case TYPE_TUPLE:
		if (a->nfields != b->nfields || !type_same_names(a, b))
			return false;
		for (uint32_t i = 0; i < a->nfields; i++)
			if (!type_equal(a->fields[i], b->fields[i]))
				return false;
		return true;
	case TYPE_LHIST:
		return a->llq_factor == b->llq_factor &&
		       a->llq_low == b->llq_low && a->llq_high == b->llq_high &&
		       a->llq_steps == b->llq_steps &&
		       a->lhist_min == b->lhist_min &&
		       a->lhist_max == b->lhist_max &&
		       a->lhist_step == b->lhist_step;
	case TYPE_SUM: case TYPE_MIN: case TYPE_MAX: case TYPE_AVG:
	case TYPE_STATS: case TYPE_STDDEV:
		return a->is_signed == b->is_signed;
	case TYPE_TSERIES:
		return a->ts_interval == b->ts_interval &&
		       a->ts_intervals == b->ts_intervals &&
		       a->ts_agg == b->ts_agg;
	default:
		return true;
	}
}

const struct type *type_unify(struct arena *a, const struct type *x,
			      const struct type *y)
{
	if (type_equal(x, y))
		return x;
	if (x->kind != y->kind)
		return NULL;
	switch (x->kind) {
	case TYPE_INT: {
		/* a bool and an integer hold an integer */
		unsigned bits = x->bits > y->bits ? x->bits : y->bits;
		const struct type *t = type_int(a, bits,
						x->is_signed || y->is_signed);
		if (x->is_ptr && y->is_ptr) {
			struct type *p = arena_new(a, struct type);
			*p = *t;
			p->is_ptr = true;
			/* one pointer type is kept only if both agree on it */
			if (x->ctype == y->ctype) {
				p->ctype = x->ctype;
				p->space = x->space == y->space ? x->space :
					AS_UNKNOWN;
			}
			return p;
		}
		return t;
	}
	case TYPE_STR:
		return x->size >= y->size ? x : y;
	case TYPE_TUPLE: {
		if (x->nfields != y->nfields || !type_same_names(x, y))
			return NULL;
		const struct type **f = arena_array(a, const struct type *,
						    x->nfields);
		for (uint32_t i = 0; i < x->nfields; i++) {
			f[i] = type_unify(a, x->fields[i], y->fields[i]);
			if (!f[i])
				return NULL;
		}
		return x->names ? type_record(a, x->nfields, f, x->names) :
			type_tuple(a, x->nfields, f);
	}
	case TYPE_SUM: case TYPE_MIN: case TYPE_MAX: case TYPE_AVG:
	case TYPE_STATS: case TYPE_STDDEV: {
		struct type *t = arena_new(a, struct type);
		*t = *x;
		t->is_signed = x->is_signed || y->is_signed;
		return t;
	}
	case TYPE_KSTACK: case TYPE_USTACK:
		return x; /* same kind, different limit/mode: bpftrace merges */
	default:
		return NULL;
	}
}

const char *type_name(struct arena *a, const struct type *t)
{
	switch (t->kind) {
	case TYPE_INT:
		if (t->is_ptr && t->ctype)
			return ctype_name(a, t->ctype);
		if (t->is_bool)
			return "bool";
		return arena_printf(a, "%sint%u", t->is_signed ? "" : "u",
				    t->bits);
	case TYPE_STR:
		return arena_printf(a, "string[%u]", t->size);
	case TYPE_STRUCT:
	case TYPE_ARRAY:
		return ctype_name(a, t->ctype);
	case TYPE_TUPLE: {
		const char *s = "(";
		for (uint32_t i = 0; i < t->nfields; i++)
			s = arena_printf(a, "%s%s%s%s%s", s, i ? ", " : "",
					 t->names ? t->names[i] : "",
					 t->names ? "=" : "",
					 type_name(a, t->fields[i]));
		return arena_printf(a, "%s)", s);
	}
	default:
		return type_kind_name(t->kind);
	}
}

bool type_has_kind(const struct type *t, enum type_kind k)
{
	if (!t)
		return false;
	if (t->kind == k)
		return true;
	if (t->kind == TYPE_TUPLE)
		for (uint32_t i = 0; i < t->nfields; i++)
			if (type_has_kind(t->fields[i], k))
				return true;
	return false;
}

uint32_t type_map_value_size(const struct type *t)
{
	switch (t->kind) {
	case TYPE_COUNT: case TYPE_SUM: case TYPE_HIST: case TYPE_LHIST:
		return 8;
	case TYPE_MIN: case TYPE_MAX: case TYPE_AVG: case TYPE_STATS:
		return 16;
	case TYPE_STDDEV:
	case TYPE_TSERIES:
		return 32;
	default:
		return t->size;
	}
}

int type_llq_bounds(int64_t factor, int64_t low, int64_t high, int64_t nsteps,
		    int64_t *out, int max)
{
	if (factor < 2 || low < 0 || high < low || nsteps < 1)
		return -1;
	int64_t last = 1;
	for (int64_t m = 0; m < low; m++) {
		if (last > INT64_MAX / factor)
			return -1;
		last *= factor;
	}
	int n = 0;
	for (int64_t m = low; m <= high; m++) {
		if (last > INT64_MAX / factor)
			return -1;
		int64_t next = last * factor;
		int64_t nb = next > nsteps ? nsteps : next;
		int64_t width = next / nb;
		for (int64_t k = nb / factor; k < nb; k++) {
			if (n >= max)
				return -1;
			if (out)
				out[n] = k * width;
			n++;
		}
		last = next;
	}
	if (n >= max)
		return -1;
	if (out)
		out[n] = last;   /* the overflow bucket's */
	return n + 1;
}
