/* d_parser.c - D's statements and expressions into ast.h's nodes, by
 * recursive descent with C's precedence (and D's ^^ between && and ||).
 * Nesting is capped (D_MAX_DEPTH), so a hostile script cannot exhaust
 * the stack; after DIAG_MAX_ERRORS errors the parser stops. */
#include "d_int.h"

#include <stdarg.h>
#include <string.h>

void d_error(struct d_parser *p, struct pos pos, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	diag_vadd(p->d, DIAG_ERROR, pos, "SYNTAX", fmt, ap);
	va_end(ap);
	if (p->d->nerrors >= DIAG_MAX_ERRORS)
		p->bail = true;
}

void d_next(struct d_parser *p)
{
	d_lex_next(&p->lx, &p->tok);
	if (p->tok.kind == DT_ERROR && p->d->nerrors >= DIAG_MAX_ERRORS)
		p->bail = true;
}

bool d_accept(struct d_parser *p, const char *op)
{
	if (!d_tok_is(&p->tok, op))
		return false;
	d_next(p);
	return true;
}

static const char *tok_text(const struct d_tok *t)
{
	switch (t->kind) {
	case DT_EOF: return "end of input";
	case DT_OP: return t->op;
	case DT_IDENT: return t->s;
	case DT_STR: return "string";
	case DT_INT: case DT_CHAR: return "constant";
	case DT_AGG: return "@";
	case DT_MACRO: return "$";
	default: return "?";
	}
}

bool d_expect(struct d_parser *p, const char *op)
{
	if (d_accept(p, op))
		return true;
	if (p->tok.kind != DT_ERROR)
		d_error(p, p->tok.pos, "syntax error near \"%s\": expected '%s'",
			tok_text(&p->tok), op);
	p->bail = true;
	return false;
}

struct node *d_int(struct d_parser *p, struct pos pos, uint64_t v)
{
	struct node *n = node_new(p->a, N_INT, pos);
	n->u.ival = v;
	return n;
}

struct node *d_str(struct d_parser *p, struct pos pos, const char *s)
{
	struct node *n = node_new(p->a, N_STR, pos);
	n->u.str.s = s;
	n->u.str.len = (uint32_t)strlen(s);
	return n;
}

struct node *d_call(struct d_parser *p, struct pos pos, const char *name,
		    struct node *a0, struct node *a1, struct node *a2)
{
	struct node *n = node_new(p->a, N_CALL, pos);
	n->u.call.name = name;
	if (a0)
		node_list_push(p->a, &n->u.call.args, a0);
	if (a1)
		node_list_push(p->a, &n->u.call.args, a1);
	if (a2)
		node_list_push(p->a, &n->u.call.args, a2);
	return n;
}

struct node *d_builtin(struct d_parser *p, struct pos pos,
		       enum builtin_id id, uint32_t index)
{
	struct node *n = node_new(p->a, N_BUILTIN, pos);
	n->u.builtin.id = id;
	n->u.builtin.index = index;
	return n;
}

struct node *d_binop(struct d_parser *p, struct pos pos, enum op op,
		     struct node *l, struct node *r)
{
	struct node *n = node_new(p->a, N_BINOP, pos);
	n->u.binop.op = op;
	n->u.binop.lhs = l;
	n->u.binop.rhs = r;
	return n;
}

struct node *d_unop(struct d_parser *p, struct pos pos, enum op op,
		    struct node *x)
{
	struct node *n = node_new(p->a, N_UNOP, pos);
	n->u.unop.op = op;
	n->u.unop.operand = x;
	return n;
}

struct node *d_cast(struct d_parser *p, struct pos pos, const char *type_name,
		    struct node *x)
{
	struct node *c = node_new(p->a, N_CAST, pos);
	c->u.cast.type_name = type_name;
	c->u.cast.expr = x;
	return c;
}

static bool enter(struct d_parser *p)
{
	if (p->bail)
		return false;
	if (++p->depth > D_MAX_DEPTH) {
		d_error(p, p->tok.pos, "expression or statement nested more "
			"than %d deep", D_MAX_DEPTH);
		p->bail = true;
		return false;
	}
	return true;
}

static struct node *leave(struct d_parser *p, struct node *n)
{
	p->depth--;
	return n;
}

static struct node *parse_ternary(struct d_parser *p);
static struct node *parse_unary(struct d_parser *p);

