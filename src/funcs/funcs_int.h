/* funcs_int.h - what the families of functions share: both passes'
 * internals (a record checks in the semantic pass and generates code) and
 * short accessors for a call's arguments. Private to src/funcs/. */
#ifndef SONDE_FUNCS_INT_H
#define SONDE_FUNCS_INT_H

#include "../codegen/cg.h"
#include "../lang/sema_int.h"
#include "func.h"

static inline uint32_t nargs(const struct node *call)
{
	return call->u.call.args.n;
}

static inline struct node *arg(const struct node *call, uint32_t i)
{
	return call->u.call.args.v[i];
}

/* A string literal argument as sema left it ("" if it is not one). */
static inline const char *lit_arg(const struct node *call, uint32_t i)
{
	return i < nargs(call) && arg(call, i)->kind == N_STR ?
		arg(call, i)->u.str.s : "";
}

/* The code hook of calls whose code is their event (printf, print, ...):
 * the record's fields from the arguments after the format, if any. */
struct cval funcs_gen_event(struct cg *cg, const struct node *call);

/* printf-style calls (printf, cat, system): a literal format, then
 * arguments; adds an event of `kind`. */
const struct type *funcs_check_format_event(struct sema *s, struct node *n,
					    enum event_kind kind);

#endif
