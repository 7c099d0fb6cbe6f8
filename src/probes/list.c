/* list.c - `-l [PATTERN]`: which providers list a pattern, and how their
 * lines come out.
 *
 * As bpftrace 0.17 lists: a pattern is one attach point, checked for the
 * characters its lexer refuses ("invalid character"); a wildcard in the
 * probe type (`*ware:*`, `*:./prog:*`) expands over the types that list,
 * the user-space ones when -p is given or the pattern's second part is a
 * path, the kernel ones otherwise, in the order of their names; return
 * probes (kretprobe, uretprobe, kretfunc) list only when the pattern
 * names them, as bpftrace lists a function under its entry probe. Each
 * provider's lines are printed sorted and each once, as bpftrace keeps
 * its matches in a std::set (several sites of one USDT probe, files a
 * glob and $PATH both match); a line's indented followers (the
 * parameters `-lv` prints) stay with it. */
#include "provider.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../base/diag.h"
#include "../base/log.h"
#include "../base/vec.h"
#include "probe_util.h"
#include "../base/glob.h"
#include "../host/btf.h"

/* The first byte bpftrace's lexer refuses in an attach point, or NULL:
 * bytes outside printable ASCII, quotes it has no rule for, and a
 * backslash outside a path (after a ':' it escapes the next byte). */
static const char *invalid_char(const char *s)
{
	bool path = false, quoted = false;
	for (const char *c = s; *c; c++) {
		unsigned char u = (unsigned char)*c;
		if (u < 0x20 || u >= 0x7f || *c == '`' || *c == '\'')
			return c;
		if (*c == '"')
			quoted = !quoted;
		else if (*c == ':' && !quoted)
			path = true;
		else if (*c == '\\') {
			if (!path && !quoted)
				return c;
			if (c[1])
				c++;
		}
	}
	return NULL;
}

/* One record: a line and the indented lines after it. */
struct record {
	char *text;
	size_t len;
};

static int cmp_record(const void *a, const void *b)
{
	const struct record *x = a, *y = b;
	size_t n = x->len < y->len ? x->len : y->len;
	int c = memcmp(x->text, y->text, n);
	return c ? c : (x->len > y->len) - (x->len < y->len);
}

/* Print what one provider listed (buf, len bytes), sorted and each
 * record once. Returns how many records were printed. */
static int print_sorted(char *buf, size_t len, FILE *out)
{
	size_t n = 0, cap = 0;
	struct record *v = NULL;
	int printed = 0;
	for (size_t i = 0; i < len;) {
		size_t start = i;
		do {
			char *nl = memchr(buf + i, '\n', len - i);
			i = nl ? (size_t)(nl - buf) + 1 : len;
		} while (i < len && (buf[i] == ' ' || buf[i] == '\t'));
		if (vec_reserve_arr(v, cap, n + 1)) {
			/* no memory to sort: print as listed */
			fwrite(buf, 1, len, out);
			free(v);
			return 0;
		}
		v[n++] = (struct record){ buf + start, i - start };
	}
	if (n)
		qsort(v, n, sizeof(*v), cmp_record);
	for (size_t k = 0; k < n; k++) {
		if (k && cmp_record(&v[k], &v[k - 1]) == 0)
			continue;
		fwrite(v[k].text, 1, v[k].len, out);
		if (v[k].text[v[k].len - 1] != '\n')
			fputc('\n', out);
		printed++;
	}
	free(v);
	return printed;
}

/* Let pv list pattern, its lines sorted. */
static int list_one(const struct provider *pv, const char *pattern, int pid,
		    FILE *out)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	if (!mem)
		return pv->list(pattern, pid, out);
	int r = pv->list(pattern, pid, mem);
	if (fclose(mem) != 0) {
		free(buf);
		return -ENOMEM;
	}
	int printed = print_sorted(buf, len, out);
	free(buf);
	return r < 0 ? r : printed;
}

static bool is_return_probe(const struct provider *pv)
{
	return pv->caps & PROBE_RETVAL;
}

/* The name a type wildcard matches pv by, or NULL: bpftrace's names
 * (`aliases`, e.g. kfunc) before sonde's own. */
static const char *type_match(const struct provider *pv, const char *glob)
{
	for (const char *const *a = pv->aliases; a && *a; a++)
		if (glob_match(glob, *a))
			return *a;
	return glob_match(glob, pv->name) ? pv->name : NULL;
}

