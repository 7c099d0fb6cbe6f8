/* vm_gen.h - random programs of a verified shape for the VM, run in the
 * interpreter and the JIT and compared (the fuzz target fuzz_vm and the
 * unit test test_vm_diff both use it).
 *
 * A program is generated from a byte string. Its shape keeps it valid
 * for the loader and its behaviour defined, so that any difference
 * between the two engines is a bug in one of them:
 *   - r9 holds the buffer (the context, VG_BUF bytes) and r10 the stack;
 *     neither is ever written, nor used as a value, so no address leaks
 *     into what is compared. Memory is accessed only through them, at
 *     offsets inside the buffer's data area or the stack, aligned for
 *     atomics.
 *   - The prologue sets r0-r8 and all 512 stack bytes from the input;
 *     after a helper call r1-r5 are set again at once, so no register is
 *     ever read uninitialised.
 *   - Jumps go to the start of any template (a few instructions the
 *     generator emits together), forward or backward. Backward jumps
 *     make loops of any kind, endless ones included: the budget stops
 *     them, at the same back edge in both engines.
 *   - Helpers are deterministic functions of their arguments that log
 *     every call; #3 reads 8 bytes at r1, which a template points at the
 *     stack just before the call.
 *   - Every path ends in an epilogue that stores r0-r8 and the whole
 *     stack into the buffer, then exits with r0.
 * What is compared: the run's status, r0, the whole buffer (data,
 * registers, stack) and the helper log. */
#ifndef SONDE_VM_GEN_H
#define SONDE_VM_GEN_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vm/vm.h"
#include "../unit/vm_asm.h"

#define VG_DATA 256                 /* r9 + [0, VG_DATA): data */
#define VG_REGS 256                 /* r9 + VG_REGS: r0-r8 at exit */
#define VG_STACK 512                /* r9 + VG_STACK: the stack at exit */
#define VG_BUF (VG_STACK + VM_STACK_SIZE)
#define VG_MAX_TEMPLATES 256
#define VG_MAX_T_INSNS 10
#define VG_MAX_INSNS (VG_MAX_TEMPLATES * VG_MAX_T_INSNS + 300)
#define VG_BUDGET 5000
#define VG_LOG 64

struct vg_input {
	const uint8_t *p;
	size_t n, at;
};

static inline uint8_t vg_u8(struct vg_input *in)
{
	return in->at < in->n ? in->p[in->at++] : 0;
}

static inline uint32_t vg_u32(struct vg_input *in)
{
	uint32_t v = 0;
	for (int i = 0; i < 4; i++)
		v |= (uint32_t)vg_u8(in) << (8 * i);
	return v;
}

/* Values worth having in registers and immediates: edges of the signed
 * and unsigned ranges, small numbers, shift widths, and raw input. */
static inline uint64_t vg_value(struct vg_input *in)
{
	static const uint64_t edges[] = {
		0, 1, 2, 7, 31, 32, 63, 64, 0xff, 0x7f, 0x80, 0xffff, 0x8000,
		0x7fffffff, 0x80000000, 0xffffffff, 0x100000000ull,
		0x7fffffffffffffffull, 0x8000000000000000ull, ~0ull, ~1ull,
		(uint64_t)-7, 0xdeadbeef00000005ull, 0xffffffff80000000ull,
	};
	uint8_t k = vg_u8(in);
	if (k < 2 * sizeof(edges) / sizeof(*edges))
		return edges[k % (sizeof(edges) / sizeof(*edges))];
	return (uint64_t)vg_u32(in) | (uint64_t)vg_u32(in) << 32;
}

static inline int32_t vg_imm(struct vg_input *in)
{
	return (int32_t)(uint32_t)vg_value(in);
}

struct vg_template {
	struct bpf_insn insn[VG_MAX_T_INSNS];
	uint8_t n;
	int8_t jump_at;          /* insn whose offset is the jump, or -1 */
	bool jump_imm;           /* gotol: the offset is in imm */
	uint32_t target;         /* template index; ntemplates: epilogue */
};

