/* dprint.c - D's print() of a struct, union or array value, in the
 * layout libdtrace's dt_print.c gives it: the type, then each member
 * on its own line, indented four spaces per level, as
 *
 *   struct req {
 *       int id = 0x7
 *       char [8] name = [ "alpha" ]
 *       struct pair pair = {
 *           short a = 0x3
 *       }
 *       unsigned int flag :1 = 0x1
 *       int [2][2] arr = [ [ 0x1, 0x2 ], [ 0x3, 0x4 ] ]
 *   }
 *
 * integers in hex ("%#x" of their bytes, unsigned), a plain char
 * quoted ('a', '\0', '\ooo'), an enum by its enumerator's name (or
 * number), a bit-field its width after the name, a pointer in hex, a
 * char array whose bytes are printable up to a NUL as a string, other
 * arrays "[ a, b ]" (of structs, each on lines of its own). The final
 * "}" has no newline after it, as in DTrace. sonde's C types keep no
 * typedef names: a member declared with one is named by what it stands
 * for. Everything is bounded by the value's size and a nesting depth. */
#include "output_int.h"

#include <ctype.h>
#include <string.h>

#define DP_MAX_NEST 32

struct dp {
	struct sbuf *out;
	struct arena *a;
};

static void indent(struct dp *p, int n)
{
	for (int i = 0; i < n * 4; i++)
		sbuf_putc(p->out, ' ');
}

static uint64_t load(const uint8_t *d, size_t avail, size_t n)
{
	uint64_t v = 0;
	memcpy(&v, d, n < avail ? (n > 8 ? 8 : n) : (avail > 8 ? 8 : avail));
	return v;
}

/* C's spelling of a type as CTF names it: "int [2][2]", "char [8]". */
static const char *dp_type_name(struct dp *p, const struct ctype *t)
{
	if (t && t->kind == CT_ARRAY) {
		const struct ctype *e = t;
		char dims[128] = "";
		size_t n = 0;
		for (int i = 0; e && e->kind == CT_ARRAY && i < 16; i++) {
			int w = snprintf(dims + n, sizeof(dims) - n, "[%u]",
					 e->nelems);
			if (w < 0 || (size_t)w >= sizeof(dims) - n)
				break;
			n += (size_t)w;
			e = e->elem;
		}
		return arena_printf(p->a, "%s %s", ctype_name(p->a, e), dims);
	}
	return ctype_name(p->a, t);
}

static bool is_struct(const struct ctype *t)
{
	return t && (t->kind == CT_STRUCT || t->kind == CT_UNION);
}

static void value(struct dp *p, const struct ctype *t, const uint8_t *d,
		  size_t avail, int depth, int nest, int level);

static void hex(struct dp *p, uint64_t v, uint32_t size)
{
	if (size < 8)
		v &= (1ull << (size * 8)) - 1;
	sbuf_printf(p->out, "%#llx", (unsigned long long)v);
}

static void scalar(struct dp *p, const struct ctype *t, const uint8_t *d,
		   size_t avail)
{
	uint32_t size = t->size > 8 ? 8 : t->size;
	uint64_t v = load(d, avail, size);
	if (t->kind == CT_INT && t->is_char && size == 1) {
		char c = (char)v;
		if (isprint((unsigned char)c))
			sbuf_printf(p->out, "'%c'", c);
		else if (c == 0)
			sbuf_puts(p->out, "'\\0'");
		else
			sbuf_printf(p->out, "'\\%03o'", (unsigned char)c);
		return;
	}
	if (t->kind == CT_ENUM) {
		int64_t x = size == 1 ? (int64_t)(uint8_t)v :
			size == 2 ? (int64_t)(uint16_t)v : (int64_t)(int32_t)v;
		for (uint32_t i = 0; i < t->nvalues; i++)
			if (t->values[i].value == x) {
				sbuf_puts(p->out, t->values[i].name);
				return;
			}
		sbuf_printf(p->out, "%d", (int)x);
		return;
	}
	if (t->kind == CT_FLOAT) {
		sbuf_puts(p->out, "<unknown encoding>");
		return;
	}
	hex(p, v, size);
}

/* A char array printable up to a NUL within it. */
static bool is_string(const struct ctype *t, const uint8_t *d, size_t avail)
{
	if (!t->elem || t->elem->kind != CT_INT || !t->elem->is_char)
		return false;
	for (uint32_t i = 0; i < t->nelems && i < avail; i++) {
		if (d[i] == 0)
			return true;
		if (!isprint(d[i]))
			return false;
	}
	return false;
}

