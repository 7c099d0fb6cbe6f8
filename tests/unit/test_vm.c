/* test_vm.c - the VM (src/vm) instruction by instruction: every class
 * with its edge cases (shifts by the width or more, signed division and
 * modulo at INT_MIN / -1 and by zero, JMP32 with the high bits set,
 * sign extension, atomics, byte swaps), run in the interpreter and in
 * the JIT with the same expected result; then the programs the loader
 * must refuse, each with the reason it gives. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "vm/vm.h"
#include "vm_asm.h"

/* ---- the environment: helpers, maps, a buffer as context ---- */

static uint64_t h_args[6];
static unsigned h_calls;

/* #1: a weighted sum, so argument order matters */
static uint64_t h_sum(uint64_t a, uint64_t b, uint64_t c, uint64_t d,
		      uint64_t e)
{
	h_args[1] = a, h_args[2] = b, h_args[3] = c, h_args[4] = d,
	h_args[5] = e;
	h_calls++;
	return a + 2 * b + 3 * c + 4 * d + 5 * e;
}

/* #2: returns its first argument */
static uint64_t h_first(uint64_t a, uint64_t b, uint64_t c, uint64_t d,
			uint64_t e)
{
	h_calls++;
	return a;
}

/* #4: calls the callback (r1) with (100, x, 10 * x, 1000), as
 * bpf_for_each_map_elem calls its callback */
static uint64_t h_callback(uint64_t cb, uint64_t x, uint64_t c, uint64_t d,
			   uint64_t e)
{
	h_calls++;
	const struct vm_callback *f = (const void *)(uintptr_t)cb;
	return f->call(f, 100, x, 10 * x, 1000);
}

static const vm_helper_fn helpers[] = { [1] = h_sum, [2] = h_first,
					[4] = h_callback };
static const uint64_t maps[] = { 0x1111222233334444ull, 0xabcdull };
static uint8_t buf[64] __attribute__((aligned(8)));
static uint64_t map_values[2];

static struct vm_env env(void)
{
	map_values[0] = (uint64_t)(uintptr_t)buf;
	map_values[1] = 0;
	return (struct vm_env){ .helpers = helpers, .nhelpers = 5,
				.maps = maps, .nmaps = 2,
				.map_values = map_values };
}

