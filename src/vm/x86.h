/* x86.h - the few x86-64 encodings the JIT needs (vm_jit.c), written
 * into a bounded byte buffer. Registers are numbered as the hardware
 * numbers them (rax 0 ... r15 15); every function emits one instruction.
 * Memory operands are always [base + disp8/disp32] (never mod 00, so
 * rbp and r13 need no special case; rsp and r12 get their SIB byte).
 *
 * References: Intel SDM vol. 2; the kernel's arch/x86/net/bpf_jit_comp.c
 * for the choice of sequences. */
#ifndef SONDE_VM_X86_H
#define SONDE_VM_X86_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

enum {
	RAX, RCX, RDX, RBX, RSP, RBP, RSI, RDI,
	R8, R9, R10, R11, R12, R13, R14, R15,
};

/* Condition codes (the low nibble of Jcc). */
enum {
	CC_B = 0x2, CC_AE = 0x3, CC_E = 0x4, CC_NE = 0x5, CC_BE = 0x6,
	CC_A = 0x7, CC_S = 0x8, CC_L = 0xc, CC_GE = 0xd, CC_LE = 0xe,
	CC_G = 0xf,
};

/* Opcode extensions (modrm.reg) of the group-1 ALU instructions
 * (81 /n, 83 /n) and their register forms (op r/m, r). */
enum { ALU_ADD = 0, ALU_OR = 1, ALU_AND = 4, ALU_SUB = 5, ALU_XOR = 6,
       ALU_CMP = 7 };
static const uint8_t alu_rm_r[8] = {
	[ALU_ADD] = 0x01, [ALU_OR] = 0x09, [ALU_AND] = 0x21,
	[ALU_SUB] = 0x29, [ALU_XOR] = 0x31, [ALU_CMP] = 0x39,
};
/* Shift group (C1 /n, D3 /n). */
enum { SH_ROR = 1, SH_SHL = 4, SH_SHR = 5, SH_SAR = 7 };

struct xbuf {
	uint8_t *p;
	size_t len, cap;
	bool full;            /* an emit did not fit (the JIT gives up) */
};

static inline void x_byte(struct xbuf *b, uint8_t v)
{
	if (b->len < b->cap)
		b->p[b->len] = v;
	else
		b->full = true;
	b->len++;
}

static inline void x_u32(struct xbuf *b, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		x_byte(b, (uint8_t)(v >> (8 * i)));
}

static inline void x_u64(struct xbuf *b, uint64_t v)
{
	x_u32(b, (uint32_t)v);
	x_u32(b, (uint32_t)(v >> 32));
}

static inline bool is_s8(int64_t v)
{
	return v >= -128 && v <= 127;
}

static inline bool is_s32(int64_t v)
{
	return v >= INT32_MIN && v <= INT32_MAX;
}

/* REX prefix for operand size w, modrm.reg r, modrm.rm (or base) m;
 * `byte_regs` forces one so that registers 4-7 as byte operands mean
 * spl/bpl/sil/dil, not ah/ch/dh/bh. */
static inline void x_rex(struct xbuf *b, bool w, int r, int m, bool byte_regs)
{
	uint8_t rex = (uint8_t)(0x40 | (w ? 8 : 0) | (r & 8 ? 4 : 0) |
				(m & 8 ? 1 : 0));
	if (rex != 0x40 || byte_regs)
		x_byte(b, rex);
}

static inline void x_modrm_reg(struct xbuf *b, int r, int m)
{
	x_byte(b, (uint8_t)(0xc0 | (r & 7) << 3 | (m & 7)));
}

static inline void x_modrm_mem(struct xbuf *b, int r, int base, int32_t disp)
{
	bool d8 = is_s8(disp);
	x_byte(b, (uint8_t)((d8 ? 0x40 : 0x80) | (r & 7) << 3 | (base & 7)));
	if ((base & 7) == RSP)
		x_byte(b, 0x24);
	if (d8)
		x_byte(b, (uint8_t)disp);
	else
		x_u32(b, (uint32_t)disp);
}

/* op r/m, r (register form): add, or, and, sub, xor, cmp; also mov
 * (0x89), test (0x85) and any other "op r/m, r" opcode. */
static inline void x_op_rr(struct xbuf *b, uint8_t opc, bool w, int dst, int src)
{
	x_rex(b, w, src, dst, false);
	x_byte(b, opc);
	x_modrm_reg(b, src, dst);
}

static inline void x_mov_rr(struct xbuf *b, bool w, int dst, int src)
{
	x_op_rr(b, 0x89, w, dst, src);
}

/* Group-1 ALU with an immediate (sign-extended to 64 bits when w). */
static inline void x_alu_ri(struct xbuf *b, int ext, bool w, int dst, int32_t imm)
{
	x_rex(b, w, 0, dst, false);
	if (is_s8(imm)) {
		x_byte(b, 0x83);
		x_modrm_reg(b, ext, dst);
		x_byte(b, (uint8_t)imm);
	} else {
		x_byte(b, 0x81);
		x_modrm_reg(b, ext, dst);
		x_u32(b, (uint32_t)imm);
	}
}

