/* disasm.c - eBPF disassembly in the kernel's notation (as printed by
 * `bpftool prog dump xlated`), behind --dump=bpf and the golden tests. */
#include "codegen.h"

#include <inttypes.h>

#define HELPER_NAME(x) "bpf_" #x
static const char *const helper_names[] = {
	__BPF_FUNC_MAPPER(HELPER_NAME)
};
#undef HELPER_NAME

static const char *const alu_ops[16] = {
	[BPF_ADD >> 4] = "+=", [BPF_SUB >> 4] = "-=", [BPF_MUL >> 4] = "*=",
	[BPF_DIV >> 4] = "/=", [BPF_OR >> 4] = "|=", [BPF_AND >> 4] = "&=",
	[BPF_LSH >> 4] = "<<=", [BPF_RSH >> 4] = ">>=", [BPF_NEG >> 4] = "neg",
	[BPF_MOD >> 4] = "%=", [BPF_XOR >> 4] = "^=", [BPF_MOV >> 4] = "=",
	[BPF_ARSH >> 4] = "s>>=", [BPF_END >> 4] = "endian",
};

static const char *const jmp_ops[16] = {
	[BPF_JA >> 4] = "jmp", [BPF_JEQ >> 4] = "==", [BPF_JGT >> 4] = ">",
	[BPF_JGE >> 4] = ">=", [BPF_JSET >> 4] = "&", [BPF_JNE >> 4] = "!=",
	[BPF_JSGT >> 4] = "s>", [BPF_JSGE >> 4] = "s>=",
	[BPF_CALL >> 4] = "call", [BPF_EXIT >> 4] = "exit",
	[BPF_JLT >> 4] = "<", [BPF_JLE >> 4] = "<=", [BPF_JSLT >> 4] = "s<",
	[BPF_JSLE >> 4] = "s<=",
};

static const char *const size_names[4] = {
	[BPF_W >> 3] = "u32", [BPF_H >> 3] = "u16", [BPF_B >> 3] = "u8",
	[BPF_DW >> 3] = "u64",
};

static const char *op_or(const char *s)
{
	return s ? s : "?";
}

static void disasm_alu(FILE *out, const struct bpf_insn *in)
{
	uint8_t cls = BPF_CLASS(in->code), op = BPF_OP(in->code);
	char r = cls == BPF_ALU64 ? 'r' : 'w';
	if (op == BPF_NEG) {
		fprintf(out, "%c%d = -%c%d\n", r, in->dst_reg, r, in->dst_reg);
	} else if (op == BPF_END) {
		fprintf(out, "r%d = %s%d r%d\n", in->dst_reg,
			BPF_SRC(in->code) == BPF_TO_BE ? "be" : "le", in->imm,
			in->dst_reg);
	} else if (BPF_SRC(in->code) == BPF_X) {
		fprintf(out, "%c%d %s %c%d\n", r, in->dst_reg,
			op_or(alu_ops[op >> 4]), r, in->src_reg);
	} else {
		fprintf(out, "%c%d %s %d\n", r, in->dst_reg,
			op_or(alu_ops[op >> 4]), in->imm);
	}
}

static void disasm_jmp(FILE *out, const struct bpf_insn *in)
{
	uint8_t cls = BPF_CLASS(in->code), op = BPF_OP(in->code);
	char r = cls == BPF_JMP32 ? 'w' : 'r';
	if (op == BPF_CALL) {
		if ((size_t)in->imm < sizeof(helper_names) / sizeof(*helper_names))
			fprintf(out, "call %s#%d\n", helper_names[in->imm],
				in->imm);
		else
			fprintf(out, "call #%d\n", in->imm);
	} else if (op == BPF_EXIT) {
		fprintf(out, "exit\n");
	} else if (op == BPF_JA) {
		fprintf(out, "goto pc%+d\n", in->off);
	} else if (BPF_SRC(in->code) == BPF_X) {
		fprintf(out, "if %c%d %s %c%d goto pc%+d\n", r, in->dst_reg,
			op_or(jmp_ops[op >> 4]), r, in->src_reg, in->off);
	} else {
		fprintf(out, "if %c%d %s 0x%x goto pc%+d\n", r, in->dst_reg,
			op_or(jmp_ops[op >> 4]), (uint32_t)in->imm, in->off);
	}
}

/* Prints one instruction (without its index); returns how many slots it
 * used (2 for a 64-bit immediate load). */
static int disasm_one(FILE *out, const struct bpf_insn *in, uint32_t left)
{
	uint8_t cls = BPF_CLASS(in->code);
	fprintf(out, "(%02x) ", in->code);
	switch (cls) {
	case BPF_ALU:
	case BPF_ALU64:
		disasm_alu(out, in);
		return 1;
	case BPF_JMP:
	case BPF_JMP32:
		disasm_jmp(out, in);
		return 1;
	case BPF_LDX:
		fprintf(out, "r%d = *(%s *)(r%d %+d)\n", in->dst_reg,
			size_names[BPF_SIZE(in->code) >> 3], in->src_reg,
			in->off);
		return 1;
	case BPF_STX:
		if (BPF_MODE(in->code) == BPF_ATOMIC) {
			fprintf(out, "lock *(%s *)(r%d %+d) %s r%d\n",
				size_names[BPF_SIZE(in->code) >> 3],
				in->dst_reg, in->off,
				in->imm == BPF_ADD ? "+=" : "?=", in->src_reg);
			return 1;
		}
		fprintf(out, "*(%s *)(r%d %+d) = r%d\n",
			size_names[BPF_SIZE(in->code) >> 3], in->dst_reg,
			in->off, in->src_reg);
		return 1;
	case BPF_ST:
		fprintf(out, "*(%s *)(r%d %+d) = %d\n",
			size_names[BPF_SIZE(in->code) >> 3], in->dst_reg,
			in->off, in->imm);
		return 1;
	case BPF_LD:
		if (in->code == (BPF_LD | BPF_DW | BPF_IMM) && left >= 2) {
			uint64_t v = (uint32_t)in[0].imm |
				     ((uint64_t)(uint32_t)in[1].imm << 32);
			if (in->src_reg == BPF_PSEUDO_MAP_FD)
				fprintf(out, "r%d = map[id:%d]\n", in->dst_reg,
					in->imm);
			else
				fprintf(out, "r%d = 0x%" PRIx64 "\n",
					in->dst_reg, v);
			return 2;
		}
		fprintf(out, "BUG_ld_%02x\n", in->code);
		return 1;
	default:
		fprintf(out, "unknown\n");
		return 1;
	}
}

void bpf_disasm(FILE *out, const struct bpf_insn *insns, uint32_t n)
{
	for (uint32_t i = 0; i < n;) {
		fprintf(out, "%4u: ", i);
		i += (uint32_t)disasm_one(out, &insns[i], n - i);
	}
}

void program_dump_bpf(FILE *out, const struct program *prog)
{
	for (uint32_t m = 0; m < prog->nmaps; m++)
		fprintf(out, "map[id:%u] %s\n", m, prog->maps[m].name);
	for (uint32_t i = 0; i < prog->nprobes; i++) {
		const struct probe *p = &prog->probes[i];
		fprintf(out, "\n%s:\n", p->name);
		bpf_disasm(out, p->insns, p->ninsns);
	}
}