/* Arguments up to ')' (the '(' consumed). */
static bool parse_args(struct d_parser *p, struct node_list *out,
		       const char *close)
{
	p->parens++;
	if (!d_accept(p, close)) {
		do {
			struct node *e = parse_ternary(p);
			if (!e)
				return false;
			node_list_push(p->a, out, e);
		} while (d_accept(p, ","));
		if (!d_expect(p, close))
			return false;
	}
	p->parens--;
	return true;
}

static bool is_assignable(const struct node *n)
{
	return n && (n->kind == N_MAP || n->kind == N_VAR);
}

/* self->name, this->name */
static struct node *scoped_var(struct d_parser *p, bool self, struct pos pos)
{
	if (p->tok.kind != DT_IDENT) {
		d_error(p, p->tok.pos, "syntax error near \"%s\": a variable "
			"name must follow %s->", tok_text(&p->tok),
			self ? "self" : "this");
		p->bail = true;
		return NULL;
	}
	const char *name = p->tok.s;
	pos.len = p->tok.pos.col + p->tok.pos.len - pos.col;
	d_next(p);
	if (!self) {
		struct node *v = node_new(p->a, N_VAR, pos);
		v->u.var.name = arena_printf(p->a, "this_%s", name);
		return v;
	}
	/* a thread-local: one map per name, keyed by the thread */
	struct node *m = node_new(p->a, N_MAP, pos);
	m->u.map.name = arena_printf(p->a, "@.self.%s", name);
	node_list_push(p->a, &m->u.map.keys, d_builtin(p, pos, BI_TID, 0));
	return m;
}

static const char *const int_types[][2] = {
	{ "char", "int8" }, { "short", "int16" }, { "int", "int32" },
	{ "long", "int64" }, { "int8_t", "int8" }, { "int16_t", "int16" },
	{ "int32_t", "int32" }, { "int64_t", "int64" }, { "uint8_t", "uint8" },
	{ "uint16_t", "uint16" }, { "uint32_t", "uint32" },
	{ "uint64_t", "uint64" }, { "uchar_t", "uint8" },
	{ "ushort_t", "uint16" }, { "uint_t", "uint32" },
	{ "ulong_t", "uint64" }, { "size_t", "uint64" },
	{ "ssize_t", "int64" }, { "uintptr_t", "uint64" },
	{ "intptr_t", "int64" }, { "pid_t", "int32" }, { "uid_t", "uint32" },
	{ "gid_t", "uint32" }, { "id_t", "int32" }, { "off_t", "int64" },
	{ NULL, NULL },
};

/* After '(' when a type name follows: "(TYPE)expr". NULL if the
 * parenthesis holds no type name. A struct, union or enum, or a typedef
 * the script declared, is also named as C spells it in *ctype ("struct
 * foo", "foo_t"; NULL for D's integer types), with the '*'s in *stars. */
static const char *cast_type_c(struct d_parser *p, bool *is_string,
			       bool *is_ptr, const char **ctype,
			       unsigned *stars)
{
	*ctype = NULL;
	*stars = 0;
	if (p->tok.kind != DT_IDENT)
		return NULL;
	const char *w = p->tok.s;
	bool uns = false, known = false;
	const char *name = NULL;
	*is_string = false;
	*is_ptr = false;
	if (strcmp(w, "string") == 0) {
		*is_string = known = true;
		d_next(p);
	} else if (strcmp(w, "struct") == 0 || strcmp(w, "union") == 0 ||
		   strcmp(w, "enum") == 0) {
		d_next(p);
		if (p->tok.kind == DT_IDENT) {
			*ctype = arena_printf(p->a, "%s %s", w, p->tok.s);
			d_next(p);
		}
		known = true;
		name = w[0] == 'e' ? "int32" : "uint64";
	} else if (strmap_get(&p->typedefs, w) >= 0) {
		*ctype = w;
		d_next(p);
		known = true;
		name = "uint64";
	} else {
		for (;;) {
			if (p->tok.kind != DT_IDENT)
				break;
			const char *s = p->tok.s;
			if (strcmp(s, "unsigned") == 0 || strcmp(s, "signed") == 0) {
				uns = s[0] == 'u';
				known = true;
				d_next(p);
				continue;
			}
			if (strcmp(s, "const") == 0 || strcmp(s, "volatile") == 0) {
				d_next(p);
				continue;
			}
			int i = 0;
			while (int_types[i][0] && strcmp(int_types[i][0], s))
				i++;
			if (!int_types[i][0])
				break;
			/* "long long", "long int": the widest wins */
			if (!name || strcmp(int_types[i][1], "int32") != 0)
				name = int_types[i][1];
			known = true;
			d_next(p);
		}
		if (known && !name)
			name = "int32";
		if (uns && name && name[0] == 'i')
			name = arena_printf(p->a, "u%s", name);
	}
	if (!known)
		return NULL;
	while (d_accept(p, "*")) {
		*is_ptr = true;
		++*stars;
	}
	return name ? name : "uint64";
}

