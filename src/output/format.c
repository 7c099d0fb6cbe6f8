/* format.c - printf(), cat() and system() formats, the way bpftrace 0.17
 * formats them.
 *
 * bpftrace splits a format after each conversion and runs every piece
 * through C's snprintf with that one argument; what follows the last
 * conversion is appended untouched, and a format with no arguments is
 * printed untouched. Hence its oddities, kept here on purpose:
 * printf("100%%\n") prints "100%%", while printf("%d%%\n", 1) prints
 * "1%%" and printf("%%%d\n", 1) prints "%1". A piece's text also ends at
 * a NUL byte, so %c of 0 prints nothing.
 *
 * Integers are handed to snprintf the way bpftrace hands them: the 64-bit
 * value (sign- or zero-extended from its declared width), read through
 * the conversion's length modifier. So %d and %x see the low 32 bits,
 * %hhd the low 8, %ld/%lld/%jd/%zd/%td all 64.
 *
 * The conversion is never passed through from the script: it is parsed
 * into a fmt_spec and a format is rebuilt from the parsed parts, so a
 * script can never make snprintf read an argument that is not there. */
#include "output_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define FMT_MAX_WIDTH 65536

size_t fmt_parse_spec(const char *p, struct fmt_spec *spec)
{
	const char *start = p;
	memset(spec, 0, sizeof(*spec));
	spec->width = spec->prec = -1;
	if (*p++ != '%' || *p == '%')
		return 0;
	size_t nf = 0;
	while (*p == '-' || *p == '+' || *p == ' ' || *p == '#' || *p == '0') {
		if (!memchr(spec->flags, *p, nf) && nf < sizeof(spec->flags) - 1)
			spec->flags[nf++] = *p;
		p++;
	}
	if (*p >= '0' && *p <= '9') {
		long w = 0;
		while (*p >= '0' && *p <= '9') {
			if (w < FMT_MAX_WIDTH)
				w = w * 10 + (*p - '0');
			p++;
		}
		spec->width = (int)(w < FMT_MAX_WIDTH ? w : FMT_MAX_WIDTH);
	}
	if (*p == '.') {
		long pr = 0;
		p++;
		while (*p >= '0' && *p <= '9') {
			if (pr < FMT_MAX_WIDTH)
				pr = pr * 10 + (*p - '0');
			p++;
		}
		spec->prec = (int)(pr < FMT_MAX_WIDTH ? pr : FMT_MAX_WIDTH);
	}
	size_t nl = 0;
	while (*p == 'h' || *p == 'l' || *p == 'z' || *p == 'j' || *p == 't') {
		if (nl < sizeof(spec->length) - 1)
			spec->length[nl++] = *p;
		p++;
	}
	switch (*p) {
	case 'd': case 'i': case 'u': case 'x': case 'X': case 'o': case 'c':
	case 's': case 'p': case 'r':
		break;
	default:
		return 0;
	}
	spec->conv = *p++;
	if (spec->conv == 'r' && (*p == 'x' || *p == 'h'))
		spec->rmode = *p++;
	return (size_t)(p - start);
}

/* "%" flags width .prec — the common head of a rebuilt conversion. */
static size_t spec_head(char *f, size_t cap, const struct fmt_spec *spec,
			bool with_prec)
{
	int n = snprintf(f, cap, "%%%s", spec->flags);
	if (spec->width >= 0)
		n += snprintf(f + n, cap - (size_t)n, "%d", spec->width);
	if (with_prec && spec->prec >= 0)
		n += snprintf(f + n, cap - (size_t)n, ".%d", spec->prec);
	return (size_t)n;
}

/* Which C type the length modifier reads: 8, 16, 32 or 64 bits. */
static int spec_bits(const struct fmt_spec *spec)
{
	const char *l = spec->length;
	if (!l[0])
		return 32;
	if (strpbrk(l, "lzjt"))
		return 64;
	return strcmp(l, "hh") == 0 ? 8 : 16;
}

/* Digits of v in base 8, 10 or 16 (`upper` hex), written backwards
 * from end; returns where they start. One loop per base, so that each
 * divides by a constant (a multiplication, not a 64-bit division). */
