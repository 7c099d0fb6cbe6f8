/* test_ir.c - the codegen back end without a kernel: IR builders, the
 * register allocator (classes, spilling under pressure, uninitialized
 * variables) and the assembler (labels, call lowering), checked by
 * running the lowered code in the VM (src/vm), interpreted and JIT-compiled. */
#include <errno.h>
#include <stdlib.h>

#include "codegen/asm.h"
#include "codegen/ir.h"
#include "codegen/regalloc.h"
#include "unit.h"
#include "vm/vm.h"

/* Fake helpers: #1 returns r1 + 2*r2 + 3*r3 (so argument order
 * matters) and remembers r1, #2 returns r1. */
static uint64_t fake_r1;

static uint64_t fake_weighted(uint64_t r1, uint64_t r2, uint64_t r3,
			      uint64_t r4, uint64_t r5)
{
	fake_r1 = r1;
	return r1 + 2 * r2 + 3 * r3;
}

static uint64_t fake_first(uint64_t r1, uint64_t r2, uint64_t r3,
			   uint64_t r4, uint64_t r5)
{
	return r1;
}

static const vm_helper_fn fake_helpers[] = { [1] = fake_weighted,
					     [2] = fake_first };

struct built {
	struct bpf_insn *insns;
	uint32_t n;
	struct ra ra;
	int err;
};

static struct built build(struct ir *ir, int nregs)
{
	struct built b = { 0 };
	b.err = regalloc(ir, 0, nregs, &b.ra);
	if (!b.err)
		b.err = asm_lower(ir, &b.ra, &b.insns, &b.n);
	return b;
}

static void built_free(struct built *b)
{
	free(b->insns);
	ra_free(&b->ra);
}

/* Runs b with r1 = ctx in the interpreter and the JIT; *err is set when
 * the VM refuses the program, a run fails or the two disagree. */
static uint64_t run(struct built *b, uint64_t ctx, const char **err)
{
	static char msg[256];
	struct vm_env env = { .helpers = fake_helpers, .nhelpers = 3 };
	struct vm_prog *p = vm_prog_load(b->insns, b->n, &env, msg, sizeof(msg));
	uint64_t ri = 0, rj = 0;
	*err = msg;
	if (!p)
		return 0;
	void *c = (void *)(uintptr_t)ctx;
	int rci = vm_prog_interp(p, c, &ri), rcj = vm_prog_run(p, c, &rj);
	*err = rci || rcj ? "run failed" : ri != rj ? "interpreter and JIT differ" :
	       NULL;
	vm_prog_free(p);
	return ri;
}

/* N values live at once across a call, then summed with weights. */
static void gen_pressure(struct ir *ir, int nvals)
{
	vreg ctx = ir_vreg(ir);
	ir_entry(ir, ctx);
	vreg v[32];
	for (int i = 0; i < nvals; i++) {
		v[i] = ir_vreg(ir);
		ir_movi(ir, v[i], i + 1);
		ir_alu(ir, BPF_ADD, v[i], v[i], ctx);
	}
	vreg c = ir_vreg(ir);
	struct ir_arg args[3] = { IR_ARG(v[0]), IR_IMM(10), IR_ARG(v[1]) };
	ir_call(ir, c, 1, args, 3);
	vreg acc = ir_vreg(ir);
	ir_mov(ir, acc, c);
	for (int i = 0; i < nvals; i++) {
		vreg t = ir_vreg(ir);
		ir_alui(ir, BPF_MUL, t, v[i], i + 1);
		ir_alu(ir, BPF_ADD, acc, acc, t);
	}
	ir_ret(ir, acc);
}

static uint64_t pressure_expect(int nvals, uint64_t ctx)
{
	uint64_t acc = (1 + ctx) + 2 * 10 + 3 * (2 + ctx);
	for (int i = 0; i < nvals; i++)
		acc += (uint64_t)(i + 1) * (i + 1 + ctx);
	return acc;
}

static void test_pressure(void)
{
	const int nregs[] = { 4, 2, 1 };
	for (int k = 0; k < 3; k++) {
		struct ir ir;
		ir_init(&ir);
		gen_pressure(&ir, 12);
		struct built b = build(&ir, nregs[k]);
		char name[96];
		snprintf(name, sizeof(name),
			 "regalloc: 12 values across a call, %d callee-saved regs",
			 nregs[k]);
		const char *err = NULL;
		uint64_t got = b.err ? 0 : run(&b, 1000, &err);
		CHECK(!b.err && !err && got == pressure_expect(12, 1000), name);
		snprintf(name, sizeof(name), "regalloc: spills with %d regs",
			 nregs[k]);
		CHECK(b.ra.nspilled > 0, name);
		CHECK(b.ra.stack <= 512 && b.ra.stack % 8 == 0,
		      "regalloc: spill area aligned and bounded");
		built_free(&b);
		ir_free(&ir);
	}
}

