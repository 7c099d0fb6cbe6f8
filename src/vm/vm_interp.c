/* vm_interp.c - the interpreter: runs decoded instructions (vm_int.h)
 * with one indirect jump per instruction (GNU C's computed goto, one
 * label per enum vm_op), registers in a local array and the 512-byte
 * stack in this function's frame. Everything the loader proved (valid
 * registers, jump targets, no constant division by zero, initialised
 * registers) is not checked again here. It is the oracle the JIT is
 * compared against, so every operation is written out as BPF defines
 * it, in plain C on fixed-width types. */
#include "vm_int.h"

#include <errno.h>
#include <string.h>

typedef uint64_t u64;
typedef uint32_t u32;
typedef int64_t s64;
typedef int32_t s32;

static inline u64 addr_of(u64 base, int32_t off)
{
	return base + (u64)(s64)off;
}

#define LOAD(T, a) ({ T v_; memcpy(&v_, (const void *)(uintptr_t)(a), sizeof(v_)); v_; })
#define STORE(T, a, v) do { T v_ = (T)(v); \
	memcpy((void *)(uintptr_t)(a), &v_, sizeof(v_)); } while (0)

static inline u64 udiv64(u64 a, u64 b) { return b ? a / b : 0; }
static inline u64 umod64(u64 a, u64 b) { return b ? a % b : a; }
static inline u32 udiv32(u32 a, u32 b) { return b ? a / b : 0; }
static inline u32 umod32(u32 a, u32 b) { return b ? a % b : a; }

static inline u64 sdiv64(u64 a, u64 b)
{
	if (!b)
		return 0;
	if ((s64)b == -1)
		return -a;                      /* INT64_MIN / -1 = INT64_MIN */
	return (u64)((s64)a / (s64)b);
}

static inline u64 smod64(u64 a, u64 b)
{
	if (!b)
		return a;
	if ((s64)b == -1)
		return 0;
	return (u64)((s64)a % (s64)b);
}

static inline u32 sdiv32(u32 a, u32 b)
{
	if (!b)
		return 0;
	if ((s32)b == -1)
		return -a;
	return (u32)((s32)a / (s32)b);
}

static inline u32 smod32(u32 a, u32 b)
{
	if (!b)
		return a;
	if ((s32)b == -1)
		return 0;
	return (u32)((s32)a % (s32)b);
}

int vm_interp_run(const struct vm_prog *p, void *ctx, uint64_t *ret)
{
	uint64_t args[4] = { (u64)(uintptr_t)ctx, 0, 0, 0 };
	return vm_interp_run_at(p, 0, args, ret);
}

