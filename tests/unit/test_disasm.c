/* test_disasm.c - the disassembler prints the kernel's notation, one
 * instruction per line, 64-bit immediates taking two slots. */
#include <stdlib.h>

#include "codegen/asm.h"
#include "codegen/codegen.h"
#include "unit.h"

static char *dis(const struct bpf_insn *insns, uint32_t n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	bpf_disasm(f, insns, n);
	fclose(f);
	return buf;
}

#define ONE(insn, want, name) do { \
	struct bpf_insn i_[2] = { insn, bpf_raw(0, 0, 0, 0, 0) }; \
	char *s_ = dis(i_, 1); \
	CHECK_STR(s_, want, name); \
	free(s_); \
} while (0)

int main(void)
{
	ONE(BPF_MOV64_REG_(6, 1), "   0: (bf) r6 = r1\n", "mov reg");
	ONE(BPF_MOV64_IMM_(1, -3), "   0: (b7) r1 = -3\n", "mov imm");
	ONE(BPF_ALU64_IMM_(BPF_ADD, 1, -8), "   0: (07) r1 += -8\n", "add imm");
	ONE(BPF_ALU64_REG_(BPF_SUB, 2, 3), "   0: (1f) r2 -= r3\n", "sub reg");
	ONE(BPF_ALU64_IMM_(BPF_ARSH, 2, 56), "   0: (c7) r2 s>>= 56\n", "arsh");
	ONE(BPF_ALU64_IMM_(BPF_NEG, 4, 0), "   0: (87) r4 = -r4\n", "neg");
	ONE(BPF_LDX_MEM_(BPF_DW, 1, 10, -16),
	    "   0: (79) r1 = *(u64 *)(r10 -16)\n", "ldx");
	ONE(BPF_LDX_MEM_(BPF_B, 1, 6, 8),
	    "   0: (71) r1 = *(u8 *)(r6 +8)\n", "ldx byte");
	ONE(BPF_STX_MEM_(BPF_W, 10, 2, -4),
	    "   0: (63) *(u32 *)(r10 -4) = r2\n", "stx");
	ONE(BPF_ST_MEM_(BPF_DW, 10, -8, 0),
	    "   0: (7a) *(u64 *)(r10 -8) = 0\n", "st imm");
	ONE(BPF_ATOMIC_ADD_(BPF_DW, 0, 1, 0),
	    "   0: (db) lock *(u64 *)(r0 +0) += r1\n", "atomic add");
	ONE(BPF_JA_(-3), "   0: (05) goto pc-3\n", "ja");
	ONE(BPF_JMP_IMM_(BPF_JEQ, 0, 0, 5),
	    "   0: (15) if r0 == 0x0 goto pc+5\n", "jeq imm");
	ONE(BPF_JMP_REG_(BPF_JSGT, 1, 2, 1),
	    "   0: (6d) if r1 s> r2 goto pc+1\n", "jsgt reg");
	ONE(BPF_CALL_(BPF_FUNC_get_current_pid_tgid),
	    "   0: (85) call bpf_get_current_pid_tgid#14\n", "call name");
	ONE(BPF_CALL_(BPF_FUNC_ringbuf_reserve),
	    "   0: (85) call bpf_ringbuf_reserve#131\n", "call ringbuf");
	ONE(BPF_EXIT_(), "   0: (95) exit\n", "exit");

	struct bpf_insn prog[] = {
		bpf_raw(BPF_LD | BPF_DW | BPF_IMM, 1, BPF_PSEUDO_MAP_FD, 0, 3),
		bpf_raw(0, 0, 0, 0, 0),
		bpf_raw(BPF_LD | BPF_DW | BPF_IMM, 2, 0, 0, 0x89abcdef),
		bpf_raw(0, 0, 0, 0, 0x01234567),
		BPF_EXIT_(),
	};
	char *s = dis(prog, 5);
	CHECK_STR(s, "   0: (18) r1 = map[id:3]\n"
		     "   2: (18) r2 = 0x123456789abcdef\n"
		     "   4: (95) exit\n", "ld_imm64 takes two slots");
	free(s);
	return UNIT_DONE();
}
