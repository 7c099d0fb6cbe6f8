/* cdecl.c - the C declaration parser.
 *
 * How it works. The preprocessor hands over the tokens of the active
 * code of the script's definitions and of every header they include.
 * This file reads them as a C translation unit, one external declaration
 * at a time (recursive descent over C's declaration grammar: specifiers,
 * then declarators built inside out, as chibicc does), and keeps what a
 * tracer needs: struct, union and enum definitions (laid out by
 * cdecl_layout.c as gcc does) and typedef names, entered in the
 * program's registry of C types (the keywords and attributes are
 * cdecl_words.c's, constant expressions cdecl_expr.c's). Function
 * prototypes and definitions (their bodies skipped by brace matching),
 * extern and static variables, asm labels, _Static_assert and
 * __attribute__s other than packed, aligned and mode are read over and
 * dropped.
 *
 * A declaration that comes from the script is held to C's rules, and
 * each mistake is an error with its position. One that comes from a
 * header is not: headers use GNU extensions this parser does not know,
 * so a header declaration that fails is skipped whole (to its ';', or to
 * the '}' closing a function body) without a message, and its names stay
 * undeclared, for the kernel's BTF to supply if the script uses them.
 * Names a script declaration uses but no definition declares are looked
 * for in the registry's resolvers (BTF), as bpftrace 0.17 does; header
 * declarations only look at what is declared, so including a header
 * never loads BTF. */
#include "cdecl_int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const struct ptok *cd_peek(struct cdecl *c, size_t k)
{
	size_t i = c->i + k;
	return i < c->n ? &c->t[i] : &c->t[c->n - 1];
}

bool cd_is(struct cdecl *c, size_t k, const char *s)
{
	const struct ptok *t = cd_peek(c, k);
	return (t->kind == PT_PUNCT || t->kind == PT_IDENT) && ptok_is(t, s);
}

bool cd_accept(struct cdecl *c, const char *s)
{
	if (!cd_is(c, 0, s))
		return false;
	c->i++;
	return true;
}

void cd_error(struct cdecl *c, const struct ptok *t, const char *tag,
	      const char *fmt, ...)
{
	c->bad = true;
	if (c->quiet || c->nerrors >= CDECL_MAX_ERRORS)
		return;
	c->nerrors++;
	struct pos p = t ? pp_pos(c->pp, t, c->d) : (struct pos){ 0 };
	va_list ap;
	va_start(ap, fmt);
	diag_vadd(c->d, DIAG_ERROR, p, tag, fmt, ap);
	va_end(ap);
}

bool cd_expect(struct cdecl *c, const char *s, const char *ctx)
{
	if (cd_accept(c, s))
		return true;
	if (!c->bad) {
		const struct ptok *t = cd_peek(c, 0);
		cd_error(c, t, "BAD_DECL", "'%s' expected in %s, not '%.*s'", s,
			 ctx, t->kind == PT_EOF ? 5 : (int)t->len,
			 t->kind == PT_EOF ? "<end>" : t->text);
	}
	c->bad = true;
	return false;
}

void cd_skip_group(struct cdecl *c)
{
	int depth = 0;
	for (;;) {
		const struct ptok *t = cd_peek(c, 0);
		if (t->kind == PT_EOF)
			return;
		c->i++;
		if (t->kind != PT_PUNCT || t->len != 1)
			continue;
		if (strchr("([{", t->text[0]))
			depth++;
		else if (strchr(")]}", t->text[0]) && --depth <= 0)
			return;
	}
}

/* ---- specifiers --------------------------------------------------------- */

struct dspec {
	const struct ctype *type;
	bool is_typedef, is_extern;
	struct attrs attrs;
};

static const struct ctype *struct_spec(struct cdecl *c, enum ctype_kind k);
static const struct ctype *enum_spec(struct cdecl *c);

static const struct ctype *declarator(struct cdecl *c,
				      const struct ctype *base,
				      const struct ptok **name, bool abstract);

/* A name no definition declares: a typedef of the kernel's BTF, if this
 * is the script's own declaration. */
static const struct ctype *resolve_typedef(struct cdecl *c,
					   const struct ptok *t)
{
	if (c->quiet)
		return NULL;
	char *name = cd_name(c, t);
	return ctypes_find_typedef(c->reg, name);
}

