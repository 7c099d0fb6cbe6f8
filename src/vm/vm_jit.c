/* vm_jit.c - the x86-64 JIT: decoded BPF (vm_int.h) to native code.
 *
 * Registers are mapped as the kernel's JIT maps them, so that a helper
 * call is a plain C call with no shuffling: r0 rax (the return value),
 * r1-r5 rdi rsi rdx rcx r8 (the first five C arguments, caller-saved as
 * BPF says), r6-r9 rbx r13 r14 r15 (callee-saved), r10 rbp (the frame).
 * r11, r10 and r9 are scratch; r12 holds what is left of the budget in
 * programs with backward jumps.
 *
 * The frame: push rbp; mov rbp, rsp; below rbp the 512-byte BPF stack
 * (r10 = rbp), then the error pointer's slot (programs with loops), then
 * the callee-saved registers the program uses, padded so that rsp is
 * 16-byte aligned at every helper call. The native function is
 * uint64_t fn(void *ctx, int *err): ctx arrives in rdi, which is r1.
 *
 * Jumps: x86 has 2-byte and 5/6-byte forms, so the code is emitted in
 * passes, as the kernel does. Pass 0 uses long forms everywhere and
 * records where each instruction starts; each later pass uses a short
 * form where the previous pass's distance, plus the most an instruction
 * can add, fits in a byte. Sizes only shrink from pass to pass, so a
 * jump once short stays short; when a pass reproduces the previous
 * pass's addresses, its displacements (computed from those addresses)
 * are exact and its bytes are the program. If that takes too long, two
 * passes with long forms everywhere settle it.
 *
 * Division, shifts and atomics are the instructions whose x86
 * counterparts differ from BPF: x86 traps on a zero divisor and on
 * INT_MIN / -1, divides rdx:rax only, shifts by cl only, and has no
 * fetch-and-or. Each gets a sequence (below) with BPF's semantics.
 *
 * The image is written in an ordinary buffer, then copied into an
 * anonymous mapping that is made read+execute before it is used: never
 * writable and executable at once. */
#include "vm_int.h"
#include "x86.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

static const uint8_t reg_map[11] = {
	RAX, RDI, RSI, RDX, RCX, R8, RBX, R13, R14, R15, RBP,
};

#define ERR_SLOT (-(VM_STACK_SIZE + 8))  /* the int *err argument */
#define MAX_INSN_BYTES 64                 /* the most one insn emits */
#define SHORT_REACH (127 - MAX_INSN_BYTES)
#define MAX_PASSES 16

struct jit {
	const struct vm_prog *p;
	struct xbuf b;
	uint32_t *addr;       /* previous pass: where insn pc starts; [n] is
			       * the epilogue, [n + 1] the out-of-budget stub */
	uint32_t *cur;        /* the same, this pass */
	bool *target;         /* [pc]: some jump lands here */
	bool long_only;       /* use long jumps everywhere */
	bool misfit;          /* a displacement did not fit its form */
	int saved[5];         /* callee-saved registers pushed */
	int nsaved;
	bool pad;             /* 8 more bytes to keep rsp aligned */
	uint32_t frame;
};

/* A jump (cc < 0: jmp) to the code at `target` (an index into addr)
 * from inside instruction `pc`. */
static void jump(struct jit *j, int cc, uint32_t pc, uint32_t target)
{
	int64_t to = j->addr[target];
	int64_t dist = to - (int64_t)j->addr[pc];
	bool s = !j->long_only && dist >= -SHORT_REACH && dist <= SHORT_REACH;
	int64_t disp = to - (int64_t)(j->b.len + (size_t)x_jump_size(cc, s));
	if (s ? !is_s8(disp) : !is_s32(disp))
		j->misfit = true;
	x_jump(&j->b, cc, s, (int32_t)disp);
}

static void local_patch(struct jit *j, size_t at)
{
	if (!x_patch8(&j->b, at))
		j->misfit = true;
}

/* ---- prologue and epilogue ---- */

