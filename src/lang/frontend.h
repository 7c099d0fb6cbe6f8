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
#include "../program.h"

struct ctypes;
struct node;
struct probe;

struct frontend_opts {
	const char *const *include_dirs;   /* -I DIR, in order */
	size_t ninclude_dirs;
	const char *const *include_files;  /* --include FILE, in order */
	size_t ninclude_files;
	bool have_btf;                     /* the host has kernel BTF */
	char **positional;                 /* $1, $2 ... as given */
	int npositional;
	int pid;                           /* -p PID, or 0 */
	const char *cmd;                   /* -c CMD, or NULL */
	const char *script_name;           /* the file, or NULL (-e, -n) */
	/* D: -q, and the -x options in order ("NAME" or "NAME=VALUE") */
	bool quiet;
	const char *const *xopts;
	size_t nxopts;
	/* D's -C: the C preprocessor first, with -D NAME[=VALUE] and -U NAME
	 * in order ("DNAME=VALUE", "UNAME") */
	bool cpp;
	const char *const *defines;
	size_t ndefines;
	/* What the script's options (#pragma D option, -x) set, for the
	 * driver to apply: */
	struct frontend_settings *set;
};

/* Settings a script makes that reach beyond the compiler. Zero: not
 * set. */
struct frontend_settings {
	bool quiet;
	bool flowindent;   /* D's -F: record lines indented by call depth */
	bool destructive;
	uint32_t strsize;
	uint64_t bufsize;
	/* D: the key widths of each aggregation (program.h), in the arena */
	struct dtrace_agg_keys *aggs;
	uint32_t naggs;
	/* D: how many of the script's clauses each probe block holds
	 * (clauses with the same descriptions run as one), in the arena */
	const uint32_t *clauses;
	uint32_t nclauses;
};

struct program;

/* A probe's own names in the front end's language: given the probe and
 * (for USDT sites) the function the site is in, fills p->dname. */
typedef const char *(*frontend_site_func)(const struct probe *p,
					  struct arena *a);

struct frontend {
	const char *name;                  /* "bpftrace" */
	/* The whole script: an N_PROGRAM node whose attach points are split
	 * into their parts, with the C types the script declares added to
	 * `reg`; or NULL, every error in `d`. */
	struct node *(*parse)(struct arena *a, const char *text,
			      const struct frontend_opts *o,
			      struct ctypes *reg, struct diags *d);
	/* Optional, after the probes are expanded: each probe's names in
	 * this language (struct probe's dname), for the builtins that read
	 * them. */
	void (*name_probes)(struct program *prog, frontend_site_func site);
	/* argN may read what a provider keeps in its context (struct
	 * provider's ctx_args: syscall arguments); bpftrace's argN is
	 * registers only */
	bool ctx_args;
};

extern const struct frontend frontend_bpftrace, frontend_dtrace;

#endif
