/* sema_ctype.c - the semantic pass over C types: curtask, casts to C
 * types, `->` and `.` on structs, `*p`, `p[i]`, pointer arithmetic,
 * enum constants, sizeof of a type, and tracepoint fields typed as C
 * pointers. Types come from the program's registry (prog->ctypes): the
 * script's declarations, then the kernel's BTF.
 *
 * Address spaces follow bpftrace 0.17: a pointer made by a cast, or read
 * from a probe's arguments, points into the probe's memory (user memory
 * in uprobes and USDT, kernel memory elsewhere: PROBE_USER_MEM); a
 * pointer read out of a struct keeps the space of the struct it came
 * from, unless the type says __user; curtask is kernel memory. A
 * tracepoint field that points somewhere (syscall arguments point into
 * user memory, others into the kernel) has no space (AS_UNKNOWN): it is
 * read with bpf_probe_read, which on x86-64 tells them apart by address,
 * as bpftrace 0.17 reads such pointers. */
#include "sema_int.h"

#include <stdlib.h>
#include <string.h>


/* Where a cast's pointer points: user memory in user-space probes,
 * kernel memory in kernel ones, and not known in probes of neither
 * (BEGIN, END: bpftrace 0.17 reads those with bpf_probe_read, which on
 * x86-64 reads either, and names that helper when one fails). */
enum addr_space sema_default_space(struct sema *s)
{
	return sema_block_has(s, PROBE_USER_MEM) ? AS_USER :
		sema_block_has(s, PROBE_KERNEL_MEM) ? AS_KERNEL : AS_UNKNOWN;
}

const struct type *sema_curtask(struct sema *s)
{
	const struct ctype *task =
		ctypes_find_tag(s->prog->ctypes, CT_STRUCT, "task_struct");
	const struct type *t = NULL;
	if (task)
		t = type_of_ctype(s->a, ctype_ptr(s->a, task), AS_KERNEL);
	if (!t) {
		/* no BTF: still the address, as before types existed */
		struct type *u = arena_new(s->a, struct type);
		*u = *type_u64();
		u->is_ptr = true;
		u->space = AS_KERNEL;
		t = u;
	}
	return t;
}

/* "struct x", "union x", "enum x", "uint32" ...: the base of a type name
 * as the parser spells casts and sizeof. NULL when unknown (*why says
 * how, for the message). */
static const struct ctype *base_type(struct sema *s, const char *name,
				     const char **why)
{
	static const struct { const char *word; enum ctype_kind kind; } tags[] = {
		{ "struct ", CT_STRUCT }, { "union ", CT_UNION },
		{ "enum ", CT_ENUM },
	};
	for (size_t i = 0; i < sizeof(tags) / sizeof(*tags); i++) {
		size_t n = strlen(tags[i].word);
		if (strncmp(name, tags[i].word, n) != 0)
			continue;
		const struct ctype *t =
			ctypes_find_tag(s->prog->ctypes, tags[i].kind, name + n);
		if (!t)
			*why = "unknown";
		return t;
	}
	if (strcmp(name, "void") == 0)
		return ctype_void();     /* (void *)x (bpftrace 0.2x) */
	bool sign = strncmp(name, "int", 3) == 0;
	const char *b = name + (sign ? 3 : strncmp(name, "uint", 4) == 0 ? 4 : 0);
	if (b != name && (!strcmp(b, "8") || !strcmp(b, "16") ||
			  !strcmp(b, "32") || !strcmp(b, "64")))
		return ctype_int(s->a, (uint32_t)atoi(b) / 8, sign, NULL);
	const struct ctype *t = ctypes_find_typedef(s->prog->ctypes, name);
	if (!t)
		*why = "unknown";
	return t;
}

/* A type name as written: a base and trailing '*'s. */
const struct ctype *sema_type_name(struct sema *s, const char *name,
				   const char **why)
{
	size_t len = strlen(name);
	unsigned stars = 0;
	while (len && (name[len - 1] == '*' || name[len - 1] == ' ')) {
		if (name[len - 1] == '*')
			stars++;
		len--;
	}
	const char *base = arena_strndup(s->a, name, len);
	*why = NULL;
	const struct ctype *t = base_type(s, base, why);
	if (!t)
		return NULL;
	for (unsigned i = 0; i < stars; i++)
		t = ctype_ptr(s->a, t);
	return t;
}

static const char *tag_of(const char *name)
{
	return strncmp(name, "union", 5) == 0 ? "union" :
		strncmp(name, "enum", 4) == 0 ? "enum" : "struct";
}

