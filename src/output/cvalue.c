/* cvalue.c - C struct, union and array values as text and JSON, walked
 * through their C types (types.h), the way bpftrace 0.17 prints them:
 *
 *   text   { .a = 1, .b = { .c = 2 }, .arr = [1,2,3], .name = comm }
 *   key    {.a=1,.b={.c=2},.arr=[1,2,3],.name=comm}   (map keys)
 *   json   { "a": 1, "b": { "c": 2 }, "arr": [1,2,3], "name": "comm" }
 *
 * Members of anonymous structs and unions appear in place, as bpftrace
 * flattens them. char[N] prints as the string up to its first NUL;
 * other arrays element by element. Integers and enums print as numbers
 * by their size and sign (bitfields extracted), bools as numbers, and
 * pointers, as bpftrace prints them inside structs, as signed 64-bit
 * numbers (in map keys in hex; bpftrace 0.26 prints them in hex
 * everywhere, cvalue_text_026). Everything is bounds-checked against the value's size: a
 * type that claims more than the data holds prints what is there. */
#include "output_int.h"

#include <string.h>

/* Nesting bound: a struct inside a struct ... (real types stay far
 * below; malformed ones must not recurse without end). */
#define MAX_NEST 64

/* CS_JSON26: JSON without the spaces inside braces, as bpftrace 0.26
 * writes it ({"m": 2, "n": 3}) */
enum cstyle { CS_TEXT, CS_KEY, CS_JSON, CS_JSON26, CS_TEXT26 };

static void cval(struct sbuf *out, const struct ctype *t, const uint8_t *d,
		 size_t avail, enum cstyle st, int depth);

static uint64_t load_n(const uint8_t *d, size_t n)
{
	uint64_t v = 0;
	memcpy(&v, d, n > 8 ? 8 : n);
	return v;
}

static void number(struct sbuf *out, uint64_t v, unsigned bytes,
		   bool is_signed)
{
	unsigned bits = bytes * 8;
	if (bits && bits < 64) {
		uint64_t mask = (1ull << bits) - 1;
		v &= mask;
		if (is_signed && (v >> (bits - 1)) & 1)
			v |= ~mask;
	}
	if (is_signed)
		sbuf_printf(out, "%lld", (long long)v);
	else
		sbuf_printf(out, "%llu", (unsigned long long)v);
}

static void scalar(struct sbuf *out, const struct ctype *t, const uint8_t *d,
		   size_t avail, enum cstyle st)
{
	size_t n = t->size < avail ? t->size : avail;
	uint64_t v = load_n(d, n > 8 ? 8 : n);
	switch (t->kind) {
	case CT_PTR:
		/* bpftrace 0.17 prints pointers in structs as int64, in map
		 * keys in hex (as a pointer key itself, value.c) */
		if (st == CS_KEY || st == CS_TEXT26)
			sbuf_printf(out, "0x%llx", (unsigned long long)v);
		else
			sbuf_printf(out, "%lld", (long long)v);
		return;
	case CT_INT:
	case CT_ENUM:
		/* bpftrace's own bool (the elements of a (bool[N]) cast,
		 * named "bool"), not C's _Bool: true and false */
		if (t->is_bool && t->name && strcmp(t->name, "bool") == 0) {
			sbuf_puts(out, v ? "true" : "false");
			return;
		}
		number(out, v, (unsigned)(n > 8 ? 8 : n), t->is_signed);
		return;
	default:
		/* a float: no value sonde reads; 0.26's JSON says null
		 * (its test json-output "none type") */
		sbuf_puts(out, st == CS_JSON26 ? "null" : "0");
		return;
	}
}

