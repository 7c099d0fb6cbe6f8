/* sema.c - the semantic pass: its driver, types of expressions, scratch
 * variables, statements; maps are in sema_map.c, calls in sema_call.c.
 *
 * How it works. Map types are global and may be fixed by an assignment
 * that comes later in the source than a read (bpftrace accepts
 * `BEGIN { if (@x) {} } END { @x = 1 }`), and a variable or a map can
 * widen (a string literal then `comm`). So the tree is walked several
 * times: inference passes record and widen types silently, until a pass
 * changes nothing; then map ids are assigned (maps sorted by name, the
 * order bpftrace 0.17 prints them at exit) and one final pass reports
 * every error, sets every annotation and adds the events. Types only
 * widen (or stay), so this terminates; a cap guards against surprises. */
#include "sema_int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "../funcs/builtin.h"
#include "../funcs/func.h"

#define MAX_PASSES 12

void sema_error(struct sema *s, struct pos pos, const char *tag,
		const char *fmt, ...)
{
	if (!s->final)
		return;
	va_list ap;
	va_start(ap, fmt);
	diag_vadd(s->d, DIAG_ERROR, pos, tag, fmt, ap);
	va_end(ap);
}

const char *sema_tname(struct sema *s, const struct type *t)
{
	return t ? type_name(s->a, t) : "?";
}

const char *sema_probe_kind(struct arena *a, const struct probe *p)
{
	if (p->kind)
		return p->kind;
	const char *c = p->name ? strchr(p->name, ':') : NULL;
	if (!p->name)
		return "";
	return c ? arena_strndup(a, p->name, (size_t)(c - p->name)) : p->name;
}

/* ---------------------------------------------------------------- */
/* variables                                                         */

static struct sema_var *var_find(struct sema *s, const char *name)
{
	struct sema_block *b = &s->blocks[s->block];
	int64_t i = strmap_get(&b->var_index, name);
	return i < 0 ? NULL : &b->vars.v[i];
}

static int32_t var_slot(struct sema *s, const struct sema_var *v)
{
	return (int32_t)(v - s->blocks[s->block].vars.v);
}

static void var_assign(struct sema *s, struct node *var, const struct type *t,
		       struct pos at)
{
	struct sema_var *v = var_find(s, var->u.var.name);
	if (!v) {
		struct sema_block *b = &s->blocks[s->block];
		struct sema_var nv = { .name = var->u.var.name };
		if (vec_push(&b->vars, nv))
			return;
		if (strmap_put(&b->var_index, nv.name,
			       (uint32_t)(b->vars.n - 1)) < 0) {
			b->vars.n--;
			return;
		}
		v = &b->vars.v[b->vars.n - 1];
	}
	v->assigned = true;
	var->u.var.slot = var_slot(s, v);
	if (!t)
		return;
	if (!v->type) {
		v->type = t;
		s->changed = true;
	} else {
		const struct type *u = sema_merge(s, v->type, t);
		if (!u) {
			sema_error(s, at, "TYPE_MISMATCH",
				   "type mismatch for $%s: assigning '%s' to a "
				   "variable of type '%s'", v->name,
				   sema_tname(s, t), sema_tname(s, v->type));
			return;
		}
		if (!type_equal(u, v->type)) {
			v->type = u;
			s->changed = true;
		}
	}
	var->type = v->type;
}

static const struct type *var_read(struct sema *s, struct node *n)
{
	struct sema_var *v = var_find(s, n->u.var.name);
	if (!v || !v->assigned) {
		sema_error(s, n->pos, "UNDEF_VAR",
			   "variable $%s is used before it is assigned",
			   n->u.var.name);
		return NULL;
	}
	n->u.var.slot = var_slot(s, v);
	return n->type = v->type;
}

/* ---------------------------------------------------------------- */
/* expressions                                                       */

/* The first probe of the block that lacks one of `caps` (enum probe_cap,
 * declared by its provider), or NULL when every probe has them all. */
const struct probe *sema_block_lacks(struct sema *s, uint32_t caps)
{
	for (uint32_t i = 0; i < s->prog->nprobes; i++) {
		const struct probe *p = &s->prog->probes[i];
		if (p->block == s->block && (p->caps & caps) != caps)
			return p;
	}
	return NULL;
}

bool sema_block_has(struct sema *s, uint32_t caps)
{
	return !sema_block_lacks(s, caps);
}

bool sema_require(struct sema *s, struct pos pos, uint32_t caps,
		  const char *what)
{
	const struct probe *p = sema_block_lacks(s, caps);
	if (!p)
		return true;
	sema_error(s, pos, "BAD_BUILTIN",
		   "%s can only be used in %s probes (%s used here)", what,
		   s->opts->kinds_with ? s->opts->kinds_with(s->a, caps) :
		   "other", sema_probe_kind(s->a, p));
	return false;
}

/* A builtin variable: its record (funcs/builtins.c) says which probes
 * may read it and types it. */
static const struct type *builtin_type(struct sema *s, struct node *n)
{
	const struct builtin *b = &builtins[n->u.builtin.id];
	if (b->needs) {
		const char *name = b->name;
		if (b->flags & BUILTIN_INDEXED)
			name = arena_printf(s->a, "%s%u", name,
					    n->u.builtin.index);
		if (!sema_require(s, n->pos, b->needs, name))
			return NULL;
	}
	return b->check ? b->check(s, n) : type_u64();
}

/* A positional parameter's text as a number (bpftrace's: decimal, 0x
 * hex, 0 octal, a leading '-'); 0 or -EINVAL. */
static int positional_number(const char *v, uint64_t *val)
{
	char *end;
	errno = 0;
	if (v[0] == '-')
		*val = (uint64_t)strtoll(v, &end, 0);
	else
		*val = strtoull(v, &end, 0);
	return errno || end == v || *end ? -EINVAL : 0;
}

/* $1.. and $#: replaced, in the final pass, by the literal they stand
 * for, so codegen never sees N_POSITIONAL. In str($N) (as_string) the
 * parameter is a string; elsewhere it must be a number. */