static void emit_prologue(struct jit *j)
{
	struct xbuf *b = &j->b;
	x_push(b, RBP);
	x_mov_rr(b, true, RBP, RSP);
	x_alu_ri(b, ALU_SUB, true, RSP, (int32_t)j->frame);
	for (int k = 0; k < j->nsaved; k++)
		x_push(b, j->saved[k]);
	if (j->pad)
		x_alu_ri(b, ALU_SUB, true, RSP, 8);
	if (j->p->has_back_edges) {
		x_store(b, 8, RBP, ERR_SLOT, RSI);
		x_mov_imm64(b, R12, j->p->budget);
	}
}

static void emit_epilogue(struct jit *j)
{
	struct xbuf *b = &j->b;
	if (j->pad)
		x_alu_ri(b, ALU_ADD, true, RSP, 8);
	for (int k = j->nsaved - 1; k >= 0; k--)
		x_pop(b, j->saved[k]);
	x_byte(b, 0xc9);                       /* leave */
	x_byte(b, 0xc3);                       /* ret */
}

/* Reached by a js after a back edge's charge: *err = -E2BIG, r0 = 0. */
static void emit_budget_stub(struct jit *j)
{
	struct xbuf *b = &j->b;
	uint32_t n = j->p->ninsns;
	x_load(b, 8, RAX, RBP, ERR_SLOT);
	x_store_imm(b, 4, RAX, 0, -E2BIG);
	x_mov_imm64(b, RAX, 0);
	jump(j, -1, n + 1, n);
}

/* ---- arithmetic ---- */

/* dst = dst op src (or imm) for DIV, MOD and their signed forms, with
 * BPF's results where x86 would trap: x / 0 = 0, x % 0 = x, and for the
 * signed forms x / -1 = -x, x % -1 = 0 (INT_MIN / -1 traps on x86). */
static void emit_div(struct jit *j, bool is_mod, bool is_signed, bool w,
		     bool x, int d, int s, int32_t imm)
{
	struct xbuf *b = &j->b;
	size_t zero = 0, minus1 = 0;
	if (!x && is_signed && imm == -1) {
		if (is_mod)
			x_mov_imm64(b, d, 0);
		else
			x_grp3(b, 3, w, d);                /* neg */
		return;
	}
	if (x) {
		x_mov_rr(b, w, R11, s);
		x_op_rr(b, 0x85, w, R11, R11);         /* test */
		zero = x_jump8_fwd(b, CC_E);
		if (is_signed) {
			x_alu_ri(b, ALU_CMP, w, R11, -1);
			minus1 = x_jump8_fwd(b, CC_E);
		}
	} else {
		x_mov_imm64(b, R11, w ? (uint64_t)(int64_t)imm : (uint32_t)imm);
	}
	x_mov_rr(b, true, R10, RAX);
	x_mov_rr(b, true, R9, RDX);
	if (d != RAX || !w)
		x_mov_rr(b, w, RAX, d);
	if (is_signed) {
		x_rex(b, w, 0, 0, false);
		x_byte(b, 0x99);                       /* cqo / cdq */
	} else {
		x_op_rr(b, 0x31, false, RDX, RDX);     /* xor edx, edx */
	}
	x_grp3(b, is_signed ? 7 : 6, w, R11);      /* (i)div r11 */
	x_mov_rr(b, true, R11, is_mod ? RDX : RAX);
	x_mov_rr(b, true, RAX, R10);
	x_mov_rr(b, true, RDX, R9);
	x_mov_rr(b, true, d, R11);
	if (!x)
		return;
	size_t done = x_jump8_fwd(b, -1);
	local_patch(j, zero);
	if (!is_mod)
		x_mov_imm64(b, d, 0);
	else if (!w)
		x_mov_rr(b, false, d, d);              /* zero-extend */
	if (is_signed) {
		size_t done2 = x_jump8_fwd(b, -1);
		local_patch(j, minus1);
		if (is_mod)
			x_mov_imm64(b, d, 0);
		else
			x_grp3(b, 3, w, d);            /* neg */
		local_patch(j, done2);
	}
	local_patch(j, done);
}

