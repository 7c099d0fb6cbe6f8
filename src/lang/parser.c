/* parser.c - recursive descent over the token stream into the AST.
 *
 * One token of lookahead (p->tok). Attach points are not tokens: at the
 * start of a probe the parser asks the lexer for raw text (lexer_attach).
 * Errors: the first error in a statement is reported and the parser
 * enters panic mode (further errors and lexer errors are muted) until it
 * re-synchronises at a ';' or '}' (statement level) or at the end of a
 * probe block (top level), so one run reports every broken statement. */
#include "parser_int.h"

static struct node *parse_block(struct parser *p, bool top);

/* ---------------------------------------------------------------- */
/* statements                                                        */

static enum op assign_op(enum tok t)
{
	switch (t) {
	case T_ASSIGN: return OP_NONE;
	case T_ADD_ASSIGN: return OP_ADD;
	case T_SUB_ASSIGN: return OP_SUB;
	case T_MUL_ASSIGN: return OP_MUL;
	case T_DIV_ASSIGN: return OP_DIV;
	case T_MOD_ASSIGN: return OP_MOD;
	case T_AND_ASSIGN: return OP_BAND;
	case T_OR_ASSIGN: return OP_BOR;
	case T_XOR_ASSIGN: return OP_BXOR;
	case T_SHL_ASSIGN: return OP_SHL;
	case T_SHR_ASSIGN: return OP_SHR;
	default: return OP_LNOT; /* not an assignment */
	}
}

/* cond -> '(' expr ')' | unary        (bpftrace 0.24: `if has_key(@a, 1)`) */
static struct node *parse_cond(struct parser *p, const char *what)
{
	struct pos open = p->tok.pos;
	if (p->tok.kind != T_LPAREN && p->tok.kind != T_LBRACE &&
	    p->tok.kind != T_EOF && p->tok.kind != T_ERROR) {
		struct node *u = parse_unary(p);
		if (u && p->tok.kind != T_LBRACE) {
			expected_ctx(p, "'{'", arena_printf(p->a, " (a condition "
				     "without parentheses is one operand: "
				     "%s (...) { })", what));
			return NULL;
		}
		return u;
	}
	if (!accept(p, T_LPAREN)) {
		expected(p, arena_printf(p->a, "'(' after '%s'", what));
		return NULL;
	}
	struct node *c = parse_expr(p);
	if (!c)
		return NULL;
	if (!expect_close(p, T_RPAREN, T_LPAREN, open))
		return NULL;
	return c;
}

/* ifstat -> IF cond block [ ELSE ( ifstat | block ) ] */
static struct node *parse_if_(struct parser *p);

static struct node *parse_if(struct parser *p)
{
	if (!enter(p))
		return NULL;
	struct node *n = parse_if_(p);
	p->depth--;
	return n;
}

static struct node *parse_if_(struct parser *p)
{
	struct node *n = node_new(p->a, N_IF, p->tok.pos);
	next(p);
	n->u.if_.cond = parse_cond(p, "if");
	if (p->panic)
		return NULL;
	n->u.if_.then = parse_block(p, false);
	if (p->panic)
		return NULL;
	if (accept(p, T_ELSE)) {
		if (p->tok.kind == T_IF)
			n->u.if_.els = parse_if(p);
		else
			n->u.if_.els = parse_block(p, false);
	}
	return p->panic ? NULL : n;
}

/* ifexpr -> IF cond blockexpr ELSE ( ifexpr | blockexpr ), where an
 * expression is (bpftrace 0.25: "Fix crash for invalid if
 * expressions"): a ternary of the two blocks' values. */
/* An if statement with an else, as the value of an if expression's
 * branch (`if (a) { if (b) { 1 } else { 2 } } else { 3 }`): the
 * ternary it would be as an expression, each branch's last expression
 * its value. NULL when it has no else. */
static struct node *if_value(struct parser *p, struct node *ifn);