const struct type *sema_positional(struct sema *s, struct node *n,
				   bool as_string)
{
	int np = s->opts ? s->opts->npositional : 0;
	if (n->u.positional.is_count) {
		if (s->final) {
			n->kind = N_INT;
			n->u.ival = (uint64_t)np;
		}
		return n->type = type_s64();
	}
	uint32_t i = n->u.positional.index;
	const char *v = i >= 1 && np > 0 && i <= (uint32_t)np ?
		s->opts->positional[i - 1] : NULL;
	if (as_string) {
		if (s->final) {
			n->kind = N_STR;
			n->u.str.s = v ? v : "";
			n->u.str.len = (uint32_t)strlen(n->u.str.s);
			sema_note_str(s, n);
		}
		return n->type = type_str(s->a, (uint32_t)strlen(v ? v : "") + 1);
	}
	uint64_t val = 0;
	if (v && positional_number(v, &val) < 0 &&
	    s->prog->dialect >= DIALECT_024)
		/* language.md "Positional Parameters": "`$1` would
		 * evaluate to a string `p1`" */
		return sema_positional(s, n, true);
	if (v && positional_number(v, &val) < 0) {
		sema_error(s, n->pos, "BAD_POSITIONAL",
			   "$%u used as a number but given \"%s\"; "
			   "use str($%u) for a string", i, v, i);
		return NULL;
	}
	if (s->final) {
		n->kind = N_INT;
		n->u.ival = val;
	}
	return n->type = type_s64();
}

/* The text of positional parameter $N (unset: ""). */
const char *sema_positional_text(struct sema *s, const struct node *n)
{
	int np = s->opts ? s->opts->npositional : 0;
	uint32_t i = n->u.positional.index;
	return i >= 1 && i <= (uint32_t)np ? s->opts->positional[i - 1] : "";
}

/* An integer known when the script is compiled, in any pass: a literal,
 * or a positional parameter holding a number ($N, $#; an unset $N is 0).
 * False for anything else, with nothing reported. */
bool sema_const_int(struct sema *s, const struct node *n, int64_t *v)
{
	if (n && n->kind == N_INT) {
		*v = (int64_t)n->u.ival;
		return true;
	}
	if (!n || n->kind != N_POSITIONAL)
		return false;
	int np = s->opts ? s->opts->npositional : 0;
	if (n->u.positional.is_count) {
		*v = np;
		return true;
	}
	uint32_t i = n->u.positional.index;
	const char *text = i >= 1 && i <= (uint32_t)np ?
		s->opts->positional[i - 1] : NULL;
	uint64_t val = 0;
	if (text && positional_number(text, &val) < 0)
		return false;
	*v = (int64_t)val;
	return true;
}

/* An integer as bpftrace 0.17 names it in these warnings. */
static const char *bt_int_name(struct sema *s, const struct type *t)
{
	return arena_printf(s->a, "%sint%u", t->is_signed ? "" : "unsigned ",
			    t->bits ? t->bits : 64);
}

static bool nonneg_literal(const struct node *n)
{
	return n && n->kind == N_INT && (int64_t)n->u.ival >= 0;
}

/* bpftrace 0.17's warnings on integer operands (its binop_int): a
 * comparison or arithmetic mixing signed and unsigned, unless one side is
 * a literal that fits the other, and '/' or '%' with a signed operand (a
 * literal >= 0 is not), which BPF divides unsigned. LN/RN are the operand
 * nodes (NULL: not a literal, as the target of `x /= y`). */
static void sign_warnings(struct sema *s, struct pos pos, enum op op,
			  const struct node *ln, const struct type *l,
			  const struct node *rn, const struct type *r)
{
	if (l->is_ptr || r->is_ptr)
		return;    /* pointers are not integers to bpftrace */
	if (s->prog->dtrace.on)
		return;    /* D converts as C does, and says nothing */
	bool lsign = l->is_signed, rsign = r->is_signed;
	if (lsign != rsign) {
		if (lsign && nonneg_literal(ln)) {
			lsign = false;
		} else if (rsign && nonneg_literal(rn)) {
			rsign = false;
		} else {
			const char *what = NULL;
			switch (op) {
			case OP_EQ: case OP_NE: case OP_LE: case OP_GE:
			case OP_LT: case OP_GT:
				what = "comparison of";
				break;
			case OP_ADD: case OP_SUB: case OP_MUL: case OP_DIV:
			case OP_MOD:
				what = "arithmetic on";
				break;
			default:
				break;
			}
			if (what)
				sema_warning(s, pos, "SIGNS", "%s integers of "
					     "different signs: '%s' and '%s' can "
					     "lead to undefined behavior", what,
					     bt_int_name(s, l), bt_int_name(s, r));
		}
	}
	if (op != OP_DIV && op != OP_MOD)
		return;
	if (lsign && nonneg_literal(ln))
		lsign = false;
	if (rsign && nonneg_literal(rn))
		rsign = false;
	if (lsign || rsign)
		sema_warning(s, pos, "SIGNS", "signed operands for '%s' can lead "
			     "to undefined behavior (cast to unsigned to "
			     "silence warning)", op_name(op));
}

/* a == b, a != b on C arrays of integers of one size and length,
 * element by element, as bpftrace 0.17 compares them (in its words). */
static const struct type *array_compare(struct sema *s, struct node *n,
					const struct type *l,
					const struct type *r)
{
	enum op op = n->u.binop.op;
	const struct ctype *le = l->ctype ? l->ctype->elem : NULL;
	const struct ctype *re = r->ctype ? r->ctype->elem : NULL;
	if (op != OP_EQ && op != OP_NE) {
		sema_error(s, n->pos, "TYPE_MISMATCH", "The %s operator cannot "
			   "be used on arrays.", op_name(op));
		return NULL;
	}
	if (l->ctype->nelems != r->ctype->nelems) {
		sema_error(s, n->pos, "TYPE_MISMATCH", "Only arrays of same "
			   "size support comparison operators.");
		return NULL;
	}
	if (!le || !re || (le->kind != CT_INT && le->kind != CT_ENUM) ||
	    (re->kind != CT_INT && re->kind != CT_ENUM) ||
	    le->size != re->size || l->size != r->size) {
		sema_error(s, n->pos, "TYPE_MISMATCH", "Only arrays of same "
			   "sized integer support comparison operators.");
		return NULL;
	}
	return type_u64();
}

