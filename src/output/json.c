/* json.c - values and messages as JSON, in bpftrace 0.17's schema:
 * {"type": "<kind>", "data": ...} on one line each. */
#include "output_int.h"

#include <string.h>

/* bpftrace escapes ", \, newline, CR and tab by name and every other byte
 * below 0x20 as \u00XX. It tests the byte as a (signed) char, so bytes
 * from 0x80 up are escaped too, printed through "%04x" of the negative
 * value: 0xc8 becomes "\uffffffc8". That is odd, but it is still valid
 * JSON (the escape \uffff followed by "ffc8") and it keeps every line
 * plain ASCII, so it is kept byte for byte. */
void json_str(struct sbuf *out, const char *s, size_t n)
{
	sbuf_putc(out, '"');
	for (size_t i = 0; i < n; i++) {
		signed char c = (signed char)s[i];
		switch (c) {
		case '"': sbuf_puts(out, "\\\""); break;
		case '\\': sbuf_puts(out, "\\\\"); break;
		case '\n': sbuf_puts(out, "\\n"); break;
		case '\r': sbuf_puts(out, "\\r"); break;
		case '\t': sbuf_puts(out, "\\t"); break;
		default:
			if (c < 0x20)
				sbuf_printf(out, "\\u%04x", (unsigned)(int)c);
			else
				sbuf_putc(out, (char)c);
		}
	}
	sbuf_putc(out, '"');
}

void json_message(struct sbuf *out, const char *type, const char *text,
		  size_t n)
{
	sbuf_printf(out, "{\"type\": \"%s\", \"data\": ", type);
	json_str(out, text, n);
	sbuf_puts(out, "}\n");
}

void json_value(struct output *o, struct sbuf *out, const struct type *t,
		const uint8_t *data)
{
	switch (t->kind) {
	case TYPE_INT: {
		uint64_t v = value_int(t, data);
		if (t->is_signed)
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
		cvalue_json(out, t, data);
		return;
	case TYPE_TUPLE:
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