static struct node *block_value(struct parser *p, struct node *b,
				struct node *bx)
{
	if (!bx) {
		bx = node_new(p->a, N_BLOCK_EXPR, b->pos);
		bx->u.blockx.body = b;
	}
	struct node_list *l = &b->u.list;
	struct node *last = l->n ? l->v[l->n - 1] : NULL;
	if (bx->u.blockx.value || !last)
		return bx;
	struct node *v = last->kind == N_EXPR_STMT ? last->u.expr_stmt.expr :
		last->kind == N_IF ? if_value(p, last) : NULL;
	if (v) {
		bx->u.blockx.value = v;
		l->n--;
	}
	return bx;
}

static struct node *if_value(struct parser *p, struct node *ifn)
{
	struct node *els = ifn->u.if_.els;
	if (!els || !ifn->u.if_.then)
		return NULL;
	struct node *t = node_new(p->a, N_TERNARY, ifn->pos);
	t->u.ternary.cond = ifn->u.if_.cond;
	t->u.ternary.then = block_value(p, ifn->u.if_.then, NULL);
	t->u.ternary.els = els->kind == N_IF ? if_value(p, els) :
		block_value(p, els, NULL);
	return t->u.ternary.els ? t : NULL;
}

struct node *parse_if_expr(struct parser *p)
{
	if (!enter(p))
		return NULL;
	struct node *n = node_new(p->a, N_TERNARY, p->tok.pos);
	next(p);
	n->u.ternary.cond = parse_cond(p, "if");
	struct node *then = NULL, *els = NULL;
	if (!p->panic && n->u.ternary.cond) {
		if (p->tok.kind == T_LBRACE)
			then = parse_block_expr_(p, false);
		else
			expected(p, "'{'");
	}
	if (then && !p->panic) {
		if (!accept(p, T_ELSE))
			expected(p, "'else' (an if expression has both "
				 "branches)");
		else if (p->tok.kind == T_IF)
			els = parse_if_expr(p);
		else if (p->tok.kind == T_LBRACE)
			els = parse_block_expr_(p, false);
		else
			expected(p, "'{' or 'if' after 'else'");
	}
	p->depth--;
	if (!then || !els || p->panic)
		return NULL;
	if (then->kind == N_BLOCK_EXPR && then->u.blockx.body)
		block_value(p, then->u.blockx.body, then);
	if (els->kind == N_BLOCK_EXPR && els->u.blockx.body)
		block_value(p, els->u.blockx.body, els);
	n->u.ternary.then = then;
	n->u.ternary.els = els;
	span_end(p, n);
	return n;
}

/* stat -> ifstat | UNROLL '(' INT ')' block | WHILE cond block
 *       | RETURN | BREAK | CONTINUE
 *       | target ('=' | OP'=') expr | expr */
static struct node *parse_for(struct parser *p);
static struct node *parse_let(struct parser *p);

struct node *parse_statement(struct parser *p, bool *blocky)
{
	struct token t = p->tok;
	struct node *n;
	*blocky = false;