/* Comparisons and logical operators: bool from bpftrace 0.24 (0.17
 * gives the integers 1 and 0, printed as numbers), and bool in any
 * dialect when both operands are (true && $b: no 0.17 script has one). */
static bool truth_op(enum op op)
{
	switch (op) {
	case OP_EQ: case OP_NE: case OP_LT: case OP_LE: case OP_GT:
	case OP_GE: case OP_LAND: case OP_LOR:
		return true;
	default:
		return false;
	}
}

/* bpftrace 0.26 gives 1 for x / 0 and x % 0, with a warning at run time
 * (its regression tests zero_divide, zero_modulo expect both); 0.17's
 * BPF division gives 0 and x. */
static void zero_divisor_warning(struct sema *s, struct node *n)
{
	sema_runtime_warning(s, &n->u.binop.zero_warn, n->pos,
			     "Divide or modulo by 0 detected. This can lead "
			     "to unexpected results. 1 is being used as the "
			     "result.");
}

static const struct type *binop(struct sema *s, struct node *n)
{
	const struct type *l = sema_expr(s, n->u.binop.lhs);
	const struct type *r = sema_expr(s, n->u.binop.rhs);
	if (!l || !r)
		return NULL;
	enum op op = n->u.binop.op;
	const struct type *p = is_int(l) && is_int(r) ?
		sema_ptr_arith(s, n, l, r) : NULL;
	if (p)
		return p;
	if (is_int(l) && is_int(r)) {
		sign_warnings(s, n->pos, op, n->u.binop.lhs, l, n->u.binop.rhs, r);
		if ((op == OP_DIV || op == OP_MOD) &&
		    s->prog->dialect >= DIALECT_026 &&
		    n->u.binop.rhs->kind != N_INT)
			zero_divisor_warning(s, n);
		if (truth_op(op) && (s->prog->dialect >= DIALECT_024 ||
				     (l->is_bool && r->is_bool)))
			return type_bool();
		return type_int(s->a, 64, l->is_signed && r->is_signed);
	}
	if (is_str(l) && is_str(r) && (op == OP_EQ || op == OP_NE))
		return s->prog->dialect >= DIALECT_024 ? type_bool() :
			type_u64();
	if (l->kind == TYPE_BUF && r->kind == TYPE_BUF &&
	    (op == OP_EQ || op == OP_NE))
		return type_u64();   /* length and bytes (cg_mem_compare) */
	/* func == func(): the same function (its address, byte by byte);
	 * bpftrace 0.26's tests compare func with __builtin_func */
	if (l->kind == r->kind && l->size == r->size &&
	    (l->kind == TYPE_KSYM || l->kind == TYPE_USYM) &&
	    (op == OP_EQ || op == OP_NE))
		return s->prog->dialect >= DIALECT_024 ? type_bool() :
			type_u64();
	if (l->kind == TYPE_ARRAY && r->kind == TYPE_ARRAY)
		return array_compare(s, n, l, r);
	/* tuples (bpftrace 0.24) and usernames: equal when their values,
	 * stored as one type (strings widened), are */
	if (((l->kind == TYPE_TUPLE && r->kind == TYPE_TUPLE) ||
	     (l->kind == TYPE_USERNAME && r->kind == TYPE_USERNAME)) &&
	    (op == OP_EQ || op == OP_NE) && type_unify(s->a, l, r))
		return s->prog->dialect >= DIALECT_024 ? type_bool() :
			type_u64();
	if (is_str(l) && is_str(r))
		sema_error(s, n->pos, "TYPE_MISMATCH",
			   "strings can only be compared with == and !=, "
			   "not '%s'", op_name(op));
	else
		sema_error(s, n->pos, "TYPE_MISMATCH",
			   "type mismatch for '%s': '%s' and '%s'", op_name(op),
			   sema_tname(s, l), sema_tname(s, r));
	return NULL;
}

/* &$x (bpftrace 0.2x: language.md "Pointers"): a pointer to where the
 * variable lives, for an integer (which then keeps a home in memory,
 * cg_var_home) or a string; *p reads it back. */
static const struct type *addr_of(struct sema *s, struct node *n,
				  const struct type *t)
{
	const struct node *o = n->u.unop.operand;
	if (o->kind != N_VAR) {
		sema_error(s, n->pos, "UNSUPPORTED", "the address-of operator "
			   "'&' takes a $variable in sonde: &$x");
		return NULL;
	}
	const struct ctype *ct = NULL;
	if (t->kind == TYPE_INT && !t->is_bool) {
		ct = t->ctype && t->is_ptr ? t->ctype :
			ctype_int(s->a, t->bits ? t->bits / 8u : 8, t->is_signed,
				  NULL);
	} else if (is_str(t)) {
		struct ctype *c = ctype_new(s->a, CT_INT, NULL);
		*c = *ctype_int(s->a, 1, true, "char");
		c->is_char = true;
		ct = ctype_array(s->a, c, t->size);
	}
	if (!ct) {
		sema_error(s, n->pos, "UNSUPPORTED", "&$x: the address of a "
			   "variable of type '%s' is not supported (integers "
			   "and strings are)", sema_tname(s, t));
		return NULL;
	}
	return type_of_ctype(s->a, ctype_ptr(s->a, ct), AS_KERNEL);
}

static const struct type *unop(struct sema *s, struct node *n)
{
	const struct type *t = sema_expr(s, n->u.unop.operand);
	if (!t)
		return NULL;
	switch (n->u.unop.op) {
	case OP_ADDROF:
		return addr_of(s, n, t);
	case OP_DEREF: {
		if (!is_int(t))
			break;
		const struct type *d = t->ctype ? sema_deref(s, n, t) : NULL;
		if (d || (t->ctype && t->ctype->kind == CT_PTR))
			return d;
		return type_u64();
	}
	default:
		if (!is_int(t))
			break;
		if (n->u.unop.op == OP_LNOT &&
		    (t->is_bool || s->prog->dialect >= DIALECT_024))
			return type_bool();
		if (t->is_bool)   /* -true, ~true: integers */
			return type_s64();
		if (t->is_ptr)
			return type_int(s->a, t->bits, t->is_signed);
		/* ~10 is unsigned in 0.26, whose literals are (its test
		 * basic "bitwise_not": 18446744073709551605) */
		if (n->u.unop.op == OP_BNOT &&
		    n->u.unop.operand->kind == N_INT &&
		    s->prog->dialect >= DIALECT_026)
			return type_u64();
		return t;
	}
	sema_error(s, n->pos, "TYPE_MISMATCH",
		   "'%s' needs an integer operand, not '%s'",
		   op_name(n->u.unop.op), sema_tname(s, t));
	return NULL;
}

