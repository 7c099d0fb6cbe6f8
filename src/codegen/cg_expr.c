/* cg_expr.c - expressions: constants, variables, operators, casts,
 * tuples, ?:, and conditions compiled straight to branches. */
#include "cg.h"

uint8_t cg_alu_code(enum op op)
{
	switch (op) {
	case OP_ADD: return BPF_ADD;
	case OP_SUB: return BPF_SUB;
	case OP_MUL: return BPF_MUL;
	case OP_DIV: return BPF_DIV;   /* bpftrace 0.17 divides unsigned */
	case OP_MOD: return BPF_MOD;
	case OP_BAND: return BPF_AND;
	case OP_BOR: return BPF_OR;
	case OP_BXOR: return BPF_XOR;
	case OP_SHL: return BPF_LSH;
	case OP_SHR: return BPF_RSH;   /* and shifts right logically */
	default: return 0xff;
	}
}

/* Jump condition for a comparison; signed only when both sides are, as
 * bpftrace does. */
static uint8_t jmp_code(enum op op, bool sgn)
{
	switch (op) {
	case OP_EQ: return BPF_JEQ;
	case OP_NE: return BPF_JNE;
	case OP_LT: return sgn ? BPF_JSLT : BPF_JLT;
	case OP_LE: return sgn ? BPF_JSLE : BPF_JLE;
	case OP_GT: return sgn ? BPF_JSGT : BPF_JGT;
	case OP_GE: return sgn ? BPF_JSGE : BPF_JGE;
	default: return 0xff;
	}
}

static enum op negate(enum op op)
{
	switch (op) {
	case OP_EQ: return OP_NE;
	case OP_NE: return OP_EQ;
	case OP_LT: return OP_GE;
	case OP_GE: return OP_LT;
	case OP_GT: return OP_LE;
	case OP_LE: return OP_GT;
	default: return op;
	}
}

static enum op swap(enum op op)
{
	switch (op) {
	case OP_LT: return OP_GT;
	case OP_GT: return OP_LT;
	case OP_LE: return OP_GE;
	case OP_GE: return OP_LE;
	default: return op;
	}
}

static bool is_compare(enum op op)
{
	return op >= OP_EQ && op <= OP_GE;
}

static bool fits32(int64_t v)
{
	return v >= INT32_MIN && v <= INT32_MAX;
}

/* d = a <op> b for integers, as a new vreg normalized to type t. */
static struct cval arith(struct cg *cg, enum op op, struct cval a,
			 struct cval b, const struct type *t)
{
	uint8_t code = cg_alu_code(op);
	vreg d = ir_vreg(cg->ir);
	vreg ra = cg_reg(cg, a);
	if (b.kind == CV_IMM && fits32(b.imm))
		ir_alui(cg->ir, code, d, ra, b.imm);
	else
		ir_alu(cg->ir, code, d, ra, cg_reg(cg, b));
	cg_normalize(cg, d, t);
	return cg_regval(d, t);
}

static void jump_cmp(struct cg *cg, enum op op, bool sgn, struct cval a,
		     struct cval b, uint32_t target)
{
	if (a.kind == CV_IMM && b.kind != CV_IMM) {
		struct cval t = a;
		a = b;
		b = t;
		op = swap(op);
	}
	vreg ra = cg_reg(cg, a);
	if (b.kind == CV_IMM)
		ir_jcci(cg->ir, jmp_code(op, sgn), ra, b.imm, target);
	else
		ir_jcc(cg->ir, jmp_code(op, sgn), ra, cg_reg(cg, b), target);
}

static bool both_signed(const struct node *n)
{
	const struct type *l = n->u.binop.lhs->type;
	const struct type *r = n->u.binop.rhs->type;
	return l && r && l->is_signed && r->is_signed;
}