const char *d_cast_type(struct d_parser *p, bool *is_string, bool *is_ptr)
{
	const char *ctype;
	unsigned stars;
	return cast_type_c(p, is_string, is_ptr, &ctype, &stars);
}

/* (TYPE *)x: a pointer cast as C types it ("struct foo *", "int32 *"),
 * so that members and *x read through it. copyin(addr, size) under one
 * is the user address itself: what it points to is read from the
 * traced process when a member is, not copied when copyin runs (the
 * same bytes unless the program changes them in between). A cast of
 * anything else to a pointer to an integer is read over, as before
 * (the value stays an integer). */
static struct node *pointer_cast(struct d_parser *p, struct pos pos,
				 const char *name, const char *ctype,
				 unsigned stars, struct node *x)
{
	bool copyin = x->kind == N_CALL &&
		strcmp(x->u.call.name, "__dtrace_copyin") == 0;
	if (!ctype && !copyin)
		return x;
	if (copyin)
		x = d_call(p, pos, "uptr", x->u.call.args.v[0], NULL, NULL);
	struct node *c = node_new(p->a, N_CAST, pos);
	c->u.cast.type_name = arena_printf(p->a, "%s %.*s", ctype ? ctype :
					   name, (int)(stars < 8 ? stars : 8),
					   "********");
	c->u.cast.expr = x;
	return c;
}

static struct node *typed_constant(struct d_parser *p, const struct d_tok *t)
{
	struct node *n = d_int(p, t->pos, t->ival);
	uint8_t ty = t->kind == DT_INT ? t->itype : 4;
	if (ty == 4 || (ty == 8 && t->ival > 0x7fffffff))
		return n;
	struct node *c = node_new(p->a, N_CAST, t->pos);
	c->u.cast.type_name = ty == (4 | D_INT_UNSIGNED) ? "uint32" :
		ty == 8 ? "int64" : "uint64";
	c->u.cast.expr = n;
	return c;
}