static void buf_reset(void)
{
	for (unsigned i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(0x80 + i);
}

/* Runs the program (r1 = buf) in the interpreter and natively; both
 * must return `want`, leave the same buffer and make the same helper
 * calls. */
static void expect(const char *name, uint64_t want,
		   const struct bpf_insn *insns, uint32_t n)
{
	struct vm_env e = env();
	char err[256], label[160];
	struct vm_prog *p = vm_prog_load(insns, n, &e, err, sizeof(err));
	if (!p) {
		CHECK(p != NULL, name);
		printf("#   refused: %s\n", err);
		return;
	}
	uint64_t ri = ~0ull, rj = ~0ull;
	uint8_t after_interp[sizeof(buf)];
	buf_reset();
	h_calls = 0;
	int rci = vm_prog_interp(p, buf, &ri);
	unsigned calls = h_calls;
	memcpy(after_interp, buf, sizeof(buf));
	snprintf(label, sizeof(label), "interp: %s", name);
	CHECK(rci == 0 && ri == want, label);
	if (rci || ri != want)
		printf("#   got %#llx (rc %d), want %#llx\n",
		       (unsigned long long)ri, rci, (unsigned long long)want);

	snprintf(label, sizeof(label), "jit: %s", name);
	if (!vm_prog_native(p)) {
		CHECK(vm_prog_native(p) != NULL, label);
		printf("#   not compiled: %s\n", vm_prog_jit_error(p));
		vm_prog_free(p);
		return;
	}
	buf_reset();
	h_calls = 0;
	int rcj = vm_prog_run(p, buf, &rj);
	CHECK(rcj == 0 && rj == want && h_calls == calls &&
	      !memcmp(buf, after_interp, sizeof(buf)), label);
	if (rcj || rj != want)
		printf("#   got %#llx (rc %d), want %#llx\n",
		       (unsigned long long)rj, rcj, (unsigned long long)want);
	vm_prog_free(p);
}

#define PROG(...) ((const struct bpf_insn[]){ __VA_ARGS__ })
#define NINSNS(...) (uint32_t)(sizeof(PROG(__VA_ARGS__)) / sizeof(struct bpf_insn))
#define EXPECT(name, want, ...) \
	expect(name, want, PROG(__VA_ARGS__), NINSNS(__VA_ARGS__))

/* r0 = a; r1 = b; r0 op= r1 (both as 64-bit constants) */
#define BIN64(op, a, b) LD_IMM64(0, a), LD_IMM64(2, b), ALU64_REG(op, 0, 2), EXIT()
#define BIN32(op, a, b) LD_IMM64(0, a), LD_IMM64(2, b), ALU32_REG(op, 0, 2), EXIT()
#define SBIN64(op, a, b) LD_IMM64(0, a), LD_IMM64(2, b), SALU64_REG(op, 0, 2), EXIT()
#define SBIN32(op, a, b) LD_IMM64(0, a), LD_IMM64(2, b), SALU32_REG(op, 0, 2), EXIT()
#define IMM64(op, a, i) LD_IMM64(0, a), ALU64_IMM(op, 0, i), EXIT()
#define IMM32(op, a, i) LD_IMM64(0, a), ALU32_IMM(op, 0, i), EXIT()

#define MIN64 0x8000000000000000ull
#define HI 0xdeadbeef00000000ull

static void test_alu64(void)
{
	EXPECT("add64 wraps", 1, BIN64(BPF_ADD, ~0ull, 2));
	EXPECT("sub64", (uint64_t)-5, BIN64(BPF_SUB, 5, 10));
	EXPECT("mul64 keeps the low 64 bits", 0xfffffffe00000001ull,
	       BIN64(BPF_MUL, 0xffffffffull, 0xffffffffull));
	EXPECT("mul64 imm negative", (uint64_t)-21, IMM64(BPF_MUL, 7, -3));
	EXPECT("div64", 3, BIN64(BPF_DIV, 10, 3));
	EXPECT("div64 by 0 is 0", 0, BIN64(BPF_DIV, 10, 0));
	EXPECT("div64 is unsigned", 0x7fffffffffffffffull,
	       BIN64(BPF_DIV, ~0ull, 2));
	EXPECT("div64 imm -1 divides by 2^64-1", 1,
	       IMM64(BPF_DIV, ~0ull, -1));
	EXPECT("mod64", 1, BIN64(BPF_MOD, 10, 3));
	EXPECT("mod64 by 0 keeps dst", 10 | HI, BIN64(BPF_MOD, 10 | HI, 0));
	EXPECT("sdiv64", (uint64_t)-3, SBIN64(BPF_DIV, -7, 2));
	EXPECT("sdiv64 INT_MIN / -1", MIN64, SBIN64(BPF_DIV, MIN64, -1));
	EXPECT("sdiv64 imm -1", MIN64, LD_IMM64(0, MIN64),
	       SALU64_IMM(BPF_DIV, 0, -1), EXIT());
	EXPECT("sdiv64 by 0 is 0", 0, SBIN64(BPF_DIV, -7, 0));
	EXPECT("sdiv64 imm", (uint64_t)-2, LD_IMM64(0, 7),
	       SALU64_IMM(BPF_DIV, 0, -3), EXIT());
	EXPECT("smod64 has the dividend's sign", (uint64_t)-1,
	       SBIN64(BPF_MOD, -7, 2));
	EXPECT("smod64 negative divisor", 1, SBIN64(BPF_MOD, 7, -2));
	EXPECT("smod64 INT_MIN % -1", 0, SBIN64(BPF_MOD, MIN64, -1));
	EXPECT("smod64 imm -1", 0, LD_IMM64(0, 12345),
	       SALU64_IMM(BPF_MOD, 0, -1), EXIT());
	EXPECT("smod64 by 0 keeps dst", (uint64_t)-7, SBIN64(BPF_MOD, -7, 0));
	EXPECT("or64 imm sign-extends", ~0ull ^ 0xff ^ 0x0f,
	       IMM64(BPF_OR, 0x0f, (int32_t)0xffffff00u));
	EXPECT("and64 imm -1", HI | 5, IMM64(BPF_AND, HI | 5, -1));
	EXPECT("xor64", 0xff00, BIN64(BPF_XOR, 0xffff, 0xff));
	EXPECT("lsh64", 0x100, BIN64(BPF_LSH, 1, 8));
	EXPECT("lsh64 by 64 is by 0", 3, BIN64(BPF_LSH, 3, 64));
	EXPECT("lsh64 by 65 is by 1", 6, BIN64(BPF_LSH, 3, 65));
	EXPECT("lsh64 imm 63", MIN64, IMM64(BPF_LSH, 1, 63));
	EXPECT("rsh64 is logical", 1, BIN64(BPF_RSH, MIN64, 63));
	EXPECT("rsh64 by 127 is by 63", 1, BIN64(BPF_RSH, MIN64, 127));
	EXPECT("arsh64 is arithmetic", ~0ull, BIN64(BPF_ARSH, MIN64, 63));
	EXPECT("arsh64 imm", (uint64_t)-2, IMM64(BPF_ARSH, -8, 2));
	EXPECT("mov64 imm sign-extends", ~0ull, MOV64_IMM(0, -1), EXIT());
	EXPECT("mov64 reg", 42, MOV64_IMM(3, 42), MOV64_REG(0, 3), EXIT());
	EXPECT("neg64", (uint64_t)-5, MOV64_IMM(0, 5), NEG64(0), EXIT());
	EXPECT("neg64 INT_MIN", MIN64, LD_IMM64(0, MIN64), NEG64(0), EXIT());
}

static void test_alu32(void)
{
	EXPECT("add32 wraps and zero-extends", 1,
	       BIN32(BPF_ADD, HI | 0xffffffff, 2));
	EXPECT("sub32", 0xfffffffb, BIN32(BPF_SUB, 5, 10));
	EXPECT("mul32", 0x00000001, BIN32(BPF_MUL, 0xffffffff, 0xffffffff));
	EXPECT("div32 ignores high bits", 5, BIN32(BPF_DIV, HI | 10, 2 | HI));
	EXPECT("div32 by 0 is 0", 0, BIN32(BPF_DIV, HI | 10, HI));
	EXPECT("mod32 by 0 keeps dst, zero-extended", 10,
	       BIN32(BPF_MOD, HI | 10, HI));
	EXPECT("mod32 imm", 2, IMM32(BPF_MOD, HI | 17, 5));
	EXPECT("div32 imm -1 is by 2^32-1", 1, IMM32(BPF_DIV, 0xffffffff, -1));
	EXPECT("sdiv32", 0xfffffffd, SBIN32(BPF_DIV, (uint32_t)-7, 2));
	EXPECT("sdiv32 INT_MIN / -1", 0x80000000,
	       SBIN32(BPF_DIV, 0x80000000, 0xffffffff));
	EXPECT("sdiv32 imm -1", 0x80000000, LD_IMM64(0, HI | 0x80000000),
	       SALU32_IMM(BPF_DIV, 0, -1), EXIT());
	EXPECT("smod32 INT_MIN % -1", 0,
	       SBIN32(BPF_MOD, 0x80000000, 0xffffffff));
	EXPECT("smod32 by 0 keeps dst, zero-extended", 0xfffffff9,
	       SBIN32(BPF_MOD, HI | 0xfffffff9, 0));
	EXPECT("smod32", 0xffffffff, SBIN32(BPF_MOD, (uint32_t)-7, 2));
	EXPECT("sdiv32 by 0 is 0", 0, SBIN32(BPF_DIV, HI | 7, 0));
	EXPECT("lsh32 by 32 is by 0", 3, BIN32(BPF_LSH, HI | 3, 32));
	EXPECT("lsh32 drops bit 31 out", 0, IMM32(BPF_LSH, 0x80000000, 1));
	EXPECT("rsh32 by 33 is by 1", 0x7fffffff, BIN32(BPF_RSH, ~0ull, 33));
	EXPECT("arsh32", 0xffffffff, IMM32(BPF_ARSH, 0x80000000, 31));
	EXPECT("arsh32 by reg 63 is by 31", 0xffffffff,
	       BIN32(BPF_ARSH, 0x80000000, 63));
	EXPECT("mov32 imm -1 zero-extends", 0xffffffff, MOV32_IMM(0, -1), EXIT());
	EXPECT("mov32 reg drops the high bits", 0x12345678,
	       LD_IMM64(1, HI | 0x12345678), MOV32_REG(0, 1), EXIT());
	EXPECT("or32 imm", 0xffffff0f, IMM32(BPF_OR, HI | 0x0f,
					     (int32_t)0xffffff00u));
	EXPECT("and32", 0x4, BIN32(BPF_AND, HI | 0x6, 0xc));
	EXPECT("xor32 imm", 0xfffffffe, IMM32(BPF_XOR, HI | 1, -1));
	EXPECT("neg32", 0xfffffffb, LD_IMM64(0, HI | 5), NEG32(0), EXIT());
	EXPECT("movsx64 8", (uint64_t)-128, LD_IMM64(1, HI | 0x80),
	       MOVSX64(0, 1, 8), EXIT());
	EXPECT("movsx64 16", (uint64_t)-2, LD_IMM64(1, HI | 0xfffe),
	       MOVSX64(0, 1, 16), EXIT());
	EXPECT("movsx64 32", (uint64_t)-3, LD_IMM64(1, HI | 0xfffffffd),
	       MOVSX64(0, 1, 32), EXIT());
	EXPECT("movsx64 32 positive", 0x7fffffff, LD_IMM64(1, HI | 0x7fffffff),
	       MOVSX64(0, 1, 32), EXIT());
	EXPECT("movsx32 8 zero-extends", 0xffffff80, LD_IMM64(1, HI | 0x80),
	       MOVSX32(0, 1, 8), EXIT());
	EXPECT("movsx32 16", 0xffff8000, LD_IMM64(1, 0x8000),
	       MOVSX32(0, 1, 16), EXIT());
}

static void test_endian(void)
{
	const uint64_t v = 0x0102030405060708ull;
	EXPECT("le16 truncates", 0x0708, LD_IMM64(0, v),
	       ENDIAN(BPF_TO_LE, 0, 16), EXIT());
	EXPECT("le32 truncates", 0x05060708, LD_IMM64(0, v),
	       ENDIAN(BPF_TO_LE, 0, 32), EXIT());
	EXPECT("le64 is a no-op", v, LD_IMM64(0, v), ENDIAN(BPF_TO_LE, 0, 64),
	       EXIT());
	EXPECT("be16", 0x0807, LD_IMM64(0, v), ENDIAN(BPF_TO_BE, 0, 16), EXIT());
	EXPECT("be32", 0x08070605, LD_IMM64(0, v), ENDIAN(BPF_TO_BE, 0, 32),
	       EXIT());
	EXPECT("be64", 0x0807060504030201ull, LD_IMM64(0, v),
	       ENDIAN(BPF_TO_BE, 0, 64), EXIT());
	EXPECT("bswap16", 0x0807, LD_IMM64(0, v), BSWAP(0, 16), EXIT());
	EXPECT("bswap32", 0x08070605, LD_IMM64(0, v), BSWAP(0, 32), EXIT());
	EXPECT("bswap64", 0x0807060504030201ull, LD_IMM64(0, v), BSWAP(0, 64),
	       EXIT());
	EXPECT("be16 of r6", 0x3412, LD_IMM64(6, 0x1234), ENDIAN(BPF_TO_BE, 6, 16),
	       MOV64_REG(0, 6), EXIT());
}

/* r0 = 1 if the jump is taken, else 0 */
#define TAKEN(j) MOV64_IMM(0, 1), j, MOV64_IMM(0, 0), EXIT()
#define JR(op, a, b) LD_IMM64(1, a), LD_IMM64(2, b), TAKEN(JMP_REG(op, 1, 2, 1))
#define JR32(op, a, b) LD_IMM64(1, a), LD_IMM64(2, b), TAKEN(JMP32_REG(op, 1, 2, 1))
#define JI(op, a, i) LD_IMM64(1, a), TAKEN(JMP_IMM(op, 1, i, 1))
#define JI32(op, a, i) LD_IMM64(1, a), TAKEN(JMP32_IMM(op, 1, i, 1))

static void test_jumps(void)
{
	EXPECT("jeq", 1, JR(BPF_JEQ, 5, 5));
	EXPECT("jeq not", 0, JR(BPF_JEQ, HI | 5, 5));
	EXPECT("jeq32 ignores the high bits", 1, JR32(BPF_JEQ, HI | 5, 5));
	EXPECT("jne32", 0, JI32(BPF_JNE, HI | 5, 5));
	EXPECT("jgt is unsigned", 1, JR(BPF_JGT, ~0ull, 1));
	EXPECT("jgt imm -1 is 2^64-1", 0, JI(BPF_JGT, 0xffffffffull, -1));
	EXPECT("jgt32 imm -1 is 2^32-1", 0, JI32(BPF_JGT, 0xffffffffull, -1));
	EXPECT("jge", 1, JR(BPF_JGE, 7, 7));
	EXPECT("jlt", 1, JI(BPF_JLT, 6, 7));
	EXPECT("jle", 0, JI(BPF_JLE, 8, 7));
	EXPECT("jsgt is signed", 0, JR(BPF_JSGT, ~0ull, 1));
	EXPECT("jsgt imm", 1, JI(BPF_JSGT, 0, -1));
	EXPECT("jsge", 1, JI(BPF_JSGE, (uint64_t)-3, -3));
	EXPECT("jslt", 1, JR(BPF_JSLT, MIN64, 0));
	EXPECT("jsle", 0, JI(BPF_JSLE, 1, 0));
	EXPECT("jslt32 looks at bit 31", 1, JI32(BPF_JSLT, 0x80000000, 0));
	EXPECT("jslt32 ignores bit 63", 0, JI32(BPF_JSLT, MIN64 | 1, 0));
	EXPECT("jsgt32 imm -1", 1, JI32(BPF_JSGT, HI, -1));
	EXPECT("jsle32 reg", 1, JR32(BPF_JSLE, 0xffffffff, 0));
	EXPECT("jset", 1, JR(BPF_JSET, HI, MIN64));
	EXPECT("jset32 ignores the high bits", 0, JR32(BPF_JSET, HI, ~0ull));
	EXPECT("jset imm sign-extends", 1, JI(BPF_JSET, MIN64, -1));
	EXPECT("jset32 imm", 1, JI32(BPF_JSET, 0x80000000, (int32_t)0x80000000u));
	EXPECT("ja", 7, MOV64_IMM(0, 7), JA(1), MOV64_IMM(0, 8), EXIT());
	EXPECT("gotol (jmp32 ja)", 7, MOV64_IMM(0, 7), JA32(1), MOV64_IMM(0, 8),
	       EXIT());
	EXPECT("jump over ld_imm64", 3, MOV64_IMM(0, 3),
	       JMP_IMM(BPF_JEQ, 0, 3, 2), LD_IMM64(0, 4), EXIT());
	/* sum 1..100 in a loop */
	EXPECT("loop", 5050, MOV64_IMM(0, 0), MOV64_IMM(1, 100),
	       ALU64_REG(BPF_ADD, 0, 1), ALU64_IMM(BPF_SUB, 1, 1),
	       JMP_IMM(BPF_JNE, 1, 0, -3), EXIT());
	EXPECT("loop on jmp32 with a backward gotol", 10, MOV64_IMM(0, 0),
	       ALU64_IMM(BPF_ADD, 0, 1), JMP32_IMM(BPF_JGE, 0, 10, 1),
	       JA32(-3), EXIT());
}

static void test_budget(void)
{
	const struct bpf_insn spin[] = { MOV64_IMM(0, 0), JA(-1), EXIT() };
	const struct bpf_insn loop[] = {
		MOV64_IMM(0, 0), ALU64_IMM(BPF_ADD, 0, 1),
		JMP_IMM(BPF_JLT, 0, 1000, -2), EXIT(),
	};
	struct vm_env e = env();
	char err[128];
	uint64_t r = 1;
	struct vm_prog *p = vm_prog_load(spin, 3, &e, err, sizeof(err));
	CHECK(p && vm_prog_interp(p, buf, &r) == -E2BIG && r == 0,
	      "budget: interp stops an endless loop");
	r = 1;
	CHECK(p && vm_prog_native(p) && vm_prog_run(p, buf, &r) == -E2BIG &&
	      r == 0, "budget: jit stops an endless loop");
	vm_prog_free(p);

	/* 999 back edges of span 2: 1998 charged */
	for (int k = 0; k < 2; k++) {
		e.budget = k ? 1997 : 1998;
		e.no_jit = false;
		p = vm_prog_load(loop, 4, &e, err, sizeof(err));
		int want = k ? -E2BIG : 0;
		CHECK(p && vm_prog_interp(p, buf, &r) == want &&
		      r == (k ? 0 : 1000),
		      k ? "budget: interp fails one short" :
			  "budget: interp runs with exactly enough");
		CHECK(p && vm_prog_native(p) && vm_prog_run(p, buf, &r) == want &&
		      r == (k ? 0 : 1000),
		      k ? "budget: jit fails one short" :
			  "budget: jit runs with exactly enough");
		vm_prog_free(p);
	}
	e.budget = 0;
	e.no_jit = true;
	p = vm_prog_load(loop, 4, &e, err, sizeof(err));
	CHECK(p && !vm_prog_native(p) && vm_prog_jit_error(p) &&
	      !strcmp(vm_prog_jit_error(p), "disabled") &&
	      vm_prog_run(p, buf, &r) == 0 && r == 1000,
	      "no_jit: interpreted, and says why");
	vm_prog_free(p);
}

static void test_memory(void)
{
	/* r1 = buf = 0x80 0x81 0x82 ... */
	EXPECT("ldx b", 0x83, LDX(BPF_B, 0, 1, 3), EXIT());
	EXPECT("ldx h unaligned", 0x8281, LDX(BPF_H, 0, 1, 1), EXIT());
	EXPECT("ldx w", 0x87868584, LDX(BPF_W, 0, 1, 4), EXIT());
	EXPECT("ldx dw", 0x8f8e8d8c8b8a8988ull, LDX(BPF_DW, 0, 1, 8), EXIT());
	EXPECT("ldx negative offset", 0x84, MOV64_REG(2, 1),
	       ALU64_IMM(BPF_ADD, 2, 8), LDX(BPF_B, 0, 2, -4), EXIT());
	EXPECT("ldxsx b", (uint64_t)(int8_t)0x83, LDXSX(BPF_B, 0, 1, 3), EXIT());
	EXPECT("ldxsx h", (uint64_t)(int16_t)0x8382, LDXSX(BPF_H, 0, 1, 2), EXIT());
	EXPECT("ldxsx w", (uint64_t)(int32_t)0x87868584, LDXSX(BPF_W, 0, 1, 4),
	       EXIT());
	EXPECT("stx b then ldx dw", 0x8f8e8d8c8b8a8942ull, MOV64_IMM(2, 0x42),
	       STX(BPF_B, 1, 2, 8), LDX(BPF_DW, 0, 1, 8), EXIT());
	EXPECT("stx h", 0x8f8e8d8c8b8a1234ull, MOV64_IMM(2, 0x1234),
	       STX(BPF_H, 1, 2, 8), LDX(BPF_DW, 0, 1, 8), EXIT());
	EXPECT("stx w of a 64-bit value", 0x8f8e8d8c55667788ull,
	       LD_IMM64(2, 0x1122334455667788ull), STX(BPF_W, 1, 2, 8),
	       LDX(BPF_DW, 0, 1, 8), EXIT());
	EXPECT("stx dw", 0x1122334455667788ull,
	       LD_IMM64(2, 0x1122334455667788ull), STX(BPF_DW, 1, 2, 8),
	       LDX(BPF_DW, 0, 1, 8), EXIT());
	EXPECT("st b", 0x8f8e8d8c8b8a89ffull, ST(BPF_B, 1, 8, -1),
	       LDX(BPF_DW, 0, 1, 8), EXIT());
	EXPECT("st h", 0x8f8e8d8c8b8afffeull, ST(BPF_H, 1, 8, -2),
	       LDX(BPF_DW, 0, 1, 8), EXIT());
	EXPECT("st w", 0x8f8e8d8cfffffffdull, ST(BPF_W, 1, 8, -3),
	       LDX(BPF_DW, 0, 1, 8), EXIT());
	EXPECT("st dw sign-extends", (uint64_t)-4, ST(BPF_DW, 1, 8, -4),
	       LDX(BPF_DW, 0, 1, 8), EXIT());
	EXPECT("stx from sil (r2) as a byte", 0x8f8e8d8c8b8a89abull,
	       MOV64_IMM(2, 0x1ab), STX(BPF_B, 1, 2, 8), LDX(BPF_DW, 0, 1, 8),
	       EXIT());
	EXPECT("stack", 0x123456789ull, LD_IMM64(2, 0x123456789ull),
	       STX(BPF_DW, 10, 2, -512), LDX(BPF_DW, 0, 10, -512), EXIT());
	EXPECT("stack through a copy of r10", 0x99, MOV64_REG(3, 10),
	       ST(BPF_B, 3, -1, 0x99), LDX(BPF_B, 0, 10, -1), EXIT());
	EXPECT("stack bytes kept apart", 0x0201, ST(BPF_B, 10, -2, 1),
	       ST(BPF_B, 10, -1, 2), LDX(BPF_H, 0, 10, -2), EXIT());
	EXPECT("stores through every register", 0x0302010,
	       MOV64_REG(6, 1), MOV64_REG(7, 1), MOV64_REG(8, 1),
	       MOV64_REG(9, 1), MOV64_IMM(0, 0x10), STX(BPF_B, 6, 0, 16),
	       MOV64_IMM(0, 0x20), STX(BPF_B, 7, 0, 17),
	       MOV64_IMM(0, 0x30), STX(BPF_B, 8, 0, 18),
	       ST(BPF_B, 9, 19, 0), LDX(BPF_W, 0, 9, 16), EXIT());
}

static void test_atomics(void)
{
	/* buf + 8 holds 0x8f8e8d8c8b8a8988 */
	const uint64_t q = 0x8f8e8d8c8b8a8988ull;
	EXPECT("atomic add dw", q + 5, MOV64_IMM(2, 5),
	       ATOMIC(BPF_DW, BPF_ADD, 1, 2, 8), LDX(BPF_DW, 0, 1, 8), EXIT());
	EXPECT("atomic add w wraps in 32 bits", 0x8f8e8d8c0b8a8988ull,
	       MOV64_IMM(2, 0), ALU64_IMM(BPF_SUB, 2, 0), LD_IMM64(2, 0x80000000),
	       ATOMIC(BPF_W, BPF_ADD, 1, 2, 8), LDX(BPF_DW, 0, 1, 8), EXIT());
	EXPECT("atomic or", q | 0x7000, MOV64_IMM(2, 0x7000),
	       ATOMIC(BPF_DW, BPF_OR, 1, 2, 8), LDX(BPF_DW, 0, 1, 8), EXIT());
	EXPECT("atomic and w", 0x8f8e8d8c00000988ull, MOV64_IMM(2, 0xfff),
	       ATOMIC(BPF_W, BPF_AND, 1, 2, 8), LDX(BPF_DW, 0, 1, 8), EXIT());
	EXPECT("atomic xor", q ^ ~0ull, MOV64_IMM(2, -1),
	       ATOMIC(BPF_DW, BPF_XOR, 1, 2, 8), LDX(BPF_DW, 0, 1, 8), EXIT());
	EXPECT("fetch add returns the old value", q, MOV64_IMM(2, 1),
	       ATOMIC(BPF_DW, BPF_ADD | BPF_FETCH, 1, 2, 8), MOV64_REG(0, 2),
	       EXIT());
	EXPECT("fetch add stores the sum", q + 1, MOV64_IMM(2, 1),
	       ATOMIC(BPF_DW, BPF_ADD | BPF_FETCH, 1, 2, 8),
	       LDX(BPF_DW, 0, 1, 8), EXIT());
	EXPECT("fetch add w zero-extends the old value", 0x8b8a8988,
	       LD_IMM64(2, HI | 1), ATOMIC(BPF_W, BPF_ADD | BPF_FETCH, 1, 2, 8),
	       MOV64_REG(0, 2), EXIT());
	EXPECT("fetch or", q, MOV64_IMM(2, 1),
	       ATOMIC(BPF_DW, BPF_OR | BPF_FETCH, 1, 2, 8), MOV64_REG(0, 2),
	       EXIT());
	EXPECT("fetch and stores", 0x8f8e8d8c8b8a8900ull, LD_IMM64(2, ~0xffull),
	       ATOMIC(BPF_DW, BPF_AND | BPF_FETCH, 1, 2, 8),
	       LDX(BPF_DW, 0, 1, 8), EXIT());
	EXPECT("fetch xor w", 0x8b8a8988, MOV64_IMM(2, -1),
	       ATOMIC(BPF_W, BPF_XOR | BPF_FETCH, 1, 2, 8), MOV64_REG(0, 2),
	       EXIT());
	EXPECT("fetch xor w stores", 0x8f8e8d8c74757677ull, MOV64_IMM(2, -1),
	       ATOMIC(BPF_W, BPF_XOR | BPF_FETCH, 1, 2, 8),
	       LDX(BPF_DW, 0, 1, 8), EXIT());
	EXPECT("fetch and with r0 as source", 0x8b8a8988,
	       LD_IMM64(0, 0xffff0000), ATOMIC(BPF_W, BPF_AND | BPF_FETCH, 1, 0, 8),
	       EXIT());
	EXPECT("fetch or through r0 as base", 0x83828180,
	       MOV64_REG(0, 1), MOV64_IMM(3, 1),
	       ATOMIC(BPF_W, BPF_OR | BPF_FETCH, 0, 3, 0), MOV64_REG(0, 3), EXIT());
	EXPECT("xchg", q, MOV64_IMM(2, 9), ATOMIC(BPF_DW, BPF_XCHG, 1, 2, 8),
	       MOV64_REG(0, 2), EXIT());
	EXPECT("xchg stores", 9, MOV64_IMM(2, 9),
	       ATOMIC(BPF_DW, BPF_XCHG, 1, 2, 8), LDX(BPF_DW, 0, 1, 8), EXIT());
	EXPECT("xchg w", 0x8f8e8d8c00000009ull, LD_IMM64(2, HI | 9),
	       ATOMIC(BPF_W, BPF_XCHG, 1, 2, 8), LDX(BPF_DW, 0, 1, 8), EXIT());
	EXPECT("cmpxchg hit returns the old value", q, LD_IMM64(0, q),
	       MOV64_IMM(2, 3), ATOMIC(BPF_DW, BPF_CMPXCHG, 1, 2, 8), EXIT());
	EXPECT("cmpxchg hit stores", 3, LD_IMM64(0, q), MOV64_IMM(2, 3),
	       ATOMIC(BPF_DW, BPF_CMPXCHG, 1, 2, 8), LDX(BPF_DW, 0, 1, 8), EXIT());
	EXPECT("cmpxchg miss loads the old value", q, MOV64_IMM(0, 1),
	       MOV64_IMM(2, 3), ATOMIC(BPF_DW, BPF_CMPXCHG, 1, 2, 8), EXIT());
	EXPECT("cmpxchg miss stores nothing", q, MOV64_IMM(0, 1),
	       MOV64_IMM(2, 3), ATOMIC(BPF_DW, BPF_CMPXCHG, 1, 2, 8),
	       LDX(BPF_DW, 0, 1, 8), EXIT());
	EXPECT("cmpxchg w compares 32 bits, zero-extends r0", 0x8b8a8988,
	       LD_IMM64(0, HI | 0x8b8a8988), MOV64_IMM(2, 3),
	       ATOMIC(BPF_W, BPF_CMPXCHG, 1, 2, 8), EXIT());
	EXPECT("cmpxchg w hit stores", 0x8f8e8d8c00000003ull,
	       LD_IMM64(0, HI | 0x8b8a8988), MOV64_IMM(2, 3),
	       ATOMIC(BPF_W, BPF_CMPXCHG, 1, 2, 8), LDX(BPF_DW, 0, 1, 8), EXIT());
	EXPECT("atomic on the stack", 12, ST(BPF_DW, 10, -8, 5),
	       MOV64_IMM(1, 7), ATOMIC(BPF_DW, BPF_ADD, 10, 1, -8),
	       LDX(BPF_DW, 0, 10, -8), EXIT());
}

static void test_calls(void)
{
	EXPECT("call: arguments in order", 1 + 4 + 9 + 16 + 25,
	       MOV64_IMM(1, 1), MOV64_IMM(2, 2), MOV64_IMM(3, 3),
	       MOV64_IMM(4, 4), MOV64_IMM(5, 5), CALL(1), EXIT());
	EXPECT("call: r6-r9 survive", 1 + 6 + 7 + 8 + 9,
	       MOV64_IMM(6, 6), MOV64_IMM(7, 7), MOV64_IMM(8, 8), MOV64_IMM(9, 9),
	       MOV64_IMM(1, 1), CALL(2), ALU64_REG(BPF_ADD, 0, 6),
	       ALU64_REG(BPF_ADD, 0, 7), ALU64_REG(BPF_ADD, 0, 8),
	       ALU64_REG(BPF_ADD, 0, 9), EXIT());
	EXPECT("call: the stack survives", 77, ST(BPF_DW, 10, -8, 77),
	       MOV64_IMM(1, 0), CALL(2), LDX(BPF_DW, 0, 10, -8), EXIT());
	EXPECT("call: a stack address as argument", 0x55, ST(BPF_DW, 10, -16, 0x55),
	       MOV64_REG(1, 10), ALU64_IMM(BPF_ADD, 1, -16), CALL(2),
	       LDX(BPF_DW, 0, 0, 0), EXIT());
	EXPECT("map fd", maps[0], LD_MAP(0, 0), EXIT());
	EXPECT("map fd 1", maps[1], LD_MAP(1, 1), MOV64_REG(0, 1), EXIT());
	EXPECT("map value", 0x8b8a8988, LD_MAP_VALUE(2, 0, 8),
	       LDX(BPF_W, 0, 2, 0), EXIT());
	EXPECT("ctx is r1", (uint64_t)(uintptr_t)buf, MOV64_REG(0, 1), EXIT());
	/* r10 points at the top of a 512-byte stack, 8-byte aligned */
	EXPECT("r10 is aligned", 0, MOV64_REG(0, 10), ALU64_IMM(BPF_AND, 0, 7),
	       EXIT());
}

/* A callback: LD_IMM64 of a BPF_PSEUDO_FUNC gives the address of the
 * program's struct vm_callback, which a helper calls with r1..r4; it
 * runs (in the interpreter) on a stack of its own. */
static void test_callbacks(void)
{
	EXPECT("callback: r1..r4 and its own stack", 100 + 5 + 50 + 1000,
	       LD_IMM64_RAW(1, BPF_PSEUDO_FUNC, 4), MOV64_IMM(2, 5), CALL(4),
	       EXIT(),
	       STX(BPF_DW, 10, 2, -8), LDX(BPF_DW, 0, 10, -8),
	       ALU64_REG(BPF_ADD, 0, 1), ALU64_REG(BPF_ADD, 0, 3),
	       ALU64_REG(BPF_ADD, 0, 4), EXIT());
	/* the caller's stack, through a pointer (cg_formap.c's context) */
	EXPECT("callback: the caller's stack", 1055 + 42,
	       ST(BPF_DW, 10, -8, 42), LD_IMM64_RAW(1, BPF_PSEUDO_FUNC, 5),
	       MOV64_REG(2, 10), ALU64_IMM(BPF_ADD, 2, -8), CALL(4), EXIT(),
	       LDX(BPF_DW, 0, 2, 0), ALU64_REG(BPF_ADD, 0, 2),
	       ALU64_REG(BPF_SUB, 0, 2), ALU64_REG(BPF_ADD, 0, 4),
	       ALU64_IMM(BPF_ADD, 0, 55), EXIT());
}

/* ---- the JIT's code: memory, size, threads ---- */

/* The permissions of the mapping holding addr, from /proc/self/maps. */
static void perms_of(const void *addr, char perms[5])
{
	strcpy(perms, "?");
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	uintptr_t a = (uintptr_t)addr;
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		char p[5];
		if (sscanf(line, "%lx-%lx %4s", &lo, &hi, p) == 3 &&
		    a >= lo && a < hi) {
			memcpy(perms, p, 5);
			break;
		}
	}
	if (f)
		fclose(f);
}