void cg_cond_jump(struct cg *cg, const struct node *n, bool when_true,
		  uint32_t target)
{
	if (n->kind == N_BINOP && is_compare(n->u.binop.op) &&
	    type_is_int(n->u.binop.lhs->type) && type_is_int(n->u.binop.rhs->type)) {
		enum op op = when_true ? n->u.binop.op : negate(n->u.binop.op);
		struct cval a = cg_expr(cg, n->u.binop.lhs);
		struct cval b = cg_expr(cg, n->u.binop.rhs);
		jump_cmp(cg, op, both_signed(n), a, b, target);
		return;
	}
	if (n->kind == N_BINOP && (n->u.binop.op == OP_LAND ||
				   n->u.binop.op == OP_LOR)) {
		bool is_and = n->u.binop.op == OP_LAND;
		if (is_and != when_true) {
			/* (a && b) false: a false or b false; dually for ||. */
			cg_cond_jump(cg, n->u.binop.lhs, when_true, target);
			cg_cond_jump(cg, n->u.binop.rhs, when_true, target);
		} else {
			uint32_t skip = ir_label(cg->ir);
			cg_cond_jump(cg, n->u.binop.lhs, !when_true, skip);
			cg_cond_jump(cg, n->u.binop.rhs, when_true, target);
			ir_place(cg->ir, skip);
		}
		return;
	}
	if (n->kind == N_UNOP && n->u.unop.op == OP_LNOT) {
		cg_cond_jump(cg, n->u.unop.operand, !when_true, target);
		return;
	}
	struct cval v = cg_expr(cg, n);
	if (v.kind == CV_IMM) {
		if ((v.imm != 0) == when_true)
			ir_ja(cg->ir, target);
		return;
	}
	ir_jcci(cg->ir, when_true ? BPF_JNE : BPF_JEQ, cg_reg(cg, v), 0,
		target);
}

/* 0 or 1 from a condition. */
static struct cval bool_of(struct cg *cg, const struct node *n)
{
	vreg d = ir_vreg(cg->ir);
	uint32_t done = ir_label(cg->ir);
	ir_movi(cg->ir, d, 1);
	cg_cond_jump(cg, n, true, done);
	ir_movi(cg->ir, d, 0);
	ir_place(cg->ir, done);
	return cg_regval(d, n->type);
}

/* (int8[8])x and (uint32)array (bpftrace 0.19's array casts): the
 * value's bytes, of equal sizes (sema), copied into memory of the new
 * type, or loaded from it as an integer. */
static struct cval array_cast(struct cg *cg, const struct node *n)
{
	static const uint8_t sz[9] = { [1] = BPF_B, [2] = BPF_H, [4] = BPF_W,
				       [8] = BPF_DW };
	const struct node *e = n->u.cast.expr;
	uint32_t size = type_is_int(n->type) ? e->type->size : n->type->size;
	struct cmem m = cg_alloc(cg, size < 8 ? 8 : size);
	cg_zero(cg, m, size < 8 ? 8 : size);
	if (type_is_int(e->type)) {
		uint32_t b = e->type->bits ? e->type->bits / 8u : 8;
		struct cval v = cg_expr(cg, e);
		ir_stx(cg->ir, b < 9 && sz[b] ? sz[b] : BPF_DW, m.base,
		       (int16_t)m.off, cg_reg(cg, v));
	} else {
		cg_expr_to(cg, e, m, e->type);
	}
	if (!type_is_int(n->type))
		return cg_memval(m, n->type);
	uint32_t b = n->type->bits ? n->type->bits / 8u : 8;
	vreg d = cg_load(cg, b < 9 && sz[b] ? sz[b] : BPF_DW, m);
	cg_normalize(cg, d, n->type);
	return cg_regval(d, n->type);
}

