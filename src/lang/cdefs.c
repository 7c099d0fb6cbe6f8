/* cdefs.c - the script's C definitions: finding where they end, running
 * them through the preprocessor and the declaration parser, and keeping
 * their macros for the probes' lexer. */
#include "cdefs.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cdecl.h"
#include "parser.h"
#include "pp.h"

/* Slots of the predefined macros' names (139 of them): a power of two
 * that leaves most empty. */
#define PREDEF_SLOTS 512

struct cdefs {
	struct pp *pp;
	/* A script with no definitions (and no --include) has only the
	 * predefined macros (__x86_64__, BPFTRACE_HAVE_BTF...). Running them
	 * through the preprocessor was the most work a short script's start
	 * did (half a million instructions, as many as everything else
	 * sonde does for `BEGIN { exit(); }`), for macros most scripts
	 * never name: it runs when the probes' lexer meets one of their
	 * names, found in `predef` (pointers into the predefined text). */
	bool pending;
	const char *name;
	struct cdefs_opts opts;
	struct diags *diags;
	struct { const char *s; size_t len; } predef[PREDEF_SLOTS];
};

/* Blanks and comments from i on. */
static size_t skip_blank(const char *s, size_t i)
{
	for (;;) {
		if (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' ||
		    s[i] == '\r' || s[i] == '\f' || s[i] == '\v') {
			i++;
		} else if (s[i] == '/' && s[i + 1] == '/') {
			while (s[i] && s[i] != '\n')
				i++;
		} else if (s[i] == '/' && s[i + 1] == '*') {
			const char *e = strstr(s + i + 2, "*/");
			if (!e)
				return strlen(s);
			i = (size_t)(e - s) + 2;
		} else {
			return i;
		}
	}
}

static bool line_start(const char *s, size_t i)
{
	while (i > 0 && (s[i - 1] == ' ' || s[i - 1] == '\t'))
		i--;
	return i == 0 || s[i - 1] == '\n';
}

/* To the end of a directive line, backslash-newlines included. */
static size_t skip_line(const char *s, size_t i)
{
	while (s[i] && s[i] != '\n') {
		if (s[i] == '\\' && s[i + 1] == '\n')
			i++;
		i++;
	}
	return i;
}

static size_t word(const char *s, size_t i, const char *w)
{
	size_t n = strlen(w);
	if (strncmp(s + i, w, n) || isalnum((unsigned char)s[i + n]) ||
	    s[i + n] == '_')
		return 0;
	return n;
}

/* A declaration from its keyword: to the brace that closes its body
 * (and a ';' after it), or to a ';' outside braces. */
static size_t skip_decl(const char *s, size_t i, bool typedef_)
{
	int depth = 0;
	while (s[i]) {
		size_t j = skip_blank(s, i);
		if (j != i) {
			i = j;
			continue;
		}
		char c = s[i];
		if (c == '#' && line_start(s, i)) {
			i = skip_line(s, i);
		} else if (c == '"' || c == '\'') {
			i++;
			while (s[i] && s[i] != c && s[i] != '\n')
				i += s[i] == '\\' && s[i + 1] ? 2 : 1;
			if (s[i] == c)
				i++;
		} else if (c == '{') {
			depth++;
			i++;
		} else if (c == '}') {
			i++;
			if (--depth <= 0 && !typedef_) {
				j = skip_blank(s, i);
				/* `struct s { ... } __attribute__((packed))`:
				 * the attributes belong to it (bpftrace 0.2x's
				 * scripts write them so) */
				size_t n;
				while ((n = word(s, j, "__attribute__")) != 0) {
					size_t k = skip_blank(s, j + n);
					int paren = 0;
					if (s[k] != '(')
						break;
					while (s[k]) {
						paren += s[k] == '(';
						paren -= s[k] == ')';
						k++;
						if (!paren)
							break;
					}
					i = k;
					j = skip_blank(s, i);
				}
				return s[j] == ';' ? j + 1 : i;
			}
		} else if (c == ';' && depth <= 0) {
			return i + 1;
		} else {
			i++;
		}
	}
	return i;
}

size_t cdefs_end(const char *s, unsigned *line, unsigned *col)
{
	size_t i = 0, end = 0;
	if (s[0] == '#' && s[1] == '!')
		end = i = skip_line(s, 0);
	for (;;) {
		i = skip_blank(s, i);
		size_t n;
		if (s[i] == '#' && line_start(s, i)) {
			end = i = skip_line(s, i);
		} else if ((n = word(s, i, "struct")) || (n = word(s, i, "union")) ||
			   (n = word(s, i, "enum"))) {
			end = i = skip_decl(s, i + n, false);
		} else if ((n = word(s, i, "typedef"))) {
			end = i = skip_decl(s, i + n, true);
		} else {
			break;
		}
	}
	unsigned l = 1, c = 1;
	for (size_t k = 0; k < end; k++) {
		if (s[k] == '\n') {
			l++;
			c = 1;
		} else {
			c++;
		}
	}
	*line = l;
	*col = c;
	return end;
}

