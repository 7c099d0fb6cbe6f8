/* compile.h - the whole compiler pipeline in one call: parse, expand
 * probes, check, generate code. Produces the compiled program. */
#ifndef SONDE_COMPILE_H
#define SONDE_COMPILE_H

#include <stdbool.h>
#include <stdio.h>

#include "base/diag.h"
#include "lang/ast.h"
#include "program.h"

struct compile_opts {
	const char *name;      /* "stdin" for -e, else the file name */
	const char *text;
	char **positional;
	int npositional;
	int pid;               /* -p PID, or 0 */
	bool child;            /* -c CMD: cpid has a value */
	bool unsafe;
	uint32_t strlen;       /* 0: default, or BPFTRACE_STRLEN */
	uint32_t map_keys_max; /* 0: default, or BPFTRACE_MAP_KEYS_MAX */
	FILE *dump_ast;        /* if set, dump the AST after sema */
	bool ustack_fp;        /* ustack walks frame pointers in the kernel */
	uint32_t ustack_copy;  /* else bytes of stack copied (0: default) */
};

/* Returns the program, or NULL with every diagnostic in `d`. The caller
 * frees it with program_free(). */
struct program *compile(const struct compile_opts *opts, struct diags *d);
void program_free(struct program *p);

/* Table helpers used by sema and codegen. Return the new index. */
int program_add_map(struct program *p, const struct map_spec *m);
int program_add_event(struct program *p, const struct event_spec *e);
int program_find_map(const struct program *p, const char *name);

#endif
