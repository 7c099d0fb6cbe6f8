/* macro.c - bpftrace 0.24's hygienic macros (language.md, "Macros").
 *
 * A macro is `macro NAME(PARAMS) { ... }` at top level, its body a block
 * expression. A call NAME(ARGS) (or a bare NAME when it takes none)
 * becomes a copy of the body in which:
 *  - a `$a` parameter is the caller's variable (the argument must be
 *    one, and the body may change it);
 *  - an `@b` parameter is the caller's map (the argument must be one);
 *  - an `x` parameter is the argument expression, copied at each use (so
 *    its side effects happen once per use, as bpftrace's do);
 *  - every other variable is the expansion's own ("m.ID.name", a name no
 *    script can write), which is what makes the macro hygienic;
 *  - a map that is no parameter is an error: a macro reaches only the
 *    maps it is given.
 * Calls inside a body expand in turn, so macros may call macros defined
 * before or after them; a chain deeper than MACRO_DEPTH is taken for
 * recursion and refused. A call whose argument count matches no macro
 * of that name stays a function call (macro cpu(x) beside the builtin
 * cpu). The expansion runs before sema, which sees only block
 * expressions. */
#include "macro.h"

#include <errno.h>
#include <string.h>

#include "../funcs/func.h"

#define MACRO_DEPTH 64
#define MACRO_EXPANSIONS 10000   /* in all: r(x) { r(x) + r(x) } doubles */

struct expander {
	struct arena *a;
	struct diags *d;
	struct node **macros;
	uint32_t nmacros;
	unsigned next_id;    /* expansions so far: hygiene's names */
	unsigned depth;
	int err;
};

/* One expansion: the macro and the caller's (already expanded) args. */
struct binding {
	const struct node *macro;
	struct node **args;
	unsigned id;
};

static struct node *xform(struct expander *x, const struct binding *b,
			  const struct node *n);

/* A function or builtin of that name: a call of it that fits no macro of
 * the name is that, not a bad macro call. */
static bool func_or_builtin_named(const char *name)
{
	if (func_find(name))
		return true;
	for (int i = 0; i < BI_COUNT_; i++)
		if (!strcmp(builtins[i].name, name))
			return true;
	return false;
}

static const struct node *find_macro(const struct expander *x,
				     const char *name, uint32_t nargs)
{
	for (uint32_t i = 0; i < x->nmacros; i++) {
		const struct node *m = x->macros[i];
		if (!strcmp(m->u.macro.name, name) &&
		    m->u.macro.params.n == nargs)
			return m;
	}
	return NULL;
}

static bool has_macro(const struct expander *x, const char *name)
{
	for (uint32_t i = 0; i < x->nmacros; i++)
		if (!strcmp(x->macros[i]->u.macro.name, name))
			return true;
	return false;
}

/* The parameter of b's macro of kind `kind` called `name`, or -1. */
static int param_index(const struct binding *b, enum node_kind kind,
		       const char *name)
{
	const struct node_list *ps = &b->macro->u.macro.params;
	for (uint32_t i = 0; i < ps->n; i++) {
		const struct node *p = ps->v[i];
		if (p->kind != kind)
			continue;
		const char *pn = kind == N_VAR ? p->u.var.name :
			kind == N_MAP ? p->u.map.name : p->u.str.s;
		if (!strcmp(pn, name))
			return (int)i;
	}
	return -1;
}

static void list_xform(struct expander *x, const struct binding *b,
		       struct node_list *l)
{
	struct node_list out = { 0 };
	for (uint32_t i = 0; i < l->n; i++) {
		struct node *c = xform(x, b, l->v[i]);
		if (c)
			node_list_push(x->a, &out, c);
	}
	*l = out;
}

