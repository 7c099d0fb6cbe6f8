/* cg_str.c - strings: literals, ==/!= and strncmp by bounded bytewise
 * comparison, strcontains as a bounded loop, str() and buf() reads. */
#include "cg.h"

#include <stdlib.h>
#include <string.h>

void cg_str_literal(struct cg *cg, struct cmem dst, const char *s,
		    uint32_t len, uint32_t size)
{
	if (!size)
		return;
	uint8_t *b = calloc(size + 8, 1);
	if (!b) {
		cg->err = -12;
		return;
	}
	memcpy(b, s, len < size - 1 ? len : size - 1);
	uint32_t o = 0;
	for (; o + 8 <= size; o += 8) {
		uint32_t lo, hi;
		memcpy(&lo, b + o, 4);
		memcpy(&hi, b + o + 4, 4);
		if (!lo && !hi) {
			ir_st(cg->ir, BPF_DW, dst.base, (int16_t)(dst.off + (int32_t)o), 0);
			continue;
		}
		ir_st(cg->ir, BPF_W, dst.base, (int16_t)(dst.off + (int32_t)o), (int32_t)lo);
		ir_st(cg->ir, BPF_W, dst.base, (int16_t)(dst.off + (int32_t)o + 4), (int32_t)hi);
	}
	for (; o < size; o++)
		ir_st(cg->ir, BPF_B, dst.base, (int16_t)(dst.off + (int32_t)o), b[o]);
	free(b);
}

/* The memory of a string operand. */
static struct cval str_operand(struct cg *cg, const struct node *n)
{
	struct cval v = cg_expr(cg, n);
	if (v.kind != CV_MEM) {
		cg_error(cg, n->pos, "string operand cannot be compiled");
		v = cg_memval(cg_alloc(cg, 8), n->type);
		cg_zero(cg, v.m, 8);
	}
	return v;
}

/* Branch to `eq` when the first `limit` bytes of a and b are equal as C
 * strings (stopping at a NUL), else to `ne`. */
static void str_eq_jump(struct cg *cg, struct cval a, struct cval b,
			uint32_t limit, uint32_t eq, uint32_t ne)
{
	uint32_t sa = a.t->size, sb = b.t->size;
	uint32_t n = sa < sb ? sa : sb;
	if (n > limit)
		n = limit;
	for (uint32_t i = 0; i < n; i++) {
		vreg x = cg_load(cg, BPF_B, cg_at(a.m, (int32_t)i));
		vreg y = cg_load(cg, BPF_B, cg_at(b.m, (int32_t)i));
		ir_jcc(cg->ir, BPF_JNE, x, y, ne);
		ir_jcci(cg->ir, BPF_JEQ, x, 0, eq);
	}
	/* Past the shorter buffer: equal only if the longer one ends. */
	if (n < limit && sa != sb) {
		struct cval l = sa > sb ? a : b;
		vreg x = cg_load(cg, BPF_B, cg_at(l.m, (int32_t)n));
		ir_jcci(cg->ir, BPF_JNE, x, 0, ne);
	}
	ir_ja(cg->ir, eq);
}

/* Against a literal: compare with immediates, no second buffer. */
static void str_eq_lit_jump(struct cg *cg, struct cval a, const struct node *lit,
			    uint32_t limit, uint32_t eq, uint32_t ne)
{
	uint32_t len = lit->u.str.len;
	uint32_t n = a.t->size;
	if (n > limit)
		n = limit;
	for (uint32_t i = 0; i <= len && i < n; i++) {
		vreg x = cg_load(cg, BPF_B, cg_at(a.m, (int32_t)i));
		ir_jcci(cg->ir, BPF_JNE, x, (uint8_t)lit->u.str.s[i], ne);
	}
	if (len >= n && n < limit) {
		/* a cannot hold the whole literal */
		ir_ja(cg->ir, ne);
		return;
	}
	ir_ja(cg->ir, eq);
}

