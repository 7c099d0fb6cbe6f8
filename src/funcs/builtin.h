/* builtin.h - the builtin variables a script reads (pid, comm, arg0,
 * retval ...), one record each, as func.h is for functions.
 *
 * How it works. A builtin is one `struct builtin` in builtins.c, at the
 * index of its id: its name, which probes may read it (the probe_cap
 * bits every probe of the block must have, program.h), a check hook that
 * types it in the semantic pass and a code hook for the code generator
 * (gen for a value in a register, gen_to for one written to memory:
 * strings, stacks, symbols). The passes' drivers (sema.c's N_BUILTIN,
 * cg_probe.c's cg_builtin) only look the record up and run it. The id
 * is what the AST stores (node->u.builtin.id) and what the front ends
 * build (the parser by name, D's names in lang/d_names.c by id), so a
 * new builtin is an id here and a record with its hooks in builtins.c.
 * What reads the probe's context (argN, retval, func) stays in
 * codegen/cg_probe.c, which the hooks call. */
#ifndef SONDE_FUNCS_BUILTIN_H
#define SONDE_FUNCS_BUILTIN_H

#include <stdint.h>

struct cg;
struct cmem;
struct node;
struct sema;
struct type;

enum builtin_id {
	BI_PID, BI_TID, BI_UID, BI_GID, BI_NSECS, BI_ELAPSED, BI_CPU,
	BI_COMM, BI_KSTACK, BI_USTACK,
	BI_ARG,      /* arg0..argN: the number in node->u.builtin.index */
	BI_SARG,     /* sarg0..sargN, likewise */
	BI_ARGS, BI_RETVAL, BI_FUNC, BI_PROBE, BI_CURTASK, BI_RAND,
	BI_CGROUP, BI_CPID, BI_USERNAME, BI_NUMAID, BI_CTX,
	/* bpftrace 0.2x's: */
	BI_NCPUS, BI_JIFFIES, BI_USERMODE, BI_PROBETYPE,
	/* D's probeprov, probemod, probefunc, probename (index 0..3),
	 * "FUNCTION:NAME" (4) and the probe's number (5): */
	BI_DPROBE,
	BI_COUNT_
};

enum builtin_flag {
	BUILTIN_INDEXED = 1u << 0,   /* the name is followed by a number
				      * (arg0, sarg2), and NAME() is no call
				      * of it */
};

struct builtin {
	const char *name;
	uint16_t flags;            /* enum builtin_flag */
	uint32_t needs;            /* enum probe_cap (program.h) that every
				    * probe of the reading block must have */
	/* The semantic pass, once `needs` holds: the type (NULL: an error,
	 * reported only in the final pass as for functions). A record
	 * with no check hook is a u64. */
	const struct type *(*check)(struct sema *s, struct node *n);
	/* Code, by the type check returned: an integer in a register or a
	 * constant, */
	struct cval (*gen)(struct cg *cg, const struct node *n);
	/* or anything else written to memory at dst as type `to`. A
	 * missing hook is the error "builtin 'NAME' is not supported". */
	void (*gen_to)(struct cg *cg, const struct node *n, struct cmem dst,
		       const struct type *to);
};

/* The modes of nsecs(MODE), pid(MODE) and tid(MODE) (bpftrace 0.24),
 * which node->u.builtin.index holds (0: the name alone). */
enum builtin_mode {
	BM_DEFAULT,
	BM_BOOT, BM_MONOTONIC, BM_TAI, BM_SW_TAI,   /* nsecs */
	BM_CURR_NS, BM_INIT,                        /* pid, tid */
};

/* The mode `word` names for builtin id (> 0), or -1 (no such mode, or
 * a builtin that takes none); *names: the modes it takes, for a
 * message ("" when none). */
int builtin_mode(int id, const char *word, const char **names);

/* The records, indexed by id (builtins.c). */
extern const struct builtin builtins[BI_COUNT_];

/* The builtin a name in a script names (arg0..arg999 and sarg0..
 * included, the number stored in *index), or -1. */
int builtin_lookup(const char *name, uint32_t *index);

#endif
