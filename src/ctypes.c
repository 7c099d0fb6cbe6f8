/* ctypes.c - C types (struct ctype) and the per-program registry of named
 * ones with its resolver chain; the contract is in types.h.
 *
 * The registry is a chained hash table in the program's arena, one table
 * for the three namespaces (the namespace is part of the key). Headers
 * declare thousands of names and scripts look up a handful, so lookups
 * are O(1) and nothing is ever removed. What a resolver returns is
 * entered too, so each name is asked for once. */
#include "types.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

enum ns { NS_TAG, NS_TYPEDEF, NS_CONST };

struct entry {
	struct entry *next;
	enum ns ns;
	const char *name;
	struct ctype *type;        /* NS_TAG, NS_TYPEDEF */
	int64_t value;             /* NS_CONST */
	bool missing;              /* resolvers asked, none had it */
};

#define NBUCKETS 1024
#define MAX_RESOLVERS 4

struct ctypes {
	struct arena *a;
	struct entry *buckets[NBUCKETS];
	const struct ctype_resolver *resolvers[MAX_RESOLVERS];
	int nresolvers;
};

/* ---- constructors ---------------------------------------------------- */

struct ctype *ctype_new(struct arena *a, enum ctype_kind kind,
			const char *name)
{
	struct ctype *t = arena_new(a, struct ctype);
	t->kind = kind;
	t->name = name ? arena_strdup(a, name) : NULL;
	t->align = 1;
	return t;
}

static const struct ctype ct_void = { .kind = CT_VOID, .name = "void",
				      .size = 0, .align = 1 };

const struct ctype *ctype_void(void)
{
	return &ct_void;
}

const struct ctype *ctype_int(struct arena *a, uint32_t size, bool is_signed,
			      const char *name)
{
	struct ctype *t = ctype_new(a, CT_INT, name);
	t->size = t->align = size;
	t->is_signed = is_signed;
	if (name && strcmp(name, "char") == 0)
		t->is_char = true;
	if (name && (strcmp(name, "_Bool") == 0 || strcmp(name, "bool") == 0))
		t->is_bool = true;
	return t;
}

const struct ctype *ctype_ptr(struct arena *a, const struct ctype *pointee)
{
	struct ctype *t = ctype_new(a, CT_PTR, NULL);
	t->size = t->align = 8;
	t->elem = pointee;
	return t;
}

const struct ctype *ctype_array(struct arena *a, const struct ctype *elem,
				uint32_t nelems)
{
	struct ctype *t = ctype_new(a, CT_ARRAY, NULL);
	t->elem = elem;
	t->nelems = nelems;
	uint64_t size = (uint64_t)elem->size * nelems;
	t->size = size > UINT32_MAX ? UINT32_MAX : (uint32_t)size;
	t->align = elem->align ? elem->align : 1;
	return t;
}

/* Arena arrays grow by doubling; the old copy is the arena's garbage. */
static void *grow(struct arena *a, void *old, uint32_t n, uint32_t *cap,
		  size_t elem)
{
	if (n < *cap)
		return old;
	uint32_t ncap = *cap ? *cap * 2 : 8;
	void *p = arena_alloc(a, (size_t)ncap * elem);
	if (n)
		memcpy(p, old, (size_t)n * elem);
	*cap = ncap;
	return p;
}

int ctype_add_field(struct arena *a, struct ctype *s, const char *name,
		    const struct ctype *type, uint32_t bit_offset,
		    uint8_t bit_size)
{
	if (s->kind != CT_STRUCT && s->kind != CT_UNION)
		return -EINVAL;
	s->fields = grow(a, s->fields, s->nfields, &s->cap_, sizeof(*s->fields));
	s->fields[s->nfields++] = (struct ctype_field){
		.name = name ? arena_strdup(a, name) : NULL,
		.type = type,
		.offset = bit_offset / 8,
		.bit_offset = bit_offset,
		.bit_size = bit_size,
	};
	return 0;
}

int ctype_add_value(struct arena *a, struct ctype *e, const char *name,
		    int64_t value)
{
	if (e->kind != CT_ENUM)
		return -EINVAL;
	e->values = grow(a, e->values, e->nvalues, &e->cap_, sizeof(*e->values));
	e->values[e->nvalues++] = (struct ctype_enumerator){
		.name = arena_strdup(a, name), .value = value };
	return 0;
}

/* ---- questions about one type --------------------------------------- */

