/* pp_expr.c - the constant expression of #if and #elif: `defined`,
 * __has_include, macros expanded, names left over are 0, then C's
 * integer arithmetic in intmax_t/uintmax_t (a value is unsigned if it
 * was written so or an operand of a binary operator was), by recursive
 * descent over the usual precedence levels. */
#include "pp_int.h"
#include "cconst.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

struct val {
	uint64_t v;
	bool u;
};

struct ev {
	struct pp *pp;
	struct ptok *tok;
	const struct ptok *at;   /* the directive, for messages */
	bool err;
	int depth;
};

static bool is_p(const struct ptok *t, const char *s)
{
	return t->kind == PT_PUNCT && ptok_is(t, s);
}

static void ev_error(struct ev *e, const struct ptok *t, const char *msg)
{
	if (!e->err)
		pp_error(e->pp, t && t->kind != PT_EOF ? t : e->at, "PP_EXPR",
			 "%s in preprocessor expression", msg);
	e->err = true;
}

static struct ptok *num_tok(struct pp *pp, const struct ptok *at, bool v)
{
	struct ptok *t = pp_new_tok(pp, at);
	if (!t)
		return NULL;
	t->kind = PT_NUM;
	t->text = v ? "1" : "0";
	t->len = 1;
	return t;
}

/* defined X, defined(X), __has_include(...), macros: a list of numbers,
 * names and punctuation. */
static struct ptok *prepare(struct ev *e, struct ptok *tok)
{
	struct pp *pp = e->pp;
	struct ptok head = { 0 }, *cur = &head;
	while (tok->kind != PT_EOF && !pp->fatal) {
		if (tok->kind == PT_IDENT && ptok_is(tok, "defined")) {
			const struct ptok *start = tok;
			tok = tok->next;
			bool paren = is_p(tok, "(");
			if (paren)
				tok = tok->next;
			if (tok->kind != PT_IDENT) {
				ev_error(e, start, "macro name expected after "
					 "'defined'");
				return NULL;
			}
			bool def = pp_find_macro(pp, tok->text, tok->len);
			tok = tok->next;
			if (paren) {
				if (!is_p(tok, ")")) {
					ev_error(e, start, "')' expected after "
						 "'defined('");
					return NULL;
				}
				tok = tok->next;
			}
			struct ptok *n = num_tok(pp, start, def);
			if (!n)
				return NULL;
			cur = cur->next = n;
			continue;
		}
		if (tok->kind == PT_IDENT && (ptok_is(tok, "__has_include") ||
					      ptok_is(tok, "__has_include_next"))) {
			bool next = tok->len > 13;
			const struct ptok *start = tok;
			bool v = pp_has_include(pp, &tok, tok->next, next);
			struct ptok *n = num_tok(pp, start, v);
			if (!n)
				return NULL;
			cur = cur->next = n;
			continue;
		}
		if (pp_expand(pp, &tok, tok))
			continue;
		struct ptok *c = pp_new_tok(pp, tok);
		if (!c)
			return NULL;
		cur = cur->next = c;
		tok = tok->next;
	}
	cur->next = tok;
	return head.next ? head.next : tok;
}

static struct val expr(struct ev *e);

static struct val number(struct ev *e, const struct ptok *t)
{
	char buf[128];
	struct val r = { 0, false };
	if (t->len >= sizeof(buf)) {
		ev_error(e, t, "number too long");
		return r;
	}
	memcpy(buf, t->text, t->len);
	buf[t->len] = '\0';
	const char *p = buf;
	int base = 10;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		base = 16;
		p += 2;
	} else if (p[0] == '0' && (p[1] == 'b' || p[1] == 'B')) {
		base = 2;
		p += 2;
	} else if (p[0] == '0') {
		base = 8;
	}
	char *end;
	r.v = strtoull(p, &end, base);
	if (end == p) {
		ev_error(e, t, "invalid integer constant");
		return r;
	}
	for (; *end; end++) {
		if (*end == 'u' || *end == 'U')
			r.u = true;
		else if (*end != 'l' && *end != 'L')
			break;
	}
	if (*end)
		ev_error(e, t, "invalid integer constant");
	if (r.v > INT64_MAX)
		r.u = true;
	return r;
}