struct vg_prog {
	struct bpf_insn insn[VG_MAX_INSNS];
	uint32_t n;
	uint8_t buf_init[VG_BUF];
};

static const uint8_t vg_alu_ops[] = {
	BPF_ADD, BPF_SUB, BPF_MUL, BPF_DIV, BPF_OR, BPF_AND, BPF_LSH,
	BPF_RSH, BPF_MOD, BPF_XOR, BPF_MOV, BPF_ARSH,
};
static const uint8_t vg_jmp_ops[] = {
	BPF_JEQ, BPF_JGT, BPF_JGE, BPF_JSET, BPF_JNE, BPF_JSGT, BPF_JSGE,
	BPF_JLT, BPF_JLE, BPF_JSLT, BPF_JSLE,
};
static const uint8_t vg_sizes[] = { BPF_B, BPF_H, BPF_W, BPF_DW };
static const int32_t vg_atomic_ops[] = {
	BPF_ADD, BPF_OR, BPF_AND, BPF_XOR, BPF_ADD | BPF_FETCH,
	BPF_OR | BPF_FETCH, BPF_AND | BPF_FETCH, BPF_XOR | BPF_FETCH,
	BPF_XCHG, BPF_CMPXCHG,
};
#define VG_N(a) (sizeof(a) / sizeof(*(a)))

static inline uint8_t vg_reg(struct vg_input *in)
{
	return vg_u8(in) % 9;                 /* r0-r8 */
}

static inline int vg_size_bytes(uint8_t sz)
{
	return sz == BPF_B ? 1 : sz == BPF_H ? 2 : sz == BPF_W ? 4 : 8;
}

/* A base (r9: buffer data, r10: stack) and an offset for `bytes` bytes,
 * a multiple of `align`. */
static inline void vg_place(struct vg_input *in, int bytes, int align,
			    uint8_t *base, int16_t *off)
{
	uint8_t k = vg_u8(in);
	int slots = (k & 1 ? VG_DATA : VM_STACK_SIZE) / align;
	int at = (int)(vg_u32(in) % (uint32_t)(slots - (bytes + align - 1) / align + 1)) * align;
	if (k & 1) {
		*base = 9;
		*off = (int16_t)at;
	} else {
		*base = 10;
		*off = (int16_t)(at - VM_STACK_SIZE);
	}
}

static inline void vg_put(struct vg_template *t, struct bpf_insn i)
{
	if (t->n < VG_MAX_T_INSNS)
		t->insn[t->n++] = i;
}

/* One template from the input; `self` is its index, `count` how many
 * the program has. */