/* NAME(ARGS) of macro m: a copy of its body, bound to the args. */
static struct node *expand(struct expander *x, const struct node *m,
			   const struct node *call, struct node_list *args)
{
	const struct node_list *ps = &m->u.macro.params;
	for (uint32_t i = 0; i < ps->n; i++) {
		const struct node *p = ps->v[i], *a = args->v[i];
		if (p->kind == N_VAR && a->kind != N_VAR) {
			diag_error(x->d, a->pos, "BAD_MACRO", "macro %s expects "
				   "a scratch variable for $%s, not an "
				   "expression", m->u.macro.name,
				   p->u.var.name);
			x->err = -EINVAL;
			return NULL;
		}
		if (p->kind == N_MAP && (a->kind != N_MAP || a->u.map.keys.n)) {
			diag_error(x->d, a->pos, "BAD_MACRO", "macro %s expects "
				   "a map for %s (without keys)",
				   m->u.macro.name, p->u.map.name);
			x->err = -EINVAL;
			return NULL;
		}
	}
	if (x->next_id >= MACRO_EXPANSIONS) {
		if (x->next_id++ == MACRO_EXPANSIONS)
			diag_error(x->d, call->pos, "BAD_MACRO", "macro %s: "
				   "more than %u macro expansions in the "
				   "script", m->u.macro.name,
				   MACRO_EXPANSIONS);
		x->err = -EINVAL;
		return NULL;
	}
	if (x->depth >= MACRO_DEPTH) {
		diag_error(x->d, call->pos, "BAD_MACRO", "macro %s: expansions "
			   "nest deeper than %u (a macro that calls itself?)",
			   m->u.macro.name, MACRO_DEPTH);
		x->err = -EINVAL;
		return NULL;
	}
	struct binding nb = { .macro = m, .args = args->v,
			      .id = x->next_id++ };
	x->depth++;
	struct node *body = xform(x, &nb, m->u.macro.body);
	x->depth--;
	if (body)
		body->pos = call->pos;   /* errors in the value point here */
	return body;
}