/* sizeof(struct x), sizeof(uint32), sizeof(typedef_name). */
bool sema_sizeof_type(struct sema *s, struct node *a, uint64_t *size)
{
	const char *why;
	const struct ctype *t = sema_type_name(s, a->u.str.s, &why);
	if (!t) {
		sema_error(s, a->pos, "UNKNOWN_TYPE", "unknown %s '%s'",
			   strchr(a->u.str.s, ' ') ? tag_of(a->u.str.s) : "type",
			   a->u.str.s);
		return false;
	}
	if (ctype_is_aggregate(t) && !t->complete) {
		sema_error(s, a->pos, "UNKNOWN_TYPE",
			   "sizeof(%s): the type is declared but not defined",
			   a->u.str.s);
		return false;
	}
	*size = t->size;
	return true;
}

/* (type)expr where the type is a C type: a pointer (any integer or
 * pointer converts), never a struct by value (as bpftrace 0.17). */
const struct type *sema_cast_ctype(struct sema *s, struct node *n,
				   const struct type *from)
{
	const char *tn = n->u.cast.type_name;
	const char *why;
	const struct ctype *t = sema_type_name(s, tn, &why);
	if (!t) {
		size_t l = strlen(tn);
		while (l && (tn[l - 1] == '*' || tn[l - 1] == ' '))
			l--;
		bool tagged = !strncmp(tn, "struct ", 7) ||
			      !strncmp(tn, "union ", 6) || !strncmp(tn, "enum ", 5);
		const char *base = arena_strndup(s->a, tn, l);
		bool is_struct = !tagged &&
			ctypes_find_tag(s->prog->ctypes, CT_STRUCT, base);
		sema_error(s, n->pos, "UNKNOWN_TYPE", "cannot cast to '%s': "
			   "unknown %s '%s'%s%s%s", tn,
			   tagged ? tag_of(tn) : "type", base,
			   is_struct ? " (did you mean 'struct " : "",
			   is_struct ? base : "", is_struct ? "'?)" : "");
		return NULL;
	}
	if ((t->kind == CT_INT || t->kind == CT_ENUM) && !strchr(tn, '*') &&
	    (t->size == 1 || t->size == 2 || t->size == 4 || t->size == 8)) {
		/* (u32)x with a typedef of an integer: as (uint32)x */
		if (!from)
			return NULL;
		if (!is_int(from)) {
			sema_error(s, n->pos, "TYPE_MISMATCH", "cannot cast '%s' "
				   "to %s", sema_tname(s, from), tn);
			return NULL;
		}
		const struct type *r = type_int(s->a, t->size * 8,
						t->is_signed);
		if (t->kind == CT_ENUM && s->prog->dialect >= DIALECT_026) {
			/* (enum E)x prints by name in 0.26 */
			struct type *e = arena_new(s->a, struct type);
			*e = *r;
			e->ctype = ctypes_complete(s->prog->ctypes, t);
			r = e;
		}
		return r;
	}
	if (t->kind != CT_PTR) {
		sema_error(s, n->pos, "BAD_CAST", "cannot cast to '%s': only "
			   "integer and pointer types can be cast to", tn);
		return NULL;
	}
	if (!from)
		return NULL;
	/* a string read from C memory (a char array) casts to its address */
	bool place = (from->kind == TYPE_STR || from->kind == TYPE_ARRAY ||
		      from->kind == TYPE_STRUCT) && sema_is_place(n->u.cast.expr);
	if (!is_int(from) && !place) {
		sema_error(s, n->pos, "BAD_CAST", "cannot cast '%s' to '%s': "
			   "only integers and pointers can be", sema_tname(s, from),
			   tn);
		return NULL;
	}
	/* a pointer's space; in D also an integer's that uptr() gave
	 * (copyin()'s address: lang/d_parser.c), where bpftrace 0.17 casts
	 * by the probe's default */
	enum addr_space sp = is_int(from) && from->space &&
		(from->is_ptr || s->prog->dtrace.on) ?
		from->space : place ? from->space : sema_default_space(s);
	if (place && !sp)
		sp = sema_default_space(s);
	return type_of_ctype(s->a, t, sp);
}

/* A C object in memory that has an address: a struct member, an array
 * element, *p. */
bool sema_is_place(const struct node *n)
{
	switch (n->kind) {
	case N_FIELD:
		return n->u.field.cfield != NULL;
	case N_INDEX:
		return true;
	case N_UNOP:
		return n->u.unop.op == OP_DEREF && n->type &&
		       n->u.unop.operand->type &&
		       n->u.unop.operand->type->ctype;
	default:
		return false;
	}
}