static inline void x_test_ri(struct xbuf *b, bool w, int dst, int32_t imm)
{
	x_rex(b, w, 0, dst, false);
	x_byte(b, 0xf7);
	x_modrm_reg(b, 0, dst);
	x_u32(b, (uint32_t)imm);
}

/* dst = v, in the shortest form. Flags may be clobbered (xor). */
static inline void x_mov_imm64(struct xbuf *b, int dst, uint64_t v)
{
	if (v == 0) {
		x_op_rr(b, 0x31, false, dst, dst);             /* xor r32, r32 */
	} else if (v <= UINT32_MAX) {
		x_rex(b, false, 0, dst, false);                 /* mov r32, imm32 */
		x_byte(b, (uint8_t)(0xb8 + (dst & 7)));
		x_u32(b, (uint32_t)v);
	} else if (is_s32((int64_t)v)) {
		x_rex(b, true, 0, dst, false);                  /* mov r/m64, simm32 */
		x_byte(b, 0xc7);
		x_modrm_reg(b, 0, dst);
		x_u32(b, (uint32_t)v);
	} else {
		x_rex(b, true, 0, dst, false);                  /* movabs */
		x_byte(b, (uint8_t)(0xb8 + (dst & 7)));
		x_u64(b, v);
	}
}

/* Unary group 3 (F7 /n): not 2, neg 3, mul 4, imul 5, div 6, idiv 7. */
static inline void x_grp3(struct xbuf *b, int ext, bool w, int rm)
{
	x_rex(b, w, 0, rm, false);
	x_byte(b, 0xf7);
	x_modrm_reg(b, ext, rm);
}

/* imul dst, src */
static inline void x_imul_rr(struct xbuf *b, bool w, int dst, int src)
{
	x_rex(b, w, dst, src, false);
	x_byte(b, 0x0f);
	x_byte(b, 0xaf);
	x_modrm_reg(b, dst, src);
}

/* imul dst, dst, imm32 */
static inline void x_imul_ri(struct xbuf *b, bool w, int dst, int32_t imm)
{
	x_rex(b, w, dst, dst, false);
	if (is_s8(imm)) {
		x_byte(b, 0x6b);
		x_modrm_reg(b, dst, dst);
		x_byte(b, (uint8_t)imm);
	} else {
		x_byte(b, 0x69);
		x_modrm_reg(b, dst, dst);
		x_u32(b, (uint32_t)imm);
	}
}

static inline void x_shift_ri(struct xbuf *b, int ext, bool w, int dst, uint8_t n)
{
	x_rex(b, w, 0, dst, false);
	if (n == 1) {
		x_byte(b, 0xd1);
		x_modrm_reg(b, ext, dst);
	} else {
		x_byte(b, 0xc1);
		x_modrm_reg(b, ext, dst);
		x_byte(b, n);
	}
}

static inline void x_shift_cl(struct xbuf *b, int ext, bool w, int dst)
{
	x_rex(b, w, 0, dst, false);
	x_byte(b, 0xd3);
	x_modrm_reg(b, ext, dst);
}

/* Two-byte 0F opcodes of the form "op reg, r/m" in register form:
 * movzx (B6, B7), movsx (BE, BF). */
static inline void x_op0f_rr(struct xbuf *b, uint8_t opc, bool w, int reg,
			     int rm, bool byte_rm)
{
	x_rex(b, w, reg, rm, byte_rm && (rm & 7) >= 4 && rm < 8);
	x_byte(b, 0x0f);
	x_byte(b, opc);
	x_modrm_reg(b, reg, rm);
}

static inline void x_op0f_rm(struct xbuf *b, uint8_t opc, bool w, int reg,
			     int base, int32_t disp)
{
	x_rex(b, w, reg, base, false);
	x_byte(b, 0x0f);
	x_byte(b, opc);
	x_modrm_mem(b, reg, base, disp);
}

/* movsxd dst, src32 */
static inline void x_movsxd_rr(struct xbuf *b, int dst, int src)
{
	x_rex(b, true, dst, src, false);
	x_byte(b, 0x63);
	x_modrm_reg(b, dst, src);
}

static inline void x_bswap(struct xbuf *b, bool w, int r)
{
	x_rex(b, w, 0, r, false);
	x_byte(b, 0x0f);
	x_byte(b, (uint8_t)(0xc8 + (r & 7)));
}

/* ror r16, 8: swaps the two low bytes */
static inline void x_ror16_8(struct xbuf *b, int r)
{
	x_byte(b, 0x66);
	x_rex(b, false, 0, r, false);
	x_byte(b, 0xc1);
	x_modrm_reg(b, SH_ROR, r);
	x_byte(b, 8);
}

/* ---- memory ---- */

/* "op reg, [base + disp]" / "op [base + disp], reg" with a one-byte
 * opcode and optional 0x66 / lock prefixes. */
