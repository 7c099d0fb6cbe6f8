/* vm_load.c - loading a program into the VM: every instruction decoded
 * and checked (vm.h lists the checks), register initialisation proved
 * by a data-flow pass, then the JIT tried. Also the public run entry
 * points, which pick native code or the interpreter. */
#include "vm_int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct loader {
	const struct bpf_insn *code;
	uint32_t n;
	const struct vm_env *env;
	struct vm_insn *out;
	bool *second;          /* [pc]: the second slot of an LD_IMM64 */
	uint32_t *cb_pc;       /* PSEUDO_FUNC targets, in order of the loads */
	uint32_t ncb;
	char *err;
	size_t errlen;
};

static int fail(struct loader *l, uint32_t pc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct loader *l, uint32_t pc, const char *fmt, ...)
{
	if (l->err && l->errlen) {
		int k = snprintf(l->err, l->errlen, "insn %u (code 0x%02x): ",
				 pc, pc < l->n ? l->code[pc].code : 0);
		if (k >= 0 && (size_t)k < l->errlen) {
			va_list ap;
			va_start(ap, fmt);
			vsnprintf(l->err + k, l->errlen - (size_t)k, fmt, ap);
			va_end(ap);
		}
	}
	return -EINVAL;
}

static const uint8_t alu_ops[16] = {
	[BPF_ADD >> 4] = VM_OP_ADD64_K, [BPF_SUB >> 4] = VM_OP_SUB64_K,
	[BPF_MUL >> 4] = VM_OP_MUL64_K, [BPF_DIV >> 4] = VM_OP_DIV64_K,
	[BPF_OR >> 4] = VM_OP_OR64_K, [BPF_AND >> 4] = VM_OP_AND64_K,
	[BPF_LSH >> 4] = VM_OP_LSH64_K, [BPF_RSH >> 4] = VM_OP_RSH64_K,
	[BPF_MOD >> 4] = VM_OP_MOD64_K, [BPF_XOR >> 4] = VM_OP_XOR64_K,
	[BPF_MOV >> 4] = VM_OP_MOV64_K, [BPF_ARSH >> 4] = VM_OP_ARSH64_K,
};

static const uint8_t jmp_ops[16] = {
	[BPF_JEQ >> 4] = VM_OP_JEQ_K, [BPF_JGT >> 4] = VM_OP_JGT_K,
	[BPF_JGE >> 4] = VM_OP_JGE_K, [BPF_JSET >> 4] = VM_OP_JSET_K,
	[BPF_JNE >> 4] = VM_OP_JNE_K, [BPF_JSGT >> 4] = VM_OP_JSGT_K,
	[BPF_JSGE >> 4] = VM_OP_JSGE_K, [BPF_JLT >> 4] = VM_OP_JLT_K,
	[BPF_JLE >> 4] = VM_OP_JLE_K, [BPF_JSLT >> 4] = VM_OP_JSLT_K,
	[BPF_JSLE >> 4] = VM_OP_JSLE_K,
};

/* The four forms of an ALU or jump op follow one another in enum vm_op:
 * 64-bit K, 64-bit X, 32-bit K, 32-bit X. */
static uint8_t form(uint8_t base, bool is32, bool x)
{
	return (uint8_t)(base + (is32 ? 2 : 0) + (x ? 1 : 0));
}

/* An access through r10 must stay inside the stack. */
static int check_stack(struct loader *l, uint32_t pc, uint8_t base,
		       int16_t off, uint8_t size)
{
	if (base != BPF_REG_10)
		return 0;
	int n = vm_size_bytes(size);
	if (off < -VM_STACK_SIZE || off + n > 0)
		return fail(l, pc, "stack access r10%+d of %d bytes outside "
			    "the %d-byte stack", off, n, VM_STACK_SIZE);
	return 0;
}

static int check_target(struct loader *l, uint32_t pc, int64_t off)
{
	int64_t t = (int64_t)pc + 1 + off;
	if (t < 0 || t >= (int64_t)l->n)
		return fail(l, pc, "jump to %lld, outside the program's %u "
			    "instructions", (long long)t, l->n);
	if (l->second[t])
		return fail(l, pc, "jump into the middle of ld_imm64 at %lld",
			    (long long)t - 1);
	return 0;
}

