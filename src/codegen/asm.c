/* asm.c - the assembler: allocated IR to eBPF instructions. Fills spilled
 * operands into the scratch registers r0/r5, moves call arguments into
 * r1-r5, and resolves labels to pc-relative offsets in a second pass. */
#include "asm.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct fixup {
	uint32_t at;       /* instruction whose off is the jump */
	uint32_t label;
};

struct as {
	const struct ir *ir;
	const struct ra *ra;
	VEC(struct bpf_insn) out;
	VEC(struct fixup) fix;
	int err;
};

static void put(struct as *as, struct bpf_insn insn)
{
	if (vec_push(&as->out, insn) && !as->err)
		as->err = -ENOMEM;
}

static int home(const struct as *as, vreg v)
{
	return v == VR_FP ? BPF_REG_10 : as->ra->home[v];
}

/* The machine register holding v, filling it into `scratch` if spilled. */
static int use(struct as *as, vreg v, int scratch)
{
	int r = home(as, v);
	if (r != RA_SPILLED)
		return r;
	put(as, BPF_LDX_MEM_(BPF_DW, scratch, BPF_REG_10, as->ra->slot[v]));
	return scratch;
}

/* The register to compute d in: its home, or r0 when spilled. */
static int def_reg(const struct as *as, vreg d)
{
	int r = home(as, d);
	return r == RA_SPILLED ? BPF_REG_0 : r;
}

/* After computing d in register r: store it if d lives in memory. */
static void commit(struct as *as, vreg d, int r)
{
	if (home(as, d) == RA_SPILLED)
		put(as, BPF_STX_MEM_(BPF_DW, BPF_REG_10, r, as->ra->slot[d]));
}

static void mov(struct as *as, int d, int s)
{
	if (d != s)
		put(as, BPF_MOV64_REG_(d, s));
}

static void jump(struct as *as, struct bpf_insn insn, uint32_t label)
{
	struct fixup f = { (uint32_t)as->out.n, label };
	if (vec_push(&as->fix, f) && !as->err)
		as->err = -ENOMEM;
	put(as, insn);
}

static void lower_alu(struct as *as, const struct ir_insn *in)
{
	int ra = use(as, in->a, BPF_REG_0);
	int rb = in->has_imm ? -1 : use(as, in->b, RA_SCRATCH1);
	int rd = def_reg(as, in->d);
	int work = rd;
	/* rd = ra; rd op= rb would clobber b first when rd holds b. */
	if (rb == rd && in->a != in->b)
		work = BPF_REG_0;
	mov(as, work, ra);
	if (in->code == BPF_END)   /* byte swap: 32-bit class, to big endian */
		put(as, bpf_raw(BPF_ALU | BPF_END | BPF_TO_BE, work, 0, 0,
				(int32_t)in->imm));
	else if (in->has_imm)
		put(as, BPF_ALU64_IMM_(in->code, work, (int32_t)in->imm));
	else
		put(as, BPF_ALU64_REG_(in->code, work, rb));
	mov(as, rd, work);
	commit(as, in->d, rd);
}

static void lower_call(struct as *as, const struct ir_insn *in)
{
	/* Arguments never live in r1-r5 (regalloc.c), so plain moves in
	 * order cannot overwrite one another. */
	for (int i = 0; i < in->nargs; i++) {
		const struct ir_arg *g = &in->args[i];
		int dst = BPF_REG_1 + i;
		if (g->v == VR_NONE) {
			put(as, BPF_MOV64_IMM_(dst, g->imm));
			continue;
		}
		if (g->v == VR_MAPFD) {
			put(as, bpf_raw(BPF_LD | BPF_DW | BPF_IMM, dst,
					BPF_PSEUDO_MAP_FD, 0, g->imm));
			put(as, bpf_raw(0, 0, 0, 0, 0));
			continue;
		}
		int r = home(as, g->v);
		if (r == RA_SPILLED)
			put(as, BPF_LDX_MEM_(BPF_DW, dst, BPF_REG_10,
					     as->ra->slot[g->v]));
		else
			mov(as, dst, r);
		if (g->imm)
			put(as, BPF_ALU64_IMM_(BPF_ADD, dst, g->imm));
	}
	put(as, BPF_CALL_((int32_t)in->imm));
	if (in->d) {
		int rd = def_reg(as, in->d);
		mov(as, rd, BPF_REG_0);
		commit(as, in->d, rd);
	}
}