static void array(struct dp *p, const struct ctype *t, const uint8_t *d,
		  size_t avail, int depth, int nest, int level)
{
	if (is_string(t, d, avail)) {
		size_t n = strnlen((const char *)d, avail);
		if (depth)
			sbuf_puts(p->out, "[ ");
		sbuf_printf(p->out, "\"%.*s\"", (int)n, (const char *)d);
		if (depth)
			sbuf_puts(p->out, " ]");
		return;
	}
	const struct ctype *e = t->elem;
	uint32_t esize = e ? e->size : 0;
	sbuf_puts(p->out, "[ ");
	int enest = nest + depth + 1;
	for (uint32_t i = 0; e && i < t->nelems; i++) {
		size_t off = (size_t)esize * i;
		if (off > avail || esize > avail - off)
			break;
		if (is_struct(e)) {
			/* an element struct: its type and members on lines of
			 * their own */
			sbuf_putc(p->out, '\n');
			indent(p, enest);
			sbuf_printf(p->out, "%s ", dp_type_name(p, e));
		}
		value(p, e, d + off, avail - off, 0, enest, level + 1);
		if (i + 1 < t->nelems)
			sbuf_puts(p->out, ", ");
		else if (is_struct(e))
			sbuf_putc(p->out, '\n');
	}
	if (is_struct(e))
		indent(p, depth + nest);
	else
		sbuf_putc(p->out, ' ');
	sbuf_putc(p->out, ']');
}

static void bitfield(struct dp *p, const struct ctype_field *f,
		     const uint8_t *d, size_t avail)
{
	uint32_t byte = f->bit_offset / 8, shift = f->bit_offset % 8;
	size_t n = (shift + f->bit_size + 7) / 8;
	uint64_t v = byte < avail ? load(d + byte, avail - byte, n) >> shift : 0;
	if (f->bit_size < 64)
		v &= (1ull << f->bit_size) - 1;
	sbuf_printf(p->out, "%#llx", (unsigned long long)v);
}

/* The members of a struct or union at depth+1 (an anonymous member's
 * own members in place), then the closing brace at depth. */
static void members(struct dp *p, const struct ctype *t, const uint8_t *d,
		    size_t avail, int depth, int nest, int level)
{
	for (uint32_t i = 0; i < t->nfields; i++) {
		const struct ctype_field *f = &t->fields[i];
		uint32_t off = f->bit_offset / 8;
		if (off > avail)
			break;
		indent(p, depth + 1 + nest);
		const char *tn = dp_type_name(p, f->type);
		size_t tl = strlen(tn);
		sbuf_puts(p->out, tn);
		if (f->name) {
			if (tl && tn[tl - 1] != '*' && tn[tl - 1] != ' ')
				sbuf_putc(p->out, ' ');
			sbuf_puts(p->out, f->name);
			if (f->bit_size)
				sbuf_printf(p->out, " :%u", f->bit_size);
			sbuf_puts(p->out, " =");
		}
		sbuf_putc(p->out, ' ');
		if (f->bit_size)
			bitfield(p, f, d, avail);
		else
			value(p, f->type, d + off, avail - off, depth + 1, nest,
			      level + 1);
		sbuf_putc(p->out, '\n');
	}
	indent(p, depth + nest);
	sbuf_putc(p->out, '}');
}

static void value(struct dp *p, const struct ctype *t, const uint8_t *d,
		  size_t avail, int depth, int nest, int level)
{
	if (!t || level > DP_MAX_NEST) {
		sbuf_puts(p->out, "?");
		return;
	}
	switch (t->kind) {
	case CT_STRUCT:
	case CT_UNION:
		sbuf_puts(p->out, "{\n");
		members(p, t, d, avail, depth, nest, level);
		return;
	case CT_ARRAY:
		array(p, t, d, avail, depth, nest, level);
		return;
	default:
		scalar(p, t, d, avail);
		return;
	}
}

void dprint_value(struct output *o, struct sbuf *out, const struct ctype *t,
		  const uint8_t *data, size_t size)
{
	struct arena a;
	arena_init(&a);
	struct dp p = { .out = out, .a = &a };
	sbuf_printf(out, "%s ", dp_type_name(&p, t));
	value(&p, t, data, size, 0, 0, 0);
	if (!is_struct(t))
		sbuf_putc(out, '\n');
	arena_free(&a);
	(void)o;
}