static struct node *parse_primary(struct d_parser *p)
{
	struct d_tok t = p->tok;
	switch (t.kind) {
	case DT_INT:
	case DT_CHAR:
		d_next(p);
		return typed_constant(p, &t);
	case DT_STR: {
		d_next(p);
		struct node *n = node_new(p->a, N_STR, t.pos);
		n->u.str.s = t.s;
		n->u.str.len = t.n;
		/* adjacent literals join, as in C */
		while (p->tok.kind == DT_STR) {
			n->u.str.s = arena_printf(p->a, "%s%s", n->u.str.s,
						  p->tok.s);
			n->u.str.len += p->tok.n;
			d_next(p);
		}
		return n;
	}
	case DT_MACRO:
		d_next(p);
		return d_macro(p, &t);
	case DT_AGG: {
		d_next(p);
		struct node *m = node_new(p->a, N_MAP, t.pos);
		m->u.map.name = arena_printf(p->a, "@%s", t.s);
		if (d_accept(p, "[") &&
		    !parse_args(p, &m->u.map.keys, "]"))
			return NULL;
		return m;
	}
	case DT_IDENT:
		d_next(p);
		if ((strcmp(t.s, "self") == 0 || strcmp(t.s, "this") == 0) &&
		    d_accept(p, "->"))
			return scoped_var(p, t.s[0] == 's', t.pos);
		if ((strcmp(t.s, "curpsinfo") == 0 ||
		     strcmp(t.s, "curlwpsinfo") == 0) && d_accept(p, "->")) {
			if (p->tok.kind != DT_IDENT) {
				d_error(p, p->tok.pos, "syntax error near \"%s\": "
					"a member name must follow %s->",
					tok_text(&p->tok), t.s);
				p->bail = true;
				return NULL;
			}
			const char *m = p->tok.s;
			d_next(p);
			return d_psinfo(p, t.s, m, t.pos);
		}
		if (d_accept(p, "(")) {
			struct node_list args = { 0 };
			if (!parse_args(p, &args, ")"))
				return NULL;
			return d_map_call(p, t.s, &args, t.pos);
		}
		if (d_tok_is(&p->tok, "[")) {
			d_next(p);
			struct node_list keys = { 0 };
			if (!parse_args(p, &keys, "]"))
				return NULL;
			if (strcmp(t.s, "args") == 0) {
				if (keys.n != 1 || keys.v[0]->kind != N_INT ||
				    keys.v[0]->u.ival > 9) {
					d_error(p, t.pos, "args[] takes a constant "
						"index from 0 to 9");
					return NULL;
				}
				if (p->sdt_tracepoint) {
					/* proc, sched, io: the translators' */
					const char *m = NULL;
					if (d_accept(p, "->")) {
						if (p->tok.kind != DT_IDENT) {
							d_error(p, p->tok.pos,
								"a member name "
								"must follow ->");
							return NULL;
						}
						m = p->tok.s;
						d_next(p);
					}
					return d_translate_arg(p,
						(uint32_t)keys.v[0]->u.ival, m,
						t.pos);
				}
				return d_builtin(p, t.pos, BI_ARG,
						 (uint32_t)keys.v[0]->u.ival);
			}
			struct node *m = node_new(p->a, N_MAP, t.pos);
			m->u.map.name = arena_printf(p->a, "@.%s", t.s);
			m->u.map.keys = keys;
			return m;
		}
		return d_name(p, t.s, t.pos);
	case DT_OP:
		if (d_accept(p, "(")) {
			bool is_string, is_ptr;
			const char *ctype;
			unsigned stars;
			const char *ty = cast_type_c(p, &is_string, &is_ptr,
						     &ctype, &stars);
			if (ty) {
				if (!d_expect(p, ")"))
					return NULL;
				struct node *x = parse_unary(p);
				if (x && is_ptr)
					return pointer_cast(p, t.pos, ty, ctype,
							    stars, x);
				if (ctype && !is_ptr && x) {
					d_error(p, t.pos, "a cast to %s is not "
						"supported yet by sonde's D (only "
						"to integers and pointers)",
						ctype);
					return NULL;
				}
				if (!x || is_string)
					return x;
				struct node *c = node_new(p->a, N_CAST, t.pos);
				c->u.cast.type_name = ty;
				c->u.cast.expr = x;
				return c;
			}
			p->parens++;
			bool pred = p->in_pred;
			p->in_pred = false;
			struct node *e = d_parse_expr(p);
			p->in_pred = pred;
			p->parens--;
			if (!e || !d_expect(p, ")"))
				return NULL;
			return e;
		}
		break;
	default:
		break;
	}
	if (t.kind != DT_ERROR)
		d_error(p, t.pos, "syntax error near \"%s\"", tok_text(&t));
	p->bail = true;
	return NULL;
}

static struct node *parse_postfix(struct d_parser *p)
{
	struct node *n = parse_primary(p);
	while (n && !p->bail) {
		struct pos pos = p->tok.pos;
		if (d_tok_is(&p->tok, "->") || d_tok_is(&p->tok, ".")) {
			bool arrow = p->tok.op[0] == '-';
			d_next(p);
			if (p->tok.kind != DT_IDENT) {
				d_error(p, p->tok.pos, "syntax error near "
					"\"%s\": a member name was expected",
					tok_text(&p->tok));
				return NULL;
			}
			struct node *f = node_new(p->a, N_FIELD, pos);
			f->u.field.base = n;
			f->u.field.name = p->tok.s;
			f->u.field.arrow = arrow;
			d_next(p);
			n = f;
		} else if (d_tok_is(&p->tok, "++") || d_tok_is(&p->tok, "--")) {
			if (!is_assignable(n)) {
				d_error(p, pos, "operator %s requires a variable",
					p->tok.op);
				return NULL;
			}
			struct node *x = node_new(p->a, N_INCDEC, pos);
			x->u.incdec.op = p->tok.op[0] == '+' ? OP_POSTINC :
				OP_POSTDEC;
			x->u.incdec.target = n;
			d_next(p);
			n = x;
		} else if (d_tok_is(&p->tok, "[")) {
			d_next(p);
			p->parens++;
			struct node *i = d_parse_expr(p);
			p->parens--;
			if (!i || !d_expect(p, "]"))
				return NULL;
			struct node *x = node_new(p->a, N_INDEX, pos);
			x->u.index.base = n;
			x->u.index.index = i;
			n = x;
		} else {
			break;
		}
	}
	return n;
}

