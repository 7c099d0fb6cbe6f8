/* regalloc.h - homes for virtual registers: linear-scan allocation over
 * live intervals, with spilling to stack slots. */
#ifndef SONDE_CODEGEN_REGALLOC_H
#define SONDE_CODEGEN_REGALLOC_H

#include <stdint.h>

#include "ir.h"

/* Machine register roles. r0 and r5 are never given to a vreg: lowering
 * uses them as scratch to fill spilled operands (r5 is still written as
 * the fifth call argument just before a call). */
#define RA_SCRATCH0 0
#define RA_SCRATCH1 5
#define RA_SPILLED  (-1)

struct ra {
	int8_t *home;      /* per vreg: machine register, or RA_SPILLED */
	int16_t *slot;     /* per spilled vreg: offset from r10 (negative) */
	uint32_t stack;    /* bytes below r10 in use: frame + spill slots */
	uint32_t nspilled;
};

/* Allocate every vreg of `ir`. `frame` bytes below r10 are already taken
 * by the code generator's stack objects; spill slots go below them.
 * May insert "v = 0" after IR_ENTRY for vregs read before any write on
 * some path (script variables assigned in only one branch), because the
 * verifier rejects reads of uninitialized registers. `nregs` limits the
 * callee-saved registers used (4 normally; tests lower it to force
 * spilling). Returns 0 or -ENOMEM. */
int regalloc(struct ir *ir, uint32_t frame, int nregs, struct ra *out);
void ra_free(struct ra *ra);

#endif
