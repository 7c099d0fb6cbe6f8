/* asm.h - BPF instruction encoding, and lowering of allocated IR to final
 * instructions with labels resolved to jump offsets. */
#ifndef SONDE_CODEGEN_ASM_H
#define SONDE_CODEGEN_ASM_H

#include <linux/bpf.h>
#include <stdint.h>

#include "ir.h"
#include "regalloc.h"

/* Encoders for single instructions, named after the kernel's macros. */
static inline struct bpf_insn bpf_raw(uint8_t code, uint8_t dst, uint8_t src,
				      int16_t off, int32_t imm)
{
	return (struct bpf_insn){ .code = code, .dst_reg = dst & 0xf,
				  .src_reg = src & 0xf, .off = off,
				  .imm = imm };
}

#define BPF_ALU64_REG_(op, d, s) bpf_raw(BPF_ALU64 | (op) | BPF_X, d, s, 0, 0)
#define BPF_ALU64_IMM_(op, d, i) bpf_raw(BPF_ALU64 | (op) | BPF_K, d, 0, 0, i)
#define BPF_MOV64_REG_(d, s) BPF_ALU64_REG_(BPF_MOV, d, s)
#define BPF_MOV64_IMM_(d, i) BPF_ALU64_IMM_(BPF_MOV, d, i)
#define BPF_LDX_MEM_(sz, d, s, o) bpf_raw(BPF_LDX | (sz) | BPF_MEM, d, s, o, 0)
#define BPF_STX_MEM_(sz, d, s, o) bpf_raw(BPF_STX | (sz) | BPF_MEM, d, s, o, 0)
#define BPF_ST_MEM_(sz, d, o, i) bpf_raw(BPF_ST | (sz) | BPF_MEM, d, 0, o, i)
#define BPF_ATOMIC_ADD_(sz, d, s, o) \
	bpf_raw(BPF_STX | (sz) | BPF_ATOMIC, d, s, o, BPF_ADD)
#define BPF_JA_(o) bpf_raw(BPF_JMP | BPF_JA, 0, 0, o, 0)
#define BPF_JMP_REG_(op, d, s, o) bpf_raw(BPF_JMP | (op) | BPF_X, d, s, o, 0)
#define BPF_JMP_IMM_(op, d, i, o) bpf_raw(BPF_JMP | (op) | BPF_K, d, 0, o, i)
#define BPF_CALL_(helper) bpf_raw(BPF_JMP | BPF_CALL, 0, 0, 0, helper)
#define BPF_EXIT_() bpf_raw(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

/* Lower `ir` with homes `ra` into a malloc'd array of instructions.
 * Returns 0, -ENOMEM, or -E2BIG when a jump does not fit in 16 bits. */
int asm_lower(const struct ir *ir, const struct ra *ra,
	      struct bpf_insn **out, uint32_t *n);

#endif
