/* compile.h - the whole compiler pipeline in one call: parse, expand
 * probes, check, generate code. Produces the compiled program. */
#ifndef SONDE_COMPILE_H
#define SONDE_COMPILE_H

#include <stdbool.h>
#include <stdio.h>

#include "base/diag.h"
#include "lang/ast.h"
#include "program.h"

struct frontend;

struct compile_opts {
	/* the script's language (lang/frontend.h); NULL: bpftrace */
	const struct frontend *frontend;
	const char *name;      /* "stdin" for -e, else the file name */
	const char *text;
	char **positional;
	int npositional;
	int pid;               /* -p PID, or 0 */
	bool child;            /* -c CMD: cpid has a value */
	const char *cmd;       /* -c CMD as written, or NULL */
	bool unsafe;
	uint32_t strlen;       /* 0: default, or BPFTRACE_STRLEN */
	uint32_t map_keys_max; /* 0: default, or BPFTRACE_MAP_KEYS_MAX */
	FILE *dump_ast;        /* if set, dump the AST after sema */
	const char *const *include_dirs;  /* -I DIR */
	size_t ninclude_dirs;
	const char *const *include_files; /* --include FILE */
	size_t ninclude_files;
	bool ustack_fp;        /* ustack walks frame pointers in the kernel */
	uint32_t ustack_copy;  /* else bytes of stack copied (0: default) */
	int helper_check;      /* -k 1, -kk 2: helper errors become warnings */
	enum dialect dialect;  /* --dialect */
	/* --probe-filter REGEX (bpftrace 0.26): only the probes whose name
	 * the extended regular expression matches, and BEGIN/END */
	const char *probe_filter;
	bool hist_sums;        /* hist()/lhist() keep their values' sum
				* (program.h SONDE_HIST_SUM_BUCKET) */
	/* D (frontend_dtrace): -q, -x options, and where the script's own
	 * settings go (frontend.h) */
	bool quiet;
	bool cpp;              /* D's -C, -D, -U (frontend.h) */
	const char *const *defines;
	size_t ndefines;
	bool zdefs;            /* a probe this system lacks is skipped with a
				* warning (bpftrace; D's -Z), not an error */
	const char *const *xopts;
	size_t nxopts;
	struct frontend_settings *settings;
};

/* Returns the program, or NULL with every diagnostic in `d`. The caller
 * frees it with program_free() (program.h). */
struct program *compile(const struct compile_opts *opts, struct diags *d);

/* `-l -e PROGRAM` and `-l FILE` (bpftrace 0.26): parse the script and
 * call each() with every attach point as written, in order; stops at a
 * non-zero return. 0, each()'s return, or -EINVAL with the script's
 * errors in `d`. */
int compile_attach_points(const struct compile_opts *opts, struct diags *d,
			  int (*each)(void *arg, const char *text), void *arg);

#endif
