/* vm.h - the process engine's eBPF virtual machine: a program loaded from
 * the compiler's bytecode (one program per probe, src/program.h), checked
 * once at load, then run by an x86-64 JIT or, when the JIT cannot take
 * it, by an interpreter. The interpreter is also the test oracle: the
 * codegen unit tests and the fuzzer run every program in both.
 *
 * What the embedder provides (struct vm_env):
 *   - helpers: a table indexed by BPF helper id (BPF_FUNC_*), plain C
 *     functions of five u64 arguments (r1..r5) returning r0. A program
 *     calling an id the table lacks is refused at load.
 *   - maps: the 64-bit value `LD_IMM64 rD, map[i]` loads, for
 *     src_reg = BPF_PSEUDO_MAP_FD and imm = i (what codegen emits; the
 *     process engine gives its map object's address).
 *   - map_values (optional): for src_reg = BPF_PSEUDO_MAP_VALUE, imm = i
 *     and the next slot's imm = off, the program loads map_values[i] + off
 *     (the address of an array map's value). Codegen does not emit these
 *     today; without the table such a program is refused.
 *
 * Running: r1 = ctx (procengine passes a struct pt_regs-shaped context so
 * the same bytecode runs in both engines), r10 = the top of a 512-byte
 * stack private to this invocation (on the native stack), r0 at `exit` is
 * the result. vm_prog_run allocates nothing, takes no locks and touches
 * no global state: it is reentrant, thread-safe, and async-signal-safe
 * (it may run in a SIGTRAP handler). Memory accesses are not checked at
 * run time, as in the kernel after its verifier: codegen only
 * dereferences the context, the stack and pointers helpers return, and
 * reads anything else through probe_read helpers.
 *
 * Load-time checks (a program failing any is refused, with a message
 * naming the instruction): known opcodes with their reserved fields
 * zero, register numbers, no write to r10, jumps inside the program and
 * not into the second half of an LD_IMM64, no falling off the end,
 * helpers and maps present, no constant division by zero, constant
 * shifts below the operand width, r10-based stack accesses inside the
 * 512 bytes, and no register read before it is written on some path
 * (r1-r5 are dead after a call; r0 must be set at exit).
 *
 * Division and shifts follow BPF, not C or x86: x / 0 = 0, x % 0 = x
 * (32-bit: zero-extended), INT_MIN / -1 = INT_MIN and INT_MIN % -1 = 0
 * for the signed forms; shift counts are masked to 63 (32-bit: 31).
 *
 * Bounded execution: codegen only emits bounded loops, but the VM does
 * not trust that. Each backward jump taken is charged the length of the
 * loop it closes (jump minus target, plus one); when the charges exceed
 * the budget the run stops with -E2BIG. Forward-only code is never
 * charged (it runs at most ninsns instructions), and since every
 * instruction executed lies in some charged span or on the final forward
 * pass, a run executes at most ninsns + budget instructions. The
 * interpreter and the JIT charge identically, so they fail on the same
 * runs.
 *
 * src/vm depends on libc and the kernel's UAPI header only: it links into
 * the agent library (built -fPIC) as well as into libsonde.a. */
#ifndef SONDE_VM_H
#define SONDE_VM_H

#include <linux/bpf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The bytes a load or store of BPF size `size` (BPF_B, BPF_H, BPF_W,
 * BPF_DW) moves. */
static inline int vm_size_bytes(uint8_t size)
{
	switch (size) {
	case BPF_B: return 1;
	case BPF_H: return 2;
	case BPF_W: return 4;
	default: return 8;
	}
}

#define VM_STACK_SIZE 512
#define VM_MAX_INSNS 1000000       /* the kernel's limit for root */
#define VM_BUDGET_DEFAULT 1000000  /* instructions charged by back edges */

typedef uint64_t (*vm_helper_fn)(uint64_t r1, uint64_t r2, uint64_t r3,
				 uint64_t r4, uint64_t r5);

struct vm_env {
	const vm_helper_fn *helpers;  /* [helper id], NULL entries: absent */
	uint32_t nhelpers;
	const uint64_t *maps;         /* PSEUDO_MAP_FD: value of map[imm] */
	uint32_t nmaps;
	const uint64_t *map_values;   /* PSEUDO_MAP_VALUE: [imm] + off, or
				       * NULL (such loads are refused); nmaps
				       * entries */
	uint64_t budget;              /* 0: VM_BUDGET_DEFAULT */
	bool no_jit;                  /* interpret only */
};

struct vm_prog;

/* A callback (bpf_for_each_map_elem's, src/codegen/cg_formap.c): what
 * `LD_IMM64 rD, func` (src_reg BPF_PSEUDO_FUNC, imm: its first
 * instruction relative to the next) loads is the address of one of
 * these, owned by the program. A helper calls it through its first
 * member, `call`, with r1..r4, and gets its r0 (0 when the budget ran
 * out): the callback runs in the interpreter on a stack of its own.
 * src/runtime sees only that first member (rt.h), not the VM. */
typedef uint64_t (*vm_callback_fn)(const void *cb, uint64_t r1, uint64_t r2,
				   uint64_t r3, uint64_t r4);
struct vm_callback {
	vm_callback_fn call;
	const struct vm_prog *prog;
	uint32_t pc;
};

/* Checks and prepares `n` instructions (copied: the caller may free
 * them) and compiles them to native code unless env->no_jit; a JIT that
 * cannot compile the program leaves it interpreted (vm_prog_jit_error
 * says why). Returns NULL with errno set (EINVAL: a bad program, ENOMEM)
 * and, when err is not NULL, a message in err ("insn 12: division by
 * zero"). The env's tables are copied too. */
struct vm_prog *vm_prog_load(const struct bpf_insn *insns, uint32_t n,
			     const struct vm_env *env, char *err,
			     size_t errlen);
/* NULL is a no-op. */
void vm_prog_free(struct vm_prog *p);

/* Runs the program with r1 = ctx: natively when it was compiled, else
 * in the interpreter. Returns 0 with r0 in *ret, or -E2BIG (the budget
 * ran out; *ret = 0). */
int vm_prog_run(const struct vm_prog *p, void *ctx, uint64_t *ret);
/* The same, always in the interpreter (the oracle for tests). */
int vm_prog_interp(const struct vm_prog *p, void *ctx, uint64_t *ret);

/* The compiled code, for a caller that wants no dispatch at all:
 * fn(ctx, &err) returns r0 and leaves err untouched, or stores -E2BIG
 * in err and returns 0. NULL when the program is interpreted. */
typedef uint64_t (*vm_native_fn)(void *ctx, int *err);
vm_native_fn vm_prog_native(const struct vm_prog *p);
/* Why the program is interpreted: NULL when it is compiled; "disabled"
 * with env->no_jit; otherwise the JIT's reason. */
const char *vm_prog_jit_error(const struct vm_prog *p);
/* Native code size in bytes (0 when interpreted), for benchmarks. */
size_t vm_prog_native_size(const struct vm_prog *p);

#endif