/* dst <<= src and friends: x86 shifts by cl (rcx, which is r4). */
static void emit_shift_x(struct jit *j, int ext, bool w, int d, int s)
{
	struct xbuf *b = &j->b;
	if (s == RCX) {
		x_shift_cl(b, ext, w, d);
	} else if (d == RCX) {
		x_mov_rr(b, true, R11, RCX);
		x_mov_rr(b, true, RCX, s);
		x_shift_cl(b, ext, w, R11);
		x_mov_rr(b, true, RCX, R11);
	} else {
		x_mov_rr(b, true, R11, RCX);
		x_mov_rr(b, true, RCX, s);
		x_shift_cl(b, ext, w, d);
		x_mov_rr(b, true, RCX, R11);
	}
	if (!w)
		x_mov_rr(b, false, d, d);      /* a shift by 0 writes nothing */
}

static void emit_alu(struct jit *j, const struct vm_insn *i)
{
	struct xbuf *b = &j->b;
	unsigned form = (unsigned)(i->op - VM_OP_ADD64_K) % 4;
	unsigned op = i->op - form;                /* the 64-bit K form */
	bool w = form < 2, x = form & 1;
	int d = reg_map[i->dst], s = reg_map[i->src];
	int32_t imm = (int32_t)i->imm;
	int ext;

	switch (op) {
	case VM_OP_ADD64_K: ext = ALU_ADD; goto simple;
	case VM_OP_SUB64_K: ext = ALU_SUB; goto simple;
	case VM_OP_OR64_K: ext = ALU_OR; goto simple;
	case VM_OP_AND64_K: ext = ALU_AND; goto simple;
	case VM_OP_XOR64_K: ext = ALU_XOR; goto simple;
	case VM_OP_MUL64_K:
		if (x)
			x_imul_rr(b, w, d, s);
		else
			x_imul_ri(b, w, d, imm);
		return;
	case VM_OP_DIV64_K: case VM_OP_MOD64_K:
	case VM_OP_SDIV64_K: case VM_OP_SMOD64_K:
		emit_div(j, op == VM_OP_MOD64_K || op == VM_OP_SMOD64_K,
			 op == VM_OP_SDIV64_K || op == VM_OP_SMOD64_K, w, x, d,
			 s, imm);
		return;
	case VM_OP_LSH64_K: ext = SH_SHL; goto shift;
	case VM_OP_RSH64_K: ext = SH_SHR; goto shift;
	case VM_OP_ARSH64_K: ext = SH_SAR; goto shift;
	case VM_OP_MOV64_K:
		if (x) {
			if (d != s || !w)
				x_mov_rr(b, w, d, s);
		} else {
			x_mov_imm64(b, d, w ? (uint64_t)(int64_t)imm : (uint32_t)imm);
		}
		return;
	}
	j->misfit = true;                          /* not reached */
	return;
simple:
	if (x)
		x_op_rr(b, alu_rm_r[ext], w, d, s);
	else
		x_alu_ri(b, ext, w, d, imm);
	return;
shift:
	if (x)
		emit_shift_x(j, ext, w, d, s);
	else if (imm)
		x_shift_ri(b, ext, w, d, (uint8_t)imm);
	else if (!w)
		x_mov_rr(b, false, d, d);
}

/* ---- jumps ---- */

static const uint8_t jmp_cc[] = {
	CC_E, CC_NE, CC_A, CC_AE, CC_B, CC_BE, CC_G, CC_GE, CC_L, CC_LE, CC_NE,
};

/* A taken jump from pc by off: a backward one first pays its span out
 * of r12 and leaves through the stub when that goes negative. */
static void emit_taken(struct jit *j, int cc, uint32_t pc, int32_t off)
{
	uint32_t n = j->p->ninsns, target = (uint32_t)((int64_t)pc + 1 + off);
	if (off >= 0) {
		jump(j, cc, pc, target);
		return;
	}
	size_t skip = 0;
	if (cc >= 0)
		skip = x_jump8_fwd(&j->b, cc ^ 1);
	x_alu_ri(&j->b, ALU_SUB, true, R12, -off);
	jump(j, CC_S, pc, n + 1);
	jump(j, -1, pc, target);
	if (cc >= 0)
		local_patch(j, skip);
}

