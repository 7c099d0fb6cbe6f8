/* vm_int.h - what the VM's loader, interpreter and JIT share: the
 * decoded instruction form and the program object. Not for embedders
 * (they include vm.h).
 *
 * The loader decodes each struct bpf_insn into one struct vm_insn whose
 * `op` names the exact operation (class, operand size, source, signed
 * or not), so the interpreter dispatches once per instruction with no
 * further decoding and the JIT switches on one value. Instruction
 * indices stay those of the bytecode: an LD_IMM64 keeps its second slot
 * (as VM_OP_NOP, never executed), so jump offsets need no rewriting. */
#ifndef SONDE_VM_INT_H
#define SONDE_VM_INT_H

#include "vm.h"

/* Instructions newer than Debian 12's UAPI header (kernel 6.6, "cpu v4"). */
#ifndef BPF_MEMSX
#define BPF_MEMSX 0x80
#endif

/* Two-operand ALU operations, each in four forms (64/32 bits, K/X). */
#define VM_ALU_OPS(X) \
	X(ADD) X(SUB) X(MUL) X(DIV) X(SDIV) X(MOD) X(SMOD) X(OR) X(AND) \
	X(XOR) X(LSH) X(RSH) X(ARSH) X(MOV)
/* Conditional jumps, each in four forms (64/32 bits, K/X). */
#define VM_JMP_OPS(X) \
	X(JEQ) X(JNE) X(JGT) X(JGE) X(JLT) X(JLE) X(JSGT) X(JSGE) X(JSLT) \
	X(JSLE) X(JSET)
/* Atomic read-modify-write operations, each for 32 and 64 bits. */
#define VM_ATOMIC_OPS(X) \
	X(AADD) X(AOR) X(AAND) X(AXOR) X(FADD) X(FOR) X(FAND) X(FXOR) \
	X(XCHG) X(CMPXCHG)
/* Everything else. */
#define VM_OTHER_OPS(X) \
	X(NOP) X(NEG64) X(NEG32) \
	X(MOVSX64_8) X(MOVSX64_16) X(MOVSX64_32) X(MOVSX32_8) X(MOVSX32_16) \
	X(ZEXT16) X(ZEXT32) X(BSWAP16) X(BSWAP32) X(BSWAP64) \
	X(LDX_B) X(LDX_H) X(LDX_W) X(LDX_DW) \
	X(LDXSX_B) X(LDXSX_H) X(LDXSX_W) \
	X(ST_B) X(ST_H) X(ST_W) X(ST_DW) \
	X(STX_B) X(STX_H) X(STX_W) X(STX_DW) \
	X(LDDW) X(JA) X(CALL) X(EXIT)

#define VM_OP_ALU_ENUM(o) VM_OP_##o##64_K, VM_OP_##o##64_X, \
			  VM_OP_##o##32_K, VM_OP_##o##32_X,
#define VM_OP_JMP_ENUM(o) VM_OP_##o##_K, VM_OP_##o##_X, \
			  VM_OP_##o##32_K, VM_OP_##o##32_X,
#define VM_OP_ATOMIC_ENUM(o) VM_OP_##o##_W, VM_OP_##o##_DW,
#define VM_OP_OTHER_ENUM(o) VM_OP_##o,

enum vm_op {
	VM_ALU_OPS(VM_OP_ALU_ENUM)
	VM_JMP_OPS(VM_OP_JMP_ENUM)
	VM_ATOMIC_OPS(VM_OP_ATOMIC_ENUM)
	VM_OTHER_OPS(VM_OP_OTHER_ENUM)
	VM_NOPS
};

struct vm_insn {
	uint8_t op;          /* enum vm_op */
	uint8_t dst, src;
	int32_t off;         /* memory offset; jumps: relative to the next */
	union {
		int64_t imm;     /* sign-extended; LDDW: the whole value */
		vm_helper_fn fn; /* CALL */
	};
};

struct vm_prog {
	struct vm_insn *insns;
	uint32_t ninsns;
	uint64_t budget;
	/* Native code (mmap'ed, read+execute) or NULL. */
	vm_native_fn native;
	void *image;
	size_t image_size, native_size;
	const char *jit_error;
	bool has_back_edges;
	struct vm_callback *callbacks;   /* PSEUDO_FUNC targets */
	uint32_t ncallbacks;
};

/* vm_interp.c */
int vm_interp_run(const struct vm_prog *p, void *ctx, uint64_t *ret);
/* From instruction pc with r1..r4 = args[0..3] (a callback). */
int vm_interp_run_at(const struct vm_prog *p, uint32_t pc,
		     const uint64_t *args, uint64_t *ret);
/* vm_jit.c: compiles p into p->native, or returns -errno with the reason
 * in p->jit_error. */
int vm_jit_compile(struct vm_prog *p);
void vm_jit_free(struct vm_prog *p);

#endif
