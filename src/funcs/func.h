/* func.h - the functions a script can call, one record each.
 *
 * How it works. A function is one `struct func`: its name, how many
 * arguments it takes, what it needs (--unsafe; being an aggregation;
 * capabilities of the probe), a check hook for the semantic pass and a
 * code hook for the code generator. The records live in the file of
 * their family (output.c: printf, print, ...; maps.c: the aggregations
 * and map operations; strings.c, symbols.c, net.c, control.c, values.c,
 * text.c), each family one table, and funcs.c strings the tables
 * together for lookup by name. So adding a function is adding a record
 * and its two hooks, in one place: the grammar, the passes' drivers and
 * the AST never name a function (DTrace's _dt_cg_subr[] and ply's
 * struct func are the models).
 *
 * The semantic pass (sema_call.c) looks a call's name up, rejects what
 * the record rules out (unknown name, wrong arity, aggregation outside
 * `@m = f()`, unsafe without --unsafe, a probe lacking what it needs:
 * reg() needs registers, override() a probe whose return it can
 * change), then runs `check`, which types the arguments and the call and
 * adds the call's event if it has one. It leaves the record in the call
 * node (u.call.fn) for codegen (cg_call.c), which runs `gen` or
 * `gen_to`. Aggregations have no code hook: the map assignment that
 * holds them (cg_map.c) updates the map by the aggregation type that
 * `check` returned. */
#ifndef SONDE_FUNCS_FUNC_H
#define SONDE_FUNCS_FUNC_H

#include <stdint.h>

struct cg;
struct cmem;
struct node;
struct sema;
struct type;

/* max_args of a function with any number of arguments after min_args */
#define FUNC_ARGS_ANY 0xff

enum func_flag {
	FUNC_AGG    = 1u << 0,  /* an aggregation: only in `@m[k] = f(...)` */
	FUNC_UNSAFE = 1u << 1,  /* changes the system: needs --unsafe */
};

struct func {
	const char *name;
	uint8_t min_args, max_args;
	uint16_t flags;            /* enum func_flag */
	uint32_t needs;            /* enum probe_cap (program.h) that every
				    * probe of the calling block must have */
	/* The semantic pass, once the argument count is known to be in
	 * bounds: check the arguments, add the call's event, and return the
	 * call's type (type_none() when it has no value; for FUNC_AGG the
	 * map value type), or NULL after an error. Errors are reported only
	 * in the final pass (sema_error does that); the hook runs in every
	 * pass, so it must not add events or rewrite nodes before it. */
	const struct type *(*check)(struct sema *s, struct node *call);
	/* Code, one of the two: the value in a register or a constant (or
	 * no value: the call's effect), */
	struct cval (*gen)(struct cg *cg, const struct node *call);
	/* or the value written to memory at dst as type `to` (strings,
	 * records, stacks: whatever is not an integer). */
	void (*gen_to)(struct cg *cg, const struct node *call, struct cmem dst,
		       const struct type *to);
};

struct program;
/* D's per-CPU map of speculations (funcs/dtrace.c): its index, made
 * when first asked for. */
int funcs_dspec_map(struct program *prog);

/* The function called `name`, or NULL. */
const struct func *func_find(const char *name);

/* The families' tables, each ended by a record with a NULL name, and
 * the list of them, ended by NULL (funcs.c). */
extern const struct func funcs_output[], funcs_control[], funcs_maps[],
	funcs_strings[], funcs_symbols[], funcs_net[], funcs_values[],
	funcs_text[], funcs_pointers[], funcs_dtrace[],
	funcs_dtrace_str[];
extern const struct func *const func_families[];

#endif