static struct node *xform(struct expander *x, const struct binding *b,
			  const struct node *n)
{
	if (!n)
		return NULL;
	struct node *c = node_new(x->a, n->kind, n->pos);
	*c = *n;
	switch (n->kind) {
	case N_VAR:
		if (b) {
			int i = param_index(b, N_VAR, n->u.var.name);
			c->u.var.name = i >= 0 ? b->args[i]->u.var.name :
				arena_printf(x->a, "m.%u.%s", b->id,
					     n->u.var.name);
		}
		return c;
	case N_IDENT:
		if (b) {
			int i = param_index(b, N_IDENT, n->u.str.s);
			if (i >= 0)
				return xform(x, NULL, b->args[i]);
		}
		if (find_macro(x, n->u.str.s, 0)) {
			struct node_list none = { 0 };
			return expand(x, find_macro(x, n->u.str.s, 0), n, &none);
		}
		return c;
	case N_MAP:
		if (b) {
			int i = param_index(b, N_MAP, n->u.map.name);
			if (i < 0) {
				diag_error(x->d, n->pos, "BAD_MACRO", "macro %s "
					   "uses %s, which is not passed to it "
					   "(a macro reaches only the maps given "
					   "as its arguments: macro %s(%s))",
					   b->macro->u.macro.name,
					   n->u.map.name,
					   b->macro->u.macro.name,
					   n->u.map.name);
				x->err = -EINVAL;
			} else {
				c->u.map.name = b->args[i]->u.map.name;
			}
		}
		list_xform(x, b, &c->u.map.keys);
		return c;
	case N_BINOP:
		c->u.binop.lhs = xform(x, b, n->u.binop.lhs);
		c->u.binop.rhs = xform(x, b, n->u.binop.rhs);
		return c;
	case N_UNOP:
		c->u.unop.operand = xform(x, b, n->u.unop.operand);
		return c;
	case N_TERNARY:
		c->u.ternary.cond = xform(x, b, n->u.ternary.cond);
		c->u.ternary.then = xform(x, b, n->u.ternary.then);
		c->u.ternary.els = xform(x, b, n->u.ternary.els);
		return c;
	case N_CALL: {
		list_xform(x, b, &c->u.call.args);
		const struct node *m = find_macro(x, n->u.call.name,
						  c->u.call.args.n);
		if (m)
			return expand(x, m, n, &c->u.call.args);
		if (has_macro(x, n->u.call.name) &&
		    !func_or_builtin_named(n->u.call.name)) {
			diag_error(x->d, n->pos, "BAD_MACRO", "macro %s takes "
				   "other arguments than the %u given",
				   n->u.call.name, c->u.call.args.n);
			x->err = -EINVAL;
		}
		return c;
	}
	case N_FIELD:
		c->u.field.base = xform(x, b, n->u.field.base);
		return c;
	case N_TUPLE_INDEX:
		c->u.tindex.base = xform(x, b, n->u.tindex.base);
		return c;
	case N_INDEX:
		c->u.index.base = xform(x, b, n->u.index.base);
		c->u.index.index = xform(x, b, n->u.index.index);
		return c;
	case N_TUPLE:
	case N_BLOCK:
		list_xform(x, b, &c->u.list);
		return c;
	case N_CAST:
		c->u.cast.expr = xform(x, b, n->u.cast.expr);
		return c;
	case N_INCDEC:
		c->u.incdec.target = xform(x, b, n->u.incdec.target);
		return c;
	case N_EXPR_STMT:
		c->u.expr_stmt.expr = xform(x, b, n->u.expr_stmt.expr);
		return c->u.expr_stmt.expr ? c : NULL;
	case N_ASSIGN:
		c->u.assign.target = xform(x, b, n->u.assign.target);
		c->u.assign.value = xform(x, b, n->u.assign.value);
		return c;
	case N_IF:
		c->u.if_.cond = xform(x, b, n->u.if_.cond);
		c->u.if_.then = xform(x, b, n->u.if_.then);
		c->u.if_.els = xform(x, b, n->u.if_.els);
		return c;
	case N_UNROLL:
	case N_WHILE:
	case N_FOR_MAP:
		c->u.loop.cond = xform(x, b, n->u.loop.cond);
		c->u.loop.body = xform(x, b, n->u.loop.body);
		c->u.loop.step = xform(x, b, n->u.loop.step);
		return c;
	case N_BLOCK_EXPR:
		c->u.blockx.body = xform(x, b, n->u.blockx.body);
		c->u.blockx.value = xform(x, b, n->u.blockx.value);
		return c;
	case N_PROBE:
		c->u.probe.predicate = xform(x, b, n->u.probe.predicate);
		c->u.probe.body = xform(x, b, n->u.probe.body);
		return c;
	default:   /* leaves: numbers, strings, builtins, $N, return ... */
		return c;
	}
}

int macro_expand(struct arena *a, struct node *program, struct diags *d)
{
	struct node_list *l = &program->u.list;
	struct expander x = { .a = a, .d = d };
	uint32_t nm = 0;
	for (uint32_t i = 0; i < l->n; i++)
		nm += l->v[i]->kind == N_MACRO;
	if (!nm)
		return 0;
	x.macros = arena_array(a, struct node *, nm);
	uint32_t w = 0;
	for (uint32_t i = 0; i < l->n; i++) {
		struct node *n = l->v[i];
		if (n->kind != N_MACRO) {
			l->v[w++] = n;
			continue;
		}
		for (uint32_t k = 0; k < x.nmacros; k++)
			if (!strcmp(x.macros[k]->u.macro.name, n->u.macro.name) &&
			    x.macros[k]->u.macro.params.n ==
			    n->u.macro.params.n) {
				diag_error(d, n->pos, "BAD_MACRO", "macro %s is "
					   "defined twice with %u parameters",
					   n->u.macro.name,
					   n->u.macro.params.n);
				x.err = -EINVAL;
			}
		x.macros[x.nmacros++] = n;
	}
	l->n = w;
	for (uint32_t i = 0; i < l->n; i++)
		if (l->v[i]->kind == N_PROBE)
			l->v[i] = xform(&x, NULL, l->v[i]);
	return x.err;
}