static inline void vg_template(struct vg_input *in, struct vg_template *t,
			       uint32_t self, uint32_t count)
{
	memset(t, 0, sizeof(*t));
	t->jump_at = -1;
	uint8_t kind = vg_u8(in) % 16;
	uint8_t d = vg_reg(in), s = vg_reg(in);
	switch (kind) {
	case 0: case 1: case 2: {              /* ALU, register source */
		uint8_t op = vg_alu_ops[vg_u8(in) % VG_N(vg_alu_ops)];
		uint8_t cls = vg_u8(in) & 1 ? BPF_ALU : BPF_ALU64;
		int16_t off = 0;
		if ((op == BPF_DIV || op == BPF_MOD) && vg_u8(in) & 1)
			off = 1;
		vg_put(t, vi_raw(cls | op | BPF_X, d, s, off, 0));
		break;
	}
	case 3: case 4: {                      /* ALU, immediate */
		uint8_t op = vg_alu_ops[vg_u8(in) % VG_N(vg_alu_ops)];
		bool is32 = vg_u8(in) & 1;
		int32_t imm = vg_imm(in);
		int16_t off = 0;
		if (op == BPF_LSH || op == BPF_RSH || op == BPF_ARSH)
			imm = (int32_t)((uint32_t)imm % (is32 ? 32 : 64));
		if (op == BPF_DIV || op == BPF_MOD) {
			if (!imm)
				imm = 1;
			if (vg_u8(in) & 1)
				off = 1;
		}
		vg_put(t, vi_raw((is32 ? BPF_ALU : BPF_ALU64) | op | BPF_K, d, 0,
				 off, imm));
		break;
	}
	case 5: {                              /* unary: neg, movsx, endian */
		uint8_t k = vg_u8(in) % 8;
		static const int16_t sx[] = { 8, 16, 32 };
		static const int32_t widths[] = { 16, 32, 64 };
		if (k == 0)
			vg_put(t, vg_u8(in) & 1 ? NEG32(d) : NEG64(d));
		else if (k <= 2)
			vg_put(t, MOVSX64(d, s, sx[vg_u8(in) % 3]));
		else if (k == 3)
			vg_put(t, MOVSX32(d, s, sx[vg_u8(in) % 2]));
		else if (k <= 5)
			vg_put(t, ENDIAN(vg_u8(in) & 1 ? BPF_TO_BE : BPF_TO_LE, d,
					 widths[vg_u8(in) % 3]));
		else
			vg_put(t, BSWAP(d, widths[vg_u8(in) % 3]));
		break;
	}
	case 6: {                              /* 64-bit constant */
		uint64_t v = vg_value(in);
		struct bpf_insn ld[] = { LD_IMM64(d, v) };
		vg_put(t, ld[0]);
		vg_put(t, ld[1]);
		break;
	}
	case 7: {                              /* load */
		uint8_t sz = vg_sizes[vg_u8(in) % 4], base;
		int16_t off;
		bool sx = sz != BPF_DW && vg_u8(in) % 3 == 0;
		vg_place(in, vg_size_bytes(sz), 1, &base, &off);
		vg_put(t, sx ? LDXSX(sz, d, base, off) : LDX(sz, d, base, off));
		break;
	}
	case 8: {                              /* store */
		uint8_t sz = vg_sizes[vg_u8(in) % 4], base;
		int16_t off;
		vg_place(in, vg_size_bytes(sz), 1, &base, &off);
		if (vg_u8(in) & 1)
			vg_put(t, ST(sz, base, off, vg_imm(in)));
		else
			vg_put(t, STX(sz, base, s, off));
		break;
	}
	case 9: {                              /* atomic */
		uint8_t sz = vg_u8(in) & 1 ? BPF_W : BPF_DW, base;
		int16_t off;
		int32_t op = vg_atomic_ops[vg_u8(in) % VG_N(vg_atomic_ops)];
		vg_place(in, vg_size_bytes(sz), vg_size_bytes(sz), &base, &off);
		vg_put(t, ATOMIC(sz, op, base, s, off));
		break;
	}
	case 10: case 11: case 12: {           /* conditional jump */
		uint8_t op = vg_jmp_ops[vg_u8(in) % VG_N(vg_jmp_ops)];
		uint8_t cls = vg_u8(in) & 1 ? BPF_JMP32 : BPF_JMP;
		if (vg_u8(in) & 1)
			vg_put(t, vi_raw(cls | op | BPF_X, d, s, 0, 0));
		else
			vg_put(t, vi_raw(cls | op | BPF_K, d, 0, 0, vg_imm(in)));
		t->jump_at = 0;
		break;
	}
	case 13:                               /* goto, or exit */
		if (vg_u8(in) % 4 == 0) {
			t->target = count;      /* to the epilogue */
			vg_put(t, JA(0));
			t->jump_at = 0;
			return;
		}
		t->jump_imm = vg_u8(in) & 1;
		vg_put(t, t->jump_imm ? JA32(0) : JA(0));
		t->jump_at = 0;
		break;
	case 14: case 15: {                    /* helper call */
		uint8_t id = (uint8_t)(1 + vg_u8(in) % 3);
		if (id == 3) {                 /* r1 = a stack address */
			int16_t off = (int16_t)(-8 * (1 + vg_u8(in) % 64));
			vg_put(t, MOV64_REG(1, 10));
			vg_put(t, ALU64_IMM(BPF_ADD, 1, off));
		}
		vg_put(t, CALL(id));
		for (int r = 1; r <= 5; r++)
			vg_put(t, r == 1 ? MOV64_REG(1, 0) :
				  MOV64_IMM(r, vg_imm(in)));
		break;
	}
	}
	if (t->jump_at >= 0) {
		/* mostly forward; one in eight backward (a loop) */
		uint32_t r = vg_u32(in);
		if (r % 8 == 0)
			t->target = (r >> 3) % (self + 1);
		else
			t->target = self + 1 + (r >> 3) % (count - self);
	}
}

