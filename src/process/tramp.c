/* tramp.c - entry trampolines, encoded by hand: a fixed sequence of a few
 * instruction forms (mov to and from the stack, movdqu, movabs, lea,
 * pushfq), so an encoder library would add nothing.
 *
 *   lea -(128 + FRAME)(%rsp), %rsp     the red zone is left alone
 *   mov %REG, OFF(%rsp)  x15           struct pt_regs, as the kernel's
 *   ip = the site, sp = the site's sp (after a function's first
 *   instruction: its entry's ip and sp), orig_ax = -1, cs, ss, and the
 *   flags inside a function (at an entry they are dead: 0)
 *   movdqu %xmmN, ...                  xmm0-7 (every one mid-function),
 *                                      for a handler that may use them
 *   movabs $site, %rdi; mov %rsp, %rsi
 *   mov %rsp, %rbx; and $-16, %rsp     the ABI's alignment, whatever sp was
 *   movabs $handler, %rax; call *%rax
 *   mov %rbx, %rsp
 *   restore vectors, (flags), the registers a call may change, rbx
 *   lea (128 + FRAME)(%rsp), %rsp
 *   the displaced instructions; jmp back
 *
 * A jump, not a call, leads here, so nothing is pushed on the program's
 * stack before the red zone is skipped. */
#include "tramp.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "../agent/fprobe.h"

enum { RAX, RCX, RDX, RBX, RSP, RBP, RSI, RDI, R8, R9, R10, R11, R12, R13,
       R14, R15 };

/* offsetof(struct fprobe_regs, ...) of each general register */
static const int reg_off[16] = {
	[RAX] = offsetof(struct fprobe_regs, ax),
	[RCX] = offsetof(struct fprobe_regs, cx),
	[RDX] = offsetof(struct fprobe_regs, dx),
	[RBX] = offsetof(struct fprobe_regs, bx),
	[RSP] = offsetof(struct fprobe_regs, sp),
	[RBP] = offsetof(struct fprobe_regs, bp),
	[RSI] = offsetof(struct fprobe_regs, si),
	[RDI] = offsetof(struct fprobe_regs, di),
	[R8] = offsetof(struct fprobe_regs, r8),
	[R9] = offsetof(struct fprobe_regs, r9),
	[R10] = offsetof(struct fprobe_regs, r10),
	[R11] = offsetof(struct fprobe_regs, r11),
	[R12] = offsetof(struct fprobe_regs, r12),
	[R13] = offsetof(struct fprobe_regs, r13),
	[R14] = offsetof(struct fprobe_regs, r14),
	[R15] = offsetof(struct fprobe_regs, r15),
};

struct code {
	uint8_t *p;
	size_t n;
};

static void b1(struct code *c, uint8_t v) { c->p[c->n++] = v; }
static void b4(struct code *c, int32_t v) { memcpy(c->p + c->n, &v, 4); c->n += 4; }
static void b8(struct code *c, uint64_t v) { memcpy(c->p + c->n, &v, 8); c->n += 8; }

/* OP with a [rsp + disp32] operand and register field r */
static void rsp_mem(struct code *c, uint8_t r, int32_t disp)
{
	b1(c, (uint8_t)(0x84 | ((r & 7) << 3)));   /* mod 10, rm 100: SIB */
	b1(c, 0x24);                               /* base rsp, no index */
	b4(c, disp);
}

static void mov_to_stack(struct code *c, int reg, int32_t disp)
{
	b1(c, (uint8_t)(0x48 | (reg >= 8 ? 0x04 : 0)));
	b1(c, 0x89);
	rsp_mem(c, (uint8_t)reg, disp);
}

static void mov_from_stack(struct code *c, int reg, int32_t disp)
{
	b1(c, (uint8_t)(0x48 | (reg >= 8 ? 0x04 : 0)));
	b1(c, 0x8b);
	rsp_mem(c, (uint8_t)reg, disp);
}

static void movq_imm_to_stack(struct code *c, int32_t imm, int32_t disp)
{
	b1(c, 0x48);
	b1(c, 0xc7);
	rsp_mem(c, 0, disp);
	b4(c, imm);
}

/* movdqu %xmmN, disp(%rsp) (store) or disp(%rsp), %xmmN (load) */
static void movdqu(struct code *c, int xmm, int32_t disp, bool store)
{
	b1(c, 0xf3);
	if (xmm >= 8)
		b1(c, 0x44);
	b1(c, 0x0f);
	b1(c, store ? 0x7f : 0x6f);
	rsp_mem(c, (uint8_t)xmm, disp);
}

