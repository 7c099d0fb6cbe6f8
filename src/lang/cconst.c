/* cconst.c - C's binary operators on integer constants (cconst.h). */
#include "cconst.h"

#include <errno.h>
#include <stddef.h>

int cconst_prec(const struct ptok *t)
{
	static const struct { const char *op; int prec; } ops[] = {
		{ "*", 10 }, { "/", 10 }, { "%", 10 }, { "+", 9 }, { "-", 9 },
		{ "<<", 8 }, { ">>", 8 }, { "<", 7 }, { ">", 7 }, { "<=", 7 },
		{ ">=", 7 }, { "==", 6 }, { "!=", 6 }, { "&", 5 }, { "^", 4 },
		{ "|", 3 }, { "&&", 2 }, { "||", 1 },
	};
	if (t->kind != PT_PUNCT)
		return 0;
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (ptok_is(t, ops[i].op))
			return ops[i].prec;
	return 0;
}

int cconst_binary(const struct ptok *t, int prec, struct cconst l,
		  struct cconst r, struct cconst *out)
{
	bool u = l.u || r.u;
	uint64_t a = l.v, b = r.v;              /* the bits */
	int64_t sa = (int64_t)a, sb = (int64_t)b; /* signed */
	struct cconst o = { 0, u };
	char ch = t->text[0];
	bool two = t->len == 2;
	if (!two && (ch == '/' || ch == '%')) {
		if (!b)
			return -EDOM;
		if (u)
			o.v = ch == '/' ? a / b : a % b;
		else if (sb == -1)     /* INT64_MIN / -1 would trap */
			o.v = ch == '/' ? 0 - a : 0;
		else
			o.v = (uint64_t)(ch == '/' ? sa / sb : sa % sb);
	} else if (!two && ch == '*') {
		o.v = a * b;
	} else if (!two && ch == '+') {
		o.v = a + b;
	} else if (!two && ch == '-') {
		o.v = a - b;
	} else if (two && ch == '<' && t->text[1] == '<') {
		o = (struct cconst){ b >= 64 ? 0 : a << b, l.u };
	} else if (two && ch == '>' && t->text[1] == '>') {
		o.u = l.u;
		o.v = b >= 64 ? (sa < 0 && !l.u ? (uint64_t)-1 : 0) :
			l.u ? a >> b : (uint64_t)(sa >> b);
	} else if (prec == 6) {
		o = (struct cconst){ (a == b) == (ch == '='), false };
	} else if (prec == 7) {
		bool lt = u ? a < b : sa < sb;
		bool eq = a == b;
		bool v = ch == '<' ? (lt || (two && eq)) :
			(!lt && (two || !eq));
		o = (struct cconst){ v, false };
	} else if (!two && ch == '&') {
		o.v = a & b;
	} else if (!two && ch == '^') {
		o.v = a ^ b;
	} else if (!two && ch == '|') {
		o.v = a | b;
	} else if (ch == '&') {
		o = (struct cconst){ a && b, false };
	} else {
		o = (struct cconst){ a || b, false };
	}
	*out = o;
	return 0;
}
