/* ir.c - building the codegen IR, and the facts about each instruction
 * (uses, definition, control flow) that the allocator relies on. */
#include "ir.h"

#include "../vm/vm.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void ir_init(struct ir *ir)
{
	memset(ir, 0, sizeof(*ir));
	ir->nvregs = VR_FIRST;
}

void ir_free(struct ir *ir)
{
	if (!ir)
		return;
	vec_free(&ir->insns);
}

vreg ir_vreg(struct ir *ir)
{
	return ir->nvregs++;
}

uint32_t ir_label(struct ir *ir)
{
	return ir->nlabels++;
}

void ir_emit(struct ir *ir, struct ir_insn in)
{
	if (vec_push(&ir->insns, in) && !ir->err)
		ir->err = -ENOMEM;
}

void ir_ldfunc(struct ir *ir, vreg d, int sub)
{
	ir_emit(ir, (struct ir_insn){ .op = IR_LDFUNC, .d = d, .imm = sub,
				      .has_imm = true });
}

void ir_argsave(struct ir *ir, int reg, int16_t off)
{
	ir_emit(ir, (struct ir_insn){ .op = IR_ARGSAVE, .imm = reg,
				      .off = off, .has_imm = true });
}

void ir_entry(struct ir *ir, vreg d)
{
	ir_emit(ir, (struct ir_insn){ .op = IR_ENTRY, .d = d });
}

void ir_mov(struct ir *ir, vreg d, vreg a)
{
	ir_emit(ir, (struct ir_insn){ .op = IR_MOV, .d = d, .a = a });
}

void ir_movi(struct ir *ir, vreg d, int64_t imm)
{
	if (imm < INT32_MIN || imm > INT32_MAX)
		ir_emit(ir, (struct ir_insn){ .op = IR_LDIMM64, .d = d,
					      .imm = imm, .has_imm = true });
	else
		ir_emit(ir, (struct ir_insn){ .op = IR_MOV, .d = d,
					      .imm = imm, .has_imm = true });
}

void ir_alu(struct ir *ir, uint8_t code, vreg d, vreg a, vreg b)
{
	ir_emit(ir, (struct ir_insn){ .op = IR_ALU, .code = code, .d = d,
				      .a = a, .b = b });
}

/* Immediates that do not fit the 32-bit field go through a vreg. */
void ir_alui(struct ir *ir, uint8_t code, vreg d, vreg a, int64_t imm)
{
	if (imm < INT32_MIN || imm > INT32_MAX) {
		vreg t = ir_vreg(ir);
		ir_movi(ir, t, imm);
		ir_alu(ir, code, d, a, t);
		return;
	}
	ir_emit(ir, (struct ir_insn){ .op = IR_ALU, .code = code, .d = d,
				      .a = a, .imm = imm, .has_imm = true });
}

void ir_neg(struct ir *ir, vreg d, vreg a)
{
	ir_emit(ir, (struct ir_insn){ .op = IR_NEG, .d = d, .a = a });
}

void ir_ldmap(struct ir *ir, vreg d, int map)
{
	ir_emit(ir, (struct ir_insn){ .op = IR_LDMAP, .d = d, .imm = map,
				      .has_imm = true });
}

void ir_ldx(struct ir *ir, uint8_t size, vreg d, vreg a, int16_t off)
{
	ir_emit(ir, (struct ir_insn){ .op = IR_LDX, .code = size, .d = d,
				      .a = a, .off = off });
}

void ir_stx(struct ir *ir, uint8_t size, vreg a, int16_t off, vreg b)
{
	ir_emit(ir, (struct ir_insn){ .op = IR_STX, .code = size, .a = a,
				      .b = b, .off = off });
}

void ir_st(struct ir *ir, uint8_t size, vreg a, int16_t off, int64_t imm)
{
	if (imm < INT32_MIN || imm > INT32_MAX) {
		vreg t = ir_vreg(ir);
		ir_movi(ir, t, imm);
		ir_stx(ir, size, a, off, t);
		return;
	}
	ir_emit(ir, (struct ir_insn){ .op = IR_ST, .code = size, .a = a,
				      .imm = imm, .has_imm = true, .off = off });
}

void ir_xadd(struct ir *ir, uint8_t size, vreg a, int16_t off, vreg b)
{
	ir_emit(ir, (struct ir_insn){ .op = IR_XADD, .code = size, .a = a,
				      .b = b, .off = off });
}

void ir_ja(struct ir *ir, uint32_t label)
{
	ir_emit(ir, (struct ir_insn){ .op = IR_JA, .label = label });
}

void ir_jcc(struct ir *ir, uint8_t code, vreg a, vreg b, uint32_t label)
{
	ir_emit(ir, (struct ir_insn){ .op = IR_JCC, .code = code, .a = a,
				      .b = b, .label = label });
}

