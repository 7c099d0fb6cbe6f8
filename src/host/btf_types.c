/* btf_types.c - kernel C types from BTF, as a resolver of the program's
 * C type registry (types.h): struct/union/enum by tag, typedefs, enum
 * constants, and pointees followed lazily.
 *
 * How it works. Nothing is read until a script names a type it does not
 * declare; then vmlinux BTF (or the file BPFTRACE_BTF names) is loaded
 * through libbpf, once per process. A BTF type becomes a struct ctype
 * when first needed: a struct's members are translated with it (they
 * are part of its layout), but a pointer member only records the id of
 * what it points to, so `struct task_struct` costs its own members, not
 * the few thousand types reachable from it. Each translation is cached
 * per program (keyed by BTF object and id), so a type is one ctype and
 * pointer types compare equal. Names vmlinux lacks are looked for in the
 * modules' BTF (/sys/kernel/btf/MODULE), loaded on the first such miss.
 * Enum constants are indexed on first use (an enum constant is the only
 * lookup BTF cannot answer by name).
 */
#include <bpf/btf.h>
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../types.h"
#include "btf.h"
#include "../base/vec.h"

#define MAX_MODULES 512
#define CACHE_BUCKETS 4096
/* Nesting of embedded structs and arrays: real kernels stay far below;
 * the bound keeps a malformed BTF file (BPFTRACE_BTF) from recursing. */
#define MAX_DEPTH 64

/* Process-wide: the BTF objects, immutable once loaded. */
static struct {
	bool tried;
	int err;
	struct btf *base;          /* vmlinux or BPFTRACE_BTF */
	bool modules_tried;
	struct btf **mods;
	size_t nmods, cap_mods;
	/* enum constants: sorted by name */
	bool consts_tried;
	struct kconst { const char *name; int64_t value; } *consts;
	size_t nconsts;
} kb;

static int base_load(void)
{
	if (kb.tried)
		return kb.err;
	kb.tried = true;
	const char *path = getenv("BPFTRACE_BTF");
	struct btf *b = path && *path ? btf__parse(path, NULL) :
		btf__load_vmlinux_btf();
	if (!b) {
		kb.err = errno ? -errno : -ENOENT;
		return kb.err;
	}
	kb.base = b;
	return 0;
}

static void modules_load(void)
{
	if (kb.modules_tried || !kb.base)
		return;
	kb.modules_tried = true;
	/* With BPFTRACE_BTF the user named the types to use. */
	const char *path = getenv("BPFTRACE_BTF");
	if (path && *path)
		return;
	DIR *d = opendir("/sys/kernel/btf");
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d)) && kb.nmods < MAX_MODULES) {
		if (e->d_name[0] == '.' || strcmp(e->d_name, "vmlinux") == 0)
			continue;
		struct btf *m = btf__load_module_btf(e->d_name, kb.base);
		if (!m)
			continue;
		if (vec_reserve_arr(kb.mods, kb.cap_mods, kb.nmods + 1)) {
			btf__free(m);
			break;
		}
		kb.mods[kb.nmods++] = m;
	}
	closedir(d);
}

/* ---- per program: the translation cache ------------------------------ */

struct cached {
	struct cached *next;
	const struct btf *btf;
	uint32_t id;
	const struct ctype *t;
};

struct kresolver {
	struct ctype_resolver res;
	struct arena *a;
	/* made at the first type asked for: every compilation has a
	 * resolver, and 32 KiB zeroed cost one that names no type (most of
	 * them) eight page faults */
	struct cached **buckets;
};

static struct cached **slot(struct kresolver *k, const struct btf *b,
			    uint32_t id)
{
	if (!k->buckets)
		k->buckets = arena_array(k->a, struct cached *, CACHE_BUCKETS);
	uintptr_t h = ((uintptr_t)b >> 4) * 31 + id;
	return &k->buckets[h % CACHE_BUCKETS];
}

static const struct ctype *cache_get(struct kresolver *k, const struct btf *b,
				     uint32_t id)
{
	for (struct cached *c = *slot(k, b, id); c; c = c->next)
		if (c->btf == b && c->id == id)
			return c->t;
	return NULL;
}

static void cache_put(struct kresolver *k, const struct btf *b, uint32_t id,
		      const struct ctype *t)
{
	struct cached *c = arena_new(k->a, struct cached);
	struct cached **s = slot(k, b, id);
	c->btf = b;
	c->id = id;
	c->t = t;
	c->next = *s;
	*s = c;
}

static const char *bname(const struct btf *b, uint32_t off)
{
	const char *s = btf__name_by_offset(b, off);
	return s && *s ? s : NULL;
}

static const struct ctype *translate(struct kresolver *k, const struct btf *b,
				     uint32_t id, int depth);

static uint32_t btf_index(const struct btf *b)
{
	for (size_t i = 0; i < kb.nmods; i++)
		if (kb.mods[i] == b)
			return (uint32_t)i + 1;
	return 0;
}

/* Skip const/volatile/restrict/typedef/tags to the type that has a
 * layout; *user is set when a "user" type tag was on the way (__user). */