	switch (t.kind) {
	case T_IF:
		*blocky = true;
		return parse_if(p);
	case T_UNROLL: {
		*blocky = true;
		n = node_new(p->a, N_UNROLL, t.pos);
		next(p);
		struct pos open = p->tok.pos;
		if (!accept(p, T_LPAREN)) {
			expected(p, "'(' after 'unroll'");
			return NULL;
		}
		struct pos cpos = p->tok.pos;
		struct node *c = parse_expr(p);
		if (!c)
			return NULL;
		/* a literal, checked here, or a positional parameter,
		 * which sema reads (u.loop.cond holds it until then) */
		if (c->kind == N_POSITIONAL) {
			n->u.loop.cond = c;
		} else if (c->kind != N_INT) {
			error_at(p, cpos, "BAD_UNROLL",
				 "unroll needs an integer literal (1 to 100)");
			return NULL;
		} else if (unroll_count_error((int64_t)c->u.ival)) {
			error_at(p, c->pos, "BAD_UNROLL", "%s",
				 unroll_count_error((int64_t)c->u.ival));
			return NULL;
		}
		n->u.loop.count = c->kind == N_INT ? c->u.ival : 0;
		if (!expect_close(p, T_RPAREN, T_LPAREN, open))
			return NULL;
		n->u.loop.body = parse_block(p, false);
		return p->panic ? NULL : n;
	}
	case T_WHILE:
		*blocky = true;
		n = node_new(p->a, N_WHILE, t.pos);
		next(p);
		n->u.loop.cond = parse_cond(p, "while");
		if (p->panic)
			return NULL;
		n->u.loop.body = parse_block(p, false);
		return p->panic ? NULL : n;
	case T_IDENT:
		if (strcmp(t.sval, "for") == 0) {
			*blocky = true;
			return parse_for(p);
		}
		if (strcmp(t.sval, "let") == 0)
			return parse_let(p);
		break;
	case T_RETURN:
	case T_BREAK:
	case T_CONTINUE:
		next(p);
		n = node_new(p->a, t.kind == T_RETURN ? N_RETURN :
			     t.kind == T_BREAK ? N_BREAK : N_CONTINUE, t.pos);
		if (t.kind == T_RETURN && p->tok.kind != T_SEMI &&
		    p->tok.kind != T_RBRACE && p->tok.kind != T_EOF) {
			/* `return EXPR;` (bpftrace 0.26's probes): the
			 * value is evaluated, then the probe returns */
			struct node *e = parse_expr(p);
			if (!e)
				return NULL;
			struct node *b = node_new(p->a, N_BLOCK, t.pos);
			struct node *es = node_new(p->a, N_EXPR_STMT, e->pos);
			es->u.expr_stmt.expr = e;
			node_list_push(p->a, &b->u.list, es);
			node_list_push(p->a, &b->u.list, n);
			return b;
		}
		return n;
	default:
		break;
	}

	struct node *e = parse_expr(p);
	if (!e)
		return NULL;
	enum op op = assign_op(p->tok.kind);
	if (op == OP_NONE && e->kind == N_IDENT && strcmp(e->u.str.s, "_") == 0) {
		/* `_ = expr;` (bpftrace 0.24's discard expression): the
		 * value is evaluated and dropped */
		next(p);
		struct node *v = parse_expr(p);
		if (!v)
			return NULL;
		n = node_new(p->a, N_EXPR_STMT, v->pos);
		n->u.expr_stmt.expr = v;
		return n;
	}
	if (op != OP_LNOT) {
		if (e->kind != N_VAR && e->kind != N_MAP) {
			error_at(p, e->pos, "SYNTAX",
				 "only a variable or a map can be assigned to");
			return NULL;
		}
		n = node_new(p->a, N_ASSIGN, e->pos);
		n->u.assign.op = op;
		n->u.assign.target = e;
		next(p);
		n->u.assign.value = parse_expr(p);
		span_end(p, n);
		return n->u.assign.value ? n : NULL;
	}
	n = node_new(p->a, N_EXPR_STMT, e->pos);
	n->u.expr_stmt.expr = e;
	/* a block on its own needs no ';' after it */
	*blocky = e->kind == N_BLOCK_EXPR;
	return n;
}

static struct node *new_var(struct parser *p, const char *name, struct pos pos)
{
	struct node *v = node_new(p->a, N_VAR, pos);
	v->u.var.name = name;
	return v;
}

static struct node *new_assign(struct parser *p, struct node *target,
			       struct node *value)
{
	struct node *as = node_new(p->a, N_ASSIGN, target->pos);
	as->u.assign.op = OP_NONE;
	as->u.assign.target = target;
	as->u.assign.value = value;
	return as;
}

/* letstat -> LET $var [ ':' TYPE ] [ '=' expr ]      (bpftrace 0.22)
 * A variable lives for the whole probe in sonde, so `let` declares
 * nothing more than a first assignment does; an integer TYPE casts the
 * value, `let $x: T;` alone sets nothing. */