static char *digits(char *end, uint64_t v, char conv)
{
	const char *dig = conv == 'X' ? "0123456789ABCDEF" : "0123456789abcdef";
	switch (conv) {
	case 'o':
		do { *--end = dig[v & 7]; v >>= 3; } while (v);
		break;
	case 'x':
	case 'X':
		do { *--end = dig[v & 15]; v >>= 4; } while (v);
		break;
	default:
		do { *--end = (char)('0' + v % 10); v /= 10; } while (v);
	}
	return end;
}

/* Only `a` or `b` among the flags (or none)? */
static bool flags_only(const struct fmt_spec *spec, char a, char b)
{
	for (const char *c = spec->flags; *c; c++)
		if (*c != a && *c != b)
			return false;
	return true;
}

static bool has_flag(const struct fmt_spec *spec, char f)
{
	for (const char *c = spec->flags; *c; c++)
		if (*c == f)
			return true;
	return false;
}

/* text padded to `width` with spaces, on the left or (`left`) right */
static void put_padded(struct sbuf *out, const char *s, size_t n, int width,
		       bool left)
{
	size_t pad = width > 0 && (size_t)width > n ? (size_t)width - n : 0;
	if (pad && !left)
		for (size_t i = 0; i < pad; i++)
			sbuf_putc(out, ' ');
	sbuf_put(out, s, n);
	if (pad && left)
		for (size_t i = 0; i < pad; i++)
			sbuf_putc(out, ' ');
}

/* The common conversions (d i u x X o, no precision, flags '-' and '0'
 * at most) without snprintf: a printf record is mostly these, and
 * building a format and running it through stdio was most of what the
 * reader spent on one (issue 26). Exactly what snprintf prints:
 * test_format compares the two over every width and flag it takes. */
static bool fmt_int_fast(struct sbuf *out, const struct fmt_spec *spec,
			 uint64_t v)
{
	char conv = spec->conv == 'i' ? 'd' : spec->conv;
	if (spec->prec >= 0 || !flags_only(spec, '-', '0') ||
	    (conv != 'd' && conv != 'u' && conv != 'x' && conv != 'X' &&
	     conv != 'o'))
		return false;
	int bits = spec_bits(spec);
	bool neg = false;
	if (bits < 64)
		v &= bits == 32 ? 0xffffffffull : bits == 16 ? 0xffffull : 0xffull;
	if (conv == 'd') {
		int64_t sv = bits == 64 ? (int64_t)v : bits == 32 ? (int32_t)v :
			bits == 16 ? (int16_t)v : (int8_t)v;
		neg = sv < 0;
		v = neg ? 0 - (uint64_t)sv : (uint64_t)sv;
	}
	char buf[32];
	char *end = buf + sizeof(buf);
	char *d = digits(end, v, conv);
	size_t nd = (size_t)(end - d);
	bool left = has_flag(spec, '-');
	if (!left && has_flag(spec, '0') && spec->width > 0) {
		/* zeros between the sign and the digits */
		size_t want = (size_t)spec->width;
		if (neg)
			sbuf_putc(out, '-');
		for (size_t i = nd + neg; i < want; i++)
			sbuf_putc(out, '0');
		sbuf_put(out, d, nd);
		return true;
	}
	if (neg)
		*--d = '-', nd++;
	put_padded(out, d, nd, spec->width, left);
	return true;
}

void fmt_int(struct sbuf *out, const struct fmt_spec *spec, uint64_t v,
	     const struct type *t)
{
	(void)t;
	char f[64];
	size_t n;
	if (fmt_int_fast(out, spec, v))
		return;
	switch (spec->conv) {
	case 'c':
		n = spec_head(f, sizeof(f), spec, false);
		snprintf(f + n, sizeof(f) - n, "c");
		sbuf_printf(out, f, (int)(unsigned char)v);
		return;
	case 'p':
		n = spec_head(f, sizeof(f), spec, true);
		snprintf(f + n, sizeof(f) - n, "p");
		sbuf_printf(out, f, (void *)(uintptr_t)v);
		return;
	default:
		break;
	}
	char conv = spec->conv == 'i' ? 'd' : spec->conv;
	if (!strchr("duxXo", conv))
		conv = 'd';
	n = spec_head(f, sizeof(f), spec, true);
	int bits = spec_bits(spec);
	const char *len = bits == 64 ? "ll" : bits == 16 ? "h" :
		bits == 8 ? "hh" : "";
	snprintf(f + n, sizeof(f) - n, "%s%c", len, conv);
	if (bits == 64) {
		if (conv == 'd')
			sbuf_printf(out, f, (long long)v);
		else
			sbuf_printf(out, f, (unsigned long long)v);
	} else {
		/* snprintf narrows to char/short itself for hh/h. */
		if (conv == 'd')
			sbuf_printf(out, f, (int)(uint32_t)v);
		else
			sbuf_printf(out, f, (unsigned)(uint32_t)v);
	}
}