int vm_interp_run_at(const struct vm_prog *p, uint32_t pc,
		     const uint64_t *args, uint64_t *ret)
{
#define ALU_LABELS(o) &&L_##o##64_K, &&L_##o##64_X, &&L_##o##32_K, &&L_##o##32_X,
#define JMP_LABELS(o) &&L_##o##_K, &&L_##o##_X, &&L_##o##32_K, &&L_##o##32_X,
#define ATOMIC_LABELS(o) &&L_##o##_W, &&L_##o##_DW,
#define OTHER_LABELS(o) &&L_##o,
	static const void *const labels[VM_NOPS] = {
		VM_ALU_OPS(ALU_LABELS)
		VM_JMP_OPS(JMP_LABELS)
		VM_ATOMIC_OPS(ATOMIC_LABELS)
		VM_OTHER_OPS(OTHER_LABELS)
	};
	u64 stack[VM_STACK_SIZE / 8];
	u64 R[11] = { 0 };
	s64 budget = (s64)p->budget;
	const struct vm_insn *I = p->insns + pc;

	R[1] = args[0];
	R[2] = args[1];
	R[3] = args[2];
	R[4] = args[3];
	R[10] = (u64)(uintptr_t)(stack + VM_STACK_SIZE / 8);
	goto *labels[I->op];

#define NEXT do { I++; goto *labels[I->op]; } while (0)
#define DST R[I->dst]
#define SRC R[I->src]
#define IMM ((u64)I->imm)

/* 64- and 32-bit forms, immediate and register source. */
#define ALU(o, expr64, expr32) \
	L_##o##64_K: { u64 a = DST, b = IMM; DST = (expr64); NEXT; } \
	L_##o##64_X: { u64 a = DST, b = SRC; DST = (expr64); NEXT; } \
	L_##o##32_K: { u32 a = (u32)DST, b = (u32)IMM; DST = (u32)(expr32); NEXT; } \
	L_##o##32_X: { u32 a = (u32)DST, b = (u32)SRC; DST = (u32)(expr32); NEXT; }

	ALU(ADD, a + b, a + b)
	ALU(SUB, a - b, a - b)
	ALU(MUL, a * b, a * b)
	ALU(DIV, udiv64(a, b), udiv32(a, b))
	ALU(SDIV, sdiv64(a, b), sdiv32(a, b))
	ALU(MOD, umod64(a, b), umod32(a, b))
	ALU(SMOD, smod64(a, b), smod32(a, b))
	ALU(OR, a | b, a | b)
	ALU(AND, a & b, a & b)
	ALU(XOR, a ^ b, a ^ b)
	ALU(LSH, a << (b & 63), a << (b & 31))
	ALU(RSH, a >> (b & 63), a >> (b & 31))
	ALU(ARSH, (u64)((s64)a >> (b & 63)), (u32)((s32)a >> (b & 31)))
	ALU(MOV, ((void)a, b), ((void)a, b))

	/* A taken jump back is charged the span it jumps over (vm.h). */
#define TAKE do { int32_t o_ = I->off; \
	if (o_ < 0 && (budget += o_) < 0) \
		goto out_of_budget; \
	I += o_; } while (0)
#define JMP(o, expr64, expr32) \
	L_##o##_K: { u64 a = DST, b = IMM; if (expr64) TAKE; NEXT; } \
	L_##o##_X: { u64 a = DST, b = SRC; if (expr64) TAKE; NEXT; } \
	L_##o##32_K: { u32 a = (u32)DST, b = (u32)IMM; if (expr32) TAKE; NEXT; } \
	L_##o##32_X: { u32 a = (u32)DST, b = (u32)SRC; if (expr32) TAKE; NEXT; }

	JMP(JEQ, a == b, a == b)
	JMP(JNE, a != b, a != b)
	JMP(JGT, a > b, a > b)
	JMP(JGE, a >= b, a >= b)
	JMP(JLT, a < b, a < b)
	JMP(JLE, a <= b, a <= b)
	JMP(JSGT, (s64)a > (s64)b, (s32)a > (s32)b)
	JMP(JSGE, (s64)a >= (s64)b, (s32)a >= (s32)b)
	JMP(JSLT, (s64)a < (s64)b, (s32)a < (s32)b)
	JMP(JSLE, (s64)a <= (s64)b, (s32)a <= (s32)b)
	JMP(JSET, (a & b) != 0, (a & b) != 0)

#define PTR(T) ((T *)(uintptr_t)addr_of(DST, I->off))
#define ATOMIC(o, fetch) \
	L_##o##_W: { u32 v_ = fetch(PTR(u32), (u32)SRC, __ATOMIC_SEQ_CST); \
		     (void)v_; RESULT_W; NEXT; } \
	L_##o##_DW: { u64 v_ = fetch(PTR(u64), SRC, __ATOMIC_SEQ_CST); \
		      (void)v_; RESULT_DW; NEXT; }
#define RESULT_W
#define RESULT_DW
	ATOMIC(AADD, __atomic_fetch_add)
	ATOMIC(AOR, __atomic_fetch_or)
	ATOMIC(AAND, __atomic_fetch_and)
	ATOMIC(AXOR, __atomic_fetch_xor)