static void bitfield(struct sbuf *out, const struct ctype_field *f,
		     const uint8_t *d, size_t avail, uint32_t bit_offset)
{
	uint32_t byte = bit_offset / 8, shift = bit_offset % 8;
	size_t n = (shift + f->bit_size + 7) / 8;
	if (byte >= avail) {
		sbuf_putc(out, '0');
		return;
	}
	if (n > avail - byte)
		n = avail - byte;
	uint64_t v = load_n(d + byte, n > 8 ? 8 : n) >> shift;
	unsigned w = f->bit_size >= 64 ? 64 : f->bit_size;
	if (w < 64) {
		uint64_t mask = (1ull << w) - 1;
		v &= mask;
		if (f->type->is_signed && (v >> (w - 1)) & 1)
			v |= ~mask;
	}
	if (f->type->is_signed)
		sbuf_printf(out, "%lld", (long long)v);
	else
		sbuf_printf(out, "%llu", (unsigned long long)v);
}

static void string(struct sbuf *out, const uint8_t *d, size_t n,
		   enum cstyle st)
{
	size_t len = strnlen((const char *)d, n);
	if (st == CS_JSON || st == CS_JSON26)
		json_str(out, (const char *)d, len);
	else
		sbuf_put(out, (const char *)d, len);
}

/* The fields of t (and of its anonymous members, in place), each as
 * `.name = value`; *first tracks the separator across the flattening. */
static void fields(struct sbuf *out, const struct ctype *t, const uint8_t *d,
		   size_t avail, uint32_t base_bits, enum cstyle st,
		   bool *first, int depth)
{
	for (uint32_t i = 0; i < t->nfields; i++) {
		const struct ctype_field *f = &t->fields[i];
		uint32_t bits = base_bits + f->bit_offset;
		if (!f->name) {
			if (ctype_is_aggregate(f->type) && depth < MAX_NEST)
				fields(out, f->type, d, avail, bits, st, first,
				       depth + 1);
			continue;
		}
		if (!*first)
			sbuf_puts(out, st == CS_KEY ? "," : ", ");
		*first = false;
		if (st == CS_JSON || st == CS_JSON26) {
			json_str(out, f->name, strlen(f->name));
			sbuf_puts(out, ": ");
		} else {
			sbuf_printf(out, st == CS_KEY ? ".%s=" : ".%s = ", f->name);
		}
		if (f->bit_size) {
			bitfield(out, f, d, avail, bits);
			continue;
		}
		uint32_t off = bits / 8;
		if (off > avail)
			off = (uint32_t)avail;
		cval(out, f->type, d + off, avail - off, st, depth + 1);
	}
}

static void cval(struct sbuf *out, const struct ctype *t, const uint8_t *d,
		 size_t avail, enum cstyle st, int depth)
{
	if (!t || depth > MAX_NEST) {
		sbuf_putc(out, '0');
		return;
	}
	switch (t->kind) {
	case CT_STRUCT:
	case CT_UNION: {
		bool first = true;
		bool tight = st == CS_KEY || st == CS_JSON26;
		sbuf_puts(out, tight ? "{" : "{ ");
		fields(out, t, d, avail, 0, st, &first, depth);
		sbuf_puts(out, tight ? "}" : " }");
		return;
	}
	case CT_ARRAY: {
		if (ctype_is_char_array(t)) {
			string(out, d, t->nelems < avail ? t->nelems : avail, st);
			return;
		}
		uint32_t es = t->elem ? t->elem->size : 0;
		sbuf_putc(out, '[');
		for (uint32_t i = 0; i < t->nelems; i++) {
			if (i)
				sbuf_putc(out, ',');
			size_t off = (size_t)i * es;
			if (off > avail)
				off = avail;
			cval(out, t->elem, d + off, avail - off, st, depth + 1);
		}
		sbuf_putc(out, ']');
		return;
	}
	default:
		scalar(out, t, d, avail, st);
		return;
	}
}

void cvalue_text(struct sbuf *out, const struct type *t, const uint8_t *data,
		 bool key)
{
	cval(out, t->ctype, data, t->size, key ? CS_KEY : CS_TEXT, 0);
}

void cvalue_text_026(struct sbuf *out, const struct type *t,
		     const uint8_t *data)
{
	cval(out, t->ctype, data, t->size, CS_TEXT26, 0);
}

void cvalue_json(struct sbuf *out, const struct type *t, const uint8_t *data,
		 bool tight)
{
	cval(out, t->ctype, data, t->size, tight ? CS_JSON26 : CS_JSON, 0);
}