static const struct ctype *pointee_of(struct sema *s, const struct type *t)
{
	if (!is_int(t) || !t->is_ptr || !t->ctype || t->ctype->kind != CT_PTR)
		return NULL;
	return ctypes_pointee(s->prog->ctypes, t->ctype);
}

/* The value type of a C object of type ct read from space sp; errors
 * at pos for what has no value (void, functions, floats). */
static const struct type *object_type(struct sema *s, struct pos pos,
				      const struct ctype *ct,
				      enum addr_space sp, const char *what)
{
	const struct type *t = type_of_ctype(s->a, ct, sp);
	if (t)
		return t;
	if (s->flex_ok && ct->kind == CT_ARRAY && !ct->nelems && ct->elem &&
	    ct->elem->size) {
		/* `int y[0]` indexed: an array of unknown length, read
		 * where it lies (cg_ctype.c, unbounded) */
		struct type *u = arena_new(s->a, struct type);
		u->kind = TYPE_ARRAY;
		u->ctype = ct;
		u->space = sp;
		return u;
	}
	if (ctype_is_aggregate(ct) && !ct->complete)
		sema_error(s, pos, "UNKNOWN_TYPE", "%s has type '%s', which is "
			   "declared but not defined", what,
			   ctype_name(s->a, ct));
	else
		sema_error(s, pos, "UNSUPPORTED", "%s has type '%s', which "
			   "has no value sonde can read", what,
			   ctype_name(s->a, ct));
	return NULL;
}

/* expr->name and expr.name on C structs. */
const struct type *sema_member(struct sema *s, struct node *n,
			       const struct type *bt)
{
	const struct ctype *st;
	enum addr_space sp = bt->space;
	/* bpftrace 0.2x's '.' goes through a pointer to a struct as '->'
	 * does ($p.field, curtask.pid); 0.17 refused it, so no 0.17
	 * script changes meaning. */
	if (!n->u.field.arrow && bt->kind != TYPE_STRUCT && pointee_of(s, bt))
		n->u.field.arrow = true;
	const char *op = n->u.field.arrow ? "->" : ".";
	if (n->u.field.arrow) {
		st = pointee_of(s, bt);
		if (!st) {
			sema_error(s, n->pos, "BAD_FIELD", "'->%s' needs a pointer "
				   "to a struct, not '%s'%s", n->u.field.name,
				   sema_tname(s, bt), bt->kind == TYPE_STRUCT ?
				   " (use '.')" : "");
			return NULL;
		}
	} else {
		if (bt->kind != TYPE_STRUCT) {
			sema_error(s, n->pos, "BAD_FIELD", "'.%s' needs a struct, "
				   "not '%s'%s", n->u.field.name,
				   sema_tname(s, bt), pointee_of(s, bt) ?
				   " (use '->')" : "");
			return NULL;
		}
		st = bt->ctype;
	}
	st = ctypes_complete(s->prog->ctypes, st);
	if (!ctype_is_aggregate(st)) {
		sema_error(s, n->pos, "BAD_FIELD", "'%s%s' needs a struct or "
			   "union, not '%s'", op, n->u.field.name,
			   ctype_name(s->a, st));
		return NULL;
	}
	if (!st->complete) {
		sema_error(s, n->pos, "UNKNOWN_TYPE", "'%s' is declared but not "
			   "defined, so it has no field '%s'",
			   ctype_name(s->a, st), n->u.field.name);
		return NULL;
	}
	uint32_t bits;
	const struct ctype_field *f = ctype_field_find(st, n->u.field.name,
						       &bits);
	if (!f) {
		const char *near = ctype_field_suggest(st, n->u.field.name);
		sema_error(s, n->pos, "BAD_FIELD", "%s has no field '%s'%s%s%s",
			   ctype_name(s->a, st), n->u.field.name,
			   near ? " (did you mean '" : "", near ? near : "",
			   near ? "'?)" : "");
		return NULL;
	}
	n->u.field.cfield = f;
	n->u.field.bit_offset = bits;
	return object_type(s, n->pos, f->type, sp,
			   arena_printf(s->a, "field '%s'", n->u.field.name));
}

/* expr[i]: an element of a C array (a struct member) or of what a
 * pointer points at. */
/* A tuple's index: a literal, a positional parameter, or +, - and * of
 * them (`$t[1 + 1]`). */
