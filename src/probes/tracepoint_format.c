/* tracepoint_format.c - tracefs format files to record fields.
 *
 * A field line reads
 *   \tfield:<C declaration>;\toffset:<N>;\tsize:<N>;\tsigned:<0|1>;
 * where the declaration is "TYPE NAME", "TYPE NAME[N]", "TYPE * NAME" or
 * "__data_loc TYPE[] NAME". offset/size/signed are the kernel's word on
 * layout and win over the declared type (syscall arguments are declared
 * "unsigned int fd" yet stored in 8 bytes). */
#include "tracepoint_format.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The value after "key:" in a field line, or -1. */
static long field_attr(const char *line, const char *end, const char *key)
{
	size_t klen = strlen(key);
	for (const char *p = line; p + klen < end; p++) {
		if (strncmp(p, key, klen) == 0 && p[klen] == ':' &&
		    (p == line || p[-1] == ';' || isspace((unsigned char)p[-1]))) {
			char *stop;
			long v = strtol(p + klen + 1, &stop, 10);
			if (stop == p + klen + 1)
				return -1;
			return v;
		}
	}
	return -1;
}

static bool is_ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* Strip leading qualifiers that do not change what a value is. */
static const char *skip_qualifiers(const char *s)
{
	for (;;) {
		while (isspace((unsigned char)*s))
			s++;
		if (strncmp(s, "const ", 6) == 0)
			s += 6;
		else if (strncmp(s, "volatile ", 9) == 0)
			s += 9;
		else
			return s;
	}
}

/* Byte size of one element of an array whose bound is not a literal. */
static uint32_t elem_size_guess(const char *base)
{
	static const struct { const char *t; uint32_t size; } known[] = {
		{ "char", 1 }, { "unsigned char", 1 }, { "signed char", 1 },
		{ "u8", 1 }, { "__u8", 1 }, { "s8", 1 }, { "__s8", 1 },
		{ "short", 2 }, { "unsigned short", 2 }, { "u16", 2 },
		{ "__u16", 2 }, { "s16", 2 }, { "__s16", 2 }, { "__be16", 2 },
		{ "int", 4 }, { "unsigned int", 4 }, { "u32", 4 },
		{ "__u32", 4 }, { "s32", 4 }, { "__s32", 4 }, { "__be32", 4 },
		{ "long", 8 }, { "unsigned long", 8 }, { "u64", 8 },
		{ "__u64", 8 }, { "s64", 8 }, { "__s64", 8 },
	};
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (strcmp(base, known[i].t) == 0)
			return known[i].size;
	return 1;
}

/* Fill `f` from the declaration decl[0..len). */
static int parse_decl(struct arena *a, const char *decl, size_t len,
		      struct record_field *f)
{
	char *d = arena_strndup(a, decl, len);
	char *end = d + strlen(d);
	while (end > d && isspace((unsigned char)end[-1]))
		*--end = '\0';
	f->decl = arena_strdup(a, d);   /* d is cut up below */

	const char *s = skip_qualifiers(d);
	if (strncmp(s, "__data_loc ", 11) == 0) {
		f->is_data_loc = true;
		s += 11;
	}

	/* A trailing [N] belongs to the name: "char comm[16]". */
	char *bound = NULL;
	if (end > d && end[-1] == ']') {
		char *open = strrchr(d, '[');
		if (!open || open < s)
			return -EINVAL;
		*open = '\0';
		end[-1] = '\0';
		bound = open + 1;
		end = open;
		while (end > s && isspace((unsigned char)end[-1]))
			*--end = '\0';
	}
	/* The name is the last identifier. */
	char *name = end;
	while (name > s && is_ident_char(name[-1]))
		name--;
	if (name == end)
		return -EINVAL;
	f->name = arena_strdup(a, name);