static struct node *parse_unary(struct d_parser *p)
{
	if (!enter(p))
		return NULL;
	struct d_tok t = p->tok;
	static const struct { const char *op; enum op o; } un[] = {
		{ "-", OP_NEG }, { "~", OP_BNOT }, { "!", OP_LNOT },
		{ "*", OP_DEREF }, { "&", OP_ADDROF },
	};
	for (size_t i = 0; i < sizeof(un) / sizeof(un[0]); i++)
		if (d_accept(p, un[i].op)) {
			struct node *x = parse_unary(p);
			return leave(p, x ? d_unop(p, t.pos, un[i].o, x) : NULL);
		}
	if (d_accept(p, "+"))
		return leave(p, parse_unary(p));
	if (d_tok_is(&t, "++") || d_tok_is(&t, "--")) {
		d_next(p);
		struct node *x = parse_unary(p);
		if (x && !is_assignable(x)) {
			d_error(p, t.pos, "operator %s requires a variable", t.op);
			return leave(p, NULL);
		}
		if (!x)
			return leave(p, NULL);
		struct node *n = node_new(p->a, N_INCDEC, t.pos);
		n->u.incdec.op = t.op[0] == '+' ? OP_PREINC : OP_PREDEC;
		n->u.incdec.target = x;
		return leave(p, n);
	}
	if (t.kind == DT_IDENT && strcmp(t.s, "sizeof") == 0) {
		/* sizeof(TYPE) of D's integer types, pointers, and the
		 * structs, unions and typedefs the script declares (sonde's
		 * sizeof of a C type name); sizeof EXPR of an expression */
		d_next(p);
		bool paren = d_tok_is(&p->tok, "(");
		bool is_string = false, is_ptr = false;
		const char *ctype = NULL, *ty = NULL;
		unsigned stars = 0;
		if (paren) {
			d_next(p);
			ty = cast_type_c(p, &is_string, &is_ptr, &ctype, &stars);
			if (!ty) {
				p->parens++;
				struct node *e = d_parse_expr(p);
				p->parens--;
				if (!e || !d_expect(p, ")"))
					return leave(p, NULL);
				return leave(p, d_call(p, t.pos, "sizeof", e,
						       NULL, NULL));
			}
		}
		if (!paren) {
			struct node *e = parse_unary(p);
			return leave(p, e ? d_call(p, t.pos, "sizeof", e, NULL,
						   NULL) : NULL);
		}
		if (is_string || !d_expect(p, ")")) {
			if (!p->bail)
				d_error(p, t.pos, "sizeof is not supported of "
					"string yet");
			p->bail = true;
			return leave(p, NULL);
		}
		if (ctype && !is_ptr) {
			struct node *id = node_new(p->a, N_IDENT, t.pos);
			id->u.str.s = ctype;
			id->u.str.len = (uint32_t)strlen(ctype);
			return leave(p, d_call(p, t.pos, "sizeof", id, NULL, NULL));
		}
		uint64_t size = is_ptr ? 8 : strstr(ty, "64") ? 8 :
			strstr(ty, "32") ? 4 : strstr(ty, "16") ? 2 : 1;
		/* D's sizeof is a size_t */
		struct node *c = node_new(p->a, N_CAST, t.pos);
		c->u.cast.type_name = "uint64";
		c->u.cast.expr = d_int(p, t.pos, size);
		return leave(p, c);
	}
	if (t.kind == DT_IDENT && strcmp(t.s, "offsetof") == 0) {
		/* offsetof(struct T, member), offsetof(T_t, member) */
		d_next(p);
		bool is_string, is_ptr;
		const char *ctype = NULL;
		unsigned stars;
		if (!d_expect(p, "(") ||
		    !cast_type_c(p, &is_string, &is_ptr, &ctype, &stars) ||
		    !ctype || is_ptr || !d_expect(p, ",") ||
		    p->tok.kind != DT_IDENT) {
			if (!p->bail)
				d_error(p, t.pos, "offsetof( ) takes a struct "
					"or union type and a member name");
			p->bail = true;
			return leave(p, NULL);
		}
		struct node *ty = node_new(p->a, N_IDENT, t.pos);
		ty->u.str.s = ctype;
		ty->u.str.len = (uint32_t)strlen(ctype);
		struct node *m = node_new(p->a, N_IDENT, p->tok.pos);
		m->u.str.s = p->tok.s;
		m->u.str.len = (uint32_t)strlen(p->tok.s);
		d_next(p);
		if (!d_expect(p, ")"))
			return leave(p, NULL);
		return leave(p, d_call(p, t.pos, "offsetof", ty, m, NULL));
	}
	return leave(p, parse_postfix(p));
}

