/* cdecl_expr.c - integer constant expressions in declarations: array
 * sizes, bitfield widths, enumerator values, aligned(N). Literals,
 * character constants, enum constants, sizeof/_Alignof of types, casts
 * to integer types, __builtin_offsetof, and C's operators, evaluated in
 * 64 bits (signed unless an operand is unsigned, as in C for the values
 * declarations use). */
#include "cdecl_int.h"
#include "cconst.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

struct cval {
	int64_t v;
	bool u;
};

static struct cval cexpr(struct cdecl *c);
static struct cval ccond(struct cdecl *c);

static bool cfail(struct cdecl *c, const char *what)
{
	if (!c->bad)
		cd_error(c, cd_peek(c, 0), "BAD_DECL", "%s in a constant "
			 "expression", what);
	c->bad = true;
	return false;
}

static struct cval number(struct cdecl *c, const struct ptok *t)
{
	struct cval r = { 0, false };
	char buf[96];
	if (t->len >= sizeof(buf)) {
		cfail(c, "number too long");
		return r;
	}
	memcpy(buf, t->text, t->len);
	buf[t->len] = 0;
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
	uint64_t v = strtoull(p, &end, base);
	if (end == p) {
		cfail(c, "malformed number");
		return r;
	}
	for (; *end; end++) {
		if (*end == 'u' || *end == 'U')
			r.u = true;
		else if (*end != 'l' && *end != 'L')
			break;
	}
	if (*end)
		cfail(c, "not an integer");
	r.v = (int64_t)v;
	if (v > INT64_MAX)
		r.u = true;
	return r;
}

static struct cval character(const struct ptok *t)
{
	const char *p = memchr(t->text, '\'', t->len);
	const char *end = t->text + t->len - 1;
	int64_t v = 0;
	for (p = p ? p + 1 : end; p < end;) {
		int ch = (unsigned char)*p++;
		if (ch == '\\' && p < end) {
			ch = (unsigned char)*p++;
			const char *esc = "n\nt\tr\ra\ab\bf\fv\v0\0";
			const char *e = strchr(esc, ch);
			if (ch == 'x') {
				ch = 0;
				while (p < end && isxdigit((unsigned char)*p)) {
					int d = tolower((unsigned char)*p++);
					ch = ch * 16 + (isdigit(d) ? d - '0' :
							d - 'a' + 10);
				}
			} else if (ch >= '0' && ch <= '7') {
				ch -= '0';
				for (int k = 0; k < 2 && p < end && *p >= '0' &&
				     *p <= '7'; k++)
					ch = ch * 8 + *p++ - '0';
			} else if (e && (e - esc) % 2 == 0) {
				ch = (unsigned char)e[1];
			}
		}
		v = (v << 8) | (ch & 0xff);
	}
	if (t->text[0] == '\'' && v < 256)
		v = (signed char)v;
	return (struct cval){ v, false };
}

/* sizeof(type) / _Alignof(type) / sizeof expr: types only, as headers
 * use them. */
static struct cval size_or_align(struct cdecl *c, bool align)
{
	struct cval r = { 0, true };
	if (!cd_is(c, 0, "(") || !cd_type_start(c, 1)) {
		cfail(c, "sizeof of an expression is not supported");
		return r;
	}
	c->i++;
	const struct ctype *t = cd_type_name(c);
	if (!t || !cd_expect(c, ")", "sizeof"))
		return r;
	if (!align && t->kind == CT_STRUCT && !t->complete) {
		cfail(c, "sizeof of an incomplete struct");
		return r;
	}
	r.v = align ? t->align : (t->kind == CT_FUNC || t->kind == CT_VOID ?
				   1 : t->size);
	return r;
}

/* __builtin_offsetof(type, member.member[...]) */
static struct cval offset_of(struct cdecl *c)
{
	struct cval r = { 0, true };
	if (!cd_expect(c, "(", "__builtin_offsetof"))
		return r;
	const struct ctype *t = cd_type_name(c);
	if (!t || !cd_expect(c, ",", "__builtin_offsetof"))
		return r;
	for (;;) {
		const struct ptok *n = cd_peek(c, 0);
		if (n->kind != PT_IDENT) {
			cfail(c, "member name expected");
			return r;
		}
		char name[128];
		snprintf(name, sizeof(name), "%.*s", (int)n->len, n->text);
		uint32_t bits;
		const struct ctype_field *f = ctype_field_find(t, name, &bits);
		if (!f) {
			cfail(c, "no such member");
			return r;
		}
		r.v += bits / 8;
		t = f->type;
		c->i++;
		while (cd_accept(c, "[")) {
			int64_t k;
			if (!cd_const_expr(c, &k) || !cd_expect(c, "]", "[") ||
			    t->kind != CT_ARRAY || !t->elem)
				return r;
			r.v += k * (int64_t)t->elem->size;
			t = t->elem;
		}
		if (!cd_accept(c, "."))
			break;
	}
	cd_expect(c, ")", "__builtin_offsetof");
	return r;
}

