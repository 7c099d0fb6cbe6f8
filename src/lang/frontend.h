/* frontend.h - the seam between a script language and the rest of the
 * compiler: text in, AST (ast.h) out.
 *
 * A front end owns everything about its language's syntax: tokens,
 * grammar, how an attach point is spelled and split into its parts,
 * where positional parameters may stand. What it hands on is the AST
 * alone, with every attach point already split into provider, target,
 * func and extra; the semantic pass, codegen and the engines serve every
 * front end without knowing which one wrote the tree. bpftrace's
 * language (with its C definitions) is the one front end today
 * (lang/bpftrace.c); a second language is one more `struct frontend`. */
#ifndef SONDE_FRONTEND_H
#define SONDE_FRONTEND_H

#include <stdbool.h>
#include <stddef.h>

#include "../base/arena.h"
#include "../base/diag.h"

struct ctypes;
struct node;

struct frontend_opts {
	const char *const *include_dirs;   /* -I DIR, in order */
	size_t ninclude_dirs;
	const char *const *include_files;  /* --include FILE, in order */
	size_t ninclude_files;
	bool have_btf;                     /* the host has kernel BTF */
	char **positional;                 /* $1, $2 ... as given */
	int npositional;
};

struct frontend {
	const char *name;                  /* "bpftrace" */
	/* The whole script: an N_PROGRAM node whose attach points are split
	 * into their parts, with the C types the script declares added to
	 * `reg`; or NULL, every error in `d`. */
	struct node *(*parse)(struct arena *a, const char *text,
			      const struct frontend_opts *o,
			      struct ctypes *reg, struct diags *d);
};

extern const struct frontend frontend_bpftrace;

#endif
