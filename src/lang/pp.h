/* pp.h - the C preprocessor that runs over a script's definitions (the
 * lines before the first probe) and the headers they include, as
 * bpftrace 0.17's clang pass does. It produces the C tokens the
 * declaration parser reads (cdecl.h) and the object-like macros the
 * script's lexer expands in probe bodies. How it works: pp.c. */
#ifndef SONDE_PP_H
#define SONDE_PP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../base/diag.h"

enum ptok_kind {
	PT_EOF,
	PT_IDENT,
	PT_NUM,      /* a preprocessing number: 0x10UL, 1.5e3 */
	PT_CHAR,     /* 'a', L'a' */
	PT_STR,      /* "abc", L"abc" (quotes and escapes as written) */
	PT_PUNCT,
	PT_OTHER,    /* a stray character, an unterminated quote */
	PT_END_FILE, /* inside the preprocessor: an included file ends */
};

struct hideset;

/* One preprocessing token. `text` points into the file it came from (or
 * into the preprocessor's arena for pasted and stringized tokens) and is
 * not NUL-terminated. */
struct ptok {
	enum ptok_kind kind;
	bool bol;                /* first token on its line */
	bool space;              /* white space before it */
	uint32_t file;           /* preprocessor file number (pp_pos) */
	uint32_t line, col;
	uint32_t len;
	const char *text;
	const struct hideset *hs; /* macros it must not expand again */
	struct ptok *next;        /* the preprocessor's working list */
};

static inline bool ptok_is(const struct ptok *t, const char *s)
{
	size_t i = 0;
	for (; i < t->len; i++)
		if (s[i] != t->text[i])
			return false;
	return s[i] == '\0';
}

struct pp_opts {
	const char *name;        /* the script's name for messages ("stdin") */
	const char *text;        /* what to preprocess (the script's */
	size_t len;              /*   definitions; line 1 is the script's) */
	const char *const *include_dirs;   /* -I, in order */
	size_t ninclude_dirs;
	const char *const *include_files;  /* --include, in order */
	size_t ninclude_files;
	bool have_btf;           /* define BPFTRACE_HAVE_BTF */
	/* System include directories; NULL: those bpftrace searches
	 * (/usr/local/include, /usr/include/x86_64-linux-gnu, /usr/include). */
	const char *const *sys_dirs;
	size_t nsys_dirs;
	bool builtin_only;       /* read no file: only the built-in headers
				  * (the fuzzer's mode) */
};

struct pp;

struct pp *pp_new(void);
void pp_free(struct pp *pp);
/* Preprocess; every error goes to `d` with its file:line:col. Returns 0,
 * or -EINVAL after errors (a fatal one, like a header that cannot be
 * found, stops it as it stops clang). */
int pp_run(struct pp *pp, const struct pp_opts *o, struct diags *d);
/* The tokens of the active code, in order, ending with a PT_EOF. */
const struct ptok *pp_tokens(const struct pp *pp, size_t *n);
/* The replacement text of an object-like macro defined when pp_run
 * finished (as written, tokens separated as they were), or NULL if
 * `name` is not one. */
const char *pp_object_macro(struct pp *pp, const char *name, size_t len);
/* A diagnostic position for a token (headers are registered with `d` the
 * first time one is named). */
struct pos pp_pos(struct pp *pp, const struct ptok *t, struct diags *d);
/* The name of the file a token came from. */
const char *pp_file_name(const struct pp *pp, uint32_t file);
/* Whether the token came from the script itself (not a header). */
bool pp_in_script(const struct pp *pp, const struct ptok *t);
/* The predefined macros' text ("#define NAME ..." lines) that pp_run
 * reads before the script; with `btf`, only BPFTRACE_HAVE_BTF's line. */
const char *pp_predefined(bool btf);

#endif