/* Whether evaluating n twice is the same as once: no assignment, ++,
 * -- or call in it. */
static bool pure(const struct node *n, int depth)
{
	if (!n || depth > 8)
		return false;
	switch (n->kind) {
	case N_INT: case N_STR: case N_BUILTIN: case N_VAR: case N_POSITIONAL:
		return true;
	case N_MAP:
		for (uint32_t i = 0; i < n->u.map.keys.n; i++)
			if (!pure(n->u.map.keys.v[i], depth + 1))
				return false;
		return true;
	case N_CAST:
		return pure(n->u.cast.expr, depth + 1);
	case N_UNOP:
		return n->u.unop.op != OP_DEREF &&
			pure(n->u.unop.operand, depth + 1);
	case N_BINOP:
		return pure(n->u.binop.lhs, depth + 1) &&
			pure(n->u.binop.rhs, depth + 1);
	default:
		return false;
	}
}

static struct node *ternary(struct d_parser *p, struct pos pos,
			    struct node *c, struct node *a, struct node *b)
{
	struct node *n = node_new(p->a, N_TERNARY, pos);
	n->u.ternary.cond = c;
	n->u.ternary.then = a;
	n->u.ternary.els = b;
	return n;
}

/* x / y and x % y of D's signed types divide as C does (toward zero,
 * the remainder with x's sign); BPF divides unsigned, so the division
 * is of the magnitudes and the sign put back:
 *   |x| / |y|, negated when the signs differ; |x| % |y|, negated when
 *   x < 0.
 * Operands with side effects are left to BPF's unsigned division (they
 * would run twice). */
static struct node *signed_div(struct d_parser *p, struct pos pos,
			       enum op op, struct node *l, struct node *r)
{
	struct node *zero = d_int(p, pos, 0);
	struct node *ln = d_binop(p, pos, OP_LT, l, zero);
	struct node *rn = d_binop(p, pos, OP_LT, r, zero);
	struct node *la = ternary(p, pos, ln, d_unop(p, pos, OP_NEG, l), l);
	struct node *ra = ternary(p, pos, rn, d_unop(p, pos, OP_NEG, r), r);
	struct node *q = d_binop(p, pos, op, la, ra);
	struct node *neg = op == OP_DIV ? d_binop(p, pos, OP_NE, ln, rn) : ln;
	return ternary(p, pos, neg, d_unop(p, pos, OP_NEG, q), q);
}

/* Binary operators by precedence level, loosest first. */
static const struct { const char *op; enum op o; int level; } bin[] = {
	{ "||", OP_LOR, 0 }, { "^^", OP_NONE, 1 }, { "&&", OP_LAND, 2 },
	{ "|", OP_BOR, 3 }, { "^", OP_BXOR, 4 }, { "&", OP_BAND, 5 },
	{ "==", OP_EQ, 6 }, { "!=", OP_NE, 6 },
	{ "<", OP_LT, 7 }, { "<=", OP_LE, 7 }, { ">", OP_GT, 7 },
	{ ">=", OP_GE, 7 }, { "<<", OP_SHL, 8 }, { ">>", OP_SHR, 8 },
	{ "+", OP_ADD, 9 }, { "-", OP_SUB, 9 },
	{ "*", OP_MUL, 10 }, { "/", OP_DIV, 10 }, { "%", OP_MOD, 10 },
};
#define BIN_LEVELS 11

