/* vm_asm.h - instruction encoders for tests of the VM (unit tests, the
 * fuzzer, the benchmark), named after the kernel's filter.h macros so a
 * program reads like the kernel's own BPF tests. Also the cpu-v4
 * instructions Debian 12's UAPI header lacks. */
#ifndef SONDE_TEST_VM_ASM_H
#define SONDE_TEST_VM_ASM_H

#include <linux/bpf.h>
#include <stdint.h>

#ifndef BPF_MEMSX
#define BPF_MEMSX 0x80
#endif

static inline struct bpf_insn vi_raw(uint8_t code, uint8_t dst, uint8_t src,
				     int16_t off, int32_t imm)
{
	return (struct bpf_insn){ .code = code, .dst_reg = dst & 0xf,
				  .src_reg = src & 0xf, .off = off, .imm = imm };
}

#define ALU64_REG(op, d, s)  vi_raw(BPF_ALU64 | (op) | BPF_X, d, s, 0, 0)
#define ALU64_IMM(op, d, i)  vi_raw(BPF_ALU64 | (op) | BPF_K, d, 0, 0, i)
#define ALU32_REG(op, d, s)  vi_raw(BPF_ALU | (op) | BPF_X, d, s, 0, 0)
#define ALU32_IMM(op, d, i)  vi_raw(BPF_ALU | (op) | BPF_K, d, 0, 0, i)
/* signed division and modulo (off = 1) */
#define SALU64_REG(op, d, s) vi_raw(BPF_ALU64 | (op) | BPF_X, d, s, 1, 0)
#define SALU64_IMM(op, d, i) vi_raw(BPF_ALU64 | (op) | BPF_K, d, 0, 1, i)
#define SALU32_REG(op, d, s) vi_raw(BPF_ALU | (op) | BPF_X, d, s, 1, 0)
#define SALU32_IMM(op, d, i) vi_raw(BPF_ALU | (op) | BPF_K, d, 0, 1, i)
#define MOV64_REG(d, s)      ALU64_REG(BPF_MOV, d, s)
#define MOV64_IMM(d, i)      ALU64_IMM(BPF_MOV, d, i)
#define MOV32_REG(d, s)      ALU32_REG(BPF_MOV, d, s)
#define MOV32_IMM(d, i)      ALU32_IMM(BPF_MOV, d, i)
#define MOVSX64(d, s, bits)  vi_raw(BPF_ALU64 | BPF_MOV | BPF_X, d, s, bits, 0)
#define MOVSX32(d, s, bits)  vi_raw(BPF_ALU | BPF_MOV | BPF_X, d, s, bits, 0)
#define NEG64(d)             vi_raw(BPF_ALU64 | BPF_NEG, d, 0, 0, 0)
#define NEG32(d)             vi_raw(BPF_ALU | BPF_NEG, d, 0, 0, 0)
#define ENDIAN(src, d, bits) vi_raw(BPF_ALU | BPF_END | (src), d, 0, 0, bits)
#define BSWAP(d, bits)       vi_raw(BPF_ALU64 | BPF_END, d, 0, 0, bits)
#define LD_IMM64_RAW(d, src, v) \
	vi_raw(BPF_LD | BPF_DW | BPF_IMM, d, src, 0, (int32_t)(uint32_t)(v)), \
	vi_raw(0, 0, 0, 0, (int32_t)(uint32_t)((uint64_t)(v) >> 32))
#define LD_IMM64(d, v)       LD_IMM64_RAW(d, 0, v)
#define LD_MAP(d, i)         LD_IMM64_RAW(d, BPF_PSEUDO_MAP_FD, i)
#define LD_MAP_VALUE(d, i, off) \
	vi_raw(BPF_LD | BPF_DW | BPF_IMM, d, BPF_PSEUDO_MAP_VALUE, 0, i), \
	vi_raw(0, 0, 0, 0, off)
#define LDX(sz, d, s, o)     vi_raw(BPF_LDX | (sz) | BPF_MEM, d, s, o, 0)
#define LDXSX(sz, d, s, o)   vi_raw(BPF_LDX | (sz) | BPF_MEMSX, d, s, o, 0)
#define STX(sz, d, s, o)     vi_raw(BPF_STX | (sz) | BPF_MEM, d, s, o, 0)
#define ST(sz, d, o, i)      vi_raw(BPF_ST | (sz) | BPF_MEM, d, 0, o, i)
#define ATOMIC(sz, op, d, s, o) vi_raw(BPF_STX | (sz) | BPF_ATOMIC, d, s, o, op)
#define JA(o)                vi_raw(BPF_JMP | BPF_JA, 0, 0, o, 0)
#define JA32(o)              vi_raw(BPF_JMP32 | BPF_JA, 0, 0, 0, o)
#define JMP_REG(op, d, s, o) vi_raw(BPF_JMP | (op) | BPF_X, d, s, o, 0)
#define JMP_IMM(op, d, i, o) vi_raw(BPF_JMP | (op) | BPF_K, d, 0, o, i)
#define JMP32_REG(op, d, s, o) vi_raw(BPF_JMP32 | (op) | BPF_X, d, s, o, 0)
#define JMP32_IMM(op, d, i, o) vi_raw(BPF_JMP32 | (op) | BPF_K, d, 0, o, i)
#define CALL(id)             vi_raw(BPF_JMP | BPF_CALL, 0, 0, 0, id)
#define EXIT()               vi_raw(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

#endif