/* typeof(type) / typeof(expr): types only. */
static const struct ctype *typeof_spec(struct cdecl *c)
{
	const struct ptok *at = cd_peek(c, 0);
	c->i++;
	if (!cd_expect(c, "(", "typeof"))
		return NULL;
	if (!cd_type_start(c, 0)) {
		cd_error(c, at, "BAD_DECL", "typeof of an expression is not "
			 "supported");
		return NULL;
	}
	const struct ctype *t = cd_type_name(c);
	if (!t || !cd_expect(c, ")", "typeof"))
		return NULL;
	return t;
}

/* declaration-specifiers: storage classes, qualifiers, attributes and
 * one type (words, struct/union/enum, typedef name, typeof). */
static bool decl_specs(struct cdecl *c, struct dspec *ds)
{
	memset(ds, 0, sizeof(*ds));
	int w[W_COUNT] = { 0 };
	bool words = false;
	const struct ptok *first = cd_peek(c, 0);
	while (!c->bad) {
		const struct ptok *t = cd_peek(c, 0);
		if (t->kind != PT_IDENT)
			break;
		int wi;
		const struct ctype *td;
		if (ptok_is(t, "typedef")) {
			ds->is_typedef = true;
			c->i++;
		} else if (ptok_is(t, "extern")) {
			ds->is_extern = true;
			c->i++;
		} else if (cd_is_ignored(t)) {
			c->i++;
		} else if (cd_is_attr(t) || ptok_is(t, "_Alignas")) {
			cd_attributes(c, &ds->attrs);
		} else if ((wi = cd_word_index(t)) >= 0) {
			if (ds->type)
				break;
			w[wi]++;
			words = true;
			c->i++;
		} else if (ptok_is(t, "__int128_t") || ptok_is(t, "__uint128_t")) {
			if (ds->type || words)
				break;
			w[W_INT128]++;
			if (t->len == 11)
				w[W_UNSIGNED]++;
			words = true;
			c->i++;
		} else if (ptok_is(t, "struct") || ptok_is(t, "union")) {
			if (ds->type || words)
				break;
			ds->type = struct_spec(c, ptok_is(t, "struct") ?
					       CT_STRUCT : CT_UNION);
			if (!ds->type)
				return false;
		} else if (ptok_is(t, "enum")) {
			if (ds->type || words)
				break;
			ds->type = enum_spec(c);
			if (!ds->type)
				return false;
		} else if (ptok_is(t, "typeof") || ptok_is(t, "__typeof__") ||
			   ptok_is(t, "__typeof")) {
			if (ds->type || words)
				break;
			ds->type = typeof_spec(c);
			if (!ds->type)
				return false;
		} else if (!ds->type && !words && cd_is_typedef_name(c, t, &td)) {
			ds->type = td;
			c->i++;
		} else if (!ds->type && !words) {
			/* a name where a type must be: a typedef of the
			 * kernel's, or unknown */
			const struct ptok *n = cd_peek(c, 1);
			bool declarator_follows = n->kind == PT_IDENT ||
				(n->kind == PT_PUNCT && (ptok_is(n, "*") ||
							 ptok_is(n, "(")));
			if (!declarator_follows)
				break;
			td = resolve_typedef(c, t);
			if (!td) {
				cd_error(c, t, "UNKNOWN_TYPE", "unknown type "
					 "name '%.*s'", (int)t->len, t->text);
				return false;
			}
			ds->type = td;
			c->i++;
		} else {
			break;
		}
	}
	if (c->bad)
		return false;
	if (words)
		ds->type = cd_base_type(c, w, first);
	if (!ds->type) {
		if (!c->bad)
			cd_error(c, first, "BAD_DECL", "type expected, not "
				 "'%.*s'", first->kind == PT_EOF ? 5 :
				 (int)first->len, first->kind == PT_EOF ?
				 "<end>" : first->text);
		return false;
	}
	ds->type = cd_apply_mode(c, ds->type, ds->attrs.mode);
	return true;
}