static int decode_alu(struct loader *l, uint32_t pc)
{
	const struct bpf_insn *in = &l->code[pc];
	struct vm_insn *o = &l->out[pc];
	bool is32 = BPF_CLASS(in->code) == BPF_ALU;
	bool x = BPF_SRC(in->code) == BPF_X;
	uint8_t op = BPF_OP(in->code);
	int width = is32 ? 32 : 64;

	if (in->dst_reg > BPF_REG_9)
		return fail(l, pc, in->dst_reg == BPF_REG_10 ?
			    "r10 is read-only" : "bad register r%u",
			    in->dst_reg);
	if (op == BPF_NEG) {
		if (x || in->src_reg || in->off || in->imm)
			return fail(l, pc, "reserved fields of neg are not zero");
		o->op = is32 ? VM_OP_NEG32 : VM_OP_NEG64;
		return 0;
	}
	if (op == BPF_END) {
		if (in->src_reg || in->off ||
		    (in->imm != 16 && in->imm != 32 && in->imm != 64))
			return fail(l, pc, "bad byte swap (width %d)", in->imm);
		if (!is32 && x)
			return fail(l, pc, "unknown opcode");
		bool swap = !is32 || x;          /* to_be, or bswap */
		o->op = in->imm == 16 ? (swap ? VM_OP_BSWAP16 : VM_OP_ZEXT16) :
			in->imm == 32 ? (swap ? VM_OP_BSWAP32 : VM_OP_ZEXT32) :
			(swap ? VM_OP_BSWAP64 : VM_OP_NOP);
		return 0;
	}
	if (!alu_ops[op >> 4] && op != BPF_ADD)
		return fail(l, pc, "unknown opcode");
	if (x ? in->imm != 0 : in->src_reg != 0)
		return fail(l, pc, "reserved fields are not zero");
	if (in->src_reg > BPF_REG_10)
		return fail(l, pc, "bad register r%u", in->src_reg);
	uint8_t base = alu_ops[op >> 4];
	if (op == BPF_DIV || op == BPF_MOD) {
		if (in->off != 0 && in->off != 1)
			return fail(l, pc, "bad division variant %d", in->off);
		if (in->off)
			base = op == BPF_DIV ? VM_OP_SDIV64_K : VM_OP_SMOD64_K;
		if (!x && in->imm == 0)
			return fail(l, pc, "division by zero");
	} else if (op == BPF_MOV && in->off) {
		if (!x || (in->off != 8 && in->off != 16 &&
			   (in->off != 32 || is32)))
			return fail(l, pc, "bad sign-extending move (%d bits)",
				    in->off);
		o->op = is32 ? (in->off == 8 ? VM_OP_MOVSX32_8 :
				VM_OP_MOVSX32_16) :
			in->off == 8 ? VM_OP_MOVSX64_8 :
			in->off == 16 ? VM_OP_MOVSX64_16 : VM_OP_MOVSX64_32;
		return 0;
	} else if (in->off) {
		return fail(l, pc, "reserved offset is not zero");
	}
	if (!x && (op == BPF_LSH || op == BPF_RSH || op == BPF_ARSH) &&
	    (in->imm < 0 || in->imm >= width))
		return fail(l, pc, "shift by %d, not below %d", in->imm, width);
	o->op = form(base, is32, x);
	return 0;
}

