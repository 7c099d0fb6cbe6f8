/* parser_int.h - what the bpftrace parser's two files share: the
 * parser's state and its token helpers (one token of lookahead, error
 * reporting with panic mode, source spans). parser.c parses probes and
 * statements, parser_expr.c expressions. */
#ifndef SONDE_PARSER_INT_H
#define SONDE_PARSER_INT_H

#include <stdlib.h>
#include <string.h>

#include "cdefs.h"
#include "lexer.h"
#include "parser.h"

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
	unsigned nfor;     /* for loops so far: their hidden variables */
};

#define MAX_DEPTH 400

/* Enter one level of tree depth; false (error reported) if too deep. */
static inline bool enter(struct parser *p);

static inline void remember_end(struct parser *p)
{
	if (p->tok.kind != T_EOF && p->tok.pos.line)
		p->last = (struct pos){ p->tok.pos.line,
					p->tok.pos.col + p->tok.pos.len, 1 };
}

static inline void next(struct parser *p)
{
	remember_end(p);
	p->tok = lexer_next(&p->lx);
}

/* Move on to an attach point (raw text) at the current position. */
static inline void next_attach(struct parser *p)
{
	remember_end(p);
	p->tok = lexer_attach(&p->lx);
}

static inline const char *near(struct parser *p)
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

static inline void error_at(struct parser *p, struct pos pos, const char *tag,
		     const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static inline void error_at(struct parser *p, struct pos pos, const char *tag,
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

static inline bool enter(struct parser *p)
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
static inline void expected_ctx(struct parser *p, const char *what, const char *ctx)
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

static inline void expected(struct parser *p, const char *what)
{
	expected_ctx(p, what, "");
}

static inline bool accept(struct parser *p, enum tok k)
{
	if (p->tok.kind != k)
		return false;
	next(p);
	return true;
}

static inline bool expect(struct parser *p, enum tok k)
{
	if (accept(p, k))
		return true;
	expected(p, arena_printf(p->a, "'%s'", token_name(k)));
	return false;
}

/* Expect the closer of an opener at `open`: Lua's
 * "')' expected (to close '(' at line 3) near 'x'". */
static inline bool expect_close(struct parser *p, enum tok close, enum tok open,
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

static inline void resync_done(struct parser *p)
{
	p->panic = false;
	p->lx.quiet = false;
}

/* Widen a node's span to reach the end of `last` when on the same line. */
static inline void span_to(struct node *n, struct pos last)
{
	if (last.line == n->pos.line && last.col + last.len > n->pos.col)
		n->pos.len = last.col + last.len - n->pos.col;
}


/* Widen n's span to the end of the last token consumed. */
static inline void span_end(struct parser *p, struct node *n)
{
	if (n && p->last.line == n->pos.line && p->last.col > n->pos.col)
		n->pos.len = p->last.col - n->pos.col;
}

/* expr -> ternary (parser_expr.c) */
struct node *parse_expr(struct parser *p);
/* parser_expr.c: what statements also read (a for loop's range, a let
 * declaration's type, a map declaration's hash(N), a macro's body as a
 * block expression; top: the body ends the macro) */
struct node *parse_unary(struct parser *p);
struct node *parse_primary(struct parser *p);
bool is_cast_type(const char *s);
struct node *parse_block_expr_(struct parser *p, bool top);
struct node *parse_if_expr(struct parser *p);
/* parser.c: a statement, for block expressions ({ ...; value }) */
struct node *parse_statement(struct parser *p, bool *blocky);

#endif