const struct ctype *cd_type_name(struct cdecl *c)
{
	struct dspec ds;
	if (!decl_specs(c, &ds))
		return NULL;
	const struct ptok *name = NULL;
	return declarator(c, ds.type, &name, true);
}

/* ---- declarators ------------------------------------------------------ */

/* A type that can be a member or element: complete, sized. */
static const struct ctype *complete(struct cdecl *c, const struct ctype *t,
				    const struct ptok *at, const char *what)
{
	if ((t->kind == CT_STRUCT || t->kind == CT_UNION ||
	     t->kind == CT_ENUM) && !t->complete) {
		if (!c->quiet)
			t = ctypes_complete(c->reg, t);
		if (!t->complete) {
			cd_error(c, at, "UNKNOWN_TYPE", "%s has incomplete "
				 "type '%s' (neither the definitions nor the "
				 "kernel's BTF define it)", what,
				 ctype_name(c->a, t));
			return NULL;
		}
	}
	if (t->kind == CT_VOID || t->kind == CT_FUNC) {
		cd_error(c, at, "BAD_DECL", "%s has type '%s'", what,
			 t->kind == CT_VOID ? "void" : "function");
		return NULL;
	}
	return t;
}

static const struct ctype *func_type(struct cdecl *c, const struct ctype *ret)
{
	struct ctype *f = ctype_new(c->a, CT_FUNC, NULL);
	f->elem = ret;
	f->size = f->align = 1;
	return f;
}

/* Array and function suffixes: [N] [] (params). */
static const struct ctype *suffix(struct cdecl *c, const struct ctype *base)
{
	if (++c->depth > CDECL_MAX_DEPTH) {
		cd_error(c, cd_peek(c, 0), "BAD_DECL", "declarator nested too "
			 "deep");
		return NULL;
	}
	const struct ctype *r = base;
	const struct ptok *at = cd_peek(c, 0);
	if (cd_accept(c, "[")) {
		while (cd_is_ignored(cd_peek(c, 0)))
			c->i++; /* [static 4], [const] */
		int64_t n = 0;
		bool flexible = cd_accept(c, "]");
		if (!flexible && (!cd_const_cond(c, &n) ||
				  !cd_expect(c, "]", "array size"))) {
			r = NULL;
			goto out;
		}
		if (n < 0) {
			cd_error(c, at, "BAD_DECL", "array size is negative");
			r = NULL;
			goto out;
		}
		const struct ctype *elem = suffix(c, base);
		if (!elem || !(elem = complete(c, elem, at, "an array element"))) {
			r = NULL;
			goto out;
		}
		if (elem->size && (uint64_t)n > (UINT32_MAX / 2) / elem->size) {
			cd_error(c, at, "BAD_DECL", "array is too large");
			r = NULL;
			goto out;
		}
		r = ctype_array(c->a, elem, (uint32_t)n);
	} else if (cd_is(c, 0, "(")) {
		cd_skip_group(c); /* parameters: nothing a layout needs */
		const struct ctype *ret = suffix(c, base);
		r = ret ? func_type(c, ret) : NULL;
	}
out:
	c->depth--;
	return r;
}

static void pointer_quals(struct cdecl *c)
{
	for (;;) {
		if (cd_is_ignored(cd_peek(c, 0))) {
			c->i++;
		} else if (cd_is_attr(cd_peek(c, 0))) {
			struct attrs ignore = { 0 };
			cd_attributes(c, &ignore);
			if (c->bad)
				return;
		} else {
			return;
		}
	}
}

/* declarator -> pointer* ( IDENT | '(' declarator ')' )? suffix; built
 * from the inside out: in int (*f)[3], f is a pointer to int[3]. */