static const struct type *ternary(struct sema *s, struct node *n)
{
	const struct type *c = sema_expr(s, n->u.ternary.cond);
	const struct type *a = sema_expr(s, n->u.ternary.then);
	const struct type *b = sema_expr(s, n->u.ternary.els);
	if (c && !is_int(c))
		sema_error(s, n->u.ternary.cond->pos, "TYPE_MISMATCH",
			   "the condition of '?:' must be an integer, not '%s'",
			   sema_tname(s, c));
	if (!a || !b || !c)
		return NULL;
	/* Two calls that return nothing (`c ? printf("y") : printf("n")`):
	 * a statement choosing one, as bpftrace 0.17 allows. */
	if (a->kind == TYPE_NONE && b->kind == TYPE_NONE)
		return a;
	/* Two integers: 64 bits, signed as the first branch is (bpftrace
	 * 0.17's rule; `$s ? nsecs - $s : 0` stays unsigned). */
	if (a->kind == TYPE_INT && b->kind == TYPE_INT && a->is_bool && b->is_bool)
		return type_bool();
	if (is_int(a) && is_int(b) && !a->is_ptr && !b->is_ptr &&
	    a->kind == TYPE_INT && b->kind == TYPE_INT && !a->ctype && !b->ctype)
		return type_int(s->a, 64, a->is_signed);
	/* buffers of two sizes: the larger holds either (bpftrace 0.2x;
	 * 0.17 refused a ternary of buffers) */
	if (a->kind == TYPE_BUF && b->kind == TYPE_BUF)
		return a->size >= b->size ? a : b;
	const struct type *u = sema_storable(a) ? type_unify(s->a, a, b) : NULL;
	if (!u)
		sema_error(s, n->pos, "TYPE_MISMATCH",
			   "the branches of '?:' have types '%s' and '%s'",
			   sema_tname(s, a), sema_tname(s, b));
	return u;
}

/* (bool)x, bpftrace 0.24's: x != 0 for an integer or a pointer, x != ""
 * for a string. The cast keeps that comparison as its operand (once: its
 * type name becomes "bool!" so that a later pass does not wrap it again)
 * and is typed bool. */
static const struct type *cast_bool(struct sema *s, struct node *n,
				    const struct type *t)
{
	if (!t)
		return NULL;
	if (strcmp(n->u.cast.type_name, "bool!") == 0)
		return type_bool();
	struct node *zero = node_new(s->a, N_INT, n->pos);
	if (is_str(t)) {
		zero->kind = N_STR;
		zero->u.str.s = "";
		zero->u.str.len = 0;
	} else if (!is_int(t)) {
		sema_error(s, n->pos, "TYPE_MISMATCH",
			   "cannot cast '%s' to bool", sema_tname(s, t));
		return NULL;
	}
	struct node *ne = node_new(s->a, N_BINOP, n->pos);
	ne->u.binop.op = OP_NE;
	ne->u.binop.lhs = n->u.cast.expr;
	ne->u.binop.rhs = zero;
	if (!sema_expr(s, ne))
		return NULL;
	n->u.cast.expr = ne;
	n->u.cast.type_name = "bool!";
	return type_bool();
}

/* The bytes of an integer, a string or an array of integers, for an
 * array cast; 0 for anything else. */
static uint32_t cast_bytes(const struct type *t)
{
	if (is_int(t))
		return t->bits ? t->bits / 8u : t->size;
	if (is_str(t))
		return t->size;
	if (t->kind == TYPE_ARRAY && t->ctype && t->ctype->elem &&
	    t->ctype->elem->kind == CT_INT)
		return t->ctype->nelems * t->ctype->elem->size;
	return 0;
}

/* (int8[8])x, (bool[2])x, (uint8[])x (bpftrace 0.19: "Support casting
 * int <-> int array"): the value's bytes as an array of that many
 * elements, as many as its size holds when the count is omitted. The
 * sizes must be equal (language.md "Array Casts"). */
static const struct type *cast_to_array(struct sema *s, struct node *n,
					const struct type *t)
{
	const char *tn = n->u.cast.type_name;
	const char *br = strchr(tn, '[');
	char *en = arena_strndup(s->a, tn, (size_t)(br - tn));
	bool is_bool = strcmp(en, "bool") == 0;
	bool sign = en[0] == 'i';
	uint32_t esize = is_bool ? 1 :
		(uint32_t)atoi(en + (sign ? 3 : 4)) / 8;
	uint32_t count = (uint32_t)strtoul(br + 1, NULL, 10);
	if (!t)
		return NULL;
	uint32_t from = cast_bytes(t);
	if (!from) {
		sema_error(s, n->pos, "TYPE_MISMATCH", "cannot cast '%s' to %s: "
			   "only integers, strings and integer arrays are",
			   sema_tname(s, t), tn);
		return NULL;
	}
	if (!count && from % esize == 0)
		count = from / esize;
	if (count * esize != from) {
		sema_error(s, n->pos, "TYPE_MISMATCH", "cannot cast '%s' to %s: "
			   "the sizes differ (%u and %u bytes)", sema_tname(s, t),
			   tn, from, count * esize);
		return NULL;
	}
	struct ctype *e = ctype_new(s->a, CT_INT, NULL);
	*e = *ctype_int(s->a, esize, sign, NULL);
	if (is_bool) {     /* printed true/false (output/cvalue.c) */
		e->is_bool = true;
		e->name = "bool";
	}
	return type_of_ctype(s->a, ctype_array(s->a, e, count), AS_KERNEL);
}