static struct node *parse_binary(struct d_parser *p, int level)
{
	if (level == BIN_LEVELS)
		return parse_unary(p);
	if (!enter(p))
		return NULL;
	struct node *l = parse_binary(p, level + 1);
	while (l && !p->bail) {
		size_t i = 0;
		for (; i < sizeof(bin) / sizeof(bin[0]); i++)
			if (bin[i].level == level && d_tok_is(&p->tok, bin[i].op))
				break;
		if (i == sizeof(bin) / sizeof(bin[0]))
			break;
		/* a predicate's closing '/' */
		if (bin[i].o == OP_DIV && p->in_pred && !p->parens)
			break;
		struct pos pos = p->tok.pos;
		d_next(p);
		struct node *r = parse_binary(p, level + 1);
		if (!r)
			return leave(p, NULL);
		if (bin[i].o == OP_NONE)   /* a ^^ b: exactly one is true */
			l = d_binop(p, pos, OP_NE, d_unop(p, pos, OP_LNOT, l),
				  d_unop(p, pos, OP_LNOT, r));
		else if ((bin[i].o == OP_DIV || bin[i].o == OP_MOD) &&
			 !(d_int_type_of(p, d_binop(p, pos, bin[i].o, l, r)) &
			   D_INT_UNSIGNED) && pure(l, 0) && pure(r, 0))
			l = signed_div(p, pos, bin[i].o, l, r);
		else
			l = d_binop(p, pos, bin[i].o, l, r);
	}
	return leave(p, l);
}

static struct node *parse_ternary(struct d_parser *p)
{
	if (!enter(p))
		return NULL;
	struct node *c = parse_binary(p, 0);
	if (!c || !d_tok_is(&p->tok, "?"))
		return leave(p, c);
	struct pos pos = p->tok.pos;
	d_next(p);
	struct node *a = parse_ternary(p);
	if (!a || !d_expect(p, ":"))
		return leave(p, NULL);
	struct node *b = parse_ternary(p);
	if (!b)
		return leave(p, NULL);
	struct node *n = node_new(p->a, N_TERNARY, pos);
	n->u.ternary.cond = c;
	n->u.ternary.then = a;
	n->u.ternary.els = b;
	return leave(p, n);
}

struct node *d_parse_expr(struct d_parser *p)
{
	return parse_ternary(p);
}

static const struct { const char *op; enum op o; } assign_ops[] = {
	{ "=", OP_NONE }, { "+=", OP_ADD }, { "-=", OP_SUB },
	{ "*=", OP_MUL }, { "/=", OP_DIV }, { "%=", OP_MOD },
	{ "&=", OP_BAND }, { "|=", OP_BOR }, { "^=", OP_BXOR },
	{ "<<=", OP_SHL }, { ">>=", OP_SHR },
};

static struct node *parse_stmt(struct d_parser *p);

/* An aggregation's key widths, the first time it is assigned. */
static void note_agg(struct d_parser *p, const struct node *m)
{
	struct frontend_settings *set = p->o->set;
	if (!set || strmap_get(&p->aggs, m->u.map.name) >= 0)
		return;
	if (strmap_put(&p->aggs, m->u.map.name, set->naggs) < 0)
		return;
	if ((set->naggs & (set->naggs - 1)) == 0) {
		uint32_t cap = set->naggs ? set->naggs * 2 : 1;
		struct dtrace_agg_keys *v = arena_array(p->a,
			struct dtrace_agg_keys, cap);
		if (set->naggs)
			memcpy(v, set->aggs, set->naggs * sizeof(*v));
		set->aggs = v;
	}
	struct dtrace_agg_keys *k = &set->aggs[set->naggs++];
	k->name = m->u.map.name;
	for (uint32_t i = 0; i < m->u.map.keys.n && i < 8; i++)
		k->width[i] = (uint8_t)d_int_width_of(p, m->u.map.keys.v[i]);
}

static struct node *stmt_block(struct d_parser *p, struct pos pos)
{
	struct node *b = node_new(p->a, N_BLOCK, pos);
	if (d_tok_is(&p->tok, "{"))
		return d_parse_block(p, false);
	struct node *s = parse_stmt(p);
	if (s)
		node_list_push(p->a, &b->u.list, s);
	return s ? b : NULL;
}

/* One statement, NULL after an error or for an empty one (`;`), which
 * leaves p->bail unset. */
