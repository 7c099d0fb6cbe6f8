/* parser.c - recursive descent over the token stream into the AST.
 *
 * One token of lookahead (p->tok). Attach points are not tokens: at the
 * start of a probe the parser asks the lexer for raw text (lexer_attach).
 * Errors: the first error in a statement is reported and the parser
 * enters panic mode (further errors and lexer errors are muted) until it
 * re-synchronises at a ';' or '}' (statement level) or at the end of a
 * probe block (top level), so one run reports every broken statement. */
#include "parser.h"
#include "cdefs.h"

#include <stdlib.h>
#include <string.h>

#include "lexer.h"

struct parser {
	struct lexer lx;
	struct token tok;
	struct arena *a;
	struct diags *d;
	bool panic;        /* an error was reported; mute until resync */
	bool in_pred;      /* '/' followed by '{' ends the predicate */
	bool eof_reported; /* one "expected ... near <eof>" is enough */
	struct pos last;   /* just after the previous token: where <eof>
			    * errors point, rather than at an empty line */
	unsigned depth;    /* tree depth being built: every later pass
			    * recurses over the tree, so it is bounded here */
};

#define MAX_DEPTH 400

/* Enter one level of tree depth; false (error reported) if too deep. */
static bool enter(struct parser *p);

static void remember_end(struct parser *p)
{
	if (p->tok.kind != T_EOF && p->tok.pos.line)
		p->last = (struct pos){ p->tok.pos.line,
					p->tok.pos.col + p->tok.pos.len, 1 };
}

static void next(struct parser *p)
{
	remember_end(p);
	p->tok = lexer_next(&p->lx);
}

/* Move on to an attach point (raw text) at the current position. */
static void next_attach(struct parser *p)
{
	remember_end(p);
	p->tok = lexer_attach(&p->lx);
}

static const char *near(struct parser *p)
{
	const struct token *t = &p->tok;
	if (t->kind == T_EOF)
		return "<eof>";
	size_t n = t->len > 40 ? 40 : t->len;
	const char *s = arena_strndup(p->a, t->start, n);
	for (char *c = (char *)s; *c; c++)
		if (*c == '\n')
			*c = ' ';
	return arena_printf(p->a, "'%s'%s", s, t->len > n ? "..." : "");
}