static const struct type *cast(struct sema *s, struct node *n)
{
	const struct type *t = sema_expr(s, n->u.cast.expr);
	const char *tn = n->u.cast.type_name;
	if (strchr(tn, '[') && !strchr(tn, '*'))
		return cast_to_array(s, n, t);
	if (strncmp(tn, "bool", 4) == 0)
		return cast_bool(s, n, t);
	if (strncmp(tn, "int", 3) != 0 && strncmp(tn, "uint", 4) != 0)
		return sema_cast_ctype(s, n, t);
	if (strchr(tn, '*'))
		return sema_cast_ctype(s, n, t);
	if (!t)
		return NULL;
	bool sign = tn[0] == 'i';
	unsigned bits = (unsigned)atoi(tn + (sign ? 3 : 4));
	if (t->kind == TYPE_ARRAY && cast_bytes(t) == bits / 8)
		return type_int(s->a, bits, sign);   /* (uint32)pton(...) */
	if (!is_int(t)) {
		sema_error(s, n->pos, "TYPE_MISMATCH",
			   "cannot cast '%s' to %s", sema_tname(s, t), tn);
		return NULL;
	}
	return type_int(s->a, bits, sign);
}

const struct type *sema_tuple(struct sema *s, struct node *n)
{
	uint32_t k = n->u.list.n;
	const struct type **f = arena_array(s->a, const struct type *, k);
	bool ok = true;
	for (uint32_t i = 0; i < k; i++) {
		f[i] = sema_expr(s, n->u.list.v[i]);
		if (f[i] && !sema_storable(f[i])) {
			sema_error(s, n->u.list.v[i]->pos, "TYPE_MISMATCH",
				   "a tuple cannot hold a value of type '%s'",
				   sema_tname(s, f[i]));
			f[i] = NULL;
		}
		ok = ok && f[i];
	}
	if (!ok)
		return NULL;
	const struct type *t = n->u.tup.names ?
		type_record(s->a, k, f, (const char *const *)n->u.tup.names) :
		type_tuple(s->a, k, f);
	if (!sema_has_big_field(t))   /* one error, at the innermost */
		sema_note_value_size(s, n->pos, "this tuple", t);
	return t;
}

/* ++ and -- on an integer variable or map (an unset map starts at 0 as
 * an int64, as in bpftrace). */
static const struct type *incdec(struct sema *s, struct node *n)
{
	struct node *t = n->u.incdec.target;
	const char *opn = n->u.incdec.op == OP_PREINC ||
		n->u.incdec.op == OP_POSTINC ? "++" : "--";
	const struct type *ty;
	if (t->kind == N_VAR) {
		ty = var_read(s, t);
	} else {
		struct sema_map *m = sema_map_ref(s, t);
		if (m && !m->value)
			sema_map_set(s, m, t, type_s64(), t->pos);
		ty = m ? m->value : NULL;
		t->type = ty;
	}
	if (!ty)
		return NULL;
	if (!is_int(ty)) {
		sema_error(s, n->pos, "TYPE_MISMATCH",
			   "'%s' needs an integer, not '%s'", opn,
			   sema_tname(s, ty));
		return NULL;
	}
	return ty;
}

const struct type *sema_field_bytes(struct sema *s, struct node *n)
{
	return n->type = sema_field(s, n, true);
}

static void block(struct sema *s, struct node *b);

/* NAME() of a builtin NAME with no function of that name: the node
 * becomes the builtin (bpftrace 0.24's call syntax for builtins). */
static int builtin_named(const char *name)
{
	for (int i = 0; i < BI_COUNT_; i++)
		if (!(builtins[i].flags & BUILTIN_INDEXED) &&
		    strcmp(builtins[i].name, name) == 0)
			return i;
	return -1;
}

static bool builtin_called(struct node *n)
{
	int i = builtin_named(n->u.call.name);
	if (i < 0)
		return false;
	n->kind = N_BUILTIN;
	n->u.builtin.id = (enum builtin_id)i;
	n->u.builtin.index = 0;
	return true;
}

/* nsecs(boot), pid(curr_ns), tid(init) (bpftrace 0.24): a builtin and
 * the mode its one argument names, a bare word. Not such a call:
 * false, left to sema_call; else true, n the builtin (or NULL typed,
 * with an error). */
static bool builtin_mode_called(struct sema *s, struct node *n)
{
	const char *names;
	int i = builtin_named(n->u.call.name);
	if (i < 0 || n->u.call.args.n != 1 ||
	    (builtin_mode(i, "", &names) < 0 && !*names))
		return false;
	struct node *a = n->u.call.args.v[0];
	int mode = a->kind == N_IDENT ?
		builtin_mode(i, a->u.str.s, &names) : -1;
	if (mode < 0) {
		sema_error(s, a->pos, "ARG_TYPE", "%s(): the argument is one "
			   "of %s", n->u.call.name, names);
		n->type = NULL;
		return true;
	}
	n->kind = N_BUILTIN;
	n->u.builtin.id = (enum builtin_id)i;
	n->u.builtin.index = (uint32_t)mode;
	n->type = builtin_type(s, n);
	return true;
}

/* pcomm, leader_comm, ppid, leader_tid (bpftrace 0.2x's stdlib: "an
 * alias for task.real_parent.comm" ...), alone, called, or called with
 * a task: n becomes task->LINK->FIELD, curtask's when none is given.
 * False when n is none of them (or an enum constant of that name). */
static bool task_alias(struct sema *s, struct node *n)
{
	static const struct { const char *name, *link, *field; } al[] = {
		{ "pcomm", "real_parent", "comm" },
		{ "leader_comm", "group_leader", "comm" },
		{ "ppid", "real_parent", "pid" },
		{ "leader_tid", "group_leader", "pid" },
	};
	bool call = n->kind == N_CALL;
	const char *name = call ? n->u.call.name : n->u.str.s;
	int64_t v;
	if (call ? n->u.call.args.n > 1 || func_find(name) :
	    ctypes_find_const(s->prog->ctypes, name, &v) == 0)
		return false;
	for (size_t i = 0; i < sizeof(al) / sizeof(*al); i++) {
		if (strcmp(al[i].name, name) != 0)
			continue;
		struct node *task;
		if (call && n->u.call.args.n) {
			task = n->u.call.args.v[0];
		} else {
			task = node_new(s->a, N_BUILTIN, n->pos);
			task->u.builtin.id = BI_CURTASK;
		}
		struct node *mid = node_new(s->a, N_FIELD, n->pos);
		mid->u.field.base = task;
		mid->u.field.name = al[i].link;
		mid->u.field.arrow = true;
		struct node *f = node_new(s->a, N_FIELD, n->pos);
		f->u.field.base = mid;
		f->u.field.name = al[i].field;
		f->u.field.arrow = true;
		*n = *f;
		return true;
	}
	return false;
}