static struct node *parse_let(struct parser *p)
{
	struct pos at = p->tok.pos;
	next(p);
	if (p->tok.kind != T_VAR) {
		expected(p, "a $variable after 'let'");
		return NULL;
	}
	struct node *var = new_var(p, p->tok.sval, p->tok.pos);
	next(p);
	const char *tname = NULL;
	struct pos tpos = p->tok.pos;
	if (accept(p, T_COLON)) {
		tpos = p->tok.pos;
		if (p->tok.kind != T_IDENT || !is_cast_type(p->tok.sval)) {
			error_at(p, tpos, "UNSUPPORTED", "let: only integer and "
				 "bool types can be declared (int8 .. uint64, "
				 "bool), not %s", near(p));
			return NULL;
		}
		tname = p->tok.sval;
		next(p);
	}
	if (!accept(p, T_ASSIGN)) {
		if (tname)
			return node_new(p->a, N_BLOCK, at);  /* declared */
		/* `let $x;`: the variable starts at zero, of the type its
		 * assignments give it (sema: the "__let_zero" value) */
		struct node *z = node_new(p->a, N_CALL, at);
		z->u.call.name = "__let_zero";
		struct node *as = new_assign(p, var, z);
		as->pos = at;
		return as;
	}
	struct node *v = parse_expr(p);
	if (!v)
		return NULL;
	if (tname) {
		struct node *c = node_new(p->a, N_CAST, tpos);
		c->u.cast.type_name = tname;
		c->u.cast.expr = v;
		v = c;
	}
	struct node *as = new_assign(p, var, v);
	as->pos = at;
	span_end(p, as);
	return as;
}

/* forstat -> FOR '(' $var ':' @map ')' block   (bpftrace 0.21)
 * An N_FOR_MAP: codegen makes the body a callback of
 * bpf_for_each_map_elem. */
static struct node *parse_for_map(struct parser *p, struct pos at,
				  const struct pos *open, struct node *var)
{
	struct node *m = node_new(p->a, N_MAP, p->tok.pos);
	m->u.map.name = p->tok.sval;
	m->u.map.map_id = -1;
	next(p);
	if (p->tok.kind == T_LBRACKET) {
		error_at(p, p->tok.pos, "SYNTAX", "a for loop goes over a "
			 "whole map: for ($kv : %s), $kv.0 the key and $kv.1 "
			 "the value", m->u.map.name);
		return NULL;
	}
	span_end(p, m);
	if (open && !expect_close(p, T_RPAREN, T_LPAREN, *open))
		return NULL;
	struct node *body = parse_block(p, false);
	if (p->panic)
		return NULL;
	struct node *f = node_new(p->a, N_FOR_MAP, at);
	f->u.loop.cond = m;
	f->u.loop.step = var;
	f->u.loop.body = body;
	return f;
}

/* forstat -> FOR '(' $var ':' unary '..' unary ')' block   (bpftrace 0.24)
 *
 * Becomes, with hidden variables no script can name ("for.K.i"):
 *   { for.K.i = (int64)START; for.K.e = (int64)END;
 *     while (for.K.i < for.K.e) { $var = for.K.i; BODY } step for.K.i++ }
 * so the bounds are read once and $var is set afresh each time, as
 * language.md says, and continue goes on to the next value. */