static const struct ctype *declarator(struct cdecl *c,
				      const struct ctype *base,
				      const struct ptok **name, bool abstract)
{
	if (++c->depth > CDECL_MAX_DEPTH) {
		cd_error(c, cd_peek(c, 0), "BAD_DECL", "declarator nested too "
			 "deep");
		c->depth--;
		return NULL;
	}
	const struct ctype *r = NULL;
	while (cd_accept(c, "*") || cd_accept(c, "^")) {
		base = ctype_ptr(c->a, base);
		pointer_quals(c);
	}
	pointer_quals(c);
	if (c->bad)
		goto out;
	const struct ptok *n1 = cd_peek(c, 1);
	bool nested = cd_is(c, 0, "(") &&
		(!abstract || ptok_is(n1, "*") || ptok_is(n1, "(") ||
		 ptok_is(n1, "[") || ptok_is(n1, "^") ||
		 cd_is_attr(n1));
	if (nested) {
		/* the inner declarator applies to what follows the ')' */
		size_t start = ++c->i;
		c->i--;
		cd_skip_group(c);
		const struct ctype *outer = suffix(c, base);
		if (!outer)
			goto out;
		size_t end = c->i;
		c->i = start;
		r = declarator(c, outer, name, abstract);
		if (!r || !cd_expect(c, ")", "declarator"))
			goto out;
		c->i = end;
		goto out;
	}
	const struct ptok *t = cd_peek(c, 0);
	if (t->kind == PT_IDENT && !cd_is_attr(t) &&
	    !cd_is_asm(t)) {
		if (abstract) {
			cd_error(c, t, "BAD_DECL", "unexpected name '%.*s' in a "
				 "type name", (int)t->len, t->text);
			goto out;
		}
		*name = t;
		c->i++;
	}
	r = suffix(c, base);
out:
	c->depth--;
	return r;
}

/* ---- struct, union, enum ------------------------------------------------- */

/* `struct x` without a body: the declared one, else a new incomplete
 * one (completed later by a definition, or from BTF when followed). */
static const struct ctype *tag_ref(struct cdecl *c, enum ctype_kind k,
				   const struct ptok *name)
{
	char *n = cd_name(c, name);
	const struct ctype *t = ctypes_declared_tag(c->reg, k, n);
	if (t)
		return t;
	struct ctype *nt;
	int err = ctypes_declare_tag(c->reg, k, n, &nt);
	if (err == -EEXIST) {
		cd_error(c, name, "BAD_DECL", "'%s' is declared as another "
			 "kind of tag", n);
		return NULL;
	}
	if (k == CT_ENUM && nt && !nt->complete) { /* enum x; (GNU) */
		nt->size = nt->align = 4;
	}
	return nt;
}

/* The tag a definition fills: a new anonymous type, or the registered
 * one if it is not complete yet. NULL after an error; *skip when a
 * header defines it again (the first definition stands). */
static struct ctype *tag_def(struct cdecl *c, enum ctype_kind k,
			     const struct ptok *name, bool *skip)
{
	*skip = false;
	if (!name)
		return ctype_new(c->a, k, NULL);
	char *n = cd_name(c, name);
	struct ctype *t;
	int err = ctypes_declare_tag(c->reg, k, n, &t);
	if (err == -EEXIST) {
		cd_error(c, name, "BAD_DECL", "'%s' is declared as another "
			 "kind of tag", n);
		return NULL;
	}
	if (err < 0)
		return NULL;
	if (t->complete) {
		if (!c->quiet) {
			cd_error(c, name, "BAD_DECL", "redefinition of '%s %s'",
				 k == CT_STRUCT ? "struct" : k == CT_UNION ?
				 "union" : "enum", n);
			return NULL;
		}
		*skip = true;
	}
	return t;
}

static bool is_integer(const struct ctype *t)
{
	return t->kind == CT_INT || t->kind == CT_ENUM;
}

/* One member declaration: specifiers, then declarators (with
 * bitfield widths) to its ';'. */
typedef VEC(struct member) member_vec;