static void emit_cond(struct jit *j, const struct vm_insn *i, uint32_t pc)
{
	struct xbuf *b = &j->b;
	unsigned form = (unsigned)(i->op - VM_OP_JEQ_K) % 4;
	unsigned k = (unsigned)(i->op - VM_OP_JEQ_K) / 4;
	bool w = form < 2, x = form & 1;
	int d = reg_map[i->dst], s = reg_map[i->src];
	int32_t imm = (int32_t)i->imm;

	if (i->op - form == VM_OP_JSET_K) {
		if (x)
			x_op_rr(b, 0x85, w, d, s);
		else
			x_test_ri(b, w, d, imm);
	} else if (x) {
		x_op_rr(b, alu_rm_r[ALU_CMP], w, d, s);
	} else if (imm == 0) {
		x_op_rr(b, 0x85, w, d, d);         /* test: the same flags */
	} else {
		x_alu_ri(b, ALU_CMP, w, d, imm);
	}
	emit_taken(j, jmp_cc[k], pc, i->off);
}

/* ---- memory ---- */

static const int size_of[] = { 1, 2, 4, 8 };

/* lock fetch-or/and/xor: a cmpxchg loop on rax, which is r0 (saved in
 * r10 meanwhile; a base or source in rax is read from there). */
static void emit_fetch_loop(struct jit *j, int ext, bool w, int d, int s,
			    int32_t off)
{
	struct xbuf *b = &j->b;
	int rd = d == RAX ? R10 : d, rs = s == RAX ? R10 : s;
	x_mov_rr(b, true, R10, RAX);
	size_t loop = b->len;
	x_load(b, w ? 8 : 4, RAX, rd, off);
	x_mov_rr(b, w, R11, RAX);
	x_op_rr(b, alu_rm_r[ext], w, R11, rs);
	x_lock0f(b, 0xb1, w, R11, rd, off);        /* lock cmpxchg */
	int64_t back = (int64_t)loop - (int64_t)(b->len + 2);
	if (!is_s8(back))
		j->misfit = true;
	x_jump(b, CC_NE, true, (int32_t)back);
	x_mov_rr(b, w, rs, RAX);
	x_mov_rr(b, true, RAX, R10);
}

static void emit_atomic(struct jit *j, const struct vm_insn *i)
{
	struct xbuf *b = &j->b;
	bool w = (i->op - VM_OP_AADD_W) & 1;
	unsigned op = i->op - (w ? 1 : 0);        /* the _W form */
	int d = reg_map[i->dst], s = reg_map[i->src];
	int32_t off = i->off;

	switch (op) {
	case VM_OP_AADD_W:
		x_mem(b, true, false, w, alu_rm_r[ALU_ADD], s, d, off, false);
		return;
	case VM_OP_AOR_W:
		x_mem(b, true, false, w, alu_rm_r[ALU_OR], s, d, off, false);
		return;
	case VM_OP_AAND_W:
		x_mem(b, true, false, w, alu_rm_r[ALU_AND], s, d, off, false);
		return;
	case VM_OP_AXOR_W:
		x_mem(b, true, false, w, alu_rm_r[ALU_XOR], s, d, off, false);
		return;
	case VM_OP_FADD_W:
		x_lock0f(b, 0xc1, w, s, d, off);        /* lock xadd */
		return;
	case VM_OP_FOR_W:
		emit_fetch_loop(j, ALU_OR, w, d, s, off);
		return;
	case VM_OP_FAND_W:
		emit_fetch_loop(j, ALU_AND, w, d, s, off);
		return;
	case VM_OP_FXOR_W:
		emit_fetch_loop(j, ALU_XOR, w, d, s, off);
		return;
	case VM_OP_XCHG_W:
		x_mem(b, false, false, w, 0x87, s, d, off, false);
		return;
	case VM_OP_CMPXCHG_W:
		x_lock0f(b, 0xb1, w, s, d, off);
		if (!w)
			x_mov_rr(b, false, RAX, RAX);   /* r0 is zero-extended */
		return;
	}
	j->misfit = true;
}

/* ---- one instruction ---- */