static struct val character(struct ev *e, const struct ptok *t)
{
	const char *p = memchr(t->text, '\'', t->len) + 1;
	const char *end = t->text + t->len - 1;
	uint64_t v = 0;
	while (p < end) {
		int c = (unsigned char)*p++;
		if (c == '\\' && p < end) {
			c = (unsigned char)*p++;
			switch (c) {
			case 'n': c = '\n'; break;
			case 't': c = '\t'; break;
			case 'r': c = '\r'; break;
			case 'a': c = '\a'; break;
			case 'b': c = '\b'; break;
			case 'f': c = '\f'; break;
			case 'v': c = '\v'; break;
			case 'x':
				c = 0;
				while (p < end && isxdigit((unsigned char)*p)) {
					int d = (unsigned char)*p++;
					c = c * 16 + (isdigit(d) ? d - '0' :
						      tolower(d) - 'a' + 10);
				}
				break;
			default:
				if (c >= '0' && c <= '7') {
					c -= '0';
					for (int k = 0; k < 2 && p < end &&
					     *p >= '0' && *p <= '7'; k++)
						c = c * 8 + *p++ - '0';
				}
			}
		}
		v = (v << 8) | (uint64_t)(c & 0xff);
	}
	/* a one-character constant is a signed char, as on x86-64 */
	if (t->text[0] == '\'' && t->len >= 3 && v < 256)
		v = (uint64_t)(int64_t)(signed char)v;
	return (struct val){ v, false };
}

static struct val primary(struct ev *e)
{
	struct ptok *t = e->tok;
	struct val zero = { 0, false };
	if (e->err)
		return zero;
	if (++e->depth > 256) {
		ev_error(e, t, "expression nested too deep");
		return zero;
	}
	struct val r = zero;
	if (is_p(t, "(")) {
		e->tok = t->next;
		r = expr(e);
		if (!is_p(e->tok, ")"))
			ev_error(e, e->tok, "')' expected");
		else
			e->tok = e->tok->next;
	} else if (is_p(t, "-") || is_p(t, "+") || is_p(t, "~") ||
		   is_p(t, "!")) {
		e->tok = t->next;
		r = primary(e);
		switch (t->text[0]) {
		case '-': r.v = -r.v; break;
		case '~': r.v = ~r.v; break;
		case '!': r.v = !r.v; r.u = false; break;
		}
	} else if (t->kind == PT_NUM) {
		r = number(e, t);
		e->tok = t->next;
	} else if (t->kind == PT_CHAR) {
		r = character(e, t);
		e->tok = t->next;
	} else if (t->kind == PT_IDENT) {
		/* a name that is not a macro: 0 (true and false too, in C) */
		e->tok = t->next;
		if (is_p(e->tok, "(")) {
			ev_error(e, t, "function-like macro not defined");
			return zero;
		}
	} else {
		ev_error(e, t, t->kind == PT_EOF ? "expression expected" :
			 "unexpected token");
	}
	e->depth--;
	return r;
}

static struct val binary(struct ev *e, int min)
{
	struct val l = primary(e);
	for (;;) {
		struct ptok *op = e->tok;
		int p = cconst_prec(op);
		if (!p || p < min || e->err)
			return l;
		e->tok = op->next;
		struct val r = binary(e, p + 1);
		struct cconst o;
		if (cconst_binary(op, p, (struct cconst){ l.v, l.u },
				  (struct cconst){ r.v, r.u }, &o) < 0) {
			ev_error(e, op, "division by zero");
			return l;
		}
		l = (struct val){ o.v, o.u };
	}
}

static struct val expr(struct ev *e)
{
	struct val c = binary(e, 1);
	if (is_p(e->tok, "?") && !e->err) {
		e->tok = e->tok->next;
		struct val a = expr(e);
		if (!is_p(e->tok, ":")) {
			ev_error(e, e->tok, "':' expected");
			return c;
		}
		e->tok = e->tok->next;
		struct val b = expr(e);
		struct val r = c.v ? a : b;
		r.u = a.u || b.u;
		return r;
	}
	if (is_p(e->tok, ",") && !e->err) {
		e->tok = e->tok->next;
		return expr(e);
	}
	return c;
}

bool pp_eval_if(struct pp *pp, struct ptok **rest, struct ptok *tok)
{
	struct ptok *line = pp_copy_line(pp, rest, tok);
	struct ev e = { .pp = pp, .at = tok->bol ? NULL : tok };
	if (tok->bol) {
		pp_error(pp, NULL, "PP_EXPR", "#if with no expression");
		return false;
	}
	e.at = tok;
	e.tok = prepare(&e, line);
	if (!e.tok || e.err || pp->fatal)
		return false;
	struct val v = expr(&e);
	if (!e.err && e.tok->kind != PT_EOF)
		ev_error(&e, e.tok, "unexpected token");
	return !e.err && v.v != 0;
}