struct thread_arg {
	const struct vm_prog *p;
	bool native;
	int fails;
};

static void *thread_run(void *arg)
{
	struct thread_arg *t = arg;
	for (int i = 0; i < 100000; i++) {
		uint64_t r;
		int rc = t->native ? vm_prog_run(t->p, buf, &r) :
				     vm_prog_interp(t->p, buf, &r);
		t->fails += rc != 0 || r != 7;
	}
	return NULL;
}

static void test_native(void)
{
	const struct bpf_insn prog[] = {
		MOV64_IMM(2, 1), ATOMIC(BPF_DW, BPF_ADD, 1, 2, 0),
		ST(BPF_DW, 10, -8, 7), LDX(BPF_DW, 0, 10, -8), EXIT(),
	};
	struct vm_env e = env();
	struct vm_prog *p = vm_prog_load(prog, 5, &e, NULL, 0);
	char perms[5];
	perms_of(p ? (const void *)vm_prog_native(p) : NULL, perms);
	CHECK(p && !strcmp(perms, "r-xp"),
	      "jit: the code is mapped read+execute, not writable");
	if (strcmp(perms, "r-xp"))
		printf("#   mapped %s\n", perms);
	CHECK(p && vm_prog_native_size(p) > 0 && !vm_prog_jit_error(p),
	      "jit: size known, no error");

	/* four threads at once, in each engine: the counter is exact */
	for (int native = 0; native < 2 && p; native++) {
		pthread_t th[4];
		struct thread_arg ta[4];
		uint64_t zero = 0;
		memcpy(buf, &zero, 8);
		for (int k = 0; k < 4; k++) {
			ta[k] = (struct thread_arg){ p, native, 0 };
			pthread_create(&th[k], NULL, thread_run, &ta[k]);
		}
		int fails = 0;
		for (int k = 0; k < 4; k++) {
			pthread_join(th[k], NULL);
			fails += ta[k].fails;
		}
		uint64_t count;
		memcpy(&count, buf, 8);
		CHECK(fails == 0 && count == 400000, native ?
		      "jit: 4 threads x 100000 runs, atomic count exact" :
		      "interp: 4 threads x 100000 runs, atomic count exact");
	}
	vm_prog_free(p);

	/* jumps over more than a short jump reaches, both ways */
	static struct bpf_insn big[600];
	uint32_t n = 0;
	big[n++] = MOV64_IMM(0, 0);
	big[n++] = MOV64_IMM(3, 3);
	big[n++] = JMP_IMM(BPF_JEQ, 3, 3, 200);      /* over 200 adds */
	for (int k = 0; k < 200; k++)
		big[n++] = ALU64_IMM(BPF_ADD, 0, 1000);
	big[n++] = MOV64_IMM(2, 5);                   /* loop 5 times */
	uint32_t top = n;
	for (int k = 0; k < 150; k++)
		big[n++] = ALU64_IMM(BPF_ADD, 0, 1);
	big[n++] = ALU64_IMM(BPF_SUB, 2, 1);
	big[n] = JMP_IMM(BPF_JNE, 2, 0, (int16_t)((int)top - (int)n - 1));
	n++;
	big[n++] = EXIT();
	expect("long jumps forward and back", 750, big, n);
}