struct cdefs *cdefs_new(void)
{
	struct cdefs *c = calloc(1, sizeof(*c));
	if (c && !(c->pp = pp_new())) {
		free(c);
		return NULL;
	}
	return c;
}

void cdefs_free(struct cdefs *c)
{
	if (!c)
		return;
	pp_free(c->pp);
	free(c);
}

int cdefs_run(struct cdefs *c, const char *name, const char *text,
	      size_t end, const struct cdefs_opts *o, struct ctypes *reg,
	      struct diags *d)
{
	struct pp_opts po = {
		.name = name, .text = text, .len = end,
		.include_dirs = o->include_dirs,
		.ninclude_dirs = o->ninclude_dirs,
		.include_files = o->include_files,
		.ninclude_files = o->ninclude_files,
		.have_btf = o->have_btf,
		.builtin_only = o->builtin_only,
	};
	int err = pp_run(c->pp, &po, d);
	if (err < 0 || !reg)
		return err;
	size_t n;
	const struct ptok *toks = pp_tokens(c->pp, &n);
	return cdecl_parse(c->pp, toks, n, reg, d);
}

const char *cdefs_macro(void *ctx, const char *name, size_t len)
{
	struct cdefs *c = ctx;
	return pp_object_macro(c->pp, name, len);
}

static size_t predef_slot(const char *name, size_t len)
{
	uint32_t h = 2166136261u;               /* FNV-1a */
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)name[i]) * 16777619u;
	return h & (PREDEF_SLOTS - 1);
}

/* The names the predefined text defines ("#define NAME ..." lines). */
static void predef_index(struct cdefs *c, const char *text)
{
	static const char define[] = "#define ";
	for (const char *l = text, *nl; *l; l = nl ? nl + 1 : l + strlen(l)) {
		nl = strchr(l, '\n');
		if (l[0] != '#' || strncmp(l, define, sizeof(define) - 1) != 0)
			continue;
		const char *n = l + sizeof(define) - 1;
		size_t len = 0;
		while (isalnum((unsigned char)n[len]) || n[len] == '_')
			len++;
		size_t k = predef_slot(n, len);
		while (c->predef[k].s)
			k = (k + 1) & (PREDEF_SLOTS - 1);
		c->predef[k].s = n;
		c->predef[k].len = len;
	}
}

static bool predef_has(const struct cdefs *c, const char *name, size_t len)
{
	for (size_t k = predef_slot(name, len); c->predef[k].s;
	     k = (k + 1) & (PREDEF_SLOTS - 1))
		if (c->predef[k].len == len && !memcmp(c->predef[k].s, name, len))
			return true;
	return false;
}

/* cdefs_macro for a script without definitions: the predefined macros
 * are run at the first use of one of their names. */
static const char *cdefs_macro_lazy(void *ctx, const char *name, size_t len)
{
	struct cdefs *c = ctx;
	if (c->pending) {
		if (!predef_has(c, name, len))
			return NULL;
		c->pending = false;
		if (cdefs_run(c, c->name, "", 0, &c->opts, NULL, c->diags) < 0)
			return NULL;
	}
	return cdefs_macro(c, name, len);
}

struct node *cdefs_parse_script(struct arena *a, const char *text,
				const struct cdefs_opts *o,
				struct ctypes *reg, struct diags *d)
{
	static const struct cdefs_opts defaults = { .have_btf = true };
	const char *name = d->src && d->src->name ? d->src->name : "stdin";
	text = text ? text : "";
	struct parse_env env = { 0 };
	env.start = cdefs_end(text, &env.line, &env.col);
	struct cdefs *defs = cdefs_new();
	if (!defs)
		return NULL;
	struct node *root = NULL;
	o = o ? o : &defaults;
	if (env.start == 0 && !o->ninclude_files) {
		/* nothing of the script's own: see struct cdefs */
		defs->pending = true;
		defs->name = name;
		defs->opts = *o;
		defs->diags = d;
		predef_index(defs, pp_predefined(false));
		if (o->have_btf)
			predef_index(defs, pp_predefined(true));
		env.macro = cdefs_macro_lazy;
		env.macro_ctx = defs;
		root = parse_program_env(a, text, &env, d);
	} else if (cdefs_run(defs, name, text, env.start, o, reg, d) == 0 &&
		   !d->nerrors) {
		env.macro = cdefs_macro;
		env.macro_ctx = defs;
		root = parse_program_env(a, text, &env, d);
	}
	cdefs_free(defs);
	return root;
}