static struct node *parse_for(struct parser *p)
{
	struct pos at = p->tok.pos;
	next(p);
	struct pos open = p->tok.pos;
	/* `for $kv : @m { }`, without parentheses (bpftrace 0.24: "If,
	 * for, while and unroll statements can have omitted
	 * parentheses") */
	bool paren = p->tok.kind != T_VAR;
	if (paren && !accept(p, T_LPAREN)) {
		expected(p, "'(' after 'for'");
		return NULL;
	}
	if (p->tok.kind != T_VAR) {
		expected(p, "a $variable (for ($i : 0..10))");
		return NULL;
	}
	struct node *var = new_var(p, p->tok.sval, p->tok.pos);
	next(p);
	if (!accept(p, T_COLON)) {
		expected(p, "':' (for ($i : 0..10))");
		return NULL;
	}
	if (p->tok.kind == T_MAP)
		return parse_for_map(p, at, paren ? &open : NULL, var);
	struct node *start = parse_unary(p);
	if (!start)
		return NULL;
	if (!accept(p, T_DOTDOT)) {
		expected(p, "'..' (for ($i : START..END))");
		return NULL;
	}
	struct node *end = parse_unary(p);
	if (!end)
		return NULL;
	if (paren && !expect_close(p, T_RPAREN, T_LPAREN, open))
		return NULL;
	struct node *body = parse_block(p, false);
	if (p->panic)
		return NULL;
	unsigned k = p->nfor++;
	const char *iname = arena_printf(p->a, "for.%u.i", k);
	const char *ename = arena_printf(p->a, "for.%u.e", k);
	struct node *c_start = node_new(p->a, N_CAST, start->pos);
	c_start->u.cast.type_name = "int64";
	c_start->u.cast.expr = start;
	struct node *c_end = node_new(p->a, N_CAST, end->pos);
	c_end->u.cast.type_name = "int64";
	c_end->u.cast.expr = end;

	struct node *blk = node_new(p->a, N_BLOCK, at);
	node_list_push(p->a, &blk->u.list,
		       new_assign(p, new_var(p, iname, at), c_start));
	node_list_push(p->a, &blk->u.list,
		       new_assign(p, new_var(p, ename, at), c_end));
	struct node *w = node_new(p->a, N_WHILE, at);
	struct node *lt = node_new(p->a, N_BINOP, at);
	lt->u.binop.op = OP_LT;
	lt->u.binop.lhs = new_var(p, iname, at);
	lt->u.binop.rhs = new_var(p, ename, at);
	w->u.loop.cond = lt;
	struct node *wbody = node_new(p->a, N_BLOCK, body->pos);
	node_list_push(p->a, &wbody->u.list,
		       new_assign(p, var, new_var(p, iname, at)));
	for (uint32_t i = 0; i < body->u.list.n; i++)
		node_list_push(p->a, &wbody->u.list, body->u.list.v[i]);
	w->u.loop.body = wbody;
	struct node *inc = node_new(p->a, N_INCDEC, at);
	inc->u.incdec.op = OP_POSTINC;
	inc->u.incdec.target = new_var(p, iname, at);
	struct node *step = node_new(p->a, N_EXPR_STMT, at);
	step->u.expr_stmt.expr = inc;
	w->u.loop.step = step;
	node_list_push(p->a, &blk->u.list, w);
	return blk;
}

/* After an error inside a block: skip to the next ';' (consumed) or the
 * '}' closing this block (left for the caller), balancing nested braces. */
static void resync_stmt(struct parser *p)
{
	int depth = 0;
	while (p->tok.kind != T_EOF) {
		if (p->tok.kind == T_LBRACE)
			depth++;
		else if (p->tok.kind == T_RBRACE) {
			if (depth == 0)
				break;
			depth--;
			if (depth == 0) {
				next(p);
				break;
			}
		} else if (p->tok.kind == T_SEMI && depth == 0) {
			next(p);
			break;
		}
		next(p);
	}
	resync_done(p);
}

/* block -> '{' [ stat { ';' stat } [';'] ] '}'
 * (if/while/unroll end with '}' and need no ';' after them) */
static struct node *parse_block_(struct parser *p, bool top);

static struct node *parse_block(struct parser *p, bool top)
{
	if (!enter(p))
		return NULL;
	struct node *b = parse_block_(p, top);
	p->depth--;
	return b;
}