static bool const_index(struct sema *s, const struct node *n, int64_t *v)
{
	int64_t a, b;
	if (n && n->kind == N_BINOP && (n->u.binop.op == OP_ADD ||
	    n->u.binop.op == OP_SUB || n->u.binop.op == OP_MUL) &&
	    const_index(s, n->u.binop.lhs, &a) &&
	    const_index(s, n->u.binop.rhs, &b)) {
		uint64_t x = (uint64_t)a, y = (uint64_t)b;
		*v = (int64_t)(n->u.binop.op == OP_ADD ? x + y :
			       n->u.binop.op == OP_SUB ? x - y : x * y);
		return true;
	}
	return sema_const_int(s, n, v);
}

const struct type *sema_index(struct sema *s, struct node *n)
{
	bool flex = s->flex_ok;
	s->flex_ok = n->u.index.base->kind == N_FIELD;
	const struct type *bt = sema_expr(s, n->u.index.base);
	s->flex_ok = flex;
	const struct type *it = sema_expr(s, n->u.index.index);
	if (!bt || !it)
		return NULL;
	int64_t k;
	if (bt->kind == TYPE_TUPLE && !bt->names && is_int(it) &&
	    const_index(s, n->u.index.index, &k) && k >= 0) {
		/* $t[1 + 1] (bpftrace 0.24's tuples): $t.2, the index a
		 * constant */
		struct node *b = n->u.index.base;
		n->kind = N_TUPLE_INDEX;
		n->u.tindex.base = b;
		n->u.tindex.index = k > UINT32_MAX ? UINT32_MAX : (uint32_t)k;
		n->type = NULL;
		return sema_expr(s, n);
	}
	if (bt->kind == TYPE_TUPLE && !bt->names) {
		sema_error(s, n->u.index.index->pos, "BAD_INDEX", "a tuple's "
			   "index must be known before the run: a literal, "
			   "as in $t[1] or $t.1");
		return NULL;
	}
	if (bt->kind == TYPE_STR && is_int(it)) {
		/* $s[i] (bpftrace 0.24): the string's bytes, an array of
		 * char as long as it is */
		struct type *a = arena_new(s->a, struct type);
		*a = *bt;
		a->kind = TYPE_ARRAY;
		a->ctype = ctype_array(s->a, ctype_int(s->a, 1, true, "char"),
				       bt->size);
		n->u.index.base->type = a;
		bt = a;
	}
	if (!is_int(it)) {
		sema_error(s, n->u.index.index->pos, "TYPE_MISMATCH",
			   "an index must be an integer, not '%s'",
			   sema_tname(s, it));
		return NULL;
	}
	const struct ctype *elem;
	enum addr_space sp = bt->space;
	if (bt->kind == TYPE_ARRAY) {
		elem = bt->ctype->elem;
		const struct node *ix = n->u.index.index;
		if (ix->kind == N_INT && bt->ctype->nelems &&
		    ix->u.ival >= bt->ctype->nelems) {
			sema_error(s, ix->pos, "BAD_INDEX", "the index %lld is "
				   "out of bounds for array of size %u ('%s')",
				   (long long)ix->u.ival, bt->ctype->nelems,
				   ctype_name(s->a, bt->ctype));
			return NULL;
		}
		/* 0.26 warns at run time (its test array "array element
		 * access - out of bounds runtime"); the read gives 0 */
		if (ix->kind != N_INT && bt->ctype->nelems &&
		    s->prog->dialect >= DIALECT_026)
			sema_runtime_warning(s, &n->u.index.oob_warn, n->pos,
					     "Array access out of bounds. This "
					     "can lead to unexpected results.");
	} else if ((elem = pointee_of(s, bt)) != NULL) {
		if (elem->kind == CT_VOID || elem->size == 0) {
			sema_error(s, n->pos, "BAD_INDEX", "cannot index '%s': its "
				   "elements have no size", sema_tname(s, bt));
			return NULL;
		}
	} else {
		sema_error(s, n->pos, "BAD_INDEX", "[] needs an array or a "
			   "pointer, not '%s'", sema_tname(s, bt));
		return NULL;
	}
	return object_type(s, n->pos, ctypes_complete(s->prog->ctypes, elem),
			   sp, "the element");
}

/* *p on a typed pointer: the object it points at (NULL: not typed). */
const struct type *sema_deref(struct sema *s, struct node *n,
			      const struct type *t)
{
	const struct ctype *p = pointee_of(s, t);
	if (!p)
		return NULL;
	if (p->kind == CT_VOID) {
		sema_error(s, n->pos, "TYPE_MISMATCH", "cannot dereference '%s'",
			   sema_tname(s, t));
		return NULL;
	}
	return object_type(s, n->pos, p, t->space, "the pointee");
}

/* p + i, p - i, i + p on a typed pointer: scaled by the pointee's size,
 * as bpftrace 0.17 does; the result keeps the pointer type. NULL when
 * neither side is a typed pointer (plain integer arithmetic). */