/* 1 (or `when_eq`) if equal up to limit, else the other. */
static struct cval str_equal(struct cg *cg, const struct node *l,
			     const struct node *r, uint32_t limit,
			     int64_t when_eq, const struct type *t)
{
	uint32_t eq = ir_label(cg->ir), ne = ir_label(cg->ir);
	uint32_t done = ir_label(cg->ir);
	vreg d = ir_vreg(cg->ir);
	if (r->kind == N_STR || l->kind == N_STR) {
		const struct node *lit = r->kind == N_STR ? r : l;
		const struct node *other = lit == r ? l : r;
		if (other->kind == N_STR) {
			int same = strncmp(l->u.str.s, r->u.str.s, limit) == 0;
			ir_movi(cg->ir, d, same ? when_eq : !when_eq);
			return cg_regval(d, t);
		}
		struct cval a = str_operand(cg, other);
		str_eq_lit_jump(cg, a, lit, limit, eq, ne);
	} else {
		struct cval a = str_operand(cg, l);
		struct cval b = str_operand(cg, r);
		str_eq_jump(cg, a, b, limit, eq, ne);
	}
	ir_place(cg->ir, eq);
	ir_movi(cg->ir, d, when_eq);
	ir_ja(cg->ir, done);
	ir_place(cg->ir, ne);
	ir_movi(cg->ir, d, !when_eq);
	ir_place(cg->ir, done);
	return cg_regval(d, t);
}

struct cval cg_str_compare(struct cg *cg, const struct node *n)
{
	enum op op = n->u.binop.op;
	if (op != OP_EQ && op != OP_NE) {
		cg_error(cg, n->pos, "strings can only be compared with == "
			 "and != (not '%s')", op_name(op));
		return cg_imm(0, n->type);
	}
	return str_equal(cg, n->u.binop.lhs, n->u.binop.rhs, UINT32_MAX,
			 op == OP_EQ, n->type);
}

/* a == b, a != b on buffers (their u32 lengths, then the bytes both
 * hold: buf() zeroes what is past the length) and on C arrays of
 * integers (sema checked they have one size): byte by byte. */
struct cval cg_mem_compare(struct cg *cg, const struct node *n)
{
	const struct node *l = n->u.binop.lhs, *r = n->u.binop.rhs;
	struct cval a, b;
	const struct type *u = l->type->kind == TYPE_TUPLE ||
		l->type->kind == TYPE_USERNAME ?
		type_unify(cg->a, l->type, r->type) : NULL;
	if (u) {
		/* tuples, usernames: both stored as the one type they
		 * share (strings widened, padding zeroed), then bytes */
		a = cg_memval(cg_alloc(cg, u->size), u);
		b = cg_memval(cg_alloc(cg, u->size), u);
		cg_zero(cg, a.m, u->size);
		cg_zero(cg, b.m, u->size);
		cg_expr_to(cg, l, a.m, u);
		cg_expr_to(cg, r, b.m, u);
		a.t = b.t = u;
	} else {
		a = cg_expr(cg, l);
		b = cg_expr(cg, r);
	}
	if (a.kind != CV_MEM || b.kind != CV_MEM) {
		cg_error(cg, n->pos, "comparison of '%s' values cannot be "
			 "compiled", type_kind_name(l->type->kind));
		return cg_imm(0, n->type);
	}
	uint32_t size = u ? u->size : l->type->size < r->type->size ?
		l->type->size : r->type->size;
	uint32_t ne = ir_label(cg->ir), done = ir_label(cg->ir);
	for (uint32_t i = 0; i < size; i++) {
		vreg x = cg_load(cg, BPF_B, cg_at(a.m, (int32_t)i));
		vreg y = cg_load(cg, BPF_B, cg_at(b.m, (int32_t)i));
		ir_jcc(cg->ir, BPF_JNE, x, y, ne);
	}
	bool eq = n->u.binop.op == OP_EQ;
	vreg d = ir_vreg(cg->ir);
	ir_movi(cg->ir, d, eq);
	ir_ja(cg->ir, done);
	ir_place(cg->ir, ne);
	ir_movi(cg->ir, d, !eq);
	ir_place(cg->ir, done);
	return cg_regval(d, n->type);
}

/* strncmp(a, b, n): 0 when the first n bytes match, as in C. */
struct cval cg_strncmp(struct cg *cg, const struct node *n)
{
	const struct node *len = n->u.call.args.v[2];
	uint32_t limit = len->kind == N_INT ? (uint32_t)len->u.ival : 0;
	return str_equal(cg, n->u.call.args.v[0], n->u.call.args.v[1], limit,
			 0, n->type);
}

/* strcontains(h, s): a real (bounded) loop; unrolling it would cost
 * size(h) * size(s) comparisons. Offsets are kept below the buffer
 * sizes by explicit checks so the verifier can bound every access. */
/* strlen(s) (bpftrace 0.2x): the bytes before the first NUL, at most
 * the string's size. */
