/* bpf_interp.h - a tiny eBPF interpreter for codegen unit tests: enough
 * of the ISA to run generated code without a kernel (ALU64, jumps,
 * memory on a private stack and caller-provided buffers, and fake
 * helpers that clobber r1-r5 like real calls do). */
#ifndef SONDE_TEST_BPF_INTERP_H
#define SONDE_TEST_BPF_INTERP_H

#include <linux/bpf.h>
#include <stdint.h>
#include <string.h>

struct interp {
	uint64_t r[11];
	uint8_t stack[512] __attribute__((aligned(8)));
	uint64_t steps;
	/* Called for BPF_CALL; returns r0. Must not rely on r1-r5 after. */
	uint64_t (*helper)(struct interp *in, int id);
	const char *error;
};

static uint64_t interp_mem_load(uint64_t addr, int size)
{
	switch (size) {
	case BPF_B: return *(uint8_t *)(uintptr_t)addr;
	case BPF_H: return *(uint16_t *)(uintptr_t)addr;
	case BPF_W: return *(uint32_t *)(uintptr_t)addr;
	default: return *(uint64_t *)(uintptr_t)addr;
	}
}

static void interp_mem_store(uint64_t addr, int size, uint64_t v)
{
	switch (size) {
	case BPF_B: *(uint8_t *)(uintptr_t)addr = (uint8_t)v; break;
	case BPF_H: *(uint16_t *)(uintptr_t)addr = (uint16_t)v; break;
	case BPF_W: *(uint32_t *)(uintptr_t)addr = (uint32_t)v; break;
	default: *(uint64_t *)(uintptr_t)addr = v; break;
	}
}

static uint64_t interp_alu(uint8_t op, uint64_t a, uint64_t b)
{
	switch (op) {
	case BPF_ADD: return a + b;
	case BPF_SUB: return a - b;
	case BPF_MUL: return a * b;
	case BPF_DIV: return b ? a / b : 0;
	case BPF_MOD: return b ? a % b : a;
	case BPF_OR: return a | b;
	case BPF_AND: return a & b;
	case BPF_XOR: return a ^ b;
	case BPF_LSH: return a << (b & 63);
	case BPF_RSH: return a >> (b & 63);
	case BPF_ARSH: return (uint64_t)((int64_t)a >> (b & 63));
	case BPF_MOV: return b;
	case BPF_NEG: return -a;
	default: return 0;
	}
}

static int interp_cond(uint8_t op, uint64_t a, uint64_t b)
{
	switch (op) {
	case BPF_JEQ: return a == b;
	case BPF_JNE: return a != b;
	case BPF_JGT: return a > b;
	case BPF_JGE: return a >= b;
	case BPF_JLT: return a < b;
	case BPF_JLE: return a <= b;
	case BPF_JSGT: return (int64_t)a > (int64_t)b;
	case BPF_JSGE: return (int64_t)a >= (int64_t)b;
	case BPF_JSLT: return (int64_t)a < (int64_t)b;
	case BPF_JSLE: return (int64_t)a <= (int64_t)b;
	case BPF_JSET: return (a & b) != 0;
	default: return 0;
	}
}

/* Runs from insn 0 with r1 = ctx; returns r0, or sets in->error. */
static uint64_t interp_run(struct interp *in, const struct bpf_insn *p,
			   uint32_t n, uint64_t ctx)
{
	memset(in->r, 0, sizeof(in->r));
	in->r[1] = ctx;
	in->r[10] = (uint64_t)(uintptr_t)(in->stack + sizeof(in->stack));
	in->error = NULL;
	for (uint32_t pc = 0; pc < n;) {
		const struct bpf_insn *i = &p[pc];
		uint8_t cls = BPF_CLASS(i->code);
		if (++in->steps > 1000000) {
			in->error = "too many steps";
			return 0;
		}
		switch (cls) {
		case BPF_ALU64: {
			uint64_t b = BPF_SRC(i->code) == BPF_X ?
				     in->r[i->src_reg] : (uint64_t)(int64_t)i->imm;
			in->r[i->dst_reg] = interp_alu(BPF_OP(i->code),
						       in->r[i->dst_reg], b);
			pc++;
			break;
		}
		case BPF_LD:
			in->r[i->dst_reg] = (uint32_t)i->imm |
					    ((uint64_t)(uint32_t)p[pc + 1].imm << 32);
			pc += 2;
			break;
		case BPF_LDX:
			in->r[i->dst_reg] = interp_mem_load(
				in->r[i->src_reg] + (uint64_t)(int64_t)i->off,
				BPF_SIZE(i->code));
			pc++;
			break;
		case BPF_STX:
			if (BPF_MODE(i->code) == BPF_ATOMIC) {
				uint64_t a = in->r[i->dst_reg] + (uint64_t)(int64_t)i->off;
				interp_mem_store(a, BPF_SIZE(i->code),
						 interp_mem_load(a, BPF_SIZE(i->code)) +
						 in->r[i->src_reg]);
			} else {
				interp_mem_store(in->r[i->dst_reg] + (uint64_t)(int64_t)i->off,
						 BPF_SIZE(i->code), in->r[i->src_reg]);
			}
			pc++;
			break;
		case BPF_ST:
			interp_mem_store(in->r[i->dst_reg] + (uint64_t)(int64_t)i->off,
					 BPF_SIZE(i->code), (uint64_t)(int64_t)i->imm);
			pc++;
			break;
		case BPF_JMP: {
			uint8_t op = BPF_OP(i->code);
			if (op == BPF_EXIT)
				return in->r[0];
			if (op == BPF_CALL) {
				in->r[0] = in->helper ? in->helper(in, i->imm) : 0;
				for (int k = 1; k <= 5; k++)
					in->r[k] = 0xdeadbeefdeadbeefull;
				pc++;
				break;
			}
			if (op == BPF_JA) {
				pc += 1 + i->off;
				break;
			}
			uint64_t b = BPF_SRC(i->code) == BPF_X ?
				     in->r[i->src_reg] : (uint64_t)(int64_t)i->imm;
			pc += interp_cond(op, in->r[i->dst_reg], b) ? 1 + i->off : 1;
			break;
		}
		default:
			in->error = "unsupported instruction";
			return 0;
		}
	}
	in->error = "fell off the end";
	return 0;
}

#endif
