/* cconst.h - C's binary operators on integer constants, as both C
 * constant-expression evaluators use them: the preprocessor's #if
 * (pp_expr.c) and the declaration parser's array sizes and enum values
 * (cdecl_expr.c). 64 bits, unsigned when either operand is; each
 * evaluator parses its own operands (macros and defined() in one, sizeof
 * and the script's constants in the other). */
#ifndef SONDE_CCONST_H
#define SONDE_CCONST_H

#include <stdbool.h>
#include <stdint.h>

#include "pp.h"

struct cconst {
	uint64_t v;     /* the value's bits */
	bool u;         /* unsigned */
};

/* The precedence of the binary operator t (10: * / %, down to 1: ||),
 * or 0 when t is none. */
int cconst_prec(const struct ptok *t);

/* *out = l OP r, OP being t of precedence prec (cconst_prec). Returns 0,
 * or -EDOM for a division or remainder by zero (*out untouched). */
int cconst_binary(const struct ptok *t, int prec, struct cconst l,
		  struct cconst r, struct cconst *out);

#endif