static struct cval unary(struct cdecl *c)
{
	struct cval r = { 0, false };
	const struct ptok *t = cd_peek(c, 0);
	if (c->bad)
		return r;
	if (++c->depth > CDECL_MAX_DEPTH) {
		cfail(c, "expression nested too deep");
		c->depth--;
		return r;
	}
	if (t->kind == PT_PUNCT && t->len == 1 && strchr("-+~!", t->text[0])) {
		c->i++;
		r = unary(c);
		switch (t->text[0]) {
		case '-': r.v = (int64_t)(0 - (uint64_t)r.v); break;
		case '~': r.v = ~r.v; break;
		case '!': r.v = !r.v; r.u = false; break;
		}
	} else if (cd_is(c, 0, "(") && cd_type_start(c, 1)) {
		c->i++;
		const struct ctype *ty = cd_type_name(c);
		if (ty && cd_expect(c, ")", "cast")) {
			r = unary(c);
			if (ty->kind == CT_INT && ty->size < 8) {
				unsigned sh = 64 - ty->size * 8;
				r.v = ty->is_signed ?
					(int64_t)((uint64_t)r.v << sh) >> sh :
					(int64_t)(((uint64_t)r.v << sh) >> sh);
			}
			r.u = ty->kind == CT_PTR || (ty->kind == CT_INT &&
						     !ty->is_signed);
		}
	} else if (cd_accept(c, "(")) {
		r = cexpr(c);
		cd_expect(c, ")", "expression");
	} else if (t->kind == PT_NUM) {
		r = number(c, t);
		c->i++;
	} else if (t->kind == PT_CHAR) {
		r = character(t);
		c->i++;
	} else if (t->kind == PT_IDENT && (ptok_is(t, "sizeof") ||
					   ptok_is(t, "_Alignof") ||
					   ptok_is(t, "__alignof__") ||
					   ptok_is(t, "__alignof"))) {
		c->i++;
		r = size_or_align(c, !ptok_is(t, "sizeof"));
	} else if (t->kind == PT_IDENT && ptok_is(t, "__builtin_offsetof")) {
		c->i++;
		r = offset_of(c);
	} else if (t->kind == PT_IDENT) {
		char name[256];
		snprintf(name, sizeof(name), "%.*s", (int)t->len, t->text);
		int64_t v;
		if (ctypes_find_const(c->reg, name, &v) == 0) {
			r.v = v;
			c->i++;
		} else {
			cd_error(c, t, "UNKNOWN_TYPE", "'%s' is not a constant "
				 "the definitions or the kernel's BTF define",
				 name);
			c->bad = true;
		}
	} else {
		cfail(c, t->kind == PT_EOF ? "end of input" :
		      "unexpected token");
	}
	c->depth--;
	return r;
}

static struct cval binary(struct cdecl *c, int min)
{
	struct cval l = unary(c);
	for (;;) {
		const struct ptok *op = cd_peek(c, 0);
		int p = cconst_prec(op);
		if (!p || p < min || c->bad)
			return l;
		c->i++;
		struct cval r = binary(c, p + 1);
		struct cconst o;
		if (cconst_binary(op, p, (struct cconst){ (uint64_t)l.v, l.u },
				  (struct cconst){ (uint64_t)r.v, r.u },
				  &o) < 0) {
			cfail(c, "division by zero");
			return l;
		}
		l = (struct cval){ (int64_t)o.v, o.u };
	}
}

static struct cval ccond(struct cdecl *c)
{
	struct cval v = binary(c, 1);
	if (!c->bad && cd_accept(c, "?")) {
		struct cval a = cexpr(c);
		if (!cd_expect(c, ":", "?:"))
			return v;
		struct cval b = ccond(c);
		return v.v ? a : b;
	}
	return v;
}

static struct cval cexpr(struct cdecl *c)
{
	struct cval v = ccond(c);
	while (!c->bad && cd_accept(c, ","))
		v = ccond(c);
	return v;
}

bool cd_const_expr(struct cdecl *c, int64_t *v)
{
	struct cval r = cexpr(c);
	*v = r.v;
	return !c->bad;
}

bool cd_const_cond(struct cdecl *c, int64_t *v)
{
	struct cval r = ccond(c);
	*v = r.v;
	return !c->bad;
}