void ir_jcci(struct ir *ir, uint8_t code, vreg a, int64_t imm, uint32_t label)
{
	if (imm < INT32_MIN || imm > INT32_MAX) {
		vreg t = ir_vreg(ir);
		ir_movi(ir, t, imm);
		ir_jcc(ir, code, a, t, label);
		return;
	}
	ir_emit(ir, (struct ir_insn){ .op = IR_JCC, .code = code, .a = a,
				      .imm = imm, .has_imm = true,
				      .label = label });
}

void ir_call(struct ir *ir, vreg d, int helper, const struct ir_arg *args,
	     int nargs)
{
	struct ir_insn in = { .op = IR_CALL, .d = d, .imm = helper,
			      .nargs = (uint8_t)nargs };
	for (int i = 0; i < nargs && i < IR_MAX_ARGS; i++)
		in.args[i] = args[i];
	ir_emit(ir, in);
}

void ir_place(struct ir *ir, uint32_t label)
{
	ir_emit(ir, (struct ir_insn){ .op = IR_LABEL, .label = label });
}

void ir_ret(struct ir *ir, vreg a)
{
	ir_emit(ir, (struct ir_insn){ .op = IR_RET, .a = a });
}

void ir_reti(struct ir *ir, int64_t imm)
{
	ir_emit(ir, (struct ir_insn){ .op = IR_RET, .imm = imm,
				      .has_imm = true });
}

static int add_use(vreg *uses, int n, vreg v)
{
	if (v >= VR_FIRST)
		uses[n++] = v;
	return n;
}

int ir_uses(const struct ir_insn *in, vreg *uses)
{
	int n = 0;
	switch (in->op) {
	case IR_MOV:
	case IR_ALU:
	case IR_JCC:
		n = add_use(uses, n, in->a);
		if (!in->has_imm)
			n = add_use(uses, n, in->b);
		break;
	case IR_NEG:
	case IR_LDX:
	case IR_ST:
		n = add_use(uses, n, in->a);
		break;
	case IR_STX:
	case IR_XADD:
		n = add_use(uses, n, in->a);
		n = add_use(uses, n, in->b);
		break;
	case IR_CALL:
		for (int i = 0; i < in->nargs; i++)
			n = add_use(uses, n, in->args[i].v);
		break;
	case IR_RET:
		if (!in->has_imm)
			n = add_use(uses, n, in->a);
		break;
	default:
		break;
	}
	return n;
}

vreg ir_def(const struct ir_insn *in)
{
	switch (in->op) {
	case IR_ENTRY: case IR_MOV: case IR_ALU: case IR_NEG:
	case IR_LDIMM64: case IR_LDMAP: case IR_LDX: case IR_CALL:
	case IR_LDFUNC:
		return in->d >= VR_FIRST ? in->d : VR_NONE;
	default:
		return VR_NONE;
	}
}

bool ir_is_jump(const struct ir_insn *in)
{
	return in->op == IR_JA || in->op == IR_JCC;
}

bool ir_falls_through(const struct ir_insn *in)
{
	return in->op != IR_JA && in->op != IR_RET;
}

size_t ir_prune(struct ir *ir)
{
	size_t n = ir->insns.n, removed = 0;
	if (!n)
		return 0;
	int32_t *labels = malloc((ir->nlabels ? ir->nlabels : 1) * sizeof(*labels));
	bool *live = calloc(n, sizeof(bool));
	size_t *work = malloc(n * sizeof(size_t));
	if (!labels || !live || !work) {
		free(labels);
		free(live);
		free(work);
		return 0;        /* keeping dead code is only a verifier issue */
	}
	for (uint32_t l = 0; l < ir->nlabels; l++)
		labels[l] = -1;
	for (size_t i = 0; i < n; i++)
		if (ir->insns.v[i].op == IR_LABEL)
			labels[ir->insns.v[i].label] = (int32_t)i;
	size_t top = 0;
	work[top++] = 0;
	live[0] = true;
	while (top) {
		size_t i = work[--top];
		const struct ir_insn *in = &ir->insns.v[i];
		size_t succ[2];
		int ns = 0;
		if (ir_falls_through(in) && i + 1 < n)
			succ[ns++] = i + 1;
		if (ir_is_jump(in) && labels[in->label] >= 0)
			succ[ns++] = (size_t)labels[in->label];
		for (int k = 0; k < ns; k++)
			if (!live[succ[k]]) {
				live[succ[k]] = true;
				work[top++] = succ[k];
			}
	}
	size_t j = 0;
	for (size_t i = 0; i < n; i++) {
		const struct ir_insn *in = &ir->insns.v[i];
		bool dead = !live[i];
		/* goto to the very next live instruction's label */
		if (!dead && in->op == IR_JA) {
			size_t k = i + 1;
			while (k < n && !live[k])
				k++;
			for (; k < n && ir->insns.v[k].op == IR_LABEL; k++)
				if (ir->insns.v[k].label == in->label) {
					dead = true;
					break;
				}
		}
		if (dead) {
			removed++;
			continue;
		}
		ir->insns.v[j++] = *in;
	}
	ir->insns.n = j;
	free(labels);
	free(live);
	free(work);
	return removed;
}