	/* What precedes it is the type: "char", "char *", "char[]". */
	char *base = arena_strndup(a, s, (size_t)(name - s));
	char *b_end = base + strlen(base);
	while (b_end > base && isspace((unsigned char)b_end[-1]))
		*--b_end = '\0';
	if (!*skip_qualifiers(base))
		return -EINVAL;    /* "int;": a type without a name */
	if (strchr(base, '*'))
		f->is_ptr = true;
	if (f->is_data_loc) {
		/* "char[]": the element type of the dynamic array. */
		char *br = strchr(base, '[');
		if (br)
			*br = '\0';
		while (br && br > base && isspace((unsigned char)br[-1]))
			*--br = '\0';
		f->is_char_array = strcmp(skip_qualifiers(base), "char") == 0;
		return 0;
	}
	if (bound) {
		const char *elem = skip_qualifiers(base);
		/* bpftrace reads plain char arrays as strings, nothing else. */
		f->is_char_array = !f->is_ptr && strcmp(elem, "char") == 0;
		char *stop;
		unsigned long n = strtoul(bound, &stop, 10);
		if (stop != bound && *stop == '\0')
			f->array_len = (uint32_t)n;
		else if (*bound == '\0')
			f->array_len = 0;    /* flexible: "args[]" */
		else
			f->array_len = f->size / elem_size_guess(elem);
	}
	return 0;
}

static int parse_field_line(struct arena *a, const char *line,
			    const char *eol, struct record_field *f)
{
	const char *p = line;
	while (p < eol && isspace((unsigned char)*p))
		p++;
	if (strncmp(p, "field:", 6) == 0)
		p += 6;
	else if (strncmp(p, "field special:", 14) == 0)
		p += 14;
	else
		return -EINVAL;
	const char *semi = memchr(p, ';', (size_t)(eol - p));
	if (!semi)
		return -EINVAL;
	long offset = field_attr(semi, eol, "offset");
	long size = field_attr(semi, eol, "size");
	long is_signed = field_attr(semi, eol, "signed");
	if (offset < 0 || size < 0 || offset > UINT32_MAX || size > UINT32_MAX)
		return -EINVAL;
	memset(f, 0, sizeof(*f));
	f->offset = (uint32_t)offset;
	f->size = (uint32_t)size;
	f->is_signed = is_signed == 1;
	return parse_decl(a, p, (size_t)(semi - p), f);
}

int tp_format_parse(struct arena *a, const char *text,
		    struct record_field **fields, uint32_t *nfields,
		    uint32_t *size)
{
	*fields = NULL;
	*nfields = 0;
	*size = 0;
	const char *fmt = strstr(text, "\nformat:");
	if (!fmt && strncmp(text, "format:", 7) == 0)
		fmt = text;
	if (!fmt)
		return -EINVAL;

	uint32_t n = 0, cap = 0, rec_size = 0;
	struct record_field *v = NULL;
	for (const char *line = strchr(fmt + 1, '\n'); line && *line;) {
		line++;
		const char *eol = strchr(line, '\n');
		if (!eol)
			eol = line + strlen(line);
		const char *p = line;
		while (p < eol && isspace((unsigned char)*p))
			p++;
		if (strncmp(p, "print fmt:", 10) == 0)
			break;
		if (p < eol) {
			struct record_field f;
			int r = parse_field_line(a, line, eol, &f);
			if (r < 0)
				return r;
			if (f.offset + (uint64_t)f.size > rec_size)
				rec_size = f.offset + f.size;
			if (strncmp(f.name, "common_", 7) != 0) {
				if (n == cap) {
					cap = cap ? cap * 2 : 8;
					struct record_field *nv = arena_array(
						a, struct record_field, cap);
					if (n)
						memcpy(nv, v, n * sizeof(*v));
					v = nv;
				}
				v[n++] = f;
			}
		}
		line = *eol ? eol : NULL;
	}
	*fields = v;
	*nfields = n;
	*size = rec_size;
	return 0;
}

const struct type *tp_format_type(struct arena *a, const char *text)
{
	struct record_field *fields;
	uint32_t n, size;
	int r = tp_format_parse(a, text, &fields, &n, &size);
	if (r < 0) {
		errno = -r;
		return NULL;
	}
	struct type *t = arena_new(a, struct type);
	t->kind = TYPE_RECORD;
	t->size = size;
	t->nfields = n;
	t->rfields = fields;
	return t;
}