static uint32_t skip_mods(const struct btf *b, uint32_t id, bool *user)
{
	for (int i = 0; i < MAX_DEPTH && id; i++) {
		const struct btf_type *t = btf__type_by_id(b, id);
		if (!t)
			return 0;
		if (btf_is_type_tag(t) && user) {
			const char *n = bname(b, t->name_off);
			if (n && strcmp(n, "user") == 0)
				*user = true;
		}
		if (!btf_is_mod(t) && !btf_is_typedef(t) && !btf_is_decl_tag(t))
			return id;
		id = t->type;
	}
	return id;
}

static const char *int_name(const struct btf *b, const struct btf_type *t)
{
	return bname(b, t->name_off);
}

static struct ctype *translate_aggregate(struct kresolver *k,
					 const struct btf *b, uint32_t id,
					 const struct btf_type *t, int depth)
{
	enum ctype_kind kind = btf_is_union(t) ? CT_UNION : CT_STRUCT;
	struct ctype *c = ctype_new(k->a, kind, bname(b, t->name_off));
	c->size = t->size;
	/* cached before the members: a member may point back at it */
	cache_put(k, b, id, c);
	const struct btf_member *m = btf_members(t);
	uint32_t align = 1;
	for (uint16_t i = 0; i < btf_vlen(t); i++) {
		const struct ctype *ft = translate(k, b, m[i].type, depth + 1);
		if (!ft)
			ft = ctype_void();
		uint32_t bits = btf_member_bit_offset(t, i);
		uint32_t width = btf_member_bitfield_size(t, i);
		ctype_add_field(k->a, c, bname(b, m[i].name_off), ft, bits,
				(uint8_t)(width > 255 ? 255 : width));
		if (ft->align > align)
			align = ft->align;
	}
	c->align = align;
	c->complete = true;
	return c;
}

static struct ctype *translate_enum(struct kresolver *k, const struct btf *b,
				    uint32_t id, const struct btf_type *t)
{
	struct ctype *c = ctype_new(k->a, CT_ENUM, bname(b, t->name_off));
	c->size = c->align = t->size ? t->size : 4;
	c->is_signed = btf_kflag(t);
	cache_put(k, b, id, c);
	for (uint16_t i = 0; i < btf_vlen(t); i++) {
		int64_t v;
		const char *n;
		if (btf_is_enum64(t)) {
			const struct btf_enum64 *e = btf_enum64(t) + i;
			n = bname(b, e->name_off);
			v = (int64_t)btf_enum64_value(e);
		} else {
			const struct btf_enum *e = btf_enum(t) + i;
			n = bname(b, e->name_off);
			v = c->is_signed ? (int64_t)e->val :
				(int64_t)(uint32_t)e->val;
		}
		if (n)
			ctype_add_value(k->a, c, n, v);
	}
	c->complete = true;
	return c;
}

static const struct ctype *translate(struct kresolver *k, const struct btf *b,
				     uint32_t id, int depth)
{
	bool user = false;
	id = skip_mods(b, id, &user);
	if (id == 0)
		return ctype_void();
	const struct ctype *have = cache_get(k, b, id);
	if (have)
		return have;
	const struct btf_type *t = btf__type_by_id(b, id);
	if (!t || depth > MAX_DEPTH)
		return NULL;
	struct ctype *c;
	switch (btf_kind(t)) {
	case BTF_KIND_INT: {
		uint8_t enc = btf_int_encoding(t);
		c = (struct ctype *)ctype_int(k->a, t->size,
					      enc & BTF_INT_SIGNED,
					      int_name(b, t));
		if (enc & BTF_INT_BOOL)
			c->is_bool = true;
		break;
	}
	case BTF_KIND_PTR: {
		c = (struct ctype *)ctype_ptr(k->a, NULL);
		bool to_user = false;
		uint32_t to = skip_mods(b, t->type, &to_user);
		if (to_user)
			c->space = AS_USER;
		if (to == 0)
			c->elem = ctype_void();
		c->ref = to;
		c->resolver = &k->res;
		/* Which BTF object the id is in: 0 the base, else module
		 * index + 1 (a pointer has no fields, so the builders'
		 * capacity word is free to say it). */
		c->cap_ = btf_index(b);
		break;
	}
	case BTF_KIND_ARRAY: {
		const struct btf_array *arr = btf_array(t);
		const struct ctype *e = translate(k, b, arr->type, depth + 1);
		if (!e)
			return NULL;
		c = (struct ctype *)ctype_array(k->a, e, arr->nelems);
		break;
	}
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		return translate_aggregate(k, b, id, t, depth);
	case BTF_KIND_ENUM:
	case BTF_KIND_ENUM64:
		return translate_enum(k, b, id, t);
	case BTF_KIND_FWD:
		c = ctype_new(k->a, btf_kflag(t) ? CT_UNION : CT_STRUCT,
			      bname(b, t->name_off));
		break;
	case BTF_KIND_FUNC_PROTO:
	case BTF_KIND_FUNC:
		c = ctype_new(k->a, CT_FUNC, NULL);
		c->size = 1;
		break;
	case BTF_KIND_FLOAT:
		c = ctype_new(k->a, CT_FLOAT, bname(b, t->name_off));
		c->size = c->align = t->size;
		break;
	default:
		return NULL;
	}
	cache_put(k, b, id, c);
	return c;
}