struct cval cg_strlen(struct cg *cg, const struct node *n)
{
	struct cval v = str_operand(cg, n->u.call.args.v[0]);
	struct ir *ir = cg->ir;
	vreg i = ir_vreg(ir), p = cg_addr(cg, v.m);
	uint32_t top = ir_label(ir), done = ir_label(ir);
	ir_movi(ir, i, 0);
	ir_place(ir, top);
	ir_jcci(ir, BPF_JGE, i, v.t->size, done);
	vreg a = ir_vreg(ir), c = ir_vreg(ir);
	ir_alu(ir, BPF_ADD, a, p, i);
	ir_ldx(ir, BPF_B, c, a, 0);
	ir_jcci(ir, BPF_JEQ, c, 0, done);
	ir_alui(ir, BPF_ADD, i, i, 1);
	ir_ja(ir, top);
	ir_place(ir, done);
	return cg_regval(i, n->type);
}

struct cval cg_strcontains(struct cg *cg, const struct node *n)
{
	struct cval h = str_operand(cg, n->u.call.args.v[0]);
	struct cval s = str_operand(cg, n->u.call.args.v[1]);
	int64_t hs = h.t->size, ss = s.t->size;
	struct ir *ir = cg->ir;
	vreg d = ir_vreg(ir), i = ir_vreg(ir), j = ir_vreg(ir);
	vreg hp = cg_addr(cg, h.m), sp = cg_addr(cg, s.m);
	uint32_t outer = ir_label(ir), inner = ir_label(ir);
	uint32_t next = ir_label(ir), yes = ir_label(ir), no = ir_label(ir);
	uint32_t done = ir_label(ir);

	ir_movi(ir, i, 0);
	ir_place(ir, outer);
	ir_jcci(ir, BPF_JGE, i, hs, no);
	ir_movi(ir, j, 0);
	ir_place(ir, inner);
	ir_jcci(ir, BPF_JGE, j, ss, yes);
	vreg sa = ir_vreg(ir);
	ir_alu(ir, BPF_ADD, sa, sp, j);
	vreg c = ir_vreg(ir);
	ir_ldx(ir, BPF_B, c, sa, 0);
	ir_jcci(ir, BPF_JEQ, c, 0, yes);
	vreg k = ir_vreg(ir);
	ir_alu(ir, BPF_ADD, k, i, j);
	ir_jcci(ir, BPF_JGE, k, hs, no);
	vreg ha = ir_vreg(ir);
	ir_alu(ir, BPF_ADD, ha, hp, k);
	vreg x = ir_vreg(ir);
	ir_ldx(ir, BPF_B, x, ha, 0);
	ir_jcc(ir, BPF_JNE, x, c, next);
	ir_alui(ir, BPF_ADD, j, j, 1);
	ir_ja(ir, inner);
	ir_place(ir, next);
	vreg hb = ir_vreg(ir);
	ir_alu(ir, BPF_ADD, hb, hp, i);
	vreg y = ir_vreg(ir);
	ir_ldx(ir, BPF_B, y, hb, 0);
	ir_jcci(ir, BPF_JEQ, y, 0, no);
	ir_alui(ir, BPF_ADD, i, i, 1);
	ir_ja(ir, outer);
	ir_place(ir, yes);
	ir_movi(ir, d, 1);
	ir_ja(ir, done);
	ir_place(ir, no);
	ir_movi(ir, d, 0);
	ir_place(ir, done);
	return cg_regval(d, n->type);
}

/* str(ptr[, len]) into dst: NUL-padded to the full size. With a length,
 * at most len bytes plus the NUL are read (as bpftrace 0.17 does). */