static struct node *parse_block_(struct parser *p, bool top)
{
	struct node *b = node_new(p->a, N_BLOCK, p->tok.pos);
	struct pos open = p->tok.pos;
	if (!accept(p, T_LBRACE)) {
		expected(p, "'{'");
		return NULL;
	}
	while (p->tok.kind != T_RBRACE && p->tok.kind != T_EOF) {
		bool blocky;
		struct node *s = parse_statement(p, &blocky);
		if (s)
			node_list_push(p->a, &b->u.list, s);
		if (!p->panic && p->tok.kind == T_EOF)
			break;
		if (!p->panic && !blocky && p->tok.kind != T_RBRACE &&
		    !accept(p, T_SEMI))
			expected(p, "';' or '}'");
		if (p->panic)
			resync_stmt(p);
	}
	if (p->tok.kind != T_RBRACE) {
		expect_close(p, T_RBRACE, T_LBRACE, open);
		return b;
	}
	if (top)
		next_attach(p);
	else
		next(p);
	return b;
}

/* probe -> attach { ',' attach } [ '/' expr '/' ] block */
static struct node *parse_probe(struct parser *p)
{
	struct node *pr = node_new(p->a, N_PROBE, p->tok.pos);
	for (;;) {
		if (p->tok.kind == T_ERROR) {
			/* lexer_attach reports nothing: say it here */
			error_at(p, p->tok.pos, "SYNTAX", "probe expected near %s",
				 near(p));
			return NULL;
		}
		if (p->tok.kind != T_ATTACH) {
			expected(p, "probe");
			return NULL;
		}
		struct node *ap = node_new(p->a, N_ATTACH, p->tok.pos);
		ap->u.attach.text = p->tok.sval;
		/* Split on ':' outside quotes; quotes are kept as written
		 * for the provider to interpret. */
		const char *parts[4] = { 0 };
		const char *s = p->tok.sval;
		int np = 0;
		bool q = false;
		const char *start = s;
		for (const char *c = s;; c++) {
			if (*c == '"')
				q = !q;
			else if (q && *c == '\\' && c[1])
				c++;    /* an escaped byte in quotes */
			if (*c == 0 || (*c == ':' && !q && np < 3)) {
				parts[np++] = arena_strndup(p->a, start,
							    (size_t)(c - start));
				start = c + 1;
				if (!*c)
					break;
			}
		}
		ap->u.attach.provider = parts[0];
		ap->u.attach.target = parts[1];
		ap->u.attach.func = parts[2];
		ap->u.attach.extra = parts[3];
		node_list_push(p->a, &pr->u.probe.attach, ap);
		next(p);
		if (p->tok.kind != T_COMMA)
			break;
		next_attach(p);
	}
	if (p->tok.kind == T_SLASH) {
		next(p);
		p->in_pred = true;
		pr->u.probe.predicate = parse_expr(p);
		p->in_pred = false;
		if (p->panic)
			return NULL;
		if (!accept(p, T_SLASH)) {
			expected(p, "'/' (to end the predicate)");
			return NULL;
		}
	}
	pr->u.probe.body = parse_block(p, true);
	return p->panic ? NULL : pr;
}

/* config -> 'config' '=' '{' [ NAME '=' value { ';' NAME '=' value } [';'] ] '}'
 * value -> INT | STR | NAME | true | false       (bpftrace 0.2x, after
 * the C definitions and before the probes; the names and values are
 * checked where they are applied, compile.c) */