static int decode_jmp(struct loader *l, uint32_t pc)
{
	const struct bpf_insn *in = &l->code[pc];
	struct vm_insn *o = &l->out[pc];
	bool is32 = BPF_CLASS(in->code) == BPF_JMP32;
	bool x = BPF_SRC(in->code) == BPF_X;
	uint8_t op = BPF_OP(in->code);

	switch (op) {
	case BPF_JA:
		if (x || in->src_reg || in->dst_reg || (is32 ? in->off : in->imm))
			return fail(l, pc, "reserved fields of goto are not zero");
		o->op = VM_OP_JA;
		o->off = is32 ? in->imm : in->off;     /* gotol: imm */
		return check_target(l, pc, o->off);
	case BPF_CALL: {
		const struct vm_env *env = l->env;
		if (is32 || x || in->dst_reg || in->off)
			return fail(l, pc, "reserved fields of call are not zero");
		if (in->src_reg == BPF_PSEUDO_CALL)
			return fail(l, pc, "calls of BPF functions are not "
				    "supported");
		if (in->src_reg)
			return fail(l, pc, "kernel function calls are not "
				    "supported");
		if (in->imm < 0 || (uint32_t)in->imm >= env->nhelpers ||
		    !env->helpers[in->imm])
			return fail(l, pc, "helper %d is not available", in->imm);
		o->op = VM_OP_CALL;
		o->fn = env->helpers[in->imm];
		return 0;
	}
	case BPF_EXIT:
		if (is32 || x || in->src_reg || in->dst_reg || in->off || in->imm)
			return fail(l, pc, "reserved fields of exit are not zero");
		o->op = VM_OP_EXIT;
		return 0;
	}
	if (!jmp_ops[op >> 4])
		return fail(l, pc, "unknown opcode");
	if (x ? in->imm != 0 : in->src_reg != 0)
		return fail(l, pc, "reserved fields are not zero");
	if (in->dst_reg > BPF_REG_10 || in->src_reg > BPF_REG_10)
		return fail(l, pc, "bad register");
	o->op = form(jmp_ops[op >> 4], is32, x);
	return check_target(l, pc, in->off);
}

static int decode_ld(struct loader *l, uint32_t pc)
{
	const struct bpf_insn *in = &l->code[pc];
	struct vm_insn *o = &l->out[pc];
	const struct vm_env *env = l->env;

	if (in->code != (BPF_LD | BPF_IMM | BPF_DW))
		return fail(l, pc, "legacy packet loads are not supported");
	if (pc + 1 >= l->n)
		return fail(l, pc, "ld_imm64 without its second half");
	const struct bpf_insn *hi = &l->code[pc + 1];
	if (hi->code || hi->dst_reg || hi->src_reg || hi->off || in->off)
		return fail(l, pc, "bad second half of ld_imm64");
	if (in->dst_reg > BPF_REG_9)
		return fail(l, pc, in->dst_reg == BPF_REG_10 ?
			    "r10 is read-only" : "bad register r%u",
			    in->dst_reg);
	o->op = VM_OP_LDDW;
	l->out[pc + 1].op = VM_OP_NOP;
	switch (in->src_reg) {
	case 0:
		o->imm = (int64_t)((uint64_t)(uint32_t)in->imm |
				   (uint64_t)(uint32_t)hi->imm << 32);
		return 0;
	case BPF_PSEUDO_MAP_FD:
		if (in->imm < 0 || (uint32_t)in->imm >= env->nmaps || hi->imm)
			return fail(l, pc, "map %d does not exist", in->imm);
		o->imm = (int64_t)env->maps[in->imm];
		return 0;
	case BPF_PSEUDO_MAP_VALUE:
		if (!env->map_values || in->imm < 0 ||
		    (uint32_t)in->imm >= env->nmaps)
			return fail(l, pc, "map value %d is not available",
				    in->imm);
		o->imm = (int64_t)(env->map_values[in->imm] +
				   (uint32_t)hi->imm);
		return 0;
	case BPF_PSEUDO_FUNC: {
		/* a callback: its address is filled in once the program
		 * object exists (o->imm: its index until then) */
		int64_t t = (int64_t)pc + 1 + in->imm;
		if (hi->imm || t < 0 || t >= l->n || l->second[t])
			return fail(l, pc, "callback at %lld is not an "
				    "instruction of the program", (long long)t);
		l->cb_pc[l->ncb] = (uint32_t)t;
		o->imm = l->ncb++;
		return 0;
	}
	default:
		return fail(l, pc, "ld_imm64 of kind %u is not supported",
			    in->src_reg);
	}
}