const struct type *sema_expr(struct sema *s, struct node *n)
{
	const struct type *t = NULL;
	if (!n)
		return NULL;
	switch (n->kind) {
	case N_INT:   /* true and false come typed bool from the parser */
		t = n->type && n->type->is_bool ? n->type : type_s64();
		/* 0.26's literals are unsigned: one past int64's range
		 * prints as written (0.17 wraps it negative) */
		if (!t->is_bool && n->u.ival > (uint64_t)INT64_MAX &&
		    (!n->type || !n->type->is_signed) &&
		    s->prog->dialect >= DIALECT_026)
			t = type_u64();
		break;
	case N_STR:
		t = type_str(s->a, n->u.str.len + 1);
		sema_note_str(s, n);
		break;
	case N_BUILTIN:
		t = n->u.builtin.id == BI_ARGS ? sema_args_value(s, n) :
			builtin_type(s, n);
		break;
	case N_VAR: t = var_read(s, n); break;
	case N_POSITIONAL: t = sema_positional(s, n, false); break;
	case N_MAP: t = sema_map_read(s, n); break;
	case N_BINOP: t = binop(s, n); break;
	case N_UNOP: t = unop(s, n); break;
	case N_TERNARY: t = ternary(s, n); break;
	case N_BLOCK_EXPR:   /* its statements, then its value */
		block(s, n->u.blockx.body);
		t = n->u.blockx.value ? sema_expr(s, n->u.blockx.value) :
			type_none();
		break;
	case N_CALL:
		/* comm(), pid(): a builtin called as a function (0.24) */
		if (!n->u.call.args.n && !func_find(n->u.call.name) &&
		    builtin_called(n)) {
			t = builtin_type(s, n);
			break;
		}
		if (!func_find(n->u.call.name) && builtin_mode_called(s, n)) {
			t = n->type;
			break;
		}
		if (task_alias(s, n)) {
			t = sema_field(s, n, false);
			break;
		}
		t = sema_call(s, n);
		break;
	case N_FIELD: t = sema_field(s, n, false); break;
	case N_TUPLE_INDEX: {
		const struct type *b = sema_expr(s, n->u.tindex.base);
		if (!b)
			break;
		if (b->kind != TYPE_TUPLE) {
			sema_error(s, n->pos, "BAD_FIELD",
				   ".%u needs a tuple, not '%s'",
				   n->u.tindex.index, sema_tname(s, b));
		} else if (n->u.tindex.index >= b->nfields) {
			sema_error(s, n->pos, "BAD_FIELD",
				   "tuple index %u out of range: '%s' has %u "
				   "fields", n->u.tindex.index, sema_tname(s, b),
				   b->nfields);
		} else {
			t = b->fields[n->u.tindex.index];
		}
		break;
	}
	case N_INDEX: t = sema_index(s, n); break;
	case N_TUPLE: t = sema_tuple(s, n); break;
	case N_CAST: t = cast(s, n); break;
	case N_INCDEC: t = incdec(s, n); break;
	case N_IDENT:
		t = task_alias(s, n) ? sema_field(s, n, false) :
			sema_ident(s, n);
		break;
	default:
		sema_error(s, n->pos, "SYNTAX", "not an expression");
		break;
	}
	n->type = t;
	return t;
}

/* ---------------------------------------------------------------- */
/* statements                                                        */

static void stmt(struct sema *s, struct node *n);

/* Whether n ends its probe's run: return, or exit() (which returns). */
static bool ends_run(const struct node *n)
{
	if (n->kind == N_RETURN)
		return true;
	const struct node *e = n->kind == N_EXPR_STMT ? n->u.expr_stmt.expr :
		NULL;
	return e && e->kind == N_CALL && strcmp(e->u.call.name, "exit") == 0;
}

static void block(struct sema *s, struct node *b)
{
	if (!b)
		return;
	for (uint32_t i = 0; i < b->u.list.n; i++) {
		stmt(s, b->u.list.v[i]);
		/* 0.26 warns of what follows (its test other "exit with
		 * unreachable code"); it never runs, in 0.17 either */
		if (i + 1 < b->u.list.n && ends_run(b->u.list.v[i]) &&
		    s->prog->dialect >= DIALECT_026 && s->final)
			sema_warning(s, b->u.list.v[i + 1]->pos, "UNREACHABLE",
				     "Unreachable statement");
	}
}

static void cond(struct sema *s, struct node *c, const char *what)
{
	const struct type *t = sema_expr(s, c);
	if (t && !is_int(t))
		sema_error(s, c->pos, "TYPE_MISMATCH",
			   "the condition of %s must be an integer, not '%s'",
			   what, sema_tname(s, t));
}

/* `let $x;` (bpftrace 0.22): $x = the zero of the type the variable's
 * other assignments give it (0, "", false), known once the passes have
 * seen them; an int64 0 when nothing gives it one. Other types start
 * zeroed already (their stack home is), so nothing is done for them. */
static void let_zero(struct sema *s, struct node *n)
{
	struct node *tg = n->u.assign.target, *v = n->u.assign.value;
	struct sema_var *var = var_find(s, tg->u.var.name);
	const struct type *t = var ? var->type : NULL;
	if (!s->final) {
		var_assign(s, tg, t && (is_int(t) || is_str(t)) ? t : NULL,
			   n->pos);
		return;
	}
	if (!t)
		t = type_s64();
	if (is_int(t)) {
		v->kind = N_INT;
		v->u.ival = 0;
		v->type = t;
	} else if (is_str(t)) {
		v->kind = N_STR;
		v->u.str.s = "";
		v->u.str.len = 0;
		v->type = type_str(s->a, 1);
	} else {
		var_assign(s, tg, NULL, n->pos);
		n->kind = N_BLOCK;
		n->u.list = (struct node_list){ 0 };
		return;
	}
	var_assign(s, tg, t, n->pos);
}