static struct node *parse_config(struct parser *p)
{
	struct node *c = node_new(p->a, N_CONFIG, p->tok.pos);
	/* "config={" reads as the probe-like word "config=" */
	bool glued = strcmp(p->tok.sval, "config=") == 0;
	next(p);
	if (!glued && !expect(p, T_ASSIGN))
		return NULL;
	struct pos open = p->tok.pos;
	if (!expect(p, T_LBRACE))
		return NULL;
	while (p->tok.kind != T_RBRACE) {
		if (p->tok.kind != T_IDENT) {
			expected_ctx(p, "a config variable's name",
				     " in the config block");
			return NULL;
		}
		struct node *as = node_new(p->a, N_ASSIGN, p->tok.pos);
		struct node *name = node_new(p->a, N_IDENT, p->tok.pos);
		name->u.str.s = p->tok.sval;
		name->u.str.len = (uint32_t)strlen(p->tok.sval);
		next(p);
		if (!expect(p, T_ASSIGN))
			return NULL;
		struct node *v = NULL;
		switch (p->tok.kind) {
		case T_INT:
			v = node_new(p->a, N_INT, p->tok.pos);
			v->u.ival = p->tok.ival;
			break;
		case T_STR:
			v = node_new(p->a, N_STR, p->tok.pos);
			v->u.str.s = p->tok.sval;
			v->u.str.len = p->tok.slen;
			break;
		case T_IDENT:
			v = node_new(p->a, N_IDENT, p->tok.pos);
			v->u.str.s = p->tok.sval;
			v->u.str.len = (uint32_t)strlen(p->tok.sval);
			break;
		default:
			expected_ctx(p, "a number, a string or a name",
				     " as a config variable's value");
			return NULL;
		}
		span_to(as, p->tok.pos);
		next(p);
		as->u.assign.op = OP_NONE;
		as->u.assign.target = name;
		as->u.assign.value = v;
		node_list_push(p->a, &c->u.list, as);
		if (!accept(p, T_SEMI))
			break;
	}
	/* the '}' is left for the caller to step over in probe mode */
	if (p->tok.kind != T_RBRACE) {
		if (open.line == p->tok.pos.line)
			expected(p, "';' or '}'");
		else
			expected_ctx(p, "';' or '}'", arena_printf(p->a,
				     " (to close '{' at line %u)", open.line));
		return NULL;
	}
	return c;
}

/* mapdecl -> 'let' @map '=' NAME '(' INT ')' [';']     (bpftrace 0.24) */
static struct node *parse_map_decl(struct parser *p)
{
	struct node *d = node_new(p->a, N_MAP_DECL, p->tok.pos);
	next(p);
	if (p->tok.kind != T_MAP) {
		expected(p, "a @map to declare (let @m = hash(100);)");
		return NULL;
	}
	struct node *m = node_new(p->a, N_MAP, p->tok.pos);
	m->u.map.name = p->tok.sval;
	next(p);
	if (!expect(p, T_ASSIGN))
		return NULL;
	if (p->tok.kind != T_IDENT) {
		expected(p, "a map type (hash, lruhash, percpuhash, "
			 "percpulruhash)");
		return NULL;
	}
	struct node *c = parse_primary(p);
	if (!c)
		return NULL;
	if (c->kind != N_CALL) {
		error_at(p, c->pos, "SYNTAX", "a map declaration needs its "
			 "maximum entries: let @m = hash(100);");
		return NULL;
	}
	d->u.assign.target = m;
	d->u.assign.value = c;
	span_end(p, d);
	/* the ';' (optional), then the next probe, read in probe mode:
	 * a token already read as an expression's is read again */
	if (p->tok.kind != T_SEMI)
		lexer_start_at(&p->lx, p->tok.offset, p->tok.pos.line,
			       p->tok.pos.col);
	next_attach(p);
	return d;
}

/* macro -> 'macro' NAME [ '(' [ param { ',' param } ] ')' ] blockexpr
 * param -> $var | @map | NAME                    (bpftrace 0.24; macro.c
 * expands them) */