static void emit_insn(struct jit *j, uint32_t pc)
{
	struct xbuf *b = &j->b;
	const struct vm_insn *i = &j->p->insns[pc];
	int d = reg_map[i->dst], s = reg_map[i->src];

	if (i->op < VM_OP_JEQ_K) {
		emit_alu(j, i);
		return;
	}
	if (i->op < VM_OP_AADD_W) {
		emit_cond(j, i, pc);
		return;
	}
	if (i->op < VM_OP_NOP) {
		emit_atomic(j, i);
		return;
	}
	switch (i->op) {
	case VM_OP_NOP:
		return;
	case VM_OP_NEG64: case VM_OP_NEG32:
		x_grp3(b, 3, i->op == VM_OP_NEG64, d);
		return;
	case VM_OP_MOVSX64_8: x_op0f_rr(b, 0xbe, true, d, s, true); return;
	case VM_OP_MOVSX64_16: x_op0f_rr(b, 0xbf, true, d, s, false); return;
	case VM_OP_MOVSX64_32: x_movsxd_rr(b, d, s); return;
	case VM_OP_MOVSX32_8: x_op0f_rr(b, 0xbe, false, d, s, true); return;
	case VM_OP_MOVSX32_16: x_op0f_rr(b, 0xbf, false, d, s, false); return;
	case VM_OP_ZEXT16: x_op0f_rr(b, 0xb7, false, d, d, false); return;
	case VM_OP_ZEXT32: x_mov_rr(b, false, d, d); return;
	case VM_OP_BSWAP16:
		x_ror16_8(b, d);
		x_op0f_rr(b, 0xb7, false, d, d, false);
		return;
	case VM_OP_BSWAP32: x_bswap(b, false, d); return;
	case VM_OP_BSWAP64: x_bswap(b, true, d); return;
	case VM_OP_LDX_B: case VM_OP_LDX_H: case VM_OP_LDX_W: case VM_OP_LDX_DW:
		x_load(b, size_of[i->op - VM_OP_LDX_B], d, s, i->off);
		return;
	case VM_OP_LDXSX_B: case VM_OP_LDXSX_H: case VM_OP_LDXSX_W:
		x_load_sx(b, size_of[i->op - VM_OP_LDXSX_B], d, s, i->off);
		return;
	case VM_OP_ST_B: case VM_OP_ST_H: case VM_OP_ST_W: case VM_OP_ST_DW:
		x_store_imm(b, size_of[i->op - VM_OP_ST_B], d, i->off,
			    (int32_t)i->imm);
		return;
	case VM_OP_STX_B: case VM_OP_STX_H: case VM_OP_STX_W: case VM_OP_STX_DW:
		x_store(b, size_of[i->op - VM_OP_STX_B], d, i->off, s);
		return;
	case VM_OP_LDDW:
		x_mov_imm64(b, d, (uint64_t)i->imm);
		return;
	case VM_OP_JA:
		if (i->off)
			emit_taken(j, -1, pc, i->off);
		return;
	case VM_OP_CALL:
		/* movabs rax, fn; call rax (r0 is rax, written by the call) */
		x_rex(b, true, 0, RAX, false);
		x_byte(b, 0xb8);
		x_u64(b, (uint64_t)(uintptr_t)i->fn);
		x_call_reg(b, RAX);
		return;
	case VM_OP_EXIT:
		if (pc + 1 < j->p->ninsns)
			jump(j, -1, pc, j->p->ninsns);
		return;
	}
	j->misfit = true;
}

/* "rD = rS; rD += imm" (how codegen makes a stack address) is one lea,
 * unless a jump lands on the add. */
static bool fuse_lea(const struct jit *j, uint32_t pc)
{
	const struct vm_insn *i = &j->p->insns[pc];
	if (i->op != VM_OP_MOV64_X || pc + 1 >= j->p->ninsns || j->target[pc + 1])
		return false;
	return i[1].op == VM_OP_ADD64_K && i[1].dst == i->dst && i->dst != i->src;
}