const struct type *sema_ptr_arith(struct sema *s, struct node *n,
				  const struct type *l, const struct type *r)
{
	enum op op = n->u.binop.op;
	if (op != OP_ADD && op != OP_SUB)
		return NULL;
	const struct type *p = pointee_of(s, l) ? l :
		op == OP_ADD && pointee_of(s, r) ? r : NULL;
	if (!p || (pointee_of(s, l) && pointee_of(s, r)))
		return NULL;
	return p;
}

/* The scale of pointer arithmetic on type t (1 for void *). */
uint32_t sema_ptr_scale(const struct type *t)
{
	const struct ctype *e = t && t->ctype && t->ctype->kind == CT_PTR ?
		t->ctype->elem : NULL;
	return e && e->size ? e->size : 1;
}

/* A bare name: an enum constant (declared, or the kernel's). The final
 * pass turns the node into its N_INT. */
const struct type *sema_ident(struct sema *s, struct node *n)
{
	int64_t v;
	if (ctypes_find_const(s->prog->ctypes, n->u.str.s, &v) < 0) {
		sema_error(s, n->pos, "UNKNOWN_BUILTIN",
			   "unknown identifier '%s'", n->u.str.s);
		return NULL;
	}
	/* 0.26 prints an enum's constant by its name (its tests: "enum {
	 * FOO = 333 }; print(FOO)" gives FOO): an int64 that keeps its
	 * enum as its C type */
	const struct ctype *en = s->prog->dialect >= DIALECT_026 ?
		ctypes_const_enum(s->prog->ctypes, n->u.str.s) : NULL;
	if (s->final) {
		n->kind = N_INT;
		n->u.ival = (uint64_t)v;
	}
	if (!en)
		return type_s64();
	struct type *t = arena_new(s->a, struct type);
	*t = *type_s64();
	t->ctype = en;
	return t;
}

/* A tracepoint field declared as a pointer to a struct ("struct
 * __kernel_timespec * rqtp"): its C type, from the declaration's type
 * part, or NULL when it has none (plain integer pointers stay as they
 * were: numbers that str() can read). */
const struct ctype *sema_record_field_ctype(struct sema *s,
					    const struct record_field *f)
{
	if (f->ctype)
		return f->ctype;
	if (!f->is_ptr || !f->decl)
		return NULL;
	const char *d = f->decl;
	while (strncmp(d, "const ", 6) == 0 || strncmp(d, "volatile ", 9) == 0)
		d = strchr(d, ' ') + 1;
	/* the type is everything up to the last '*' */
	const char *star = strrchr(d, '*');
	if (!star)
		return NULL;
	/* A pointer to a pointer (`const char *const * argv`) is typed
	 * whatever it points to, so that argv[1] is a char * str() reads,
	 * as bpftrace 0.17 does; `char *` and other pointers to integers
	 * stay numbers (is_ptr) that str() reads. */
	if (strncmp(d, "struct ", 7) != 0 && strncmp(d, "union ", 6) != 0 &&
	    memchr(d, '*', (size_t)(star - d)) == NULL)
		return NULL;
	char *tn = arena_strndup(s->a, d, (size_t)(star - d + 1));
	/* "char *const *": the qualifiers between stars change nothing
	 * that is read here */
	for (char *q; (q = strstr(tn, "*const ")) != NULL;)
		memmove(q + 1, q + 7, strlen(q + 7) + 1);
	if (strncmp(tn, "char *", 6) == 0) {
		/* char has no name in sema_type_name's words: C's own */
		const struct ctype *t = ctype_int(s->a, 1, true, "char");
		for (const char *q = tn + 4; *q; q++)
			if (*q == '*')
				t = ctype_ptr(s->a, t);
		return t;
	}
	const char *why;
	const struct ctype *t = sema_type_name(s, tn, &why);
	return t && t->kind == CT_PTR ? t : NULL;
}

const struct type *sema_addr_space(struct sema *s, const struct type *t,
				   enum addr_space space)
{
	if (!t)
		return NULL;
	struct type *u = arena_new(s->a, struct type);
	*u = *t;
	u->space = space;
	return u;
}

/* Where a pointer in a probe's args record points: as the provider says;
 * else user memory in user-space probes (uprobe args from DWARF), and
 * unknown elsewhere (tracepoint formats do not say: see the top). */
enum addr_space sema_record_space(struct sema *s, const struct record_field *f)
{
	if (f->space)
		return f->space;
	return sema_block_has(s, PROBE_USER_MEM) ? AS_USER : AS_UNKNOWN;
}