static bool member_decl(struct cdecl *c, member_vec *m)
{
	if (cd_is(c, 0, "_Static_assert") || cd_is(c, 0, "static_assert")) {
		c->i++;
		cd_skip_group(c);
		return cd_expect(c, ";", "_Static_assert");
	}
	struct dspec ds;
	const struct ptok *at = cd_peek(c, 0);
	if (!decl_specs(c, &ds))
		return false;
	if (cd_accept(c, ";")) {
		/* struct { ... }; inside a struct: an anonymous member */
		if ((ds.type->kind == CT_STRUCT || ds.type->kind == CT_UNION) &&
		    !ds.type->name) {
			struct member mb = { NULL, ds.type, -1, ds.attrs, at };
			return vec_push(m, mb) == 0;
		}
		return true;
	}
	for (;;) {
		struct member mb = { .bits = -1, .attrs = ds.attrs, .at = at };
		const struct ptok *name = NULL;
		const struct ctype *t = ds.type;
		if (!cd_is(c, 0, ":")) {
			t = declarator(c, ds.type, &name, false);
			if (!t)
				return false;
		}
		cd_after_declarator(c, &mb.attrs);
		if (c->bad)
			return false;
		if (name)
			mb.at = name;
		t = cd_apply_mode(c, t, mb.attrs.mode);
		if (!(t = cd_apply_vector(c, t, mb.attrs.vector_size, mb.at)))
			return false;
		if (cd_accept(c, ":")) {
			int64_t w;
			const struct ptok *wt = cd_peek(c, 0);
			if (!cd_const_cond(c, &w))
				return false;
			if (!is_integer(t)) {
				cd_error(c, mb.at, "BAD_DECL", "bitfield '%s' "
					 "has a type that is not an integer",
					 name ? cd_name(c, name) : "");
				return false;
			}
			if (w < 0 || w > (int64_t)t->size * 8 ||
			    (w == 0 && name)) {
				cd_error(c, wt, "BAD_DECL", "bitfield width %lld "
					 "is not in 1..%u", (long long)w,
					 t->size * 8);
				return false;
			}
			mb.bits = (int)w;
			cd_after_declarator(c, &mb.attrs);
		} else {
			bool last_flexible = t->kind == CT_ARRAY &&
				!t->nelems && !t->size;
			if (!last_flexible &&
			    !(t = complete(c, t, mb.at, name ?
					   arena_printf(c->a, "field '%s'",
							cd_name(c, name)) :
					   "a field")))
				return false;
		}
		mb.type = t;
		mb.name = name ? cd_name(c, name) : NULL;
		if (vec_push(m, mb))
			return false;
		if (cd_accept(c, ","))
			continue;
		/* the last member's ';' may be left out, as gcc and clang
		 * allow it (bpftrace 0.17 passes such a struct through
		 * clang: `struct x { int a; int b }`) */
		if (cd_is(c, 0, "}"))
			return true;
		return cd_expect(c, ";", "a struct member declaration");
	}
}

/* struct-or-union-specifier -> (struct|union) attrs NAME? attrs
 *                              ('{' member-decl* '}' attrs)? */
static const struct ctype *struct_spec(struct cdecl *c, enum ctype_kind k)
{
	c->i++;
	struct attrs sa = { 0 };
	cd_attributes(c, &sa);
	const struct ptok *name = NULL;
	if (cd_peek(c, 0)->kind == PT_IDENT && !cd_is_attr(cd_peek(c, 0))) {
		name = cd_peek(c, 0);
		c->i++;
	}
	cd_attributes(c, &sa);
	if (c->bad)
		return NULL;
	if (!cd_is(c, 0, "{")) {
		if (!name) {
			cd_error(c, cd_peek(c, 0), "BAD_DECL", "name or '{' "
				 "expected after '%s'", k == CT_STRUCT ?
				 "struct" : "union");
			return NULL;
		}
		return tag_ref(c, k, name);
	}
	bool skip;
	struct ctype *s = tag_def(c, k, name, &skip);
	if (!s)
		return NULL;
	if (skip) {
		cd_skip_group(c);
		cd_attributes(c, &sa);
		return s;
	}
	if (++c->depth > CDECL_MAX_DEPTH) {
		cd_error(c, name, "BAD_DECL", "structs nested too deep");
		c->depth--;
		return NULL;
	}
	c->i++;
	member_vec m = { 0 };
	bool ok = true;
	while (ok && !cd_accept(c, "}")) {
		if (cd_peek(c, 0)->kind == PT_EOF) {
			cd_expect(c, "}", "a struct definition");
			ok = false;
			break;
		}
		if (cd_accept(c, ";"))
			continue;
		ok = member_decl(c, &m);
	}
	c->depth--;
	if (ok) {
		cd_attributes(c, &sa);
		ok = !c->bad && cd_layout(c, s, m.v, (uint32_t)m.n, &sa) == 0;
	}
	vec_free(&m);
	return ok ? s : NULL;
}