static void emit_pass(struct jit *j)
{
	uint32_t n = j->p->ninsns;
	j->b.len = 0;
	j->b.full = false;
	j->misfit = false;
	emit_prologue(j);
	for (uint32_t pc = 0; pc < n; pc++) {
		j->cur[pc] = (uint32_t)j->b.len;
		size_t before = j->b.len;
		if (fuse_lea(j, pc)) {
			const struct vm_insn *i = &j->p->insns[pc];
			x_mem(&j->b, false, false, true, 0x8d, reg_map[i->dst],
			      reg_map[i->src], (int32_t)i[1].imm, false);
			j->cur[++pc] = (uint32_t)j->b.len;
			continue;
		}
		emit_insn(j, pc);
		if (j->b.len - before > MAX_INSN_BYTES)
			j->misfit = true;          /* SHORT_REACH would lie */
	}
	j->cur[n] = (uint32_t)j->b.len;
	emit_epilogue(j);
	j->cur[n + 1] = (uint32_t)j->b.len;
	if (j->p->has_back_edges)
		emit_budget_stub(j);
}

/* Which callee-saved registers the program needs, the frame, and where
 * jumps land. */
static void plan(struct jit *j)
{
	const struct vm_prog *p = j->p;
	bool used[11] = { false };
	for (uint32_t pc = 0; pc < p->ninsns; pc++) {
		const struct vm_insn *i = &p->insns[pc];
		used[i->dst] = true;
		used[i->src] = true;
		if (i->op == VM_OP_JA || (i->op >= VM_OP_JEQ_K &&
					  i->op < VM_OP_AADD_W))
			j->target[(int64_t)pc + 1 + i->off] = true;
	}
	for (int r = 6; r <= 9; r++)
		if (used[r])
			j->saved[j->nsaved++] = reg_map[r];
	if (p->has_back_edges)
		j->saved[j->nsaved++] = R12;
	j->frame = VM_STACK_SIZE + (p->has_back_edges ? 16 : 0);
	j->pad = j->nsaved % 2 == 1;
}

/* Copies the code into a fresh mapping and makes it read+execute. */
static int install(struct vm_prog *p, const struct xbuf *b)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t size = (b->len + (size_t)page - 1) & ~((size_t)page - 1);
	void *img = mmap(NULL, size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (img == MAP_FAILED) {
		p->jit_error = "cannot map memory for the code";
		return -errno;
	}
	memset(img, 0xcc, size);                   /* int3 after the end */
	memcpy(img, b->p, b->len);
	if (mprotect(img, size, PROT_READ | PROT_EXEC)) {
		int err = -errno;
		munmap(img, size);
		p->jit_error = "cannot make the code executable (mprotect)";
		return err;
	}
	p->image = img;
	p->image_size = size;
	p->native_size = b->len;
	p->native = (vm_native_fn)img;
	return 0;
}

int vm_jit_compile(struct vm_prog *p)
{
	uint32_t n = p->ninsns;
	struct jit j = { .p = p };
	int err = -ENOMEM;
	j.b.cap = (size_t)(n + 4) * MAX_INSN_BYTES + 256;
	j.b.p = malloc(j.b.cap);
	j.addr = calloc(n + 2, sizeof(*j.addr));
	j.cur = calloc(n + 2, sizeof(*j.cur));
	j.target = calloc(n, sizeof(*j.target));
	if (!j.b.p || !j.addr || !j.cur || !j.target) {
		p->jit_error = "out of memory";
		goto out;
	}
	plan(&j);
	/* pass 0: long jumps; then shrink until the addresses hold */
	bool done = false;
	j.long_only = true;
	for (int pass = 0; pass < MAX_PASSES + 2 && !done; pass++) {
		if (pass == MAX_PASSES)
			j.long_only = true;        /* did not settle: all long */
		emit_pass(&j);
		done = pass > 0 && !memcmp(j.cur, j.addr, (n + 2) * sizeof(*j.cur));
		uint32_t *t = j.addr;
		j.addr = j.cur;
		j.cur = t;
		if (pass == 0)
			j.long_only = false;
	}
	err = -EINVAL;
	if (!done || j.misfit || j.b.full) {
		p->jit_error = j.b.full ? "the code outgrew its buffer" :
			       "jump displacements did not settle";
		goto out;
	}
	err = install(p, &j.b);
out:
	free(j.b.p);
	free(j.addr);
	free(j.cur);
	free(j.target);
	return err;
}

void vm_jit_free(struct vm_prog *p)
{
	if (!p)
		return;
	if (p->image)
		munmap(p->image, p->image_size);
	p->image = NULL;
	p->native = NULL;
}