static void assign(struct sema *s, struct node *n)
{
	struct node *tg = n->u.assign.target, *v = n->u.assign.value;
	enum op op = n->u.assign.op;

	if (v->kind == N_CALL && strcmp(v->u.call.name, "__let_zero") == 0) {
		let_zero(s, n);
		return;
	}

	if (op == OP_NONE && tg->kind == N_MAP && v->kind == N_BLOCK_EXPR &&
	    sema_is_agg_call(v->u.blockx.value)) {
		/* @m = { stmts; avg($x) } (bpftrace 0.24's block
		 * expressions): the statements, then @m = avg($x), a block
		 * from now on */
		struct node *as = node_new(s->a, N_ASSIGN, n->pos);
		as->u.assign.op = OP_NONE;
		as->u.assign.target = tg;
		as->u.assign.value = v->u.blockx.value;
		struct node_list l = v->u.blockx.body ?
			v->u.blockx.body->u.list : (struct node_list){ 0 };
		node_list_push(s->a, &l, as);
		n->kind = N_BLOCK;
		n->u.list = l;
		block(s, n);
		return;
	}
	if (op == OP_NONE && tg->kind == N_MAP && sema_is_agg_call(v)) {
		const struct type *t = sema_agg(s, v);
		sema_map_assign(s, tg, t, v->pos);
		return;
	}
	const struct type *vt = sema_expr(s, v);
	if (vt && !sema_storable(vt)) {
		sema_error(s, v->pos, "TYPE_MISMATCH",
			   "a value of type '%s' cannot be assigned",
			   sema_tname(s, vt));
		vt = NULL;
	}
	if (op != OP_NONE) {
		/* x op= v: x must already be an integer (a map may be unset) */
		const struct type *cur;
		if (tg->kind == N_VAR) {
			cur = var_read(s, tg);
		} else {
			struct sema_map *m = sema_map_ref(s, tg);
			cur = m ? m->value : NULL;
			if (m && !cur)
				cur = type_s64();
		}
		if (cur && !is_int(cur)) {
			sema_error(s, n->pos, "TYPE_MISMATCH",
				   "'%s=' needs an integer target, not '%s'",
				   op_name(op), sema_tname(s, cur));
			return;
		}
		if (vt && !is_int(vt)) {
			sema_error(s, v->pos, "TYPE_MISMATCH",
				   "'%s=' needs an integer value, not '%s'",
				   op_name(op), sema_tname(s, vt));
			return;
		}
		if (!cur || !vt)
			return;
		sign_warnings(s, n->pos, op, NULL, cur, v, vt);
		/* the target keeps its type */
		if (tg->kind == N_VAR)
			var_assign(s, tg, cur, n->pos);
		else
			sema_map_set(s, sema_map_find(s, tg->u.map.name), tg, cur,
				     n->pos);
		return;
	}
	if (tg->kind == N_VAR)
		var_assign(s, tg, vt, n->pos);
	else
		sema_map_assign(s, tg, vt, n->pos);
}

/* The type of for ($kv : @m)'s $kv: (key, value), the key a tuple when
 * the map has several (language.md "For"); count() and sum() values
 * read as integers, summed over the CPUs, as @m[k] reads them. NULL
 * while the map is not typed yet. */
static const struct type *for_map_type(struct sema *s, struct node *mn,
				       const struct sema_map *m)
{
	if (!m->value || !m->keys_known)
		return NULL;
	if (!m->nkeys) {
		sema_error(s, mn->pos, "BAD_FOR", "%s has no keys: a for loop "
			   "goes over a map's keys (@m[k] = v)", m->name);
		return NULL;
	}
	const struct type *v = m->value;
	switch (v->kind) {
	case TYPE_COUNT:
	case TYPE_SUM:
		v = type_int(s->a, 64, v->kind == TYPE_SUM && v->is_signed);
		break;
	default:
		if (type_is_agg(v)) {
			sema_error(s, mn->pos, "BAD_FOR", "%s holds %s() values, "
				   "which a for loop cannot read (count() and "
				   "sum() it can)", m->name,
				   type_kind_name(v->kind));
			return NULL;
		}
	}
	const struct type *f[2] = {
		m->nkeys == 1 ? m->key->fields[0] : m->key, v
	};
	return type_tuple(s->a, 2, f);
}

/* for ($kv : @m) { body }: $kv is the loop's own (bpftrace 0.23 fixed
 * "for-loop variable scope causing type merging across loops"): a
 * hidden variable named after the loop's node takes the name for the
 * body, and the name's outer meaning (unset if none) comes back after. */
static void for_map(struct sema *s, struct node *n)
{
	struct node *mn = n->u.loop.cond, *var = n->u.loop.step;
	struct sema_map *m = sema_map_whole(s, mn);
	const struct type *kv = m ? for_map_type(s, mn, m) : NULL;
	struct sema_block *b = &s->blocks[s->block];
	const char *name = var->u.var.name;
	int64_t outer = strmap_get(&b->var_index, name);
	if (outer < 0) {
		struct sema_var nv = { .name = name };
		if (vec_push(&b->vars, nv) ||
		    strmap_put(&b->var_index, name,
			       (uint32_t)(b->vars.n - 1)) < 0)
			return;
		outer = (int64_t)(b->vars.n - 1);
	}
	struct node hidden = *var;
	hidden.u.var.name = arena_printf(s->a, "%s#for%p", name, (void *)n);
	var_assign(s, &hidden, kv, var->pos);
	var->u.var.slot = hidden.u.var.slot;
	var->type = hidden.type;
	if (strmap_put(&b->var_index, name, (uint32_t)hidden.u.var.slot) < 0)
		return;
	s->loops++;
	block(s, n->u.loop.body);
	s->loops--;
	strmap_put(&b->var_index, name, (uint32_t)outer);
}

/* A statement that is `args` alone, in a block whose every probe has
 * arguments to make it of. */
static bool discarded_args(const struct sema *s, const struct node *e)
{
	if (e->kind != N_BUILTIN || e->u.builtin.id != BI_ARGS)
		return false;
	bool any = false;
	for (uint32_t i = 0; i < s->prog->nprobes; i++) {
		const struct probe *p = &s->prog->probes[i];
		if (p->block != s->block)
			continue;
		if (!p->args_type || p->args_type->kind != TYPE_RECORD)
			return false;
		any = true;
	}
	return any;
}