static void error_at(struct parser *p, struct pos pos, const char *tag,
		     const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void error_at(struct parser *p, struct pos pos, const char *tag,
		     const char *fmt, ...)
{
	if (p->panic)
		return;
	va_list ap;
	va_start(ap, fmt);
	diag_vadd(p->d, DIAG_ERROR, pos, tag, fmt, ap);
	va_end(ap);
	p->panic = true;
	p->lx.quiet = true;
}

static bool enter(struct parser *p)
{
	if (++p->depth <= MAX_DEPTH)
		return true;
	p->depth--;
	error_at(p, p->tok.pos, "SYNTAX", "program nested too deeply");
	return false;
}

/* "X expected [context] near 'y'" at the current token. A bad token
 * (or the end of input right after one, as an unterminated string makes)
 * was already reported by the lexer: one message is enough. */
static void expected_ctx(struct parser *p, const char *what, const char *ctx)
{
	if (p->tok.kind == T_ERROR ||
	    (p->tok.kind == T_EOF && p->lx.nerrors)) {
		p->panic = p->lx.quiet = true;
		return;
	}
	if (p->tok.kind == T_EOF) {
		if (p->eof_reported) {
			p->panic = p->lx.quiet = true;
			return;
		}
		p->eof_reported = true;
	}
	struct pos at = p->tok.kind == T_EOF && p->last.line ? p->last :
		p->tok.pos;
	error_at(p, at, "SYNTAX", "%s expected%s near %s", what, ctx, near(p));
}

static void expected(struct parser *p, const char *what)
{
	expected_ctx(p, what, "");
}

static bool accept(struct parser *p, enum tok k)
{
	if (p->tok.kind != k)
		return false;
	next(p);
	return true;
}

static bool expect(struct parser *p, enum tok k)
{
	if (accept(p, k))
		return true;
	expected(p, arena_printf(p->a, "'%s'", token_name(k)));
	return false;
}

/* Expect the closer of an opener at `open`: Lua's
 * "')' expected (to close '(' at line 3) near 'x'". */
static bool expect_close(struct parser *p, enum tok close, enum tok open,
			 struct pos at)
{
	if (accept(p, close))
		return true;
	if (at.line == p->tok.pos.line)
		expected(p, arena_printf(p->a, "'%s'", token_name(close)));
	else
		expected_ctx(p, arena_printf(p->a, "'%s'", token_name(close)),
			     arena_printf(p->a, " (to close '%s' at line %u)",
					  token_name(open), at.line));
	return false;
}

static void resync_done(struct parser *p)
{
	p->panic = false;
	p->lx.quiet = false;
}

/* Widen a node's span to reach the end of `last` when on the same line. */
static void span_to(struct node *n, struct pos last)
{
	if (last.line == n->pos.line && last.col + last.len > n->pos.col)
		n->pos.len = last.col + last.len - n->pos.col;
}


/* Widen n's span to the end of the last token consumed. */
static void span_end(struct parser *p, struct node *n)
{
	if (n && p->last.line == n->pos.line && p->last.col > n->pos.col)
		n->pos.len = p->last.col - n->pos.col;
}

static struct node *parse_expr(struct parser *p);
static struct node *parse_block(struct parser *p, bool top);

/* ---------------------------------------------------------------- */
/* expressions                                                       */

static const char *const cast_types[] = {
	"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
	"uint64", NULL,
};

static bool is_cast_type(const char *s)
{
	for (int i = 0; cast_types[i]; i++)
		if (strcmp(cast_types[i], s) == 0)
			return true;
	return false;
}

static int builtin_lookup(const char *name, uint32_t *index);

/* Does an operand start at s (after spaces)? `(NAME) x` is a cast to the
 * typedef NAME only then, so `(pid) - 1` stays arithmetic on a builtin.
 * After a name that is no builtin, a unary -, ~ or ! starts the operand
 * of a cast too, as in bpftrace 0.17's grammar: `(u32)-1`. */
static bool operand_follows(const char *name, const char *s)
{
	uint32_t index;
	while (*s == ' ' || *s == '\t')
		s++;
	if ((*s == '-' || *s == '~' || (*s == '!' && s[1] != '=')) &&
	    builtin_lookup(name, &index) < 0)
		return s[1] != '-' && s[1] != '=';   /* not -- or -= */
	return *s == '$' || *s == '@' || *s == '"' || *s == '(' ||
	       *s == '_' || (*s >= 'a' && *s <= 'z') ||
	       (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9');
}

/* '(' already seen at the current token: is this a cast? Looks ahead in
 * the raw text without consuming: "(uint32)", "(struct x *)", and a
 * typedef name, "(pid_t *)" or "(u32) x" (sema resolves it: the script's
 * and its headers' typedefs, then BTF's). */
static const char *cast_ahead(struct parser *p, size_t *skip)
{
	const char *s = p->lx.src + p->tok.offset + 1;
	const char *q = s;
	while (*q == ' ' || *q == '\t')
		q++;
	const char *w = q;
	while ((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') ||
	       (*q >= '0' && *q <= '9') || *q == '_')
		q++;
	if (q == w)
		return NULL;
	char *word = arena_strndup(p->a, w, (size_t)(q - w));
	const char *name = NULL;
	bool typedef_name = false;
	if (is_cast_type(word)) {
		name = word;
	} else if (strcmp(word, "struct") == 0 || strcmp(word, "union") == 0 ||
		   strcmp(word, "enum") == 0) {
		while (*q == ' ' || *q == '\t')
			q++;
		const char *w2 = q;
		while ((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') ||
		       (*q >= '0' && *q <= '9') || *q == '_')
			q++;
		if (q == w2)
			return NULL;
		name = arena_printf(p->a, "%s %.*s", word, (int)(q - w2), w2);
	} else if (!(*w >= '0' && *w <= '9')) {
		name = word;      /* a typedef name, resolved by sema */
		typedef_name = true;
	} else {
		return NULL;
	}
	unsigned stars = 0;
	for (;;) {
		while (*q == ' ' || *q == '\t')
			q++;
		if (*q != '*')
			break;
		stars++;
		q++;
	}
	if (*q != ')')
		return NULL;
	if (typedef_name && !stars && !operand_follows(name, q + 1))
		return NULL;      /* (NAME) alone: a parenthesised name */
	if (stars)
		name = arena_printf(p->a, "%s %.*s", name, (int)stars, "********");
	*skip = (size_t)(q + 1 - s) + 1;
	return name;
}

/* Skip `n` bytes of raw text from the current token's start, then lex. */
static void skip_raw(struct parser *p, size_t n)
{
	size_t target = p->tok.offset + n;
	while (p->lx.off < target && p->lx.off < p->lx.len) {
		if (p->lx.src[p->lx.off] == '\n') {
			p->lx.line++;
			p->lx.col = 1;
		} else {
			p->lx.col++;
		}
		p->lx.off++;
	}
	next(p);
}

/* The builtin NAME names (arg0..arg999 and sarg0.. included), or -1. */
static int builtin_lookup(const char *name, uint32_t *index)
{
	for (int i = 0; i < BI_COUNT_; i++) {
		if (i == BI_ARG || i == BI_SARG) {
			size_t l = strlen(builtin_names[i]);
			const char *d = name + l;
			if (strncmp(name, builtin_names[i], l) == 0 && *d &&
			    strspn(d, "0123456789") == strlen(d) &&
			    strlen(d) < 4) {
				*index = (uint32_t)atoi(d);
				return i;
			}
			continue;
		}
		if (strcmp(name, builtin_names[i]) == 0) {
			*index = 0;
			return i;
		}
	}
	return -1;
}

static struct node *new_ident_or_builtin(struct parser *p, const char *name,
					 struct pos pos)
{
	struct node *n = node_new(p->a, N_BUILTIN, pos);
	uint32_t index;
	int id = builtin_lookup(name, &index);
	if (id >= 0) {
		n->u.builtin.id = (enum builtin_id)id;
		n->u.builtin.index = index;
		return n;
	}
	n->kind = N_IDENT;
	n->u.str.s = name;
	n->u.str.len = (uint32_t)strlen(name);
	return n;
}

/* args -> [ expr { ',' expr } ] ')'   (after '(') */
static void parse_args(struct parser *p, struct node_list *l, struct pos open)
{
	bool pred = p->in_pred;
	p->in_pred = false;
	if (p->tok.kind != T_RPAREN) {
		do {
			struct node *e = parse_expr(p);
			if (e)
				node_list_push(p->a, l, e);
		} while (!p->panic && accept(p, T_COMMA));
	}
	p->in_pred = pred;
	expect_close(p, T_RPAREN, T_LPAREN, open);
}

/* primary -> INT | STR | $var | $N | $# | @map ['[' args ']'] | NAME
 *          | NAME '(' args ')' | '(' expr {',' expr} ')' */
static struct node *parse_primary(struct parser *p)
{
	struct token t = p->tok;
	struct node *n;

	switch (t.kind) {
	case T_INT:
		n = node_new(p->a, N_INT, t.pos);
		n->u.ival = t.ival;
		next(p);
		return n;
	case T_STR:
		n = node_new(p->a, N_STR, t.pos);
		n->u.str.s = t.sval;
		n->u.str.len = t.slen;
		next(p);
		return n;
	case T_VAR:
		n = node_new(p->a, N_VAR, t.pos);
		n->u.var.name = t.sval;
		next(p);
		return n;
	case T_POSITIONAL:
		n = node_new(p->a, N_POSITIONAL, t.pos);
		n->u.positional.index = (uint32_t)t.ival;
		next(p);
		return n;
	case T_POSCOUNT:
		n = node_new(p->a, N_POSITIONAL, t.pos);
		n->u.positional.is_count = true;
		next(p);
		return n;
	case T_MAP:
		n = node_new(p->a, N_MAP, t.pos);
		n->u.map.name = t.sval;
		next(p);
		if (p->tok.kind == T_LBRACKET) {
			struct pos open = p->tok.pos;
			bool pred = p->in_pred;
			p->in_pred = false;
			next(p);
			do {
				struct node *k = parse_expr(p);
				if (k)
					node_list_push(p->a, &n->u.map.keys, k);
			} while (!p->panic && accept(p, T_COMMA));
			p->in_pred = pred;
			struct pos close = p->tok.pos;
			if (expect_close(p, T_RBRACKET, T_LBRACKET, open))
				span_to(n, close);
		}
		return n;
	case T_IDENT:
		next(p);
		if (p->tok.kind == T_LPAREN) {
			n = node_new(p->a, N_CALL, t.pos);
			n->u.call.name = t.sval;
			struct pos open = p->tok.pos;
			next(p);
			parse_args(p, &n->u.call.args, open);
			span_end(p, n);
			return n;
		}
		if ((strcmp(t.sval, "struct") == 0 ||
		     strcmp(t.sval, "union") == 0 ||
		     strcmp(t.sval, "enum") == 0) && p->tok.kind == T_IDENT) {
			/* sizeof(struct x), sizeof(union x) */
			n = node_new(p->a, N_IDENT, t.pos);
			n->u.str.s = arena_printf(p->a, "%s %s", t.sval,
						  p->tok.sval);
			n->u.str.len = (uint32_t)strlen(n->u.str.s);
			span_to(n, p->tok.pos);
			next(p);
			return n;
		}
		return new_ident_or_builtin(p, t.sval, t.pos);
	case T_LPAREN: {
		struct pos open = t.pos;
		bool pred = p->in_pred;
		p->in_pred = false;
		next(p);
		n = parse_expr(p);
		if (p->tok.kind == T_COMMA) {
			struct node *tup = node_new(p->a, N_TUPLE, open);
			if (n)
				node_list_push(p->a, &tup->u.list, n);
			while (!p->panic && accept(p, T_COMMA)) {
				struct node *e = parse_expr(p);
				if (e)
					node_list_push(p->a, &tup->u.list, e);
			}
			n = tup;
		}
		p->in_pred = pred;
		struct pos close = p->tok.pos;
		if (expect_close(p, T_RPAREN, T_LPAREN, open) && n &&
		    n->kind == N_TUPLE)
			span_to(n, close);
		return n;
	}
	default:
		expected(p, "expression");
		return NULL;
	}
}

/* postfix -> primary { '++' | '--' | '.' NAME | '.' INT | '->' NAME
 *                    | '[' expr ']' } */
static struct node *parse_postfix(struct parser *p)
{
	/* where the operand starts, its parentheses included: a postfix
	 * node spans from there, as in bpftrace (`((struct foo *)0)->a`
	 * is reported from its first '(') */
	struct pos start = p->tok.pos;
	start.len = 1;
	struct node *n = parse_primary(p);
	unsigned depth = p->depth;
	while (n && !p->panic) {
		struct token t = p->tok;
		if ((t.kind == T_INC || t.kind == T_DEC || t.kind == T_DOT ||
		     t.kind == T_ARROW || t.kind == T_LBRACKET) && !enter(p)) {
			n = NULL;
			break;
		}
		if (t.kind == T_INC || t.kind == T_DEC) {
			if (n->kind != N_VAR && n->kind != N_MAP) {
				error_at(p, t.pos, "SYNTAX",
					 "'%s' needs a variable or a map",
					 token_name(t.kind));
				{ n = NULL; break; }
			}
			struct node *m = node_new(p->a, N_INCDEC, start);
			m->u.incdec.op = t.kind == T_INC ? OP_POSTINC : OP_POSTDEC;
			m->u.incdec.target = n;
			span_to(m, t.pos);
			next(p);
			n = m;
		} else if (t.kind == T_DOT || t.kind == T_ARROW) {
			next(p);
			struct token f = p->tok;
			if (t.kind == T_DOT && f.kind == T_INT) {
				struct node *m = node_new(p->a, N_TUPLE_INDEX, start);
				m->u.tindex.base = n;
				m->u.tindex.index = f.ival > UINT32_MAX ?
					UINT32_MAX : (uint32_t)f.ival;
				span_to(m, f.pos);
				next(p);
				n = m;
				continue;
			}
			if (f.kind != T_IDENT) {
				expected(p, arena_printf(p->a, "field name after '%s'",
							 token_name(t.kind)));
				{ n = NULL; break; }
			}
			struct node *m = node_new(p->a, N_FIELD, start);
			m->u.field.base = n;
			m->u.field.name = f.sval;
			m->u.field.arrow = t.kind == T_ARROW;
			span_to(m, f.pos);
			next(p);
			n = m;
		} else if (t.kind == T_LBRACKET) {
			bool pred = p->in_pred;
			p->in_pred = false;
			next(p);
			struct node *m = node_new(p->a, N_INDEX, start);
			m->u.index.base = n;
			m->u.index.index = parse_expr(p);
			p->in_pred = pred;
			struct pos close = p->tok.pos;
			if (!expect_close(p, T_RBRACKET, T_LBRACKET, t.pos))
				{ n = NULL; break; }
			span_to(m, close);
			n = m;
		} else {
			break;
		}
	}
	p->depth = depth;
	return n;
}

static struct node *parse_unary(struct parser *p);

/* unary -> ('!' | '~' | '-' | '*' | '&' | '++' | '--') unary
 *        | '(' TYPE ')' unary | postfix */
static struct node *parse_unary(struct parser *p)
{
	struct token t = p->tok;
	enum op op;
	struct node *n;

	if (!enter(p))
		return NULL;
	switch (t.kind) {
	case T_BANG: op = OP_LNOT; goto unop;
	case T_TILDE: op = OP_BNOT; goto unop;
	case T_MINUS: op = OP_NEG; goto unop;
	case T_STAR: op = OP_DEREF; goto unop;
	case T_AMP: op = OP_ADDROF; goto unop;
	unop:
		next(p);
		struct node *e = parse_unary(p);
		if (!e) {
			n = NULL;
			break;
		}
		if (op == OP_NEG && e->kind == N_INT) {
			/* "-5" is a literal, as in bpftrace */
			e->u.ival = (uint64_t)-e->u.ival;
			if (e->pos.line == t.pos.line) {
				unsigned end = e->pos.col + e->pos.len;
				e->pos.col = t.pos.col;
				e->pos.len = end - t.pos.col;
			}
			n = e;
			break;
		}
		n = node_new(p->a, N_UNOP, t.pos);
		n->u.unop.op = op;
		n->u.unop.operand = e;
		span_end(p, n);
		break;
	case T_INC:
	case T_DEC:
		next(p);
		n = parse_unary(p);
		if (!n)
			break;
		if (n->kind != N_VAR && n->kind != N_MAP) {
			error_at(p, t.pos, "SYNTAX",
				 "'%s' needs a variable or a map",
				 token_name(t.kind));
			n = NULL;
			break;
		} else {
			struct node *m = node_new(p->a, N_INCDEC, t.pos);
			m->u.incdec.op = t.kind == T_INC ? OP_PREINC : OP_PREDEC;
			m->u.incdec.target = n;
			span_end(p, m);
			n = m;
		}
		break;
	case T_LPAREN: {
		size_t skip;
		const char *ty = cast_ahead(p, &skip);
		if (ty) {
			skip_raw(p, skip);
			n = node_new(p->a, N_CAST, t.pos);
			n->u.cast.type_name = ty;
			n->u.cast.expr = parse_unary(p);
			if (!n->u.cast.expr)
				n = NULL;
			span_end(p, n);
			break;
		}
		n = parse_postfix(p);
		break;
	}
	default:
		n = parse_postfix(p);
	}
	p->depth--;
	return n;
}

/* Binary operators by precedence level, loosest first. */
static const struct binop_level {
	enum tok t[4];
	enum op op[4];
} levels[] = {
	{ { T_LOR }, { OP_LOR } },
	{ { T_LAND }, { OP_LAND } },
	{ { T_PIPE }, { OP_BOR } },
	{ { T_CARET }, { OP_BXOR } },
	{ { T_AMP }, { OP_BAND } },
	{ { T_EQ, T_NE }, { OP_EQ, OP_NE } },
	{ { T_LT, T_LE, T_GT, T_GE }, { OP_LT, OP_LE, OP_GT, OP_GE } },
	{ { T_SHL, T_SHR }, { OP_SHL, OP_SHR } },
	{ { T_PLUS, T_MINUS }, { OP_ADD, OP_SUB } },
	{ { T_STAR, T_SLASH, T_PERCENT }, { OP_MUL, OP_DIV, OP_MOD } },
};
#define NLEVELS (sizeof(levels) / sizeof(levels[0]))

/* In a predicate, a '/' followed by '{' closes it (as in bpftrace). */
static bool ends_predicate(struct parser *p)
{
	if (!p->in_pred || p->tok.kind != T_SLASH)
		return false;
	const char *s = p->lx.src + p->tok.offset + 1;
	for (;;) {
		while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
			s++;
		if (s[0] == '/' && s[1] == '/') {
			while (*s && *s != '\n')
				s++;
		} else if (s[0] == '/' && s[1] == '*') {
			const char *e = strstr(s + 2, "*/");
			if (!e)
				return false;
			s = e + 2;
		} else {
			break;
		}
	}
	return *s == '{' || *s == 0;
}

/* binary(k) -> binary(k+1) { OP(k) binary(k+1) } */
static struct node *parse_binary(struct parser *p, size_t level)
{
	if (level == NLEVELS)
		return parse_unary(p);
	struct node *lhs = parse_binary(p, level + 1);
	unsigned depth = p->depth;
	while (lhs && !p->panic) {
		int i;
		for (i = 0; i < 4 && levels[level].t[i]; i++)
			if (p->tok.kind == levels[level].t[i])
				break;
		if (i == 4 || !levels[level].t[i] || ends_predicate(p))
			break;
		/* the node spans both operands, as the caret should */
		struct node *n = node_new(p->a, N_BINOP, lhs->pos);
		n->u.binop.op = levels[level].op[i];
		next(p);
		n->u.binop.lhs = lhs;
		n->u.binop.rhs = parse_binary(p, level + 1);
		if (!n->u.binop.rhs) {
			p->depth = depth;
			return NULL;
		}
		span_end(p, n);
		lhs = n;
		/* a chain a+b+c... deepens the tree on its left */
		if (!enter(p)) {
			lhs = NULL;
			break;
		}
	}
	p->depth = depth;
	return lhs;
}

/* expr -> binary(0) [ '?' expr ':' expr ] */
static struct node *parse_expr(struct parser *p)
{
	if (!enter(p))
		return NULL;
	struct node *c = parse_binary(p, 0);
	if (c && p->tok.kind == T_QUESTION) {
		struct node *n = node_new(p->a, N_TERNARY, c->pos);
		next(p);
		n->u.ternary.cond = c;
		n->u.ternary.then = parse_expr(p);
		if (n->u.ternary.then && expect(p, T_COLON))
			n->u.ternary.els = parse_expr(p);
		span_end(p, n);
		c = n->u.ternary.els ? n : NULL;
	}
	p->depth--;
	return c;
}

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

/* cond -> '(' expr ')' */
static struct node *parse_cond(struct parser *p, const char *what)
{
	struct pos open = p->tok.pos;
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

/* stat -> ifstat | UNROLL '(' INT ')' block | WHILE cond block
 *       | RETURN | BREAK | CONTINUE
 *       | target ('=' | OP'=') expr | expr */
static struct node *parse_statement(struct parser *p, bool *blocky)
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
	case T_RETURN:
	case T_BREAK:
	case T_CONTINUE:
		next(p);
		return node_new(p->a, t.kind == T_RETURN ? N_RETURN :
				t.kind == T_BREAK ? N_BREAK : N_CONTINUE, t.pos);
	default:
		break;
	}

	struct node *e = parse_expr(p);
	if (!e)
		return NULL;
	enum op op = assign_op(p->tok.kind);
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
	return n;
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
		struct node *pr = parse_probe(p);
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
