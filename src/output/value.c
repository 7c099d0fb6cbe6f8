/* value.c - one script value as text, the way bpftrace 0.17 prints it in
 * print(), printf("%s"), map keys and map values. Layouts per types.h. */
#include "output_int.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

static uint64_t load64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

uint64_t value_int(const struct type *t, const uint8_t *data)
{
	uint64_t v = load64(data);
	unsigned bits = t && t->kind == TYPE_INT ? t->bits : 64;
	if (bits == 0 || bits >= 64)
		return v;
	uint64_t mask = (1ull << bits) - 1;
	v &= mask;
	if (t->is_signed && (v >> (bits - 1)) & 1)
		v |= ~mask;
	return v;
}

int64_t value_sint(const struct type *t, const uint8_t *data)
{
	return (int64_t)value_int(t, data);
}

const uint8_t *value_buf_bytes(const struct type *t, const uint8_t *data,
			       size_t *n)
{
	uint32_t len;
	memcpy(&len, data, sizeof(len));
	size_t room = t->size > 4 ? t->size - 4 : 0;
	*n = len < room ? len : room;
	return data + 4;
}

void value_buf_text(struct sbuf *out, const uint8_t *bytes, size_t n,
		    char mode)
{
	for (size_t i = 0; i < n; i++) {
		uint8_t c = bytes[i];
		if (mode == 'h')
			sbuf_printf(out, i ? " %02x" : "%02x", c);
		else if (mode == 'x' || c < 32 || c > 126)
			sbuf_printf(out, "\\x%02x", c);
		else
			sbuf_putc(out, (char)c);
	}
}

/* An address nothing resolved: C++'s `std::hex << std::showbase`, which
 * bpftrace uses, prints zero as "0". */
static void addr_text(struct sbuf *out, uint64_t a)
{
	if (a)
		sbuf_printf(out, "0x%llx", (unsigned long long)a);
	else
		sbuf_putc(out, '0');
}

static void sym_text(struct output *o, struct sbuf *out, const uint8_t *data,
		     bool user, bool module)
{
	uint64_t addr = load64(data);
	int64_t pid = user ? (int64_t)load64(data + 8) : -1;
	if (o && o->have_hooks && o->hooks.sym)
		o->hooks.sym(o->hooks.ctx, out, addr, pid, user, module);
	else
		addr_text(out, addr);
}

/* Without the stacks part's hook a stack prints as its id, in the shape
 * of a one-frame stack, so the output at least shows that one was there. */
static void stack_text(struct output *o, struct sbuf *out,
		       const struct type *t, const uint8_t *data,
		       enum value_ctx ctx)
{
	unsigned indent = ctx == VCTX_KEY ? 4 : 8;
	if (o && o->have_hooks && o->hooks.stack) {
		o->hooks.stack(o->hooks.ctx, out, t, data, indent);
		return;
	}
	sbuf_printf(out, "\n%*s[stack id %llu]\n", (int)indent, "",
		    (unsigned long long)load64(data));
}

static void inet_text(struct sbuf *out, const uint8_t *data, uint32_t size)
{
	char s[INET6_ADDRSTRLEN];
	uint64_t family = load64(data);
	if (size < 8 + 16)
		return;
	if (family == AF_INET && inet_ntop(AF_INET, data + 8, s, sizeof(s)))
		sbuf_puts(out, s);
	else if (family == AF_INET6 &&
		 inet_ntop(AF_INET6, data + 8, s, sizeof(s)))
		sbuf_puts(out, s);
}

/* username: the first /etc/passwd entry with that uid, or nothing, as
 * bpftrace resolves it (it reads the file, not NSS). */
static void username_text(struct sbuf *out, uint64_t uid)
{
	FILE *f = fopen("/etc/passwd", "r");
	if (!f)
		return;
	char line[1024];
	while (fgets(line, sizeof(line), f)) {
		char *c1 = strchr(line, ':');
		char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2)
			continue;
		char *end;
		unsigned long long u = strtoull(c2 + 1, &end, 10);
		if (end == c2 + 1 || *end != ':' || u != uid)
			continue;
		sbuf_put(out, line, (size_t)(c1 - line));
		break;
	}
	fclose(f);
}

/* Pointers print in hex in map keys; from bpftrace 0.26 (its runtime
 * tests' expected output: print(args) gives { .n = 0x7ffc... }) as
 * values too. */