bool ctype_is_aggregate(const struct ctype *t)
{
	return t && (t->kind == CT_STRUCT || t->kind == CT_UNION);
}

bool ctype_is_char_array(const struct ctype *t)
{
	return t && t->kind == CT_ARRAY && t->elem && t->elem->kind == CT_INT &&
	       t->elem->is_char && t->elem->size == 1;
}

/* Anonymous members nest, but not without end in anything real; the
 * bound keeps a malformed (cyclic) description from recursing forever. */
#define MAX_ANON_DEPTH 32

static const struct ctype_field *field_find(const struct ctype *t,
					    const char *name, uint32_t *bits,
					    int depth)
{
	if (!ctype_is_aggregate(t) || depth > MAX_ANON_DEPTH)
		return NULL;
	for (uint32_t i = 0; i < t->nfields; i++) {
		const struct ctype_field *f = &t->fields[i];
		if (f->name && strcmp(f->name, name) == 0) {
			*bits = f->bit_offset;
			return f;
		}
		if (!f->name) {
			uint32_t inner;
			const struct ctype_field *g =
				field_find(f->type, name, &inner, depth + 1);
			if (g) {
				*bits = f->bit_offset + inner;
				return g;
			}
		}
	}
	return NULL;
}

const struct ctype_field *ctype_field_find(const struct ctype *t,
					   const char *name,
					   uint32_t *bit_offset)
{
	uint32_t bits = 0;
	const struct ctype_field *f = field_find(t, name, &bits, 0);
	if (bit_offset)
		*bit_offset = f ? bits : 0;
	return f;
}

