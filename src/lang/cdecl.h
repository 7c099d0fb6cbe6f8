/* cdecl.h - the C declaration parser: struct, union and enum definitions
 * and typedefs, from the preprocessed tokens of a script's definitions
 * and its headers, laid out as gcc lays them out on x86-64, declared in
 * the program's C types (types.h). How it works: cdecl.c. */
#ifndef SONDE_CDECL_H
#define SONDE_CDECL_H

#include <stddef.h>

#include "../base/diag.h"
#include "pp.h"

struct ctypes;

/* Declare what toks[0..n) (ending with a PT_EOF) define in `reg`.
 * Declarations the script itself writes must be right: each error is
 * reported in `d` with its position. Headers are full of what a tracer
 * does not need (prototypes, inline functions, extern variables, asm,
 * GNU extensions): those are skipped, and a header declaration sonde
 * cannot lay out is left undeclared, for the kernel's BTF to supply if
 * a script uses the name. Returns 0 or -EINVAL after errors. */
int cdecl_parse(struct pp *pp, const struct ptok *toks, size_t n,
		struct ctypes *reg, struct diags *d);

#endif
