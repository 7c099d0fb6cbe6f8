/* sema.h - the semantic pass: types of every expression, map key/value
 * inference and consistency, builtin and function signatures, and the
 * map and event tables of the compiled program. */
#ifndef SONDE_SEMA_H
#define SONDE_SEMA_H

#include <stdbool.h>

#include "../base/diag.h"
#include "../program.h"
#include "ast.h"

/* join(arr): the event record holds this many string[strlen] fields,
 * the first elements of the NULL-terminated array (empty past its end). */
#define SEMA_JOIN_MAX 16

/* The largest value a probe builds (a tuple, a map key of several
 * parts, an event record): it lives in the BPF stack or the per-CPU
 * scratch area, which holds at most 32 KiB of everything a probe keeps
 * at once. */
#define SEMA_VALUE_MAX 16384

struct sema_opts {
	char **positional;     /* $1.. as given on the command line */
	int npositional;
	bool unsafe;           /* allow system() and signal() */
	bool no_child;         /* no -c: cpid has no value and is refused */
	/* For messages: the probe kinds that offer every capability in
	 * caps ("kprobe, uprobe and usdt"), arena memory; the driver's
	 * providers_names_with. NULL: "other". */
	const char *(*kinds_with)(struct arena *a, uint32_t caps);
	char **named;          /* --NAME[=VALUE] after the script: getopt() */
	int nnamed;
};

/* Check `root` (N_PROGRAM) against the already expanded probes in `prog`
 * (prog->probes[i].block says which probe block each came from, and the
 * provider's args_type gives `args`). Annotates the tree, fills
 * prog->maps and prog->events. Returns 0, or -EINVAL with every problem
 * recorded in `d`. */
int sema_check(struct node *root, struct program *prog,
	       const struct sema_opts *opts, struct diags *d);

#endif