/* Values that do not cross a call may live in r1-r4; values that do
 * must not. */
static void test_classes(void)
{
	struct ir ir;
	ir_init(&ir);
	vreg a = ir_vreg(&ir), t = ir_vreg(&ir), r = ir_vreg(&ir);
	ir_movi(&ir, a, 5);
	ir_movi(&ir, t, 7);           /* dies before the call */
	ir_alu(&ir, BPF_ADD, a, a, t);
	ir_call(&ir, r, 2, (struct ir_arg[]){ IR_IMM(1) }, 1);  /* r1 only */
	ir_alu(&ir, BPF_ADD, r, r, a);
	ir_ret(&ir, r);
	struct built b = build(&ir, 4);
	CHECK(!b.err, "regalloc: classes build");
	CHECK(b.ra.home[a] >= 6 && b.ra.home[a] <= 9,
	      "regalloc: value live across a call gets r6-r9");
	CHECK(b.ra.home[t] >= 1 && b.ra.home[t] <= 4,
	      "regalloc: short-lived value gets r1-r4");
	const char *err;
	CHECK(run(&b, 0, &err) == 1 + 12 && !err,
	      "regalloc: classes program computes 13");
	built_free(&b);
	ir_free(&ir);
}

/* sum = 0; i = 0; while (i < 10) { sum += i; i++ } with a call in the
 * loop body, and a variable read before any write (must read 0). */
static void test_loop_and_init(void)
{
	for (int nregs = 1; nregs <= 4; nregs += 3) {
		struct ir ir;
		ir_init(&ir);
		vreg ctx = ir_vreg(&ir), sum = ir_vreg(&ir), i = ir_vreg(&ir);
		vreg un = ir_vreg(&ir), c = ir_vreg(&ir);
		ir_entry(&ir, ctx);
		uint32_t top = ir_label(&ir), done = ir_label(&ir);
		uint32_t skip = ir_label(&ir);
		ir_movi(&ir, i, 0);
		ir_jcci(&ir, BPF_JEQ, ctx, 12345, skip);
		ir_movi(&ir, sum, 0);    /* sum only set on one path */
		ir_place(&ir, skip);
		ir_place(&ir, top);
		ir_jcci(&ir, BPF_JSGE, i, 10, done);
		ir_alu(&ir, BPF_ADD, sum, sum, i);
		ir_call(&ir, c, 2, (struct ir_arg[]){ IR_ARG(i) }, 1);
		ir_alu(&ir, BPF_ADD, un, un, c);   /* un: never initialized */
		ir_alui(&ir, BPF_ADD, i, i, 1);
		ir_ja(&ir, top);
		ir_place(&ir, done);
		ir_alui(&ir, BPF_MUL, sum, sum, 1000);
		ir_alu(&ir, BPF_ADD, sum, sum, un);
		ir_ret(&ir, sum);
		struct built b = build(&ir, nregs);
		const char *err = "build";
		uint64_t got = b.err ? 0 : run(&b, 7, &err);
		char name[80];
		snprintf(name, sizeof(name),
			 "regalloc: loop with call and zero-initialized vars (%d regs)",
			 nregs);
		CHECK(!err && got == 45 * 1000 + 45, name);
		got = b.err ? 0 : run(&b, 12345, &err);
		CHECK(!err && got == 45 * 1000 + 45,
		      "regalloc: variable set on no path reads 0");
		built_free(&b);
		ir_free(&ir);
	}
}

/* d = a - b where d and b end up in the same register. */
static void test_alu_overlap(void)
{
	struct ir ir;
	ir_init(&ir);
	vreg a = ir_vreg(&ir), b = ir_vreg(&ir), d = ir_vreg(&ir);
	ir_movi(&ir, a, 100);
	ir_movi(&ir, b, 1);
	ir_alu(&ir, BPF_SUB, d, a, b);    /* b dies here; d may take its reg */
	ir_alu(&ir, BPF_ADD, d, d, a);
	ir_ret(&ir, d);
	struct built bb = build(&ir, 4);
	const char *err;
	CHECK(!bb.err && run(&bb, 0, &err) == 199 && !err,
	      "asm: d = a - b with d sharing b's register");
	built_free(&bb);
	ir_free(&ir);
}

