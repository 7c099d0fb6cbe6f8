/* ir.h - the codegen IR: eBPF instructions over virtual registers, plus
 * labels and calls with argument lists.
 *
 * The IR is deliberately close to eBPF so that lowering is a table walk:
 * every IR instruction becomes one to a few BPF instructions once each
 * virtual register has a home (a machine register or a spill slot). What
 * the IR adds over raw BPF:
 *   - unlimited virtual registers (vregs), not in SSA form: a vreg may be
 *     assigned on several paths (script variables, ?: results);
 *   - symbolic labels, resolved to jump offsets by the assembler;
 *   - calls that name their arguments, so the allocator, not the code
 *     generator, decides how values survive the clobbering of r0-r5;
 *   - IR_ENTRY, which takes the context pointer out of r1 on entry.
 * Vreg 0 means "none"; VR_FP is the frame pointer r10 (read only), used as
 * the base of every stack access.
 *
 * Layers: the code generator (cg_*.c) appends IR with the ir_* builders;
 * regalloc.c maps vregs to homes; asm.c lowers to struct bpf_insn and
 * resolves labels. Each can be tested alone. */
#ifndef SONDE_CODEGEN_IR_H
#define SONDE_CODEGEN_IR_H

#include <linux/bpf.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "../base/vec.h"

typedef int32_t vreg;

#define VR_NONE 0
#define VR_FP   1
#define VR_FIRST 2   /* first allocatable vreg */

enum ir_op {
	IR_ENTRY,    /* d = r1 (the context), first instruction only */
	IR_MOV,      /* d = a, or d = imm */
	IR_ALU,      /* d = a <code> b, or d = a <code> imm (64-bit); code
		      * BPF_END: d = the low imm (16, 32, 64) bits of a with
		      * their bytes reversed */
	IR_NEG,      /* d = -a */
	IR_LDIMM64,  /* d = imm (any 64-bit constant) */
	IR_LDMAP,    /* d = map[imm]  (BPF_PSEUDO_MAP_FD, imm = map index) */
	IR_LDX,      /* d = *(size *)(a + off) */
	IR_STX,      /* *(size *)(a + off) = b */
	IR_ST,       /* *(size *)(a + off) = imm */
	IR_XADD,     /* lock *(size *)(a + off) += b */
	IR_JA,       /* goto label */
	IR_JCC,      /* if a <code> b|imm goto label */
	IR_CALL,     /* d = helper imm (args) ; d may be VR_NONE */
	IR_LABEL,    /* label: */
	IR_RET,      /* return a|imm (r0 = ...; exit) */
	IR_LDFUNC,   /* d = &subprogram imm (BPF_PSEUDO_FUNC; imm indexes
		      * the probe's callbacks until codegen links them) */
	IR_ARGSAVE,  /* *(u64 *)(r10 + off) = r<imm>: a callback's incoming
		      * argument (r2..r5), first instructions only, before
		      * anything can clobber the argument registers */
};

#define IR_MAX_ARGS 5

/* A call argument: vreg v plus a constant (v = VR_FP gives a stack
 * address, v = VR_NONE a plain constant), so that constants and stack
 * addresses need no vreg that would have to survive the call. */
struct ir_arg {
	vreg v;
	int32_t imm;
};

#define VR_MAPFD (-1)   /* as a call argument: map index `imm` */

#define IR_ARG(v) ((struct ir_arg){ (v), 0 })
#define IR_MAP(i) ((struct ir_arg){ VR_MAPFD, (i) })
#define IR_IMM(i) ((struct ir_arg){ VR_NONE, (i) })
#define IR_STK(off) ((struct ir_arg){ VR_FP, (off) })

struct ir_insn {
	uint8_t op;         /* enum ir_op */
	uint8_t code;       /* ALU: BPF_ADD...; JCC: BPF_JEQ...; mem: BPF_B..BPF_DW */
	bool has_imm;       /* second operand is `imm`, not `b` */
	uint8_t nargs;      /* IR_CALL */
	int16_t off;        /* memory offset */
	vreg d, a, b;
	int64_t imm;
	uint32_t label;     /* IR_JA, IR_JCC, IR_LABEL */
	struct ir_arg args[IR_MAX_ARGS];
};

struct ir {
	VEC(struct ir_insn) insns;
	vreg nvregs;        /* vregs in use are [VR_FIRST, nvregs) */
	uint32_t nlabels;
	int err;            /* first allocation failure, reported at the end */
};

void ir_init(struct ir *ir);
void ir_free(struct ir *ir);

vreg ir_vreg(struct ir *ir);
uint32_t ir_label(struct ir *ir);
void ir_emit(struct ir *ir, struct ir_insn in);

/* Builders: one per instruction shape. */
void ir_entry(struct ir *ir, vreg d);
void ir_mov(struct ir *ir, vreg d, vreg a);
void ir_movi(struct ir *ir, vreg d, int64_t imm);
void ir_alu(struct ir *ir, uint8_t code, vreg d, vreg a, vreg b);
void ir_alui(struct ir *ir, uint8_t code, vreg d, vreg a, int64_t imm);
void ir_neg(struct ir *ir, vreg d, vreg a);
void ir_ldmap(struct ir *ir, vreg d, int map);
void ir_ldx(struct ir *ir, uint8_t size, vreg d, vreg a, int16_t off);
void ir_stx(struct ir *ir, uint8_t size, vreg a, int16_t off, vreg b);
void ir_st(struct ir *ir, uint8_t size, vreg a, int16_t off, int64_t imm);
void ir_xadd(struct ir *ir, uint8_t size, vreg a, int16_t off, vreg b);
void ir_ja(struct ir *ir, uint32_t label);
void ir_jcc(struct ir *ir, uint8_t code, vreg a, vreg b, uint32_t label);
void ir_jcci(struct ir *ir, uint8_t code, vreg a, int64_t imm, uint32_t label);
void ir_call(struct ir *ir, vreg d, int helper, const struct ir_arg *args,
	     int nargs);
void ir_place(struct ir *ir, uint32_t label);
void ir_ldfunc(struct ir *ir, vreg d, int sub);
void ir_argsave(struct ir *ir, int reg, int16_t off);
void ir_ret(struct ir *ir, vreg a);
void ir_reti(struct ir *ir, int64_t imm);

/* Uses and definition of one instruction (VR_FP and VR_NONE excluded).
 * Returns the number of uses written to `uses` (at most IR_MAX_ARGS + 2). */
int ir_uses(const struct ir_insn *in, vreg *uses);
vreg ir_def(const struct ir_insn *in);
bool ir_is_jump(const struct ir_insn *in);
/* Falls through to the next instruction (not JA, not RET). */
bool ir_falls_through(const struct ir_insn *in);

/* Drop instructions no path from the entry reaches (the verifier
 * rejects unreachable code; constant conditions create it). Also drops
 * "goto L" immediately followed by "L:". Returns the number removed. */
size_t ir_prune(struct ir *ir);

/* Textual form for tests and debugging: "v3 = v2 + 8". */
void ir_dump(FILE *out, const struct ir *ir);

#endif