static struct cval binop(struct cg *cg, const struct node *n)
{
	enum op op = n->u.binop.op;
	const struct node *l = n->u.binop.lhs, *r = n->u.binop.rhs;
	if (is_compare(op) && (type_is_str(l->type) || type_is_str(r->type)))
		return cg_str_compare(cg, n);
	if (is_compare(op) && l->type && (l->type->kind == TYPE_BUF ||
					  l->type->kind == TYPE_ARRAY ||
					  l->type->kind == TYPE_TUPLE ||
					  l->type->kind == TYPE_USERNAME ||
					  l->type->kind == TYPE_KSYM ||
					  l->type->kind == TYPE_USYM))
		return cg_mem_compare(cg, n);
	if (is_compare(op) || op == OP_LAND || op == OP_LOR)
		return bool_of(cg, n);
	if (cg_is_ptr_arith(n))
		return cg_ptr_arith(cg, n);
	if (cg_alu_code(op) == 0xff) {
		cg_error(cg, n->pos, "operator '%s' cannot be compiled",
			 op_name(op));
		return cg_imm(0, n->type);
	}
	struct cval a = cg_expr(cg, l);
	struct cval b = cg_expr(cg, r);
	if (!n->u.binop.zero_warn)
		return arith(cg, op, a, b, n->type);
	/* --dialect=0.26: a divisor of 0 warns and gives 1 (sema.c) */
	vreg bv = cg_reg(cg, b), d = ir_vreg(cg->ir);
	uint32_t nonzero = ir_label(cg->ir), done = ir_label(cg->ir);
	ir_jcci(cg->ir, BPF_JNE, bv, 0, nonzero);
	cg_expr(cg, n->u.binop.zero_warn);
	ir_movi(cg->ir, d, 1);
	ir_ja(cg->ir, done);
	ir_place(cg->ir, nonzero);
	ir_mov(cg->ir, d, cg_reg(cg, arith(cg, op, a, cg_regval(bv, r->type),
					   n->type)));
	ir_place(cg->ir, done);
	return cg_regval(d, n->type);
}

static struct cval unop(struct cg *cg, const struct node *n)
{
	const struct node *o = n->u.unop.operand;
	vreg d;
	switch (n->u.unop.op) {
	case OP_LNOT:
		return bool_of(cg, n);
	case OP_NEG:
		d = ir_vreg(cg->ir);
		ir_neg(cg->ir, d, cg_reg(cg, cg_expr(cg, o)));
		cg_normalize(cg, d, n->type);
		return cg_regval(d, n->type);
	case OP_BNOT:
		d = ir_vreg(cg->ir);
		ir_alui(cg->ir, BPF_XOR, d, cg_reg(cg, cg_expr(cg, o)), -1);
		cg_normalize(cg, d, n->type);
		return cg_regval(d, n->type);
	case OP_ADDROF: {
		/* &$x (sema: a variable): where it lives on the stack */
		int32_t slot = o->u.var.slot;
		if (cg->var_mem[slot].base == VR_NONE) {
			/* a for loop's body: its integers live elsewhere */
			cg_error(cg, n->pos, "&$%s: the address of an integer "
				 "variable cannot be taken in a for loop's body",
				 o->u.var.name);
			return cg_imm(0, n->type);
		}
		cg_var_home(cg, slot);
		d = cg_addr(cg, cg->var_mem[slot]);
		return cg_regval(d, n->type);
	}
	case OP_DEREF: {
		if (cg_is_cobject(n))
			return cg_cobject(cg, n);
		/* *ptr: read the pointee through the fault-safe helper. */
		struct cg_mark mk = cg_mark(cg);
		struct cmem tmp = cg_alloc(cg, 8);
		ir_st(cg->ir, BPF_DW, tmp.base, (int16_t)tmp.off, 0);
		vreg p = cg_reg(cg, cg_expr(cg, o));
		unsigned bytes = n->type && n->type->bits ? n->type->bits / 8 : 8;
		vreg r = cg_call(cg, BPF_FUNC_probe_read, (struct ir_arg[]){
			cg_arg(tmp), IR_IMM((int32_t)bytes), IR_ARG(p) }, 3);
		cg_d_fault(cg, r, p);
		d = cg_load(cg, BPF_DW, tmp);
		cg_normalize(cg, d, n->type);
		cg_release(cg, mk);
		return cg_regval(d, n->type);
	}
	default:
		cg_error(cg, n->pos, "operator '%s' cannot be compiled",
			 op_name(n->u.unop.op));
		return cg_imm(0, n->type);
	}
}

/* cond ? a : b. Integers meet in one vreg; other values in one temp. */
static struct cval ternary(struct cg *cg, const struct node *n)
{
	uint32_t els = ir_label(cg->ir), done = ir_label(cg->ir);
	if (n->type->kind == TYPE_NONE) {   /* one of two statements */
		cg_cond_jump(cg, n->u.ternary.cond, false, els);
		cg_expr(cg, n->u.ternary.then);
		ir_ja(cg->ir, done);
		ir_place(cg->ir, els);
		cg_expr(cg, n->u.ternary.els);
		ir_place(cg->ir, done);
		return cg_imm(0, n->type);
	}
	if (!type_is_int(n->type)) {
		struct cmem m = cg_alloc(cg, n->type->size);
		cg_expr_to(cg, n, m, n->type);
		return cg_memval(m, n->type);
	}
	vreg d = ir_vreg(cg->ir);
	cg_cond_jump(cg, n->u.ternary.cond, false, els);
	ir_mov(cg->ir, d, cg_reg(cg, cg_expr(cg, n->u.ternary.then)));
	ir_ja(cg->ir, done);
	ir_place(cg->ir, els);
	ir_mov(cg->ir, d, cg_reg(cg, cg_expr(cg, n->u.ternary.els)));
	ir_place(cg->ir, done);
	return cg_regval(d, n->type);
}