static const char *alu_sym(uint8_t code)
{
	switch (code) {
	case BPF_ADD: return "+";
	case BPF_SUB: return "-";
	case BPF_MUL: return "*";
	case BPF_DIV: return "/";
	case BPF_MOD: return "%";
	case BPF_OR: return "|";
	case BPF_AND: return "&";
	case BPF_XOR: return "^";
	case BPF_LSH: return "<<";
	case BPF_RSH: return ">>";
	case BPF_END: return "bswap";
	case BPF_ARSH: return "s>>";
	default: return "?";
	}
}

static const char *jmp_sym(uint8_t code)
{
	switch (code) {
	case BPF_JEQ: return "==";
	case BPF_JNE: return "!=";
	case BPF_JGT: return ">";
	case BPF_JGE: return ">=";
	case BPF_JLT: return "<";
	case BPF_JLE: return "<=";
	case BPF_JSGT: return "s>";
	case BPF_JSGE: return "s>=";
	case BPF_JSLT: return "s<";
	case BPF_JSLE: return "s<=";
	case BPF_JSET: return "&";
	default: return "?";
	}
}

static const char *vr(char *buf, size_t n, vreg v)
{
	if (v == VR_FP)
		snprintf(buf, n, "fp");
	else
		snprintf(buf, n, "v%d", v);
	return buf;
}

void ir_dump(FILE *out, const struct ir *ir)
{
	char a[16], d[16];
	for (size_t i = 0; i < ir->insns.n; i++) {
		const struct ir_insn *in = &ir->insns.v[i];
		char rhs[24];
		if (in->has_imm)
			snprintf(rhs, sizeof(rhs), "%lld", (long long)in->imm);
		else
			vr(rhs, sizeof(rhs), in->b);
		fprintf(out, "%4zu: ", i);
		switch (in->op) {
		case IR_ENTRY:
			fprintf(out, "%s = ctx\n", vr(d, 16, in->d));
			break;
		case IR_MOV:
			fprintf(out, "%s = %s\n", vr(d, 16, in->d),
				in->has_imm ? rhs : vr(a, 16, in->a));
			break;
		case IR_ALU:
			fprintf(out, "%s = %s %s %s\n", vr(d, 16, in->d),
				vr(a, 16, in->a), alu_sym(in->code), rhs);
			break;
		case IR_NEG:
			fprintf(out, "%s = -%s\n", vr(d, 16, in->d),
				vr(a, 16, in->a));
			break;
		case IR_LDIMM64:
			fprintf(out, "%s = %lld ll\n", vr(d, 16, in->d),
				(long long)in->imm);
			break;
		case IR_LDMAP:
			fprintf(out, "%s = map[%lld]\n", vr(d, 16, in->d),
				(long long)in->imm);
			break;
		case IR_LDFUNC:
			fprintf(out, "%s = func[%lld]\n", vr(d, 16, in->d),
				(long long)in->imm);
			break;
		case IR_ARGSAVE:
			fprintf(out, "*(u64 *)(fp %+d) = r%lld\n", in->off,
				(long long)in->imm);
			break;
		case IR_LDX:
			fprintf(out, "%s = *(u%d *)(%s %+d)\n", vr(d, 16, in->d),
				vm_size_bytes(in->code) * 8, vr(a, 16, in->a),
				in->off);
			break;
		case IR_STX:
		case IR_ST:
		case IR_XADD:
			fprintf(out, "%s*(u%d *)(%s %+d) %s %s\n",
				in->op == IR_XADD ? "lock " : "",
				vm_size_bytes(in->code) * 8, vr(a, 16, in->a),
				in->off, in->op == IR_XADD ? "+=" : "=", rhs);
			break;
		case IR_JA:
			fprintf(out, "goto L%u\n", in->label);
			break;
		case IR_JCC:
			fprintf(out, "if %s %s %s goto L%u\n", vr(a, 16, in->a),
				jmp_sym(in->code), rhs, in->label);
			break;
		case IR_CALL:
			fprintf(out, "%s = call %lld(", vr(d, 16, in->d),
				(long long)in->imm);
			for (int k = 0; k < in->nargs; k++) {
				const struct ir_arg *g = &in->args[k];
				fprintf(out, "%s", k ? ", " : "");
				if (g->v == VR_NONE)
					fprintf(out, "%d", g->imm);
				else if (g->v == VR_MAPFD)
					fprintf(out, "map[%d]", g->imm);
				else if (g->imm)
					fprintf(out, "%s%+d", vr(a, 16, g->v),
						g->imm);
				else
					fprintf(out, "%s", vr(a, 16, g->v));
			}
			fprintf(out, ")\n");
			break;
		case IR_LABEL:
			fprintf(out, "L%u:\n", in->label);
			break;
		case IR_RET:
			fprintf(out, "return %s\n",
				in->has_imm ? rhs : vr(a, 16, in->a));
			break;
		}
	}
}