/* enum-specifier -> enum attrs NAME? attrs ('{' (NAME ('=' expr)?),* '}')? */
static const struct ctype *enum_spec(struct cdecl *c)
{
	c->i++;
	struct attrs ea = { 0 };
	cd_attributes(c, &ea);
	const struct ptok *name = NULL;
	if (cd_peek(c, 0)->kind == PT_IDENT) {
		name = cd_peek(c, 0);
		c->i++;
	}
	cd_attributes(c, &ea);
	if (c->bad)
		return NULL;
	if (!cd_is(c, 0, "{")) {
		if (!name) {
			cd_error(c, cd_peek(c, 0), "BAD_DECL", "name or '{' "
				 "expected after 'enum'");
			return NULL;
		}
		return tag_ref(c, CT_ENUM, name);
	}
	bool skip;
	struct ctype *e = tag_def(c, CT_ENUM, name, &skip);
	if (!e)
		return NULL;
	if (skip) {
		cd_skip_group(c);
		cd_attributes(c, &ea);
		return e;
	}
	c->i++;
	int64_t next = 0, lo = 0, hi = 0;
	bool any_unsigned_big = false;
	while (!cd_accept(c, "}")) {
		const struct ptok *t = cd_peek(c, 0);
		if (t->kind != PT_IDENT) {
			cd_expect(c, "}", "an enum definition");
			return NULL;
		}
		c->i++;
		struct attrs ignore = { 0 };
		cd_attributes(c, &ignore);
		if (cd_accept(c, "=") && !cd_const_cond(c, &next))
			return NULL;
		char *n = cd_name(c, t);
		if (ctype_add_value(c->a, e, n, next) < 0 ||
		    ctypes_add_enum_const(c->reg, n, next, e) < 0)
			return NULL;
		if (next < lo)
			lo = next;
		if (next > hi)
			hi = next;
		if ((uint64_t)next > UINT32_MAX && next > 0)
			any_unsigned_big = true;
		next++;
		if (!cd_accept(c, ",")) {
			if (!cd_expect(c, "}", "an enum definition"))
				return NULL;
			break;
		}
	}
	cd_attributes(c, &ea);
	/* gcc: unsigned int unless a value is negative; 8 bytes when a value
	 * does not fit 32 bits; packed: the smallest that holds them */
	e->is_signed = lo < 0;
	uint32_t size = 4;
	if (ea.packed) {
		size = 1;
		while (size < 8 && (lo < -(INT64_C(1) << (size * 8 - 1)) ||
				    hi > (lo < 0 ?
					  (INT64_C(1) << (size * 8 - 1)) - 1 :
					  (INT64_C(1) << (size * 8)) - 1)))
			size *= 2;
	}
	if (lo < INT32_MIN || hi > (lo < 0 ? INT32_MAX : (int64_t)UINT32_MAX) ||
	    any_unsigned_big)
		size = 8;
	e->size = e->align = size;
	if (ea.aligned > e->align)
		e->align = ea.aligned;
	e->complete = true;
	return e;
}

/* ---- external declarations -------------------------------------------- */

static void add_typedef(struct cdecl *c, const struct ptok *name,
			const struct ctype *t, const struct attrs *at)
{
	t = cd_apply_mode(c, t, at->mode);
	if (!(t = cd_apply_vector(c, t, at->vector_size, name)))
		return;
	if (at->aligned && at->aligned != t->align)
		t = cd_with_align(c, t, at->aligned > t->align || !at->packed ?
				  at->aligned : t->align);
	ctypes_add_typedef(c->reg, cd_name(c, name), t);
}

/* Skip an initializer: to the ',' or ';' that ends it. */
static void skip_init(struct cdecl *c)
{
	while (!cd_is(c, 0, ",") && !cd_is(c, 0, ";") &&
	       cd_peek(c, 0)->kind != PT_EOF) {
		if (cd_is(c, 0, "(") || cd_is(c, 0, "[") || cd_is(c, 0, "{"))
			cd_skip_group(c);
		else
			c->i++;
	}
}