void cg_var_home(struct cg *cg, int32_t slot)
{
	const struct type *t = cg->pnode->u.probe.var_types[slot];
	if (!type_is_int(t) || cg->var_mem[slot].base == VR_NONE)
		return;
	ir_stx(cg->ir, BPF_DW, cg->var_mem[slot].base,
	       (int16_t)cg->var_mem[slot].off, cg->var_reg[slot]);
}

static struct cval var_incdec(struct cg *cg, const struct node *n)
{
	const struct node *v = n->u.incdec.target;
	vreg r = cg->var_reg[v->u.var.slot];
	enum op op = n->u.incdec.op;
	int64_t step = cg_ptr_step(v->type);
	int64_t delta = op == OP_PREINC || op == OP_POSTINC ? step : -step;
	vreg old = VR_NONE;
	if (op == OP_POSTINC || op == OP_POSTDEC) {
		old = ir_vreg(cg->ir);
		ir_mov(cg->ir, old, r);
	}
	ir_alui(cg->ir, BPF_ADD, r, r, delta);
	cg_normalize(cg, r, v->type);
	cg_var_home(cg, v->u.var.slot);
	/* Pre: the new value, copied so later writes to $x do not change
	 * an already computed expression. */
	if (!old) {
		old = ir_vreg(cg->ir);
		ir_mov(cg->ir, old, r);
	}
	return cg_regval(old, n->type);
}

static struct cval tuple_index(struct cg *cg, const struct node *n)
{
	struct cval base = cg_expr(cg, n->u.tindex.base);
	const struct type *bt = base.t;
	uint32_t i = n->u.tindex.index;
	if (base.kind != CV_MEM || !bt || bt->kind != TYPE_TUPLE ||
	    i >= bt->nfields) {
		cg_error(cg, n->pos, "tuple index %u cannot be compiled", i);
		return cg_imm(0, n->type);
	}
	struct cmem m = cg_at(base.m, (int32_t)bt->offsets[i]);
	if (type_is_int(bt->fields[i]))
		return cg_regval(cg_load(cg, BPF_DW, m), bt->fields[i]);
	return cg_memval(m, bt->fields[i]);
}

struct cval cg_expr(struct cg *cg, const struct node *n)
{
	switch (n->kind) {
	case N_INT:
		return cg_imm((int64_t)n->u.ival, n->type);
	case N_VAR:
		if (type_is_int(n->type))
			return cg_regval(cg->var_reg[n->u.var.slot], n->type);
		return cg_memval(cg->var_mem[n->u.var.slot],
				 cg->pnode->u.probe.var_types[n->u.var.slot]);
	case N_BINOP:
		return binop(cg, n);
	case N_UNOP:
		return unop(cg, n);
	case N_TERNARY:
		return ternary(cg, n);
	case N_BLOCK_EXPR:
		cg_block(cg, n->u.blockx.body);
		if (!n->u.blockx.value)
			return cg_imm(0, n->type);
		return cg_expr(cg, n->u.blockx.value);
	case N_CAST: {
		if (n->type->kind == TYPE_ARRAY ||
		    (type_is_int(n->type) &&
		     n->u.cast.expr->type->kind == TYPE_ARRAY))
			return array_cast(cg, n);
		if (!type_is_int(n->u.cast.expr->type) &&
		    cg_is_cobject(n->u.cast.expr))
			return cg_cobject_addr(cg, n->u.cast.expr, n->type);
		struct cval v = cg_expr(cg, n->u.cast.expr);
		if (!type_is_int(n->type))
			return v;
		if (v.kind == CV_IMM) {
			vreg d = ir_vreg(cg->ir);
			ir_movi(cg->ir, d, v.imm);
			cg_normalize(cg, d, n->type);
			return cg_regval(d, n->type);
		}
		vreg d = ir_vreg(cg->ir);
		ir_mov(cg->ir, d, cg_reg(cg, v));
		cg_normalize(cg, d, n->type);
		return cg_regval(d, n->type);
	}
	case N_INCDEC:
		if (n->u.incdec.target->kind == N_MAP)
			return cg_map_incdec(cg, n);
		return var_incdec(cg, n);
	case N_BUILTIN:
		return cg_builtin(cg, n);
	case N_FIELD:
		return cg_field(cg, n);
	case N_MAP:
		return cg_map_read(cg, n);
	case N_CALL:
		return cg_call_expr(cg, n);
	case N_TUPLE_INDEX:
		return tuple_index(cg, n);
	case N_INDEX:
		return cg_cobject(cg, n);
	case N_STR:
	case N_TUPLE: {
		struct cmem m = cg_alloc(cg, n->type->size);
		cg_expr_to(cg, n, m, n->type);
		return cg_memval(m, n->type);
	}
	case N_POSITIONAL:
		cg_error(cg, n->pos, "positional parameter was not resolved");
		return cg_imm(0, n->type);
	default:
		cg_error(cg, n->pos, "expression cannot be compiled");
		return cg_imm(0, n->type);
	}
}