/* %s (and %r) of text: width and precision as C applies them. */
static void fmt_text(struct sbuf *out, const struct fmt_spec *spec,
		     const char *s)
{
	if (flags_only(spec, '-', '-')) {   /* as snprintf, without it */
		size_t n = spec->prec >= 0 ? strnlen(s, (size_t)spec->prec) :
			strlen(s);
		put_padded(out, s, n, spec->width, spec->flags[0] == '-');
		return;
	}
	char f[64];
	size_t n = spec_head(f, sizeof(f), spec, true);
	snprintf(f + n, sizeof(f) - n, "s");
	sbuf_printf(out, f, s);
}

static bool type_is_intlike(const struct type *t)
{
	return t->kind == TYPE_INT;
}

static void fmt_arg(struct output *o, struct sbuf *out,
		    const struct fmt_spec *spec, const struct type *t,
		    const uint8_t *data)
{
	if (spec->conv == 'r') {
		struct sbuf tmp = { 0 };
		if (t->kind == TYPE_BUF) {
			size_t n;
			const uint8_t *b = value_buf_bytes(t, data, &n);
			value_buf_text(&tmp, b, n, spec->rmode);
		} else if (t->kind == TYPE_STR) {
			size_t n = strnlen((const char *)data, t->size);
			value_buf_text(&tmp, data, n, spec->rmode);
		} else {
			value_text(o, &tmp, t, data, VCTX_VALUE);
		}
		fmt_text(out, spec, tmp.s ? tmp.s : "");
		sbuf_free(&tmp);
		return;
	}
	if (spec->conv != 's' && type_is_intlike(t)) {
		fmt_int(out, spec, value_int(t, data), t);
		return;
	}
	/* %s, or a conversion given a value that is not an integer (sema
	 * should have refused it): the value's text. */
	struct sbuf tmp = { 0 };
	value_text(o, &tmp, t, data, VCTX_VALUE);
	fmt_text(out, spec, tmp.s ? tmp.s : "");
	sbuf_free(&tmp);
}

int fmt_format(struct output *o, struct sbuf *out, const char *fmt,
	       const struct type *args, const uint8_t *data, size_t size)
{
	uint32_t nargs = args ? (args->kind == TYPE_TUPLE ? args->nfields : 1) : 0;
	if (!fmt)
		fmt = "";
	if (nargs == 0) {
		sbuf_puts(out, fmt);
		return 0;
	}
	if (size < args->size)
		return -EINVAL;
	const char *p = fmt;
	size_t piece = out->n;   /* where the current piece's text starts */
	uint32_t k = 0;
	while (*p) {
		if (k == nargs) {
			sbuf_puts(out, p);   /* after the last conversion: as is */
			break;
		}
		if (*p != '%') {        /* the text up to the next '%' */
			const char *q = strchrnul(p, '%');
			sbuf_put(out, p, (size_t)(q - p));
			p = q;
			continue;
		}
		if (p[1] == '%') {
			sbuf_putc(out, '%');
			p += 2;
			continue;
		}
		struct fmt_spec spec;
		size_t len = fmt_parse_spec(p, &spec);
		if (!len) {
			sbuf_putc(out, *p++);
			continue;
		}
		const struct type *t = args;
		const uint8_t *d = data;
		if (args->kind == TYPE_TUPLE) {
			t = args->fields[k];
			d = data + args->offsets[k];
		}
		fmt_arg(o, out, &spec, t, d);
		k++;
		p += len;
		/* The piece was a C string to bpftrace: it ends at a NUL
		 * (which no number's digits hold). */
		bool digits_only = type_is_intlike(t) && spec.conv != 'c' &&
			spec.conv != 's' && spec.conv != 'r';
		if (!out->oom && !digits_only) {
			char *z = memchr(out->s + piece, '\0', out->n - piece);
			if (z)
				sbuf_truncate(out, (size_t)(z - out->s));
		}
		piece = out->n;
	}
	return 0;
}