static void lower(struct as *as, const struct ir_insn *in, int32_t *labels)
{
	int ra, rb, rd;
	switch (in->op) {
	case IR_ENTRY:
		rd = def_reg(as, in->d);
		mov(as, rd, BPF_REG_1);
		commit(as, in->d, rd);
		break;
	case IR_MOV:
		if (in->has_imm && home(as, in->d) == RA_SPILLED) {
			put(as, BPF_ST_MEM_(BPF_DW, BPF_REG_10,
					    as->ra->slot[in->d],
					    (int32_t)in->imm));
			break;
		}
		if (in->has_imm) {
			put(as, BPF_MOV64_IMM_(home(as, in->d),
					       (int32_t)in->imm));
			break;
		}
		ra = use(as, in->a, BPF_REG_0);
		if (home(as, in->d) == RA_SPILLED)
			commit(as, in->d, ra);
		else
			mov(as, home(as, in->d), ra);
		break;
	case IR_ALU:
		lower_alu(as, in);
		break;
	case IR_NEG:
		ra = use(as, in->a, BPF_REG_0);
		rd = def_reg(as, in->d);
		mov(as, rd, ra);
		put(as, BPF_ALU64_IMM_(BPF_NEG, rd, 0));
		commit(as, in->d, rd);
		break;
	case IR_ARGSAVE:
		put(as, bpf_raw(BPF_STX | BPF_MEM | BPF_DW, BPF_REG_10,
				(uint8_t)in->imm, in->off, 0));
		break;
	case IR_LDIMM64:
	case IR_LDMAP:
	case IR_LDFUNC:
		rd = def_reg(as, in->d);
		put(as, bpf_raw(BPF_LD | BPF_DW | BPF_IMM, rd,
				in->op == IR_LDMAP ? BPF_PSEUDO_MAP_FD :
				in->op == IR_LDFUNC ? BPF_PSEUDO_FUNC : 0, 0,
				(int32_t)(uint32_t)in->imm));
		put(as, bpf_raw(0, 0, 0, 0,
				(int32_t)(uint32_t)((uint64_t)in->imm >> 32)));
		commit(as, in->d, rd);
		break;
	case IR_LDX:
		ra = use(as, in->a, BPF_REG_0);
		rd = def_reg(as, in->d);
		put(as, BPF_LDX_MEM_(in->code, rd, ra, in->off));
		commit(as, in->d, rd);
		break;
	case IR_STX:
		ra = use(as, in->a, BPF_REG_0);
		rb = use(as, in->b, RA_SCRATCH1);
		put(as, BPF_STX_MEM_(in->code, ra, rb, in->off));
		break;
	case IR_XADD:
		ra = use(as, in->a, BPF_REG_0);
		rb = use(as, in->b, RA_SCRATCH1);
		put(as, BPF_ATOMIC_ADD_(in->code, ra, rb, in->off));
		break;
	case IR_ST:
		ra = use(as, in->a, BPF_REG_0);
		put(as, BPF_ST_MEM_(in->code, ra, in->off, (int32_t)in->imm));
		break;
	case IR_JA:
		jump(as, BPF_JA_(0), in->label);
		break;
	case IR_JCC:
		ra = use(as, in->a, BPF_REG_0);
		if (in->has_imm) {
			jump(as, BPF_JMP_IMM_(in->code, ra, (int32_t)in->imm, 0),
			     in->label);
		} else {
			rb = use(as, in->b, RA_SCRATCH1);
			jump(as, BPF_JMP_REG_(in->code, ra, rb, 0), in->label);
		}
		break;
	case IR_CALL:
		lower_call(as, in);
		break;
	case IR_LABEL:
		labels[in->label] = (int32_t)as->out.n;
		break;
	case IR_RET:
		if (in->has_imm)
			put(as, BPF_MOV64_IMM_(BPF_REG_0, (int32_t)in->imm));
		else
			mov(as, BPF_REG_0, use(as, in->a, BPF_REG_0));
		put(as, BPF_EXIT_());
		break;
	}
}

int asm_lower(const struct ir *ir, const struct ra *ra,
	      struct bpf_insn **out, uint32_t *n)
{
	struct as as = { .ir = ir, .ra = ra };
	*out = NULL;
	*n = 0;
	int32_t *labels = malloc((ir->nlabels ? ir->nlabels : 1) *
				 sizeof(int32_t));
	if (!labels)
		return -ENOMEM;
	for (uint32_t l = 0; l < ir->nlabels; l++)
		labels[l] = -1;
	for (size_t i = 0; i < ir->insns.n && !as.err; i++)
		lower(&as, &ir->insns.v[i], labels);
	for (size_t i = 0; i < as.fix.n && !as.err; i++) {
		const struct fixup *f = &as.fix.v[i];
		int32_t target = labels[f->label];
		int64_t off = (int64_t)target - (int64_t)f->at - 1;
		if (target < 0)
			as.err = -EINVAL;       /* label never placed */
		else if (off < INT16_MIN || off > INT16_MAX)
			as.err = -E2BIG;
		else
			as.out.v[f->at].off = (int16_t)off;
	}
	free(labels);
	vec_free(&as.fix);
	if (as.err) {
		vec_free(&as.out);
		return as.err;
	}
	*out = as.out.v;
	*n = (uint32_t)as.out.n;
	return 0;
}