static void test_labels(void)
{
	struct ir ir;
	ir_init(&ir);
	vreg a = ir_vreg(&ir);
	uint32_t fwd = ir_label(&ir), back = ir_label(&ir);
	ir_movi(&ir, a, 0);
	ir_place(&ir, back);                  /* insn 1 */
	ir_alui(&ir, BPF_ADD, a, a, 1);       /* insn 1 */
	ir_jcci(&ir, BPF_JGT, a, 3, fwd);     /* insn 2 */
	ir_ja(&ir, back);                     /* insn 3 */
	ir_place(&ir, fwd);
	ir_ret(&ir, a);                       /* insn 4 */
	struct built b = build(&ir, 4);
	CHECK(!b.err && b.n == 6, "asm: 6 instructions");
	CHECK(b.n == 6 && b.insns[2].off == 1, "asm: forward jump offset");
	CHECK(b.n == 6 && b.insns[3].off == -3, "asm: backward jump offset");
	const char *err;
	CHECK(run(&b, 0, &err) == 4 && !err, "asm: loop runs to 4");
	built_free(&b);
	ir_free(&ir);

	ir_init(&ir);
	ir_ja(&ir, ir_label(&ir));
	ir_reti(&ir, 0);
	struct bpf_insn *insns;
	uint32_t n;
	struct ra ra;
	CHECK(regalloc(&ir, 0, 4, &ra) == 0 &&
	      asm_lower(&ir, &ra, &insns, &n) == -EINVAL,
	      "asm: jump to a label never placed is an error");
	ra_free(&ra);
	ir_free(&ir);
}

static void test_call_lowering(void)
{
	struct ir ir;
	ir_init(&ir);
	vreg x = ir_vreg(&ir), r = ir_vreg(&ir);
	ir_movi(&ir, x, 3);
	ir_call(&ir, r, 1, (struct ir_arg[]){ IR_STK(-8), IR_IMM(4),
					      IR_ARG(x) }, 3);
	ir_alu(&ir, BPF_SUB, r, r, x);
	ir_ret(&ir, r);
	struct built b = build(&ir, 4);
	CHECK(!b.err, "asm: call builds");
	/* r1 = r10; r1 += -8 ; r2 = 4 ; r3 = x */
	int found = 0;
	for (uint32_t i = 0; i + 1 < b.n; i++)
		if (b.insns[i].code == (BPF_ALU64 | BPF_MOV | BPF_X) &&
		    b.insns[i].dst_reg == 1 && b.insns[i].src_reg == 10 &&
		    b.insns[i + 1].code == (BPF_ALU64 | BPF_ADD | BPF_K) &&
		    b.insns[i + 1].imm == -8)
			found = 1;
	CHECK(found, "asm: stack address argument is r10 plus offset");
	/* r1 is the frame pointer - 8, which the helper saw; it differs
	 * between the interpreter and the JIT, so each is checked alone */
	struct vm_env env = { .helpers = fake_helpers, .nhelpers = 3 };
	struct vm_prog *p = vm_prog_load(b.insns, b.n, &env, NULL, 0);
	uint64_t got = 0;
	CHECK(p && vm_prog_interp(p, NULL, &got) == 0 &&
	      got == fake_r1 + 8 + 9 - 3,
	      "asm: call arguments in order, result in r0");
	CHECK(p && vm_prog_run(p, NULL, &got) == 0 && got == fake_r1 + 8 + 9 - 3,
	      "asm: call arguments in order, result in r0 (jit)");
	vm_prog_free(p);
	built_free(&b);
	ir_free(&ir);
}

/* Constant conditions leave code no path reaches; the verifier rejects
 * it, so ir_prune drops it (and gotos to the next instruction). */
static void test_prune(void)
{
	struct ir ir;
	ir_init(&ir);
	vreg d = ir_vreg(&ir);
	uint32_t done = ir_label(&ir), never = ir_label(&ir);
	ir_movi(&ir, d, 1);
	ir_ja(&ir, done);
	ir_movi(&ir, d, 0);        /* unreachable */
	ir_place(&ir, never);      /* only jumped to from dead code */
	ir_alui(&ir, BPF_ADD, d, d, 5);
	ir_jcci(&ir, BPF_JEQ, d, 3, never);
	ir_place(&ir, done);
	ir_ret(&ir, d);
	size_t removed = ir_prune(&ir);
	CHECK(removed == 5, "prune: dead code and a goto to the next insn dropped");
	CHECK(ir.insns.n == 3 && ir.insns.v[1].op == IR_LABEL,
	      "prune: live code kept in order");
	ir_free(&ir);
}

int main(void)
{
	test_prune();
	test_labels();
	test_classes();
	test_alu_overlap();
	test_call_lowering();
	test_pressure();
	test_loop_and_init();
	return UNIT_DONE();
}