struct typed {
	const char *name;
	const struct provider *pv;
};

static int cmp_typed(const void *a, const void *b)
{
	return strcmp(((const struct typed *)a)->name,
		      ((const struct typed *)b)->name);
}

/* PATTERN's probe type has a wildcard: list REST under each type it
 * matches. */
static int list_types(const char *type, const char *rest, int pid,
		      FILE *out)
{
	const char *end = strchr(rest, ':');
	size_t second = end ? (size_t)(end - rest) : strlen(rest);
	bool user = pid > 0 || memchr(rest, '/', second);
	struct typed v[64];
	size_t n = 0;
	for (const struct provider *const *p = providers; *p && n < 64; p++) {
		const struct provider *pv = *p;
		if (!pv->list || is_return_probe(pv) ||
		    !(pv->caps & PROBE_USER_MEM) != !user)
			continue;
		const char *name = type_match(pv, type);
		if (name)
			v[n++] = (struct typed){ name, pv };
	}
	qsort(v, n, sizeof(*v), cmp_typed);
	int found = 0;
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(v[i].name) + 1 + strlen(rest) + 1;
		char *pattern = malloc(len);
		if (!pattern)
			return -ENOMEM;
		snprintf(pattern, len, "%s:%s", v[i].name, rest);
		int r = list_one(v[i].pv, pattern, pid, out);
		free(pattern);
		if (r > 0)
			found += r;
	}
	return found;
}

static enum dialect list_dialect = DIALECT_017;

enum dialect provider_list_dialect(void)
{
	return list_dialect;
}

int provider_list_all(const char *pattern, int pid, enum dialect dialect,
		      FILE *out)
{
	list_dialect = dialect;
	/* 0.26 lists several patterns at once: 'kprobe:a,struct file' */
	if (pattern && dialect >= DIALECT_026 && strchr(pattern, ',')) {
		char *copy = strdup(pattern), *save = NULL;
		if (!copy)
			return -ENOMEM;
		int found = 0, r = 0;
		for (char *p = strtok_r(copy, ",", &save); p && r >= 0;
		     p = strtok_r(NULL, ",", &save)) {
			while (*p == ' ')
				p++;
			r = provider_list_all(p, pid, dialect, out);
			if (r > 0)
				found += r;
		}
		free(copy);
		return r < 0 ? r : found;
	}
	/* a kernel type: 'struct task_struct' (-lv: its definition) */
	if (pattern && !strchr(pattern, ':')) {
		int r = kbtf_types_print(pattern, log_verbose, out);
		if (r != 0)
			return r;
	}
	if (pattern) {
		const char *bad = invalid_char(pattern);
		if (bad) {
			struct diag_source src = { .name = "stdin",
						   .text = pattern };
			struct diags d;
			diags_init(&d, &src);
			unsigned col = (unsigned)(bad - pattern) + 1;
			diag_error(&d, (struct pos){ .line = 1, .col = col,
						     .len = 1 },
				   "SYNTAX", "invalid character '%c'",
				   isprint((unsigned char)*bad) ? *bad : '?');
			diags_print(&d, stderr);
			diags_free(&d);
			return -EINVAL;
		}
		const char *colon = strchr(pattern, ':');
		if (colon && memchr(pattern, '*', (size_t)(colon - pattern))) {
			char type[64];
			size_t len = (size_t)(colon - pattern);
			if (len >= sizeof(type))
				return 0;
			memcpy(type, pattern, len);
			type[len] = '\0';
			return list_types(type, colon + 1, pid, out);
		}
	}
	/* -p alone (or with a pattern naming no provider) lists what that
	 * process has: its user-space probes, as bpftrace does */
	bool named = pattern && strchr(pattern, ':');
	bool only_user = pid > 0 && !named;
	int found = 0;
	for (const struct provider *const *p = providers; *p; p++) {
		const struct provider *pv = *p;
		if (!pv->list || (only_user && !(pv->caps & PROBE_USER_MEM)) ||
		    (!named && is_return_probe(pv)) ||
		    (named && !provider_list_wants(pv, pattern)))
			continue;
		int r = list_one(pv, pattern, pid, out);
		if (r > 0)
			found += r;
	}
	return found;
}