/* external-declaration -> specifiers (declarator attrs ('=' init)?),* ';'
 *                       | specifiers declarator '{' body '}'
 *                       | _Static_assert(...); | asm(...); | ';' */
static void external_decl(struct cdecl *c)
{
	if (cd_accept(c, ";"))
		return;
	if (cd_is(c, 0, "_Static_assert") || cd_is(c, 0, "static_assert")) {
		c->i++;
		cd_skip_group(c);
		cd_expect(c, ";", "_Static_assert");
		return;
	}
	if (cd_is_asm(cd_peek(c, 0))) {
		cd_after_declarator(c, &(struct attrs){ 0 });
		cd_accept(c, ";");
		return;
	}
	struct dspec ds;
	bool definition = cd_is(c, 0, "struct") || cd_is(c, 0, "union") ||
		cd_is(c, 0, "enum");
	if (!decl_specs(c, &ds))
		return;
	if (cd_accept(c, ";"))
		return;
	/* bpftrace ends each struct definition of a script with its '}':
	 * struct a { ... } struct b { ... } BEGIN */
	if (definition && !c->quiet && (cd_peek(c, 0)->kind == PT_EOF ||
					cd_is(c, 0, "struct") ||
					cd_is(c, 0, "union") ||
					cd_is(c, 0, "enum") ||
					cd_is(c, 0, "typedef")))
		return;
	for (;;) {
		const struct ptok *name = NULL;
		const struct ptok *at = cd_peek(c, 0);
		const struct ctype *t = declarator(c, ds.type, &name, false);
		if (!t)
			return;
		struct attrs da = ds.attrs;
		cd_after_declarator(c, &da);
		if (c->bad)
			return;
		if (cd_is(c, 0, "{")) {
			if (t->kind != CT_FUNC || ds.is_typedef) {
				cd_error(c, at, "BAD_DECL", "a body after a "
					 "declaration that is not a function");
				return;
			}
			cd_skip_group(c); /* a function definition */
			return;
		}
		if (ds.is_typedef) {
			if (!name) {
				cd_error(c, at, "BAD_DECL", "typedef without "
					 "a name");
				return;
			}
			add_typedef(c, name, t, &da);
		}
		/* else a variable or a function declared: nothing to keep */
		if (cd_accept(c, "="))
			skip_init(c);
		if (cd_accept(c, ","))
			continue;
		cd_expect(c, ";", "a declaration");
		return;
	}
}

/* After a failed declaration: on to where the next one starts, past its
 * ';' (outside braces), or past a function body's '}'. */
static void recover(struct cdecl *c, size_t start)
{
	c->i = start;
	int depth = 0;
	bool body = false;
	const struct ptok *prev = NULL;
	for (;;) {
		const struct ptok *t = cd_peek(c, 0);
		if (t->kind == PT_EOF)
			return;
		c->i++;
		if (t->kind == PT_PUNCT && t->len == 1) {
			char ch = t->text[0];
			if (ch == '{' || ch == '(' || ch == '[') {
				if (ch == '{' && depth == 0)
					body = prev && ptok_is(prev, ")");
				depth++;
			} else if (ch == '}' || ch == ')' || ch == ']') {
				if (--depth <= 0 && ch == '}' && body)
					return;
				if (depth < 0)
					depth = 0;
			} else if (ch == ';' && depth == 0) {
				return;
			}
		}
		prev = t;
	}
}

int cdecl_parse(struct pp *pp, const struct ptok *toks, size_t n,
		struct ctypes *reg, struct diags *d)
{
	if (!n || toks[n - 1].kind != PT_EOF)
		return -EINVAL;
	struct cdecl c = { .pp = pp, .t = toks, .n = n, .reg = reg,
			   .a = ctypes_arena(reg), .d = d };
	while (cd_peek(&c, 0)->kind != PT_EOF &&
	       c.nerrors < CDECL_MAX_ERRORS) {
		size_t start = c.i;
		c.bad = false;
		c.depth = 0;
		c.quiet = !pp_in_script(pp, cd_peek(&c, 0));
		external_decl(&c);
		if (c.bad)
			recover(&c, start);
		if (c.i == start) /* always move on */
			c.i++;
	}
	return c.nerrors ? -EINVAL : 0;
}