static int decode_mem(struct loader *l, uint32_t pc)
{
	const struct bpf_insn *in = &l->code[pc];
	struct vm_insn *o = &l->out[pc];
	uint8_t cls = BPF_CLASS(in->code), mode = BPF_MODE(in->code);
	uint8_t size = BPF_SIZE(in->code);
	int sz = size == BPF_B ? 0 : size == BPF_H ? 1 : size == BPF_W ? 2 : 3;

	if (in->dst_reg > BPF_REG_10 || in->src_reg > BPF_REG_10)
		return fail(l, pc, "bad register");
	switch (cls) {
	case BPF_LDX:
		if (in->imm || (mode != BPF_MEM && mode != BPF_MEMSX) ||
		    (mode == BPF_MEMSX && size == BPF_DW))
			return fail(l, pc, "unknown load");
		if (in->dst_reg == BPF_REG_10)
			return fail(l, pc, "r10 is read-only");
		o->op = (uint8_t)((mode == BPF_MEM ? VM_OP_LDX_B : VM_OP_LDXSX_B) + sz);
		return check_stack(l, pc, in->src_reg, in->off, size);
	case BPF_ST:
		if (mode != BPF_MEM || in->src_reg)
			return fail(l, pc, "unknown store");
		o->op = (uint8_t)(VM_OP_ST_B + sz);
		return check_stack(l, pc, in->dst_reg, in->off, size);
	}
	/* BPF_STX */
	if (mode == BPF_MEM) {
		if (in->imm)
			return fail(l, pc, "reserved fields are not zero");
		o->op = (uint8_t)(VM_OP_STX_B + sz);
		return check_stack(l, pc, in->dst_reg, in->off, size);
	}
	if (mode != BPF_ATOMIC || (size != BPF_W && size != BPF_DW))
		return fail(l, pc, "unknown store");
	uint8_t base;
	switch (in->imm) {
	case BPF_ADD: base = VM_OP_AADD_W; break;
	case BPF_OR: base = VM_OP_AOR_W; break;
	case BPF_AND: base = VM_OP_AAND_W; break;
	case BPF_XOR: base = VM_OP_AXOR_W; break;
	case BPF_ADD | BPF_FETCH: base = VM_OP_FADD_W; break;
	case BPF_OR | BPF_FETCH: base = VM_OP_FOR_W; break;
	case BPF_AND | BPF_FETCH: base = VM_OP_FAND_W; break;
	case BPF_XOR | BPF_FETCH: base = VM_OP_FXOR_W; break;
	case BPF_XCHG: base = VM_OP_XCHG_W; break;
	case BPF_CMPXCHG: base = VM_OP_CMPXCHG_W; break;
	default: return fail(l, pc, "unknown atomic operation 0x%x", in->imm);
	}
	o->op = (uint8_t)(base + (size == BPF_DW));
	return check_stack(l, pc, in->dst_reg, in->off, size);
}

static int decode(struct loader *l, uint32_t pc)
{
	const struct bpf_insn *in = &l->code[pc];
	struct vm_insn *o = &l->out[pc];
	o->dst = in->dst_reg;
	o->src = in->src_reg;
	o->off = in->off;
	o->imm = in->imm;
	switch (BPF_CLASS(in->code)) {
	case BPF_ALU:
	case BPF_ALU64:
		return decode_alu(l, pc);
	case BPF_JMP:
	case BPF_JMP32:
		return decode_jmp(l, pc);
	case BPF_LD:
		return decode_ld(l, pc);
	default:
		return decode_mem(l, pc);
	}
}

/* ---- register initialisation ----
 * A forward data-flow pass over the decoded program: the set of
 * registers written on every path to each instruction (intersection at
 * joins), starting from {r1, r10}. Sets only shrink as paths are
 * added, so a read found uninitialised while iterating stays so. */

#define REGS_UNSEEN 0x8000u
#define REG(r) (1u << (r))