#undef RESULT_W
#undef RESULT_DW
#define RESULT_W SRC = v_
#define RESULT_DW SRC = v_
	ATOMIC(FADD, __atomic_fetch_add)
	ATOMIC(FOR, __atomic_fetch_or)
	ATOMIC(FAND, __atomic_fetch_and)
	ATOMIC(FXOR, __atomic_fetch_xor)
	ATOMIC(XCHG, __atomic_exchange_n)
L_CMPXCHG_W: {
		u32 old = (u32)R[0];
		__atomic_compare_exchange_n(PTR(u32), &old, (u32)SRC, false,
					    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
		R[0] = old;
		NEXT;
	}
L_CMPXCHG_DW: {
		u64 old = R[0];
		__atomic_compare_exchange_n(PTR(u64), &old, SRC, false,
					    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
		R[0] = old;
		NEXT;
	}

L_NOP:
	NEXT;
L_NEG64:
	DST = -DST;
	NEXT;
L_NEG32:
	DST = (u32)-(u32)DST;
	NEXT;
L_MOVSX64_8:
	DST = (u64)(s64)(int8_t)SRC;
	NEXT;
L_MOVSX64_16:
	DST = (u64)(s64)(int16_t)SRC;
	NEXT;
L_MOVSX64_32:
	DST = (u64)(s64)(s32)SRC;
	NEXT;
L_MOVSX32_8:
	DST = (u32)(s32)(int8_t)SRC;
	NEXT;
L_MOVSX32_16:
	DST = (u32)(s32)(int16_t)SRC;
	NEXT;
L_ZEXT16:
	DST = (uint16_t)DST;
	NEXT;
L_ZEXT32:
	DST = (u32)DST;
	NEXT;
L_BSWAP16:
	DST = __builtin_bswap16((uint16_t)DST);
	NEXT;
L_BSWAP32:
	DST = __builtin_bswap32((u32)DST);
	NEXT;
L_BSWAP64:
	DST = __builtin_bswap64(DST);
	NEXT;

#define SRCADDR addr_of(SRC, I->off)
#define DSTADDR addr_of(DST, I->off)
L_LDX_B: DST = LOAD(uint8_t, SRCADDR); NEXT;
L_LDX_H: DST = LOAD(uint16_t, SRCADDR); NEXT;
L_LDX_W: DST = LOAD(u32, SRCADDR); NEXT;
L_LDX_DW: DST = LOAD(u64, SRCADDR); NEXT;
L_LDXSX_B: DST = (u64)(s64)LOAD(int8_t, SRCADDR); NEXT;
L_LDXSX_H: DST = (u64)(s64)LOAD(int16_t, SRCADDR); NEXT;
L_LDXSX_W: DST = (u64)(s64)LOAD(s32, SRCADDR); NEXT;
L_ST_B: STORE(uint8_t, DSTADDR, IMM); NEXT;
L_ST_H: STORE(uint16_t, DSTADDR, IMM); NEXT;
L_ST_W: STORE(u32, DSTADDR, IMM); NEXT;
L_ST_DW: STORE(u64, DSTADDR, IMM); NEXT;
L_STX_B: STORE(uint8_t, DSTADDR, SRC); NEXT;
L_STX_H: STORE(uint16_t, DSTADDR, SRC); NEXT;
L_STX_W: STORE(u32, DSTADDR, SRC); NEXT;
L_STX_DW: STORE(u64, DSTADDR, SRC); NEXT;

L_LDDW:
	DST = IMM;
	I++;                    /* the second slot */
	NEXT;
L_JA:
	TAKE;
	NEXT;
L_CALL:
	R[0] = I->fn(R[1], R[2], R[3], R[4], R[5]);
	NEXT;
L_EXIT:
	*ret = R[0];
	return 0;
out_of_budget:
	*ret = 0;
	return -E2BIG;
}