static void stmt(struct sema *s, struct node *n)
{
	switch (n->kind) {
	case N_EXPR_STMT: {
		struct node *e = n->u.expr_stmt.expr;
		if (sema_is_agg_call(e)) {
			sema_error(s, e->pos, "AGG_CONTEXT",
				   "%s() must be assigned to a map: @x = %s(...)",
				   e->u.call.name, e->u.call.name);
			return;
		}
		if (discarded_args(s, e)) {
			/* `args;` reads nothing anyone sees: the probes of
			 * a block may each have their own (bpftrace 0.26's
			 * test: rawtracepoint and fentry probes, `{ args }`) */
			e->kind = N_INT;
			e->u.ival = 0;
		}
		sema_expr(s, e);
		break;
	}
	case N_ASSIGN:
		assign(s, n);
		break;
	case N_IF:
		cond(s, n->u.if_.cond, "if");
		block(s, n->u.if_.then);
		if (n->u.if_.els && n->u.if_.els->kind == N_IF)
			stmt(s, n->u.if_.els);
		else
			block(s, n->u.if_.els);
		break;
	case N_UNROLL: {
		/* unroll ($N): the parameter's number, checked as the
		 * parser checks a literal */
		struct node *c = n->u.loop.cond;
		int64_t count;
		if (c && !sema_const_int(s, c, &count)) {
			sema_error(s, c->pos, "BAD_UNROLL", "unroll needs an "
				   "integer literal (1 to 100)");
			return;
		}
		if (c && unroll_count_error(count)) {
			sema_error(s, c->pos, "BAD_UNROLL", "%s",
				   unroll_count_error(count));
			return;
		}
		if (c)
			n->u.loop.count = (uint64_t)count;
		/* the outermost of a nest is measured whole, its copies
		 * summed over the block */
		if (s->unrolls == 0 && s->unrolled <= SEMA_UNROLLED_MAX) {
			s->unrolled += ast_unrolled_size(n, SEMA_UNROLLED_MAX);
			if (s->unrolled > SEMA_UNROLLED_MAX)
				sema_error(s, n->pos, "BAD_UNROLL", "unrolled, "
					   "the loops of this probe come to more "
					   "than %u statements and expressions "
					   "(a BPF program holds at most a "
					   "million instructions)",
					   SEMA_UNROLLED_MAX);
		}
		s->unrolls++;
		block(s, n->u.loop.body);
		s->unrolls--;
		break;
	}
	case N_WHILE:
		cond(s, n->u.loop.cond, "while");
		s->loops++;
		block(s, n->u.loop.body);
		s->loops--;
		if (n->u.loop.step)
			stmt(s, n->u.loop.step);
		break;
	case N_FOR_MAP:
		for_map(s, n);
		break;
	case N_BLOCK:   /* a for loop's setup and loop (parser.c) */
		block(s, n);
		break;
	case N_BREAK:
	case N_CONTINUE:
		if (!s->loops)
			sema_error(s, n->pos, "BAD_CONTROL",
				   "'%s' outside a loop",
				   n->kind == N_BREAK ? "break" : "continue");
		break;
	case N_RETURN:
		break;
	default:
		sema_error(s, n->pos, "SYNTAX", "not a statement");
	}
}

static void check_probe(struct sema *s, struct node *p, uint32_t b)
{
	s->probe = p;
	s->block = b;
	s->loops = 0;
	s->unrolls = 0;
	s->unrolled = 0;
	struct sema_block *sb = &s->blocks[b];
	for (size_t i = 0; i < sb->vars.n; i++)
		sb->vars.v[i].assigned = false;
	if (p->u.probe.predicate)
		cond(s, p->u.probe.predicate, "a predicate");
	block(s, p->u.probe.body);
	if (s->final) {
		p->u.probe.nvars = (uint32_t)sb->vars.n;
		p->u.probe.var_types = arena_array(s->a, const struct type *,
						   sb->vars.n ? sb->vars.n : 1);
		for (size_t i = 0; i < sb->vars.n; i++)
			p->u.probe.var_types[i] = sb->vars.v[i].type;
	}
}

/* Check every block until no type changes (or MAX_PASSES). */
static void infer(struct sema *s, struct node *root)
{
	for (int pass = 0; pass < MAX_PASSES; pass++) {
		s->changed = false;
		for (uint32_t b = 0; b < root->u.list.n; b++)
			check_probe(s, root->u.list.v[b], b);
		if (!s->changed)
			break;
	}
}

int sema_check(struct node *root, struct program *prog,
	       const struct sema_opts *opts, struct diags *d)
{
	struct sema s = { .prog = prog, .opts = opts, .d = d,
			  .a = prog->arena };
	if (!root || root->kind != N_PROGRAM)
		return -EINVAL;
	if (!prog->strlen)
		prog->strlen = SONDE_STRLEN_DEFAULT;
	uint32_t nb = root->u.list.n;
	s.blocks = calloc(nb ? nb : 1, sizeof(*s.blocks));
	if (!s.blocks)
		return -ENOMEM;
	unsigned before = d->nerrors;

	infer(&s, root);
	/* What is still untyped is assigned only from itself (`@n = @n +
	 * 1`), where bpftrace reads an unset map as integer 0: such maps
	 * are uint64 (as bpftrace 0.17 prints `@n = @n - 5`: 2^64 - 5),
	 * and the types that follow from them are inferred. */
	bool defaulted = false;
	for (size_t i = 0; i < s.maps.n; i++) {
		struct sema_map *m = &s.maps.v[i];
		if (!m->value && m->assigned_untyped) {
			m->value = type_u64();
			defaulted = true;
		}
	}
	if (defaulted)
		infer(&s, root);
	sema_add_maps(&s);
	s.final = true;
	for (uint32_t b = 0; b < nb; b++)
		check_probe(&s, root->u.list.v[b], b);
	sema_check_limits(&s);

	for (uint32_t b = 0; b < nb; b++) {
		vec_free(&s.blocks[b].vars);
		strmap_free(&s.blocks[b].var_index);
	}
	free(s.blocks);
	vec_free(&s.maps);
	strmap_free(&s.map_index);
	return d->nerrors > before ? -EINVAL : 0;
}
