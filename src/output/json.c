/* json.c - values and messages as JSON, in bpftrace 0.17's schema:
 * {"type": "<kind>", "data": ...} on one line each. */
#include "output_int.h"

#include <string.h>

/* Bytes that go into a JSON string as they are: printable ASCII but
 * the quote (0x22) and the backslash (0x5c); GNU range initializers. */
static const bool json_plain[256] = {
	[0x20 ... 0x21] = true, [0x23 ... 0x5b] = true, [0x5d ... 0x7f] = true,
};

/* bpftrace escapes ", \, newline, CR and tab by name and every other byte
 * below 0x20 as \u00XX. It tests the byte as a (signed) char, so bytes
 * from 0x80 up are escaped too, printed through "%04x" of the negative
 * value: 0xc8 becomes "\uffffffc8". That is odd, but it is still valid
 * JSON (the escape \uffff followed by "ffc8") and it keeps every line
 * plain ASCII, so it is kept byte for byte. */
/* The longest a byte becomes: "\uffffffc8" */
#define JSON_ESCAPED_MAX 10

/* s[0..n) escaped, quoted, at w (room for 2 + n * JSON_ESCAPED_MAX). */
static char *json_escape(char *w, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	*w++ = '"';
	for (size_t i = 0; i < n; i++) {
		signed char c = (signed char)s[i];
		if (json_plain[(unsigned char)c]) {
			*w++ = (char)c;
			continue;
		}
		*w++ = '\\';
		switch (c) {
		case '"': *w++ = '"'; break;
		case '\\': *w++ = '\\'; break;
		case '\n': *w++ = 'n'; break;
		case '\r': *w++ = 'r'; break;
		case '\t': *w++ = 't'; break;
		default: {      /* "%04x" of the byte as a signed char */
			unsigned u = (unsigned)(int)c;
			int digits = u > 0xffff ? 8 : 4;
			*w++ = 'u';
			for (int k = digits - 1; k >= 0; k--)
				*w++ = hex[(u >> (4 * k)) & 15];
		}
		}
	}
	*w++ = '"';
	return w;
}

void json_str(struct sbuf *out, const char *s, size_t n)
{
	if (n > (SIZE_MAX - 3) / JSON_ESCAPED_MAX ||
	    !sbuf_reserve(out, 2 + n * JSON_ESCAPED_MAX))
		return;
	char *w = json_escape(out->s + out->n, s, n);
	out->n = (size_t)(w - out->s);
	*w = '\0';
}

/* One line, written in place: a printf record's line is mostly this. */
void json_message(struct sbuf *out, const char *type, const char *text,
		  size_t n)
{
	static const char head[] = "{\"type\": \"", mid[] = "\", \"data\": ";
	size_t tl = strlen(type);
	if (n > (SIZE_MAX - 64 - tl) / JSON_ESCAPED_MAX ||
	    !sbuf_reserve(out, sizeof(head) + tl + sizeof(mid) + 4 +
			  n * JSON_ESCAPED_MAX))
		return;
	char *w = out->s + out->n;
	memcpy(w, head, sizeof(head) - 1);
	w += sizeof(head) - 1;
	memcpy(w, type, tl);
	w += tl;
	memcpy(w, mid, sizeof(mid) - 1);
	w += sizeof(mid) - 1;
	w = json_escape(w, text, n);
	*w++ = '}';
	*w++ = '\n';
	out->n = (size_t)(w - out->s);
	*w = '\0';
}

void json_value(struct output *o, struct sbuf *out, const struct type *t,
		const uint8_t *data)
{
	switch (t->kind) {
	case TYPE_INT: {
		uint64_t v = value_int(t, data);
		if (t->is_bool)
			sbuf_puts(out, v ? "true" : "false");
		else if (t->is_signed)
			sbuf_printf(out, "%lld", (long long)v);
		else
			sbuf_printf(out, "%llu", (unsigned long long)v);
		return;
	}
	case TYPE_COUNT:
	case TYPE_SUM:
	case TYPE_MIN:
	case TYPE_MAX:
		value_text(o, out, t, data, VCTX_VALUE);
		return;
	case TYPE_STRUCT:
	case TYPE_ARRAY:
		/* 0.26 writes {"m": 2}, 0.17 { "m": 2 } */
		cvalue_json(out, t, data, o && o->prog->dialect >= DIALECT_026);
		return;
	case TYPE_TUPLE:
		if (t->names) {
			/* a record: an object, {"a": 0, "b": "str"} */
			sbuf_putc(out, '{');
			for (uint32_t i = 0; i < t->nfields; i++) {
				if (i)
					sbuf_puts(out, ", ");
				json_str(out, t->names[i], strlen(t->names[i]));
				sbuf_puts(out, ": ");
				json_value(o, out, t->fields[i],
					   data + t->offsets[i]);
			}
			sbuf_putc(out, '}');
			return;
		}
		/* bpftrace writes tuples without spaces: [1,"a"] */
		sbuf_putc(out, '[');
		for (uint32_t i = 0; i < t->nfields; i++) {
			if (i)
				sbuf_putc(out, ',');
			json_value(o, out, t->fields[i], data + t->offsets[i]);
		}
		sbuf_putc(out, ']');
		return;
	default: {
		struct sbuf tmp = { 0 };
		value_text(o, &tmp, t, data, VCTX_VALUE);
		json_str(out, tmp.s ? tmp.s : "", tmp.n);
		sbuf_free(&tmp);
		return;
	}
	}
}