/* Builds the program and the buffer's initial bytes from the input. */
static inline void vg_generate(const uint8_t *data, size_t size,
			       struct vg_prog *p)
{
	static struct vg_template t[VG_MAX_TEMPLATES];
	struct vg_input in = { data, size, 0 };
	uint32_t start[VG_MAX_TEMPLATES + 1];
	p->n = 0;
	for (uint32_t i = 0; i < VG_BUF; i++)
		p->buf_init[i] = vg_u8(&in);
	uint32_t count = 1 + vg_u8(&in) % VG_MAX_TEMPLATES;
#define EMIT(i) (p->insn[p->n++] = (i))
	/* prologue: r9 = the buffer, r0-r8 and the stack from the input */
	EMIT(MOV64_REG(9, 1));
	for (uint8_t r = 0; r <= 8; r++) {
		struct bpf_insn ld[] = { LD_IMM64(r, vg_value(&in)) };
		EMIT(ld[0]);
		EMIT(ld[1]);
	}
	for (int off = -VM_STACK_SIZE; off < 0; off += 8)
		EMIT(ST(BPF_DW, 10, (int16_t)off, vg_imm(&in)));
	for (uint32_t i = 0; i < count; i++)
		vg_template(&in, &t[i], i, count);
	for (uint32_t i = 0; i < count; i++) {
		start[i] = p->n;
		for (uint8_t k = 0; k < t[i].n; k++)
			EMIT(t[i].insn[k]);
	}
	start[count] = p->n;
	for (uint32_t i = 0; i < count; i++) {
		if (t[i].jump_at < 0)
			continue;
		uint32_t at = start[i] + (uint32_t)t[i].jump_at;
		int32_t off = (int32_t)start[t[i].target] - (int32_t)at - 1;
		if (t[i].jump_imm)
			p->insn[at].imm = off;
		else
			p->insn[at].off = (int16_t)off;
	}
	/* epilogue: r0-r8, then the stack, into the buffer */
	for (uint8_t r = 0; r <= 8; r++)
		EMIT(STX(BPF_DW, 9, r, (int16_t)(VG_REGS + 8 * r)));
	for (int off = -VM_STACK_SIZE; off < 0; off += 8) {
		EMIT(LDX(BPF_DW, 1, 10, (int16_t)off));
		EMIT(STX(BPF_DW, 9, 1, (int16_t)(VG_STACK + VM_STACK_SIZE + off)));
	}
	EMIT(EXIT());
#undef EMIT
}

/* ---- running ---- */

struct vg_log {
	uint32_t n;
	uint64_t e[VG_LOG][7];         /* id, r1-r5, r0 */
};

static struct vg_log *vg_cur_log;

