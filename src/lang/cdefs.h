/* cdefs.h - a script's C definitions: what comes before its first probe
 * (#include, #define, #if..., struct/union/enum definitions, typedefs),
 * run through the preprocessor (pp.h) and the declaration parser
 * (cdecl.h) as bpftrace 0.17 runs them through clang. The object-like
 * macros they leave defined are what the script's lexer expands in the
 * probes (cdefs_macro, a lexer_macro_fn). */
#ifndef SONDE_CDEFS_H
#define SONDE_CDEFS_H

#include <stdbool.h>
#include <stddef.h>

#include "../base/arena.h"
#include "../base/diag.h"

struct ctypes;
struct node;

struct cdefs_opts {
	const char *const *include_dirs;   /* -I DIR, in order */
	size_t ninclude_dirs;
	const char *const *include_files;  /* --include FILE, in order */
	size_t ninclude_files;
	bool have_btf;                     /* BPFTRACE_HAVE_BTF is defined */
	bool builtin_only;                 /* read no header file (fuzzing) */
};

/* Where the definitions end and the probes begin: a byte offset into
 * `text`, with its line and column. The definitions are lines starting
 * with '#' and struct/union/enum/typedef declarations (to their closing
 * brace, with an optional ';', or to a ';'), with blank lines and
 * comments between them: what bpftrace's lexer takes for C. */
size_t cdefs_end(const char *text, unsigned *line, unsigned *col);

struct cdefs;

struct cdefs *cdefs_new(void);
void cdefs_free(struct cdefs *c);
/* Preprocess text[0..end) (named `name` in messages) and the headers it
 * includes, and declare what they define in `reg` (NULL: only the
 * macros). Errors go to `d`; returns 0 or -EINVAL. */
int cdefs_run(struct cdefs *c, const char *name, const char *text,
	      size_t end, const struct cdefs_opts *o, struct ctypes *reg,
	      struct diags *d);
/* A lexer_macro_fn over the macros cdefs_run left defined. */
const char *cdefs_macro(void *c, const char *name, size_t len);
/* A whole script: its C definitions through cdefs_run (o NULL: no -I or
 * --include, BPFTRACE_HAVE_BTF defined), then its probes, in which their
 * macros expand. The AST, or NULL with the errors in `d`. */
struct node *cdefs_parse_script(struct arena *a, const char *text,
				const struct cdefs_opts *o,
				struct ctypes *reg, struct diags *d);

#endif