static void lea_rsp(struct code *c, int reg, int32_t disp)
{
	b1(c, (uint8_t)(0x48 | (reg >= 8 ? 0x04 : 0)));
	b1(c, 0x8d);
	rsp_mem(c, (uint8_t)reg, disp);
}

static void movabs(struct code *c, int reg, uint64_t v)
{
	b1(c, (uint8_t)(0x48 | (reg >= 8 ? 0x01 : 0)));
	b1(c, (uint8_t)(0xb8 + (reg & 7)));
	b8(c, v);
}

int tramp_emit_entry(const struct tramp_params *p, uint8_t *out, char *why,
		     size_t whylen)
{
	struct code c = { out, 0 };
	int nxmm = !p->keep_vectors ? 0 : p->mid_function ? 16 : 8;
	const int32_t xmm_at = FPROBE_REGS_SIZE;
	/* 16n + 8 keeps an entry site's 16-byte alignment for the pt_regs
	 * (not needed: the call realigns; but cheap) */
	const int32_t frame = (FPROBE_REGS_SIZE + nxmm * 16 + 8 + 15) / 16 * 16 + 8;
	const int32_t below = 128 + frame;

	lea_rsp(&c, RSP, -below);
	static const int saved[] = { R15, R14, R13, R12, RBP, RBX, R11, R10,
				     R9, R8, RAX, RCX, RDX, RSI, RDI };
	for (size_t i = 0; i < sizeof(saved) / sizeof(saved[0]); i++)
		mov_to_stack(&c, saved[i], reg_off[saved[i]]);
	movq_imm_to_stack(&c, -1, offsetof(struct fprobe_regs, orig_ax));
	movq_imm_to_stack(&c, 0x33, offsetof(struct fprobe_regs, cs));
	movq_imm_to_stack(&c, 0x2b, offsetof(struct fprobe_regs, ss));
	movabs(&c, RAX, p->entry_ip ? p->entry_ip : p->plan->addr);
	mov_to_stack(&c, RAX, offsetof(struct fprobe_regs, ip));
	lea_rsp(&c, RAX, below + p->entry_sp_delta);
	mov_to_stack(&c, RAX, offsetof(struct fprobe_regs, sp));
	if (p->mid_function) {
		b1(&c, 0x9c);                  /* pushfq */
		b1(&c, 0x58);                  /* pop %rax */
		mov_to_stack(&c, RAX, offsetof(struct fprobe_regs, flags));
	} else {
		/* at an entry the flags are dead (the ABI keeps none across
		 * a call): not worth a pushfq on every hit */
		movq_imm_to_stack(&c, 0, offsetof(struct fprobe_regs, flags));
	}
	for (int x = 0; x < nxmm; x++)
		movdqu(&c, x, xmm_at + 16 * x, true);
	movabs(&c, RDI, p->site);
	b1(&c, 0x48); b1(&c, 0x89); b1(&c, 0xe6);   /* mov %rsp, %rsi */
	b1(&c, 0x48); b1(&c, 0x89); b1(&c, 0xe3);   /* mov %rsp, %rbx */
	b1(&c, 0x48); b1(&c, 0x83); b1(&c, 0xe4); b1(&c, 0xf0);   /* and $-16, %rsp */
	movabs(&c, RAX, p->handler);
	b1(&c, 0xff); b1(&c, 0xd0);                  /* call *%rax */
	b1(&c, 0x48); b1(&c, 0x89); b1(&c, 0xdc);   /* mov %rbx, %rsp */
	for (int x = 0; x < nxmm; x++)
		movdqu(&c, x, xmm_at + 16 * x, false);
	if (p->mid_function) {
		/* push flags(%rsp); popfq: below sp here is ours */
		b1(&c, 0xff);
		rsp_mem(&c, 6, offsetof(struct fprobe_regs, flags));
		b1(&c, 0x9d);
	}
	static const int restored[] = { RAX, RCX, RDX, RSI, RDI, R8, R9, R10,
					R11, RBX };
	for (size_t i = 0; i < sizeof(restored) / sizeof(restored[0]); i++)
		mov_from_stack(&c, restored[i], reg_off[restored[i]]);
	lea_rsp(&c, RSP, below);
	int n = x86_relocate(p->plan, p->at + c.n, out + c.n, TRAMP_MAX - c.n,
			     why, whylen);
	if (n < 0)
		return n;
	return (int)c.n + n;
}