static inline uint64_t vg_logged(uint64_t id, uint64_t a, uint64_t b,
				 uint64_t c, uint64_t d, uint64_t e,
				 uint64_t ret)
{
	struct vg_log *l = vg_cur_log;
	if (l->n < VG_LOG) {
		uint64_t *x = l->e[l->n];
		x[0] = id, x[1] = a, x[2] = b, x[3] = c, x[4] = d, x[5] = e;
		x[6] = ret;
	}
	l->n++;
	return ret;
}

static uint64_t vg_h1(uint64_t a, uint64_t b, uint64_t c, uint64_t d,
		      uint64_t e)
{
	return vg_logged(1, a, b, c, d, e, a * 3 + (b ^ c) - d + (e << 1));
}

static uint64_t vg_h2(uint64_t a, uint64_t b, uint64_t c, uint64_t d,
		      uint64_t e)
{
	return vg_logged(2, a, b, c, d, e, (a / (b | 1)) ^ (c >> (d & 63)) ^ e);
}

/* reads 8 bytes at r1 (the stack); logs the value, not the address */
static uint64_t vg_h3(uint64_t a, uint64_t b, uint64_t c, uint64_t d,
		      uint64_t e)
{
	uint64_t v;
	memcpy(&v, (const void *)(uintptr_t)a, sizeof(v));
	return vg_logged(3, v, b, c, d, e, v + b);
}

static const vm_helper_fn vg_helpers[] = { NULL, vg_h1, vg_h2, vg_h3 };

struct vg_result {
	int rc;
	uint64_t r0;
	uint8_t buf[VG_BUF] __attribute__((aligned(16)));
	struct vg_log log;
};

static inline void vg_dump(FILE *f, const struct vg_prog *p)
{
	for (uint32_t i = 0; i < p->n; i++) {
		const struct bpf_insn *x = &p->insn[i];
		fprintf(f, "  %4u: code %02x dst r%u src r%u off %d imm %d\n", i,
			x->code, x->dst_reg, x->src_reg, x->off, x->imm);
	}
}

/* Runs p in both engines. Returns NULL when they agree, else what
 * differs, or that the VM refused p or could not compile it (the
 * reason in why). */
static inline const char *vg_compare(const struct vg_prog *p,
				     struct vg_result *ri, struct vg_result *rj,
				     char *why, size_t whylen)
{
	struct vm_env env = { .helpers = vg_helpers, .nhelpers = 4,
			      .budget = VG_BUDGET };
	struct vm_prog *vp = vm_prog_load(p->insn, p->n, &env, why, whylen);
	if (!vp)
		return "the VM refused the program";
	if (!vm_prog_native(vp)) {
		snprintf(why, whylen, "%s", vm_prog_jit_error(vp));
		vm_prog_free(vp);
		return "the JIT refused the program";
	}
	struct vg_result *r[2] = { ri, rj };
	for (int k = 0; k < 2; k++) {
		memcpy(r[k]->buf, p->buf_init, VG_BUF);
		r[k]->log.n = 0;
		r[k]->r0 = 0;
		vg_cur_log = &r[k]->log;
		r[k]->rc = k ? vm_prog_run(vp, r[k]->buf, &r[k]->r0) :
			       vm_prog_interp(vp, r[k]->buf, &r[k]->r0);
	}
	vm_prog_free(vp);
	if (ri->rc != rj->rc)
		return "status";
	if (ri->r0 != rj->r0)
		return "r0";
	if (memcmp(ri->buf, rj->buf, VG_DATA))
		return "buffer data";
	if (memcmp(ri->buf + VG_REGS, rj->buf + VG_REGS, 9 * 8))
		return "registers at exit";
	if (memcmp(ri->buf + VG_STACK, rj->buf + VG_STACK, VM_STACK_SIZE))
		return "stack at exit";
	uint32_t n = ri->log.n < VG_LOG ? ri->log.n : VG_LOG;
	if (ri->log.n != rj->log.n ||
	    memcmp(ri->log.e, rj->log.e, n * sizeof(ri->log.e[0])))
		return "helper calls";
	return NULL;
}

#endif