static struct node *parse_macro(struct parser *p)
{
	struct node *m = node_new(p->a, N_MACRO, p->tok.pos);
	next(p);
	if (p->tok.kind != T_IDENT) {
		expected(p, "the macro's name");
		return NULL;
	}
	m->u.macro.name = p->tok.sval;
	next(p);
	if (p->tok.kind == T_LPAREN) {
		struct pos open = p->tok.pos;
		next(p);
		while (p->tok.kind != T_RPAREN) {
			struct node *prm;
			if (p->tok.kind == T_VAR)
				prm = new_var(p, p->tok.sval, p->tok.pos);
			else if (p->tok.kind == T_MAP) {
				prm = node_new(p->a, N_MAP, p->tok.pos);
				prm->u.map.name = p->tok.sval;
			} else if (p->tok.kind == T_IDENT) {
				prm = node_new(p->a, N_IDENT, p->tok.pos);
				prm->u.str.s = p->tok.sval;
				prm->u.str.len = (uint32_t)strlen(p->tok.sval);
			} else {
				expected(p, "a parameter ($var, @map or a name)");
				return NULL;
			}
			node_list_push(p->a, &m->u.macro.params, prm);
			next(p);
			if (!accept(p, T_COMMA))
				break;
		}
		if (!expect_close(p, T_RPAREN, T_LPAREN, open))
			return NULL;
	}
	if (p->tok.kind != T_LBRACE) {
		expected(p, "'{' (the macro's body)");
		return NULL;
	}
	m->u.macro.body = parse_block_expr_(p, true);
	return m->u.macro.body ? m : NULL;
}

/* After an error at top level: skip past the end of the current probe
 * block (the '}' that closes the first '{'), then read the next probe. */
static void resync_probe(struct parser *p)
{
	int depth = 0;
	while (p->tok.kind != T_EOF) {
		if (p->tok.kind == T_LBRACE) {
			depth++;
		} else if (p->tok.kind == T_RBRACE && --depth <= 0) {
			resync_done(p);
			next_attach(p);
			return;
		}
		next(p);
	}
	resync_done(p);
}

struct node *parse_program(struct arena *a, const char *text, struct diags *d)
{
	return cdefs_parse_script(a, text, NULL, NULL, d);
}

/* program -> c_definitions { probe }   (the definitions: lang/cdefs.c) */
struct node *parse_program_env(struct arena *a, const char *text,
			       const struct parse_env *env, struct diags *d)
{
	struct parser ps = { .a = a, .d = d };
	struct parser *p = &ps;
	lexer_init(&p->lx, a, text, d);
	lexer_start_at(&p->lx, env->start, env->line, env->col);
	p->lx.macro = env->macro;
	p->lx.macro_ctx = env->macro_ctx;
	struct node *prog = node_new(a, N_PROGRAM, (struct pos){ 1, 1, 1 });
	next_attach(p);
	while (p->tok.kind != T_EOF) {
		struct node *pr;
		if (p->tok.kind == T_ATTACH && (!strcmp(p->tok.sval, "config") ||
						 !strcmp(p->tok.sval, "config="))) {
			for (uint32_t i = 0; i < prog->u.list.n; i++) {
				bool probe = prog->u.list.v[i]->kind == N_PROBE;
				error_at(p, p->tok.pos, "SYNTAX", probe ?
					 "the config block must come before "
					 "the probes" : "only one config block "
					 "is allowed");
				break;
			}
			pr = parse_config(p);
			if (pr)
				node_list_push(a, &prog->u.list, pr);
			if (!p->panic) {
				next_attach(p);
				continue;
			}
			resync_probe(p);
			continue;
		}
		if (p->tok.kind == T_ATTACH && strcmp(p->tok.sval, "let") == 0) {
			pr = parse_map_decl(p);
			if (pr)
				node_list_push(a, &prog->u.list, pr);
			if (p->panic)
				resync_probe(p);
			continue;
		}
		if (p->tok.kind == T_ATTACH && strcmp(p->tok.sval, "macro") == 0) {
			pr = parse_macro(p);
			if (pr)
				node_list_push(a, &prog->u.list, pr);
			if (p->panic)
				resync_probe(p);
			continue;
		}
		pr = parse_probe(p);
		if (pr)
			node_list_push(a, &prog->u.list, pr);
		if (p->panic)
			resync_probe(p);
	}
	if (prog->u.list.n == 0 && !d->nerrors)
		diag_error(d, (struct pos){ 0, 0, 0 }, "SYNTAX",
			   "the program has no probes");
	return prog;
}