void cg_expr_to(struct cg *cg, const struct node *n, struct cmem dst,
		const struct type *to)
{
	if (!to)
		to = n->type;
	switch (n->kind) {
	case N_STR:
		cg_str_literal(cg, dst, n->u.str.s, n->u.str.len, to->size);
		return;
	case N_TUPLE:
		if (to->kind != TYPE_TUPLE || to->nfields != n->u.list.n)
			break;
		cg_zero_padding(cg, dst, to);
		for (uint32_t i = 0; i < n->u.list.n; i++) {
			/* a record's elements in the order written, each to
			 * its field by name in the slot's order */
			int j = to->names && n->u.tup.names ?
				type_field_index(to, n->u.tup.names[i]) : (int)i;
			if (j < 0) {
				cg_error(cg, n->pos, "record field '%s' is "
					 "missing", n->u.tup.names[i]);
				return;
			}
			cg_expr_to(cg, n->u.list.v[i],
				   cg_at(dst, (int32_t)to->offsets[j]),
				   to->fields[j]);
		}
		return;
	case N_BLOCK_EXPR:
		if (type_is_int(n->type) || !n->u.blockx.value)
			break;
		cg_block(cg, n->u.blockx.body);
		cg_expr_to(cg, n->u.blockx.value, dst, to);
		return;
	case N_TERNARY:
		if (type_is_int(n->type))
			break;
		{
			uint32_t els = ir_label(cg->ir), done = ir_label(cg->ir);
			if (to->kind == TYPE_BUF)   /* the smaller one's tail */
				cg_zero(cg, dst, to->size);
			cg_cond_jump(cg, n->u.ternary.cond, false, els);
			cg_expr_to(cg, n->u.ternary.then, dst, to);
			ir_ja(cg->ir, done);
			ir_place(cg->ir, els);
			cg_expr_to(cg, n->u.ternary.els, dst, to);
			ir_place(cg->ir, done);
		}
		return;
	case N_BUILTIN:
		if (!cg_builtin_is_mem(n))
			break;
		cg_builtin_to(cg, n, dst, to);
		return;
	case N_FIELD:
	case N_INDEX:
	case N_UNOP:
		if (type_is_int(n->type) || !cg_is_cobject(n)) {
			if (n->kind == N_FIELD && !type_is_int(n->type)) {
				cg_field_to(cg, n, dst, to);
				return;
			}
			break;
		}
		cg_cobject_to(cg, n, dst, to);
		return;
	case N_MAP:
		if (type_is_int(n->type))
			break;
		cg_map_read_to(cg, n, dst, to);
		return;
	case N_CALL:
		if (type_is_int(n->type))
			break;
		cg_call_to(cg, n, dst, to);
		return;
	default:
		break;
	}
	struct cg_mark mk = cg_mark(cg);
	struct cval v = cg_expr(cg, n);
	cg_store(cg, dst, v, to);
	cg_release(cg, mk);
}