/* The BTF object a pointer's `ref` belongs to (see translate). */
static const struct btf *ref_btf(const struct ctype *ptr)
{
	if (ptr->cap_ && ptr->cap_ <= kb.nmods)
		return kb.mods[ptr->cap_ - 1];
	return kb.base;
}

/* ---- the resolver's hooks ------------------------------------------- */

static const struct ctype *find_named(struct kresolver *k, const char *name,
				      const int *kinds, int nkinds)
{
	if (base_load() < 0)
		return NULL;
	for (int pass = 0; pass < 2; pass++) {
		size_t n = pass ? kb.nmods : 1;
		for (size_t i = 0; i < n; i++) {
			const struct btf *b = pass ? kb.mods[i] : kb.base;
			for (int j = 0; j < nkinds; j++) {
				int id = btf__find_by_name_kind(b, name, kinds[j]);
				if (id > 0)
					return translate(k, b, (uint32_t)id, 0);
			}
		}
		if (!pass)
			modules_load();
	}
	return NULL;
}

static const struct ctype *kb_find_tag(void *ctx, struct ctypes *reg,
				       enum ctype_kind kind, const char *name)
{
	static const int s[] = { BTF_KIND_STRUCT };
	static const int u[] = { BTF_KIND_UNION };
	static const int e[] = { BTF_KIND_ENUM, BTF_KIND_ENUM64 };
	switch (kind) {
	case CT_STRUCT: return find_named(ctx, name, s, 1);
	case CT_UNION: return find_named(ctx, name, u, 1);
	case CT_ENUM: return find_named(ctx, name, e, 2);
	default: return NULL;
	}
}

static const struct ctype *kb_find_typedef(void *ctx, struct ctypes *reg,
					   const char *name)
{
	static const int td[] = { BTF_KIND_TYPEDEF };
	return find_named(ctx, name, td, 1);
}

static int kconst_cmp(const void *a, const void *b)
{
	return strcmp(((const struct kconst *)a)->name,
		      ((const struct kconst *)b)->name);
}

static void consts_index(void)
{
	if (kb.consts_tried || !kb.base)
		return;
	kb.consts_tried = true;
	uint32_t n = btf__type_cnt(kb.base);
	size_t cap = 0;
	for (uint32_t id = 1; id < n; id++) {
		const struct btf_type *t = btf__type_by_id(kb.base, id);
		if (!t || !btf_is_any_enum(t))
			continue;
		for (uint16_t i = 0; i < btf_vlen(t); i++) {
			if (vec_reserve_arr(kb.consts, cap, kb.nconsts + 1))
				goto sort;
			struct kconst *c = &kb.consts[kb.nconsts];
			if (btf_is_enum64(t)) {
				const struct btf_enum64 *e = btf_enum64(t) + i;
				c->name = bname(kb.base, e->name_off);
				c->value = (int64_t)btf_enum64_value(e);
			} else {
				const struct btf_enum *e = btf_enum(t) + i;
				c->name = bname(kb.base, e->name_off);
				c->value = btf_kflag(t) ? (int64_t)e->val :
					(int64_t)(uint32_t)e->val;
			}
			if (c->name)
				kb.nconsts++;
		}
	}
sort:
	qsort(kb.consts, kb.nconsts, sizeof(*kb.consts), kconst_cmp);
}

static int kb_find_const(void *ctx, const char *name, int64_t *value)
{
	if (base_load() < 0)
		return -ENOENT;
	consts_index();
	struct kconst key = { name, 0 };
	const struct kconst *c = kb.nconsts ?
		bsearch(&key, kb.consts, kb.nconsts, sizeof(key), kconst_cmp) :
		NULL;
	if (!c)
		return -ENOENT;
	*value = c->value;
	return 0;
}

static const struct ctype *kb_pointee(void *ctx, struct ctypes *reg,
				      const struct ctype *ptr)
{
	struct kresolver *k = ctx;
	if (!kb.base)
		return NULL;
	const struct ctype *t = translate(k, ref_btf(ptr), ptr->ref, 0);
	/* A forward declaration: the definition, wherever it is. */
	if (t && ctype_is_aggregate(t) && !t->complete && t->name)
		t = ctypes_find_tag(reg, t->kind, t->name);
	return t;
}

const struct ctype_resolver *kbtf_resolver(struct arena *a)
{
	struct kresolver *k = arena_new(a, struct kresolver);
	k->a = a;
	k->res = (struct ctype_resolver){
		.ctx = k,
		.what = "the kernel's BTF",
		.find_tag = kb_find_tag,
		.find_typedef = kb_find_typedef,
		.find_const = kb_find_const,
		.pointee = kb_pointee,
	};
	return &k->res;
}

bool kbtf_loaded(void)
{
	return kb.base != NULL;
}