static void insn_regs(const struct vm_insn *i, uint16_t *use, uint16_t *def)
{
	uint16_t d = REG(i->dst), s = REG(i->src);
	*use = *def = 0;
	switch (i->op) {
	case VM_OP_NOP: case VM_OP_JA:
		return;
	case VM_OP_LDDW:
		*def = d;
		return;
	case VM_OP_CALL:
		*def = REG(0);
		return;
	case VM_OP_EXIT:
		*use = REG(0);
		return;
	case VM_OP_MOV64_K: case VM_OP_MOV32_K:
		*def = d;
		return;
	case VM_OP_MOV64_X: case VM_OP_MOV32_X:
	case VM_OP_MOVSX64_8: case VM_OP_MOVSX64_16: case VM_OP_MOVSX64_32:
	case VM_OP_MOVSX32_8: case VM_OP_MOVSX32_16:
	case VM_OP_LDX_B: case VM_OP_LDX_H: case VM_OP_LDX_W: case VM_OP_LDX_DW:
	case VM_OP_LDXSX_B: case VM_OP_LDXSX_H: case VM_OP_LDXSX_W:
		*use = s;
		*def = d;
		return;
	case VM_OP_ST_B: case VM_OP_ST_H: case VM_OP_ST_W: case VM_OP_ST_DW:
		*use = d;
		return;
	case VM_OP_STX_B: case VM_OP_STX_H: case VM_OP_STX_W: case VM_OP_STX_DW:
	case VM_OP_AADD_W: case VM_OP_AADD_DW: case VM_OP_AOR_W:
	case VM_OP_AOR_DW: case VM_OP_AAND_W: case VM_OP_AAND_DW:
	case VM_OP_AXOR_W: case VM_OP_AXOR_DW:
		*use = d | s;
		return;
	case VM_OP_FADD_W: case VM_OP_FADD_DW: case VM_OP_FOR_W:
	case VM_OP_FOR_DW: case VM_OP_FAND_W: case VM_OP_FAND_DW:
	case VM_OP_FXOR_W: case VM_OP_FXOR_DW: case VM_OP_XCHG_W:
	case VM_OP_XCHG_DW:
		*use = d | s;
		*def = s;
		return;
	case VM_OP_CMPXCHG_W: case VM_OP_CMPXCHG_DW:
		*use = d | s | REG(0);
		*def = REG(0);
		return;
	}
	if (i->op < VM_OP_JEQ_K) {                /* two-operand ALU */
		bool x = (i->op - VM_OP_ADD64_K) & 1;
		*use = x ? d | s : d;
		*def = d;
	} else if (i->op < VM_OP_AADD_W) {        /* conditional jump */
		bool x = (i->op - VM_OP_JEQ_K) & 1;
		*use = x ? d | s : d;
	} else {                                  /* NEG, byte swaps */
		*use = d;
		*def = d;
	}
}

static int check_regs(struct loader *l, bool *back_edges)
{
	uint32_t n = l->n;
	uint16_t *in = malloc(n * sizeof(*in));
	uint32_t *work = malloc(n * sizeof(*work));
	bool *queued = calloc(n, sizeof(*queued));
	int err = 0;
	if (!in || !work || !queued) {
		err = -ENOMEM;
		goto out;
	}
	for (uint32_t pc = 0; pc < n; pc++)
		in[pc] = REGS_UNSEEN;
	in[0] = REG(1) | REG(10);
	uint32_t nwork = 0;
	work[nwork++] = 0;
	queued[0] = true;
	/* each callback starts with r1..r4 (map, key, value, context) */
	for (uint32_t k = 0; k < l->ncb; k++) {
		uint32_t c = l->cb_pc[k];
		in[c] = REG(1) | REG(2) | REG(3) | REG(4) | REG(10);
		if (!queued[c]) {
			queued[c] = true;
			work[nwork++] = c;
		}
	}
	*back_edges = false;
	while (nwork && !err) {
		uint32_t pc = work[--nwork];
		queued[pc] = false;
		const struct vm_insn *i = &l->out[pc];
		uint16_t use, def;
		insn_regs(i, &use, &def);
		if (use & ~in[pc]) {
			int r = __builtin_ctz(use & ~in[pc]);
			err = fail(l, pc, "r%d is read before it is written", r);
			break;
		}
		uint16_t out = (uint16_t)(in[pc] | def);
		if (i->op == VM_OP_CALL)
			out &= (uint16_t)~(REG(1) | REG(2) | REG(3) | REG(4) | REG(5));
		uint32_t succ[2], ns = 0;
		if (i->op != VM_OP_EXIT && i->op != VM_OP_JA)
			succ[ns++] = pc + (i->op == VM_OP_LDDW ? 2 : 1);
		if (i->op == VM_OP_JA || (i->op >= VM_OP_JEQ_K &&
					  i->op < VM_OP_AADD_W)) {
			succ[ns++] = (uint32_t)((int64_t)pc + 1 + i->off);
			if (i->off < 0)
				*back_edges = true;
		}
		for (uint32_t k = 0; k < ns; k++) {
			uint32_t s = succ[k];
			if (s >= n) {
				err = fail(l, pc, "falls off the end of the "
					   "program");
				break;
			}
			uint16_t was = in[s];
			in[s] = was == REGS_UNSEEN ? out : (uint16_t)(was & out);
			if (in[s] != was && !queued[s]) {
				queued[s] = true;
				work[nwork++] = s;
			}
		}
	}
out:
	free(in);
	free(work);
	free(queued);
	return err;
}