/* Levenshtein distance, bounded: names longer than 64 are not close. */
static unsigned edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 64 || lb > 64)
		return 1000;
	unsigned row[65];
	for (size_t j = 0; j <= lb; j++)
		row[j] = (unsigned)j;
	for (size_t i = 1; i <= la; i++) {
		unsigned diag = row[0];
		row[0] = (unsigned)i;
		for (size_t j = 1; j <= lb; j++) {
			unsigned up = row[j];
			unsigned cost = a[i - 1] == b[j - 1] ? 0 : 1;
			unsigned best = diag + cost;
			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

static void suggest_in(const struct ctype *t, const char *name,
		       const char **best, unsigned *dist, int depth)
{
	if (!ctype_is_aggregate(t) || depth > MAX_ANON_DEPTH)
		return;
	for (uint32_t i = 0; i < t->nfields; i++) {
		const struct ctype_field *f = &t->fields[i];
		if (!f->name) {
			suggest_in(f->type, name, best, dist, depth + 1);
			continue;
		}
		unsigned d = edit_distance(name, f->name);
		if (d < *dist) {
			*dist = d;
			*best = f->name;
		}
	}
}

const char *ctype_field_suggest(const struct ctype *t, const char *name)
{
	const char *best = NULL;
	unsigned dist = 1000;
	suggest_in(t, name, &best, &dist, 0);
	/* Close means a typo, not another word: at most a third wrong. */
	size_t len = strlen(name);
	unsigned limit = len <= 3 ? 1 : (unsigned)(len / 3 + 1);
	return dist <= limit ? best : NULL;
}

static const char *tag_word(enum ctype_kind k)
{
	switch (k) {
	case CT_STRUCT: return "struct";
	case CT_UNION: return "union";
	case CT_ENUM: return "enum";
	default: return NULL;
	}
}

/* The base name ("struct x", "int") and the declarator suffix ("[4]",
 * " *"), built outside in, as C writes an abstract declarator. */
const char *ctype_name(struct arena *a, const struct ctype *t)
{
	if (!t)
		return "?";
	switch (t->kind) {
	case CT_PTR: {
		const struct ctype *p = t->elem;
		if (!p && t->ref)
			return "void *";   /* not resolved yet: no name known */
		const char *base = ctype_name(a, p ? p : ctype_void());
		size_t n = strlen(base);
		return arena_printf(a, "%s%s*", base,
				    n && base[n - 1] == '*' ? "" : " ");
	}
	case CT_ARRAY:
		return arena_printf(a, "%s[%u]", ctype_name(a, t->elem),
				    t->nelems);
	case CT_STRUCT:
	case CT_UNION:
	case CT_ENUM:
		return arena_printf(a, "%s %s", tag_word(t->kind),
				    t->name ? t->name : "(anonymous)");
	case CT_FUNC:
		return t->name ? t->name : "function";
	case CT_INT:
		if (t->name)
			return t->name;
		return arena_printf(a, "%sint%u", t->is_signed ? "" : "u",
				    t->size * 8);
	default:
		return t->name ? t->name : "void";
	}
}

/* ---- C types as script values --------------------------------------- */

const struct type *type_of_ctype(struct arena *a, const struct ctype *t,
				 enum addr_space space)
{
	if (!t)
		return NULL;
	struct type *v;
	switch (t->kind) {
	case CT_INT:
	case CT_ENUM:
		if (t->size != 1 && t->size != 2 && t->size != 4 && t->size != 8)
			return NULL;
		v = arena_new(a, struct type);
		*v = *type_int(a, t->size * 8, t->is_signed);
		v->ctype = t;
		return v;
	case CT_PTR:
		v = arena_new(a, struct type);
		*v = *type_u64();
		v->is_ptr = true;
		v->ctype = t;
		v->space = t->space ? t->space : space;
		return v;
	case CT_ARRAY:
		if (ctype_is_char_array(t) && t->nelems)
			return type_str(a, t->nelems);
		if (!t->nelems || !t->size)
			return NULL;
		v = arena_new(a, struct type);
		v->kind = TYPE_ARRAY;
		v->size = t->size;
		v->ctype = t;
		v->space = space;
		return v;
	case CT_STRUCT:
	case CT_UNION:
		if (!t->complete)
			return NULL;
		v = arena_new(a, struct type);
		v->kind = TYPE_STRUCT;
		v->size = t->size;
		v->ctype = t;
		v->space = space;
		return v;
	default:
		return NULL;
	}
}

/* ---- the registry ---------------------------------------------------- */

struct ctypes *ctypes_new(struct arena *a)
{
	struct ctypes *r = arena_new(a, struct ctypes);
	r->a = a;
	return r;
}

struct arena *ctypes_arena(struct ctypes *r)
{
	return r->a;
}

void ctypes_add_resolver_first(struct ctypes *r,
			       const struct ctype_resolver *res)
{
	if (!r || !res || r->nresolvers >= MAX_RESOLVERS)
		return;
	memmove(r->resolvers + 1, r->resolvers,
		(size_t)r->nresolvers * sizeof(*r->resolvers));
	r->resolvers[0] = res;
	r->nresolvers++;
}

void ctypes_add_resolver(struct ctypes *r, const struct ctype_resolver *res)
{
	if (r && res && r->nresolvers < MAX_RESOLVERS)
		r->resolvers[r->nresolvers++] = res;
}

static unsigned hash(enum ns ns, const char *s)
{
	unsigned h = 2166136261u ^ (unsigned)ns;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h % NBUCKETS;
}

static struct entry *lookup(struct ctypes *r, enum ns ns, const char *name)
{
	for (struct entry *e = r->buckets[hash(ns, name)]; e; e = e->next)
		if (e->ns == ns && strcmp(e->name, name) == 0)
			return e;
	return NULL;
}

static struct entry *insert(struct ctypes *r, enum ns ns, const char *name)
{
	struct entry *e = arena_new(r->a, struct entry);
	unsigned h = hash(ns, name);
	e->ns = ns;
	e->name = arena_strdup(r->a, name);
	e->next = r->buckets[h];
	r->buckets[h] = e;
	return e;
}

int ctypes_declare_tag(struct ctypes *r, enum ctype_kind kind,
		       const char *name, struct ctype **out)
{
	*out = NULL;
	if (!tag_word(kind) || !name)
		return -EINVAL;
	struct entry *e = lookup(r, NS_TAG, name);
	if (e && e->type) {
		*out = e->type;
		return e->type->kind == kind ? 0 : -EEXIST;
	}
	if (!e)
		e = insert(r, NS_TAG, name);
	e->missing = false;
	e->type = ctype_new(r->a, kind, name);
	*out = e->type;
	return 0;
}

int ctypes_add_typedef(struct ctypes *r, const char *name,
		       const struct ctype *t)
{
	if (!name || !t)
		return -EINVAL;
	struct entry *e = lookup(r, NS_TYPEDEF, name);
	if (!e)
		e = insert(r, NS_TYPEDEF, name);
	e->missing = false;
	e->type = (struct ctype *)t;
	return 0;
}

int ctypes_add_const(struct ctypes *r, const char *name, int64_t value)
{
	if (!name)
		return -EINVAL;
	struct entry *e = lookup(r, NS_CONST, name);
	if (!e)
		e = insert(r, NS_CONST, name);
	e->missing = false;
	e->type = NULL;
	e->value = value;
	return 0;
}

int ctypes_add_enum_const(struct ctypes *r, const char *name, int64_t value,
			  const struct ctype *of)
{
	int rc = ctypes_add_const(r, name, value);
	struct entry *e = rc == 0 ? lookup(r, NS_CONST, name) : NULL;
	if (e)
		e->type = (struct ctype *)of;
	return rc;
}

const struct ctype *ctypes_const_enum(struct ctypes *r, const char *name)
{
	struct entry *e = r && name ? lookup(r, NS_CONST, name) : NULL;
	return e && !e->missing && e->type && e->type->kind == CT_ENUM ?
		e->type : NULL;
}

const struct ctype *ctypes_declared_tag(struct ctypes *r, enum ctype_kind kind,
					const char *name)
{
	struct entry *e = lookup(r, NS_TAG, name);
	return e && e->type && e->type->kind == kind ? e->type : NULL;
}

const struct ctype *ctypes_declared_typedef(struct ctypes *r, const char *name)
{
	struct entry *e = lookup(r, NS_TYPEDEF, name);
	return e ? e->type : NULL;
}

const struct ctype *ctypes_find_tag(struct ctypes *r, enum ctype_kind kind,
				    const char *name)
{
	if (!r || !name)
		return NULL;
	struct entry *e = lookup(r, NS_TAG, name);
	if (e && e->type && (e->type->complete || e->missing))
		return e->type->kind == kind ? e->type : NULL;
	if (e && !e->type && e->missing)
		return NULL;
	for (int i = 0; i < r->nresolvers; i++) {
		const struct ctype_resolver *res = r->resolvers[i];
		if (!res->find_tag)
			continue;
		const struct ctype *t = res->find_tag(res->ctx, r, kind, name);
		if (t) {
			if (!e)
				e = insert(r, NS_TAG, name);
			e->type = (struct ctype *)t;
			return t;
		}
	}
	if (!e)
		e = insert(r, NS_TAG, name);
	e->missing = true;
	return e->type && e->type->kind == kind ? e->type : NULL;
}

const struct ctype *ctypes_find_typedef(struct ctypes *r, const char *name)
{
	if (!r || !name)
		return NULL;
	struct entry *e = lookup(r, NS_TYPEDEF, name);
	if (e)
		return e->type;
	for (int i = 0; i < r->nresolvers; i++) {
		const struct ctype_resolver *res = r->resolvers[i];
		const struct ctype *t = res->find_typedef ?
			res->find_typedef(res->ctx, r, name) : NULL;
		if (t) {
			ctypes_add_typedef(r, name, t);
			return t;
		}
	}
	e = insert(r, NS_TYPEDEF, name);
	e->missing = true;
	return NULL;
}

int ctypes_find_const(struct ctypes *r, const char *name, int64_t *value)
{
	if (!r || !name)
		return -ENOENT;
	struct entry *e = lookup(r, NS_CONST, name);
	if (e) {
		if (e->missing)
			return -ENOENT;
		*value = e->value;
		return 0;
	}
	for (int i = 0; i < r->nresolvers; i++) {
		const struct ctype_resolver *res = r->resolvers[i];
		if (res->find_const && res->find_const(res->ctx, name, value) == 0) {
			ctypes_add_const(r, name, *value);
			return 0;
		}
	}
	e = insert(r, NS_CONST, name);
	e->missing = true;
	return -ENOENT;
}

const struct ctype *ctypes_complete(struct ctypes *r, const struct ctype *t)
{
	if (!ctype_is_aggregate(t) && !(t && t->kind == CT_ENUM))
		return t;
	if (t->complete || !t->name)
		return t;
	const struct ctype *c = ctypes_find_tag(r, t->kind, t->name);
	return c && c->complete ? c : t;
}

const struct ctype *ctypes_pointee(struct ctypes *r, const struct ctype *ptr)
{
	if (!ptr || ptr->kind != CT_PTR)
		return NULL;
	if (!ptr->elem && ptr->resolver && ptr->resolver->pointee) {
		const struct ctype *p = ptr->resolver->pointee(ptr->resolver->ctx,
							       r, ptr);
		((struct ctype *)ptr)->elem = p ? p : ctype_void();
	}
	const struct ctype *p = ptr->elem ? ptr->elem : ctype_void();
	return ctypes_complete(r, p);
}