/* ---- what the loader refuses ---- */

static void refuse(const char *name, const char *reason,
		   const struct bpf_insn *insns, uint32_t n)
{
	struct vm_env e = env();
	e.map_values = NULL;
	char err[256] = "";
	errno = 0;
	struct vm_prog *p = vm_prog_load(insns, n, &e, err, sizeof(err));
	CHECK(!p && errno == EINVAL && strstr(err, reason), name);
	if (p || !strstr(err, reason))
		printf("#   error: [%s], want [%s]\n", err, reason);
	vm_prog_free(p);
}

#define REFUSE(name, reason, ...) \
	refuse(name, reason, PROG(__VA_ARGS__), NINSNS(__VA_ARGS__))

static void test_refused(void)
{
	refuse("empty program", "1 to", NULL, 0);
	REFUSE("unknown opcode", "insn 1 (code 0xe7): unknown opcode",
	       MOV64_IMM(0, 0), vi_raw(0xe7, 0, 0, 0, 0), EXIT());
	REFUSE("legacy packet load", "legacy packet loads", MOV64_IMM(0, 0),
	       vi_raw(BPF_LD | BPF_ABS | BPF_W, 0, 0, 0, 0), EXIT());
	REFUSE("jump past the end", "insn 1 (code 0x05): jump to 5",
	       MOV64_IMM(0, 0), JA(3), EXIT());
	REFUSE("jump before the start", "jump to -1", MOV64_IMM(0, 0), JA(-3),
	       EXIT());
	REFUSE("jump into ld_imm64", "middle of ld_imm64", MOV64_IMM(0, 0),
	       JA(1), LD_IMM64(0, 1), EXIT());
	REFUSE("ld_imm64 cut off", "without its second half", MOV64_IMM(0, 0),
	       vi_raw(BPF_LD | BPF_DW | BPF_IMM, 0, 0, 0, 0));
	REFUSE("bad second half", "second half", vi_raw(BPF_LD | BPF_DW | BPF_IMM,
						      0, 0, 0, 0),
	       vi_raw(0, 1, 0, 0, 0), EXIT());
	REFUSE("division by constant zero", "division by zero",
	       MOV64_IMM(0, 1), ALU64_IMM(BPF_DIV, 0, 0), EXIT());
	REFUSE("modulo by constant zero", "division by zero",
	       MOV64_IMM(0, 1), ALU32_IMM(BPF_MOD, 0, 0), EXIT());
	REFUSE("shift by 64", "shift by 64", MOV64_IMM(0, 1),
	       ALU64_IMM(BPF_LSH, 0, 64), EXIT());
	REFUSE("shift32 by 32", "shift by 32", MOV64_IMM(0, 1),
	       ALU32_IMM(BPF_RSH, 0, 32), EXIT());
	REFUSE("negative shift", "shift by -1", MOV64_IMM(0, 1),
	       ALU64_IMM(BPF_ARSH, 0, -1), EXIT());
	REFUSE("write to r10", "r10 is read-only", MOV64_IMM(10, 0),
	       MOV64_IMM(0, 0), EXIT());
	REFUSE("load into r10", "r10 is read-only", MOV64_IMM(0, 0),
	       LDX(BPF_DW, 10, 1, 0), EXIT());
	REFUSE("register 11", "bad register", MOV64_IMM(0, 0),
	       vi_raw(BPF_ALU64 | BPF_MOV | BPF_X, 0, 11, 0, 0), EXIT());
	REFUSE("r0 unset at exit", "insn 1 (code 0x95): r0 is read before",
	       MOV64_IMM(1, 0), EXIT());
	REFUSE("uninitialised read", "r7 is read before", MOV64_REG(0, 7),
	       EXIT());
	REFUSE("set on one path only", "r2 is read before",
	       JMP_IMM(BPF_JEQ, 1, 0, 1), MOV64_IMM(2, 1), MOV64_REG(0, 2),
	       EXIT());
	REFUSE("r1 after a call", "insn 2 (code 0xbf): r1 is read before",
	       MOV64_IMM(1, 1), CALL(2), MOV64_REG(0, 1), EXIT());
	REFUSE("falls off the end", "falls off the end", MOV64_IMM(0, 0));
	REFUSE("conditional jump last", "falls off the end", MOV64_IMM(0, 0),
	       JMP_IMM(BPF_JEQ, 0, 0, -2));
	REFUSE("missing helper", "helper 3 is not available", CALL(3),
	       EXIT());
	REFUSE("negative helper", "helper -1 is not available", CALL(-1),
	       EXIT());
	REFUSE("bpf-to-bpf call", "BPF functions",
	       vi_raw(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_CALL, 0, 1), EXIT(),
	       MOV64_IMM(0, 0), EXIT());
	REFUSE("callback past the end", "callback at 9 is not an instruction",
	       LD_IMM64_RAW(1, BPF_PSEUDO_FUNC, 8), MOV64_IMM(0, 0), EXIT());
	REFUSE("callback into ld_imm64", "callback at 1 is not",
	       LD_IMM64_RAW(1, BPF_PSEUDO_FUNC, 0), MOV64_IMM(0, 0), EXIT());
	REFUSE("callback reads r5", "insn 4 (code 0xbf): r5 is read before",
	       LD_IMM64_RAW(1, BPF_PSEUDO_FUNC, 3), MOV64_IMM(0, 0), EXIT(),
	       MOV64_REG(0, 5), EXIT());
	REFUSE("kfunc call", "kernel function",
	       vi_raw(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_KFUNC_CALL, 0, 1), EXIT());
	REFUSE("map out of range", "map 2 does not exist", LD_MAP(0, 2), EXIT());
	REFUSE("map value without a table", "map value 0 is not available",
	       LD_MAP_VALUE(0, 0, 0), EXIT());
	REFUSE("stack below 512", "outside the 512-byte stack", MOV64_IMM(0, 0),
	       STX(BPF_DW, 10, 0, -520), EXIT());
	REFUSE("stack above the frame", "outside", MOV64_IMM(0, 0),
	       LDX(BPF_W, 0, 10, -2), EXIT());
	REFUSE("atomic byte", "unknown store", MOV64_IMM(0, 0),
	       ATOMIC(BPF_B, BPF_ADD, 10, 0, -8), EXIT());
	REFUSE("unknown atomic", "unknown atomic", MOV64_IMM(0, 0),
	       ATOMIC(BPF_DW, BPF_SUB, 10, 0, -8), EXIT());
	REFUSE("bad sign extension", "sign-extending move", MOV64_IMM(0, 0),
	       MOVSX32(0, 0, 32), EXIT());
	REFUSE("bad byte swap", "byte swap", MOV64_IMM(0, 0),
	       ENDIAN(BPF_TO_BE, 0, 8), EXIT());
	REFUSE("reserved fields", "reserved", MOV64_IMM(0, 0),
	       vi_raw(BPF_ALU64 | BPF_ADD | BPF_X, 0, 0, 0, 5), EXIT());
	REFUSE("exit with fields", "reserved fields of exit", MOV64_IMM(0, 0),
	       vi_raw(BPF_JMP | BPF_EXIT, 1, 0, 0, 0));
	REFUSE("ldxsx dw", "unknown load", MOV64_IMM(0, 0),
	       LDXSX(BPF_DW, 0, 10, -8), EXIT());

	/* no error buffer, still refused */
	const struct bpf_insn bad[] = { MOV64_REG(0, 3), EXIT() };
	struct vm_env e = env();
	CHECK(!vm_prog_load(bad, 2, &e, NULL, 0) && errno == EINVAL,
	      "refused without an error buffer");
	/* a long message is cut, still terminated */
	char small[12];
	CHECK(!vm_prog_load(bad, 2, &e, small, sizeof(small)) &&
	      strlen(small) == sizeof(small) - 1, "error message truncated");
	/* unreachable code is not checked for initialised registers */
	EXPECT("unreachable code is left alone", 1, MOV64_IMM(0, 1), EXIT(),
	       MOV64_REG(0, 9), EXIT());
}

int main(void)
{
	test_alu64();
	test_alu32();
	test_endian();
	test_jumps();
	test_budget();
	test_memory();
	test_atomics();
	test_calls();
	test_callbacks();
	test_native();
	test_refused();
	vm_prog_free(NULL);
	return UNIT_DONE();
}