void cg_str_call_to(struct cg *cg, const struct node *n, struct cmem dst,
		    const struct type *to)
{
	const struct node *p = n->u.call.args.v[0];
	uint32_t size = to->size;
	/* str(s, N) keeps N - 1 bytes and the NUL from bpftrace 0.23
	 * ("Fix str() bug where optional size parameter did not count
	 * towards NUL terminator"), N bytes before */
	uint64_t nul = cg->prog->dialect >= DIALECT_023 ? 0 : 1;
	if (p->type && p->type->kind == TYPE_STR) {
		cg_expr_to(cg, p, dst, to);     /* str("literal"), str($s) */
		/* str(s, N): its first N bytes, as of a pointer (a length
		 * known only at run time leaves the string whole) */
		const struct node *ln = n->u.call.args.n > 1 ?
			n->u.call.args.v[1] : NULL;
		if (ln && ln->kind == N_INT && ln->u.ival + nul > 0 &&
		    ln->u.ival + nul - 1 < (uint64_t)size - 1)
			ir_st(cg->ir, BPF_B, dst.base, (int16_t)(dst.off +
			      (int32_t)(ln->u.ival + nul - 1)), 0);
		return;
	}
	cg_zero(cg, dst, size);
	vreg ptr = cg_reg(cg, cg_expr(cg, p));
	struct ir_arg len = IR_IMM((int32_t)size);
	if (n->u.call.args.n > 1) {
		const struct node *ln = n->u.call.args.v[1];
		struct cval lv = cg_expr(cg, ln);
		if (lv.kind == CV_IMM) {
			uint64_t want = (uint64_t)lv.imm + nul;
			len = IR_IMM((int32_t)(want < size ? want : size));
		} else {
			vreg l = ir_vreg(cg->ir);
			uint32_t ok = ir_label(cg->ir);
			ir_alui(cg->ir, BPF_ADD, l, cg_reg(cg, lv), (int64_t)nul);
			ir_jcci(cg->ir, BPF_JLE, l, size, ok);
			ir_movi(cg->ir, l, size);
			ir_place(cg->ir, ok);
			len = IR_ARG(l);
		}
	}
	int helper = cg_user_probe(cg) ? BPF_FUNC_probe_read_user_str :
		BPF_FUNC_probe_read_str;
	vreg r = cg_call(cg, helper,
			 (struct ir_arg[]){ cg_arg(dst), len, IR_ARG(ptr) }, 3);
	cg_check_helper(cg, r, helper);
	cg_d_fault(cg, r, ptr);
}

/* buf(ptr, len): u32 length, then the bytes (types.h TYPE_BUF). */
void cg_buf_call_to(struct cg *cg, const struct node *n, struct cmem dst)
{
	uint32_t cap = n->type->size - 4;
	cg_zero(cg, dst, n->type->size);
	const struct node *src = n->u.call.args.v[0];
	if (src->type->kind == TYPE_ARRAY) {   /* buf(array): its bytes */
		struct cval v = cg_expr(cg, src);
		if (v.kind != CV_MEM) {
			cg_error(cg, n->pos, "buf() of this array cannot be "
				 "compiled");
			return;
		}
		ir_st(cg->ir, BPF_W, dst.base, (int16_t)dst.off, (int32_t)cap);
		cg_copy(cg, cg_at(dst, 4), v.m, cap);
		return;
	}
	struct ir_arg from;
	int helper = cg_user_probe(cg) ? BPF_FUNC_probe_read_user :
		BPF_FUNC_probe_read;
	if (src->type->kind == TYPE_STR) {   /* bytes of a string: BPF memory */
		struct cval v = cg_expr(cg, src);   /* a variable: no copy */
		struct cmem m = v.m;
		if (v.kind != CV_MEM || src->type->size < cap) {
			/* a buffer longer than the string: zeros after it */
			uint32_t size = src->type->size < cap ? cap :
				src->type->size;
			m = cg_alloc(cg, size);
			cg_zero(cg, m, size);
			if (v.kind == CV_MEM)
				cg_copy(cg, m, v.m, src->type->size);
			else
				cg_store(cg, m, v, src->type);
		}
		from = cg_arg(m);
		helper = BPF_FUNC_probe_read_kernel;
	} else {
		from = IR_ARG(cg_reg(cg, cg_expr(cg, src)));
	}
	struct cval lv = cg_expr(cg, n->u.call.args.v[1]);
	vreg l = ir_vreg(cg->ir);
	if (lv.kind == CV_IMM) {
		ir_movi(cg->ir, l, (uint64_t)lv.imm < cap ? lv.imm : cap);
	} else {
		uint32_t ok = ir_label(cg->ir);
		ir_mov(cg->ir, l, cg_reg(cg, lv));
		ir_jcci(cg->ir, BPF_JLE, l, cap, ok);
		ir_movi(cg->ir, l, cap);
		ir_place(cg->ir, ok);
	}
	ir_stx(cg->ir, BPF_W, dst.base, (int16_t)dst.off, l);
	vreg r = cg_call(cg, helper, (struct ir_arg[]){
				 cg_arg(cg_at(dst, 4)), IR_ARG(l), from }, 3);
	cg_check_helper(cg, r, helper);
	if (helper != BPF_FUNC_probe_read_kernel)   /* read at a pointer */
		cg_d_fault(cg, r, from.v);
}