static struct node *parse_stmt(struct d_parser *p)
{
	if (!enter(p))
		return NULL;
	struct d_tok t = p->tok;
	if (d_accept(p, ";"))
		return leave(p, NULL);
	if (t.kind == DT_IDENT && strcmp(t.s, "if") == 0) {
		d_next(p);
		if (!d_expect(p, "("))
			return leave(p, NULL);
		p->parens++;
		struct node *c = d_parse_expr(p);
		p->parens--;
		if (!c || !d_expect(p, ")"))
			return leave(p, NULL);
		struct node *n = node_new(p->a, N_IF, t.pos);
		n->u.if_.cond = c;
		n->u.if_.then = stmt_block(p, t.pos);
		if (!n->u.if_.then)
			return leave(p, NULL);
		if (p->tok.kind == DT_IDENT && strcmp(p->tok.s, "else") == 0) {
			struct pos ep = p->tok.pos;
			d_next(p);
			n->u.if_.els = stmt_block(p, ep);
			if (!n->u.if_.els)
				return leave(p, NULL);
		}
		return leave(p, n);
	}
	struct node *e = d_parse_expr(p);
	if (!e)
		return leave(p, NULL);
	struct node *s = NULL;
	for (size_t i = 0; i < sizeof(assign_ops) / sizeof(assign_ops[0]); i++) {
		if (!d_tok_is(&p->tok, assign_ops[i].op))
			continue;
		struct pos pos = p->tok.pos;
		if (!is_assignable(e)) {
			d_error(p, pos, "operator %s can only be applied to a "
				"variable", assign_ops[i].op);
			return leave(p, NULL);
		}
		d_next(p);
		struct node *v = d_parse_expr(p);
		if (!v)
			return leave(p, NULL);
		/* self->x = 0 frees the thread's variable, as in DTrace */
		if (assign_ops[i].o == OP_NONE && e->kind == N_MAP &&
		    strncmp(e->u.map.name, "@.self.", 7) == 0 &&
		    v->kind == N_INT && v->u.ival == 0) {
			s = node_new(p->a, N_EXPR_STMT, pos);
			s->u.expr_stmt.expr = d_call(p, pos, "delete", e,
						     NULL, NULL);
			break;
		}
		if (e->kind == N_MAP && e->u.map.name[1] != '.' &&
		    v->kind == N_CALL)
			note_agg(p, e);
		if (assign_ops[i].o == OP_NONE)
			d_note_assign(p, e, v);
		s = node_new(p->a, N_ASSIGN, pos);
		s->u.assign.op = assign_ops[i].o;
		s->u.assign.target = e;
		s->u.assign.value = v;
		break;
	}
	if (!s && e->kind == N_CALL &&
	    strcmp(e->u.call.name, "__dtrace_copyinto") == 0) {
		/* copyinto(addr, size, dest): dest names the user memory at
		 * addr, as a pointer of the type dest was given */
		struct node *dest = e->u.call.args.v[2];
		struct node *v = d_call(p, e->pos, "uptr", e->u.call.args.v[0],
					NULL, NULL);
		const char *ty = d_ptr_type(p, dest);
		if (ty) {
			struct node *c = node_new(p->a, N_CAST, e->pos);
			c->u.cast.type_name = ty;
			c->u.cast.expr = v;
			v = c;
		}
		s = node_new(p->a, N_ASSIGN, e->pos);
		s->u.assign.op = OP_NONE;
		s->u.assign.target = dest;
		s->u.assign.value = v;
	}
	if (!s) {
		/* stack(), ustack() alone: the action that prints one */
		if (e->kind == N_CALL && (!strcmp(e->u.call.name, "kstack") ||
					  !strcmp(e->u.call.name, "ustack"))) {
			e = d_call(p, e->pos, "__dtrace_stack", e, NULL, NULL);
			p->records = true;
		}
		s = node_new(p->a, N_EXPR_STMT, e->pos);
		s->u.expr_stmt.expr = e;
	}
	if (!d_tok_is(&p->tok, "}") && !d_expect(p, ";"))
		return leave(p, NULL);
	return leave(p, s);
}

struct node *d_parse_block(struct d_parser *p, bool outer)
{
	struct node *b = node_new(p->a, N_BLOCK, p->tok.pos);
	if (!d_expect(p, "{"))
		return NULL;
	while (!p->bail && !d_tok_is(&p->tok, "}")) {
		if (p->tok.kind == DT_EOF) {
			d_error(p, p->tok.pos, "syntax error: end of input in "
				"a clause ('}' expected)");
			return NULL;
		}
		struct node *s = parse_stmt(p);
		if (s)
			node_list_push(p->a, &b->u.list, s);
	}
	if (p->bail)
		return NULL;
	/* a clause's '}': what follows may be a probe description, which
	 * the caller reads as such */
	if (!outer)
		d_next(p);
	return b;
}