static inline void x_mem(struct xbuf *b, bool lock, bool p66, bool w,
			 uint8_t opc, int reg, int base, int32_t disp,
			 bool byte_reg)
{
	if (lock)
		x_byte(b, 0xf0);
	if (p66)
		x_byte(b, 0x66);
	x_rex(b, w, reg, base, byte_reg && (reg & 7) >= 4 && reg < 8);
	x_byte(b, opc);
	x_modrm_mem(b, reg, base, disp);
}

/* lock (xadd | cmpxchg) [base + disp], reg */
static inline void x_lock0f(struct xbuf *b, uint8_t opc, bool w, int reg,
			    int base, int32_t disp)
{
	x_byte(b, 0xf0);
	x_rex(b, w, reg, base, false);
	x_byte(b, 0x0f);
	x_byte(b, opc);
	x_modrm_mem(b, reg, base, disp);
}

/* Loads: size 1, 2, 4 or 8 bytes, zero-extended to 64 bits. */
static inline void x_load(struct xbuf *b, int size, int dst, int base, int32_t disp)
{
	switch (size) {
	case 1: x_op0f_rm(b, 0xb6, false, dst, base, disp); break;
	case 2: x_op0f_rm(b, 0xb7, false, dst, base, disp); break;
	case 4: x_mem(b, false, false, false, 0x8b, dst, base, disp, false); break;
	default: x_mem(b, false, false, true, 0x8b, dst, base, disp, false); break;
	}
}

/* Loads sign-extended to 64 bits: size 1, 2 or 4. */
static inline void x_load_sx(struct xbuf *b, int size, int dst, int base,
			     int32_t disp)
{
	if (size == 1)
		x_op0f_rm(b, 0xbe, true, dst, base, disp);
	else if (size == 2)
		x_op0f_rm(b, 0xbf, true, dst, base, disp);
	else
		x_mem(b, false, false, true, 0x63, dst, base, disp, false);
}

static inline void x_store(struct xbuf *b, int size, int base, int32_t disp, int src)
{
	switch (size) {
	case 1: x_mem(b, false, false, false, 0x88, src, base, disp, true); break;
	case 2: x_mem(b, false, true, false, 0x89, src, base, disp, false); break;
	case 4: x_mem(b, false, false, false, 0x89, src, base, disp, false); break;
	default: x_mem(b, false, false, true, 0x89, src, base, disp, false); break;
	}
}

/* Stores an immediate (sign-extended for 8 bytes). */
static inline void x_store_imm(struct xbuf *b, int size, int base, int32_t disp,
			       int32_t imm)
{
	switch (size) {
	case 1:
		x_mem(b, false, false, false, 0xc6, 0, base, disp, false);
		x_byte(b, (uint8_t)imm);
		break;
	case 2:
		x_mem(b, false, true, false, 0xc7, 0, base, disp, false);
		x_byte(b, (uint8_t)imm);
		x_byte(b, (uint8_t)(imm >> 8));
		break;
	default:
		x_mem(b, false, false, size == 8, 0xc7, 0, base, disp, false);
		x_u32(b, (uint32_t)imm);
		break;
	}
}

/* ---- control ---- */

static inline void x_push(struct xbuf *b, int r)
{
	x_rex(b, false, 0, r, false);
	x_byte(b, (uint8_t)(0x50 + (r & 7)));
}

static inline void x_pop(struct xbuf *b, int r)
{
	x_rex(b, false, 0, r, false);
	x_byte(b, (uint8_t)(0x58 + (r & 7)));
}

static inline void x_call_reg(struct xbuf *b, int r)
{
	x_rex(b, false, 0, r, false);
	x_byte(b, 0xff);
	x_modrm_reg(b, 2, r);
}

/* A jcc (cc >= 0) or jmp (cc < 0) of known displacement. */
static inline void x_jump(struct xbuf *b, int cc, bool short_form, int32_t disp)
{
	if (short_form) {
		x_byte(b, cc < 0 ? 0xeb : (uint8_t)(0x70 | cc));
		x_byte(b, (uint8_t)disp);
	} else if (cc < 0) {
		x_byte(b, 0xe9);
		x_u32(b, (uint32_t)disp);
	} else {
		x_byte(b, 0x0f);
		x_byte(b, (uint8_t)(0x80 | cc));
		x_u32(b, (uint32_t)disp);
	}
}

static inline int x_jump_size(int cc, bool short_form)
{
	return short_form ? 2 : cc < 0 ? 5 : 6;
}

/* A short jump forward to a place not emitted yet: returns where its
 * displacement byte is, for x_patch8. */
static inline size_t x_jump8_fwd(struct xbuf *b, int cc)
{
	x_byte(b, cc < 0 ? 0xeb : (uint8_t)(0x70 | cc));
	x_byte(b, 0);
	return b->len - 1;
}

/* Points the short jump at `at` to the current position. Returns false
 * when the distance does not fit (a bug in the JIT: it gives up). */
static inline bool x_patch8(struct xbuf *b, size_t at)
{
	int64_t d = (int64_t)b->len - (int64_t)(at + 1);
	if (!is_s8(d))
		return false;
	if (at < b->cap)
		b->p[at] = (uint8_t)d;
	return true;
}

#endif