/* ---- the program object ---- */

/* struct vm_callback's call: the callback in the interpreter, from its
 * first instruction, with a stack and a budget of its own. */
static uint64_t run_callback(const void *cb, uint64_t r1, uint64_t r2,
			     uint64_t r3, uint64_t r4)
{
	const struct vm_callback *c = cb;
	uint64_t args[4] = { r1, r2, r3, r4 }, ret = 0;
	if (vm_interp_run_at(c->prog, c->pc, args, &ret) < 0)
		return 0;
	return ret;
}

struct vm_prog *vm_prog_load(const struct bpf_insn *insns, uint32_t n,
			     const struct vm_env *env, char *err,
			     size_t errlen)
{
	static const struct vm_env no_env;
	if (!env)
		env = &no_env;
	struct loader l = { .code = insns, .n = n, .env = env, .err = err,
			    .errlen = errlen };
	struct vm_prog *p = NULL;
	int rc;
	if (err && errlen)
		err[0] = 0;
	if (!n || n > VM_MAX_INSNS || !insns) {
		rc = fail(&l, 0, "a program has 1 to %u instructions, not %u",
			  VM_MAX_INSNS, n);
		goto fail;
	}
	rc = -ENOMEM;
	p = calloc(1, sizeof(*p));
	l.out = p ? calloc(n, sizeof(*l.out)) : NULL;
	l.second = calloc(n, sizeof(*l.second));
	l.cb_pc = calloc(n, sizeof(*l.cb_pc));
	if (!l.out || !l.second || !l.cb_pc)
		goto fail;
	p->insns = l.out;
	p->ninsns = n;
	p->budget = env->budget ? env->budget : VM_BUDGET_DEFAULT;
	if (p->budget > INT64_MAX / 2)
		p->budget = INT64_MAX / 2;
	for (uint32_t pc = 0; pc + 1 < n; pc++)
		if (insns[pc].code == (BPF_LD | BPF_IMM | BPF_DW))
			l.second[++pc] = true;
	for (uint32_t pc = 0; pc < n; pc++) {
		if (l.second[pc])
			continue;
		rc = decode(&l, pc);
		if (rc)
			goto fail;
	}
	rc = check_regs(&l, &p->has_back_edges);
	if (rc)
		goto fail;
	rc = -ENOMEM;
	if (l.ncb && !(p->callbacks = calloc(l.ncb, sizeof(*p->callbacks))))
		goto fail;
	p->ncallbacks = l.ncb;
	for (uint32_t k = 0; k < l.ncb; k++)
		p->callbacks[k] = (struct vm_callback){ .call = run_callback,
			.prog = p, .pc = l.cb_pc[k] };
	for (uint32_t pc = 0; pc < n; pc++)
		if (!l.second[pc] && insns[pc].code == (BPF_LD | BPF_IMM | BPF_DW) &&
		    insns[pc].src_reg == BPF_PSEUDO_FUNC)
			l.out[pc].imm = (int64_t)(uintptr_t)
				&p->callbacks[l.out[pc].imm];
	free(l.second);
	free(l.cb_pc);
	if (env->no_jit)
		p->jit_error = "disabled";
	else
		vm_jit_compile(p);
	return p;
fail:
	free(l.second);
	free(l.cb_pc);
	vm_prog_free(p);
	errno = -rc;
	return NULL;
}

void vm_prog_free(struct vm_prog *p)
{
	if (!p)
		return;
	vm_jit_free(p);
	free(p->insns);
	free(p->callbacks);
	free(p);
}

int vm_prog_run(const struct vm_prog *p, void *ctx, uint64_t *ret)
{
	if (p->native) {
		int err = 0;
		*ret = p->native(ctx, &err);
		return err;
	}
	return vm_interp_run(p, ctx, ret);
}

int vm_prog_interp(const struct vm_prog *p, void *ctx, uint64_t *ret)
{
	return vm_interp_run(p, ctx, ret);
}

vm_native_fn vm_prog_native(const struct vm_prog *p)
{
	return p->native;
}

const char *vm_prog_jit_error(const struct vm_prog *p)
{
	return p->native ? NULL : p->jit_error;
}

size_t vm_prog_native_size(const struct vm_prog *p)
{
	return p->native ? p->native_size : 0;
}