static void int_text(struct output *o, struct sbuf *out, const struct type *t,
		     const uint8_t *data, enum value_ctx ctx)
{
	uint64_t v = value_int(t, data);
	/* 0.26 names an enum's value, except in JSON's map keys (its
	 * JSON keeps enums numbers; printf's text names them) */
	const struct ctype *en = t->ctype && !t->is_ptr &&
		t->ctype->kind == CT_ENUM && o &&
		o->prog->dialect >= DIALECT_026 &&
		!(ctx == VCTX_KEY && o->fmt && strcmp(o->fmt->name, "json") == 0) ?
		t->ctype : NULL;
	for (uint32_t i = 0; en && i < en->nvalues; i++)
		if ((uint64_t)en->values[i].value == v) {
			/* 0.26: an enum by its enumerator's name */
			sbuf_puts(out, en->values[i].name);
			return;
		}
	if (t->is_bool)
		sbuf_puts(out, v ? "true" : "false");
	else if (t->is_ptr && (ctx == VCTX_KEY ||
			       (o && o->prog->dialect >= DIALECT_026)))
		sbuf_printf(out, "0x%llx", (unsigned long long)v);
	else if (t->is_signed)
		sbuf_printf(out, "%lld", (long long)v);
	else
		sbuf_printf(out, "%llu", (unsigned long long)v);
}

/* A record as bpftrace 0.26 prints one, in map keys too:
 * { .a = 1, .b = str } (strings unquoted, as its runtime tests show). */
static void record_text(struct output *o, struct sbuf *out,
			const struct type *t, const uint8_t *data,
			enum value_ctx ctx)
{
	sbuf_puts(out, "{ ");
	for (uint32_t i = 0; i < t->nfields; i++) {
		sbuf_printf(out, "%s.%s = ", i ? ", " : "", t->names[i]);
		value_text(o, out, t->fields[i], data + t->offsets[i], ctx);
	}
	sbuf_puts(out, " }");
}

void value_text(struct output *o, struct sbuf *out, const struct type *t,
		const uint8_t *data, enum value_ctx ctx)
{
	switch (t->kind) {
	case TYPE_INT:
		int_text(o, out, t, data, ctx);
		break;
	case TYPE_STR:
		sbuf_put(out, (const char *)data,
			 strnlen((const char *)data, t->size));
		break;
	case TYPE_TUPLE:
		if (t->names) {
			record_text(o, out, t, data, ctx);
			break;
		}
		sbuf_putc(out, '(');
		for (uint32_t i = 0; i < t->nfields; i++) {
			if (i)
				sbuf_puts(out, ", ");
			value_text(o, out, t->fields[i], data + t->offsets[i],
				   ctx);
		}
		sbuf_putc(out, ')');
		break;
	case TYPE_BUF: {
		size_t n;
		const uint8_t *b = value_buf_bytes(t, data, &n);
		value_buf_text(out, b, n, 0);
		break;
	}
	case TYPE_KSYM:
		sym_text(o, out, data, false, t->sym_module);
		break;
	case TYPE_USYM:
		sym_text(o, out, data, true, t->sym_module);
		break;
	case TYPE_KSTACK:
	case TYPE_USTACK:
		stack_text(o, out, t, data, ctx);
		break;
	case TYPE_INET:
		inet_text(out, data, t->size);
		break;
	case TYPE_USERNAME:
		username_text(out, load64(data));
		break;
	case TYPE_STRUCT:
	case TYPE_ARRAY:
		/* map keys: 0.17's {.a=1,.b=2}; 0.26 writes them as values
		 * ({ .a = 1, .b = 2 }, its tests' expected output) */
		if (o && o->prog->dialect >= DIALECT_026)
			cvalue_text_026(out, t, data);   /* pointers in hex */
		else
			cvalue_text(out, t, data, ctx == VCTX_KEY);
		break;
	case TYPE_TIMESTAMP:
		resolve_timestamp(o, out, data);
		break;
	case TYPE_ERRNO:
		resolve_errno(out, data);
		break;
	case TYPE_CGROUP_PATH:
		resolve_cgroup_path(o, out, data);
		break;
	case TYPE_MACADDR:
		resolve_macaddr(out, data);
		break;
	case TYPE_COUNT:
		sbuf_printf(out, "%llu", (unsigned long long)load64(data));
		break;
	case TYPE_SUM:
	case TYPE_MIN:
	case TYPE_MAX:
		if (t->is_signed)
			sbuf_printf(out, "%lld", (long long)load64(data));
		else
			sbuf_printf(out, "%llu", (unsigned long long)load64(data));
		break;
	case TYPE_NONE:
	case TYPE_RECORD:
	case TYPE_AVG:
	case TYPE_STATS:
	case TYPE_HIST:
	case TYPE_LHIST:
	default:
		/* Not printable on their own (sema refuses them); aggregations
		 * are merged and printed by maps.c. */
		break;
	}
}
