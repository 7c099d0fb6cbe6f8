/* cg_ctype.c - C objects: struct members (`->`, `.`), array elements
 * (`[]`), `*p` and casts of a C object to its address.
 *
 * A C object is found as a place before it is read: in kernel or user
 * memory at an address (a vreg) plus a constant offset, or in BPF memory
 * (a struct value held in a variable, a map or a temporary) at a cmem.
 * Chains of `.` and constant `[i]` only add to the offset, so
 * `curtask->se.load.weight` is one read of 8 bytes at curtask + the
 * folded offset; each `->` reads the pointer it follows. Remote memory
 * is read with bpf_probe_read_kernel or _user by the place's address
 * space (types.h enum addr_space), local memory with plain loads.
 * Scalars come back widened to 64 bits per their type (cg.h), bitfields
 * shifted and masked; structs, arrays and char arrays are copied whole
 * in their C layout. */
#include "cg.h"

struct cplace {
	bool remote;
	struct cmem m;          /* local: where the object is */
	vreg addr;              /* remote: base address */
	int64_t off;            /* remote: constant offset from addr */
	enum addr_space space;
};

static bool is_cnode(const struct node *n);

/* Unknown: bpf_probe_read, which on x86-64 reads user or kernel memory
 * by the address (what bpftrace 0.17 does for such pointers). */
static int read_helper(enum addr_space sp)
{
	switch (sp) {
	case AS_USER: return BPF_FUNC_probe_read_user;
	case AS_KERNEL: return BPF_FUNC_probe_read_kernel;
	default: return BPF_FUNC_probe_read;
	}
}

/* The address of a remote place as one vreg. */
static vreg place_addr(struct cg *cg, const struct cplace *pl)
{
	if (!pl->off)
		return pl->addr;
	vreg a = ir_vreg(cg->ir);
	ir_mov(cg->ir, a, pl->addr);
	if (pl->off >= INT32_MIN && pl->off <= INT32_MAX) {
		ir_alui(cg->ir, BPF_ADD, a, a, pl->off);
	} else {
		vreg k = ir_vreg(cg->ir);
		ir_movi(cg->ir, k, pl->off);
		ir_alu(cg->ir, BPF_ADD, a, a, k);
	}
	return a;
}

static void place_add(struct cplace *pl, int64_t off)
{
	if (pl->remote)
		pl->off += off;
	else
		pl->m = cg_at(pl->m, (int32_t)off);
}

/* A remote place at the value of pointer expression e. */
static void place_at_pointer(struct cg *cg, const struct node *e,
			     struct cplace *pl)
{
	const struct type *t = e->type;
	*pl = (struct cplace){ .remote = true,
			       .addr = cg_reg(cg, cg_expr(cg, e)),
			       .space = t ? t->space : AS_UNKNOWN };
}

/* pl moves to element i of esize bytes (a pointer's, or a flexible
 * array's: no bounds to check). */
static void unbounded_index(struct cg *cg, struct cplace *pl, vreg i,
			    uint32_t esize)
{
	vreg a = place_addr(cg, pl);
	ir_alui(cg->ir, BPF_MUL, i, i, esize);
	vreg sum = ir_vreg(cg->ir);
	ir_mov(cg->ir, sum, a);
	ir_alu(cg->ir, BPF_ADD, sum, sum, i);
	pl->addr = sum;
	pl->off = 0;
}

/* pl moves to element i of an array of n elements of esize bytes. An
 * index outside [0, n) (negatives included: the compare is unsigned)
 * moves it to address 0 instead, which every read helper fails on and
 * zero-fills, so the element reads as 0: never the memory beside the
 * array, and the verifier sees the index bounded before it scales it. */
static void bounded_index(struct cg *cg, struct cplace *pl, vreg i,
			  uint32_t esize, uint32_t n, const struct node *warn)
{
	vreg a = place_addr(cg, pl);
	vreg sum = ir_vreg(cg->ir);
	ir_movi(cg->ir, sum, 0);
	uint32_t out = ir_label(cg->ir), done = ir_label(cg->ir);
	ir_jcci(cg->ir, BPF_JGE, i, n, out);
	ir_alui(cg->ir, BPF_MUL, i, i, esize);
	ir_mov(cg->ir, sum, a);
	ir_alu(cg->ir, BPF_ADD, sum, sum, i);
	if (warn) {   /* --dialect=0.26: said at run time (sema_index) */
		ir_ja(cg->ir, done);
		ir_place(cg->ir, out);
		cg_expr(cg, warn);
		ir_place(cg->ir, done);
	} else {
		ir_place(cg->ir, out);
	}
	pl->addr = sum;
	pl->off = 0;
}

/* Where the C object of expression n is. */
static void place_of(struct cg *cg, const struct node *n, struct cplace *pl)
{
	switch (n->kind) {
	case N_FIELD: {
		const struct node *b = n->u.field.base;
		if (n->u.field.arrow) {
			place_at_pointer(cg, b, pl);
		} else if (is_cnode(b)) {
			place_of(cg, b, pl);
		} else {
			struct cval v = cg_expr(cg, b);
			*pl = (struct cplace){ .m = v.m, .space = b->type->space };
		}
		place_add(pl, n->u.field.bit_offset / 8);
		return;
	}
	case N_INDEX: {
		const struct node *b = n->u.index.base, *ix = n->u.index.index;
		const struct type *bt = b->type;
		uint32_t esize = n->type->kind == TYPE_INT && n->type->ctype ?
			n->type->ctype->size : n->type->size;
		if (bt->kind == TYPE_ARRAY) {
			esize = bt->ctype->elem->size;
			if (is_cnode(b)) {
				place_of(cg, b, pl);
			} else {
				struct cval v = cg_expr(cg, b);
				*pl = (struct cplace){ .m = v.m, .space = bt->space };
			}
		} else {
			place_at_pointer(cg, b, pl);
			const struct ctype *e = bt->ctype ? bt->ctype->elem : NULL;
			esize = e && e->size ? e->size : 1;
		}
		if (ix->kind == N_INT) {
			place_add(pl, (int64_t)ix->u.ival * esize);
			return;
		}
		vreg i = ir_vreg(cg->ir);
		ir_mov(cg->ir, i, cg_reg(cg, cg_expr(cg, ix)));
		uint32_t n_el = bt->kind == TYPE_ARRAY ? bt->ctype->nelems : 0;
		if (!pl->remote) {
			/* an array the script holds (stack or map value) is
			 * read at its address like memory, so the index can
			 * vary; its bounds always apply */
			vreg a = ir_vreg(cg->ir);
			ir_mov(cg->ir, a, pl->m.base);
			*pl = (struct cplace){ .remote = true, .addr = a,
					       .off = pl->m.off,
					       .space = AS_KERNEL };
			bounded_index(cg, pl, i, esize, n_el,
				      n->u.index.oob_warn);
			return;
		}
		if (n_el)
			bounded_index(cg, pl, i, esize, n_el,
				      n->u.index.oob_warn);
		else
			unbounded_index(cg, pl, i, esize);
		return;
	}
	case N_UNOP:
		place_at_pointer(cg, n->u.unop.operand, pl);
		return;
	default:
		cg_error(cg, n->pos, "expression has no address");
		*pl = (struct cplace){ .remote = true, .addr = cg_reg(cg,
				       cg_imm(0, type_u64())) };
		return;
	}
}

/* N_FIELD on a C struct, N_INDEX, or *p on a typed pointer. */
static bool is_cnode(const struct node *n)
{
	switch (n->kind) {
	case N_FIELD:
		return n->u.field.cfield != NULL;
	case N_INDEX:
		return true;
	case N_UNOP:
		return n->u.unop.op == OP_DEREF && n->u.unop.operand->type &&
		       n->u.unop.operand->type->ctype &&
		       n->u.unop.operand->type->ctype->kind == CT_PTR;
	default:
		return false;
	}
}

bool cg_is_cobject(const struct node *n)
{
	return is_cnode(n);
}

/* Copy between BPF memory at any offsets: the verifier refuses
 * misaligned stack accesses, and a member of a struct held by the script
 * may sit at any offset, so each step is as wide as both sides allow. */
static void local_copy(struct cg *cg, struct cmem dst, struct cmem src,
		       uint32_t size)
{
	static const uint8_t codes[] = { BPF_DW, BPF_W, BPF_H, BPF_B };
	static const uint32_t widths[] = { 8, 4, 2, 1 };
	uint32_t o = 0;
	while (o < size) {
		int k = 0;
		while (k < 3 && (widths[k] > size - o ||
				 (uint32_t)(src.off + (int32_t)o) % widths[k] ||
				 (uint32_t)(dst.off + (int32_t)o) % widths[k]))
			k++;
		vreg t = cg_load(cg, codes[k], cg_at(src, (int32_t)o));
		ir_stx(cg->ir, codes[k], dst.base,
		       (int16_t)(dst.off + (int32_t)o), t);
		o += widths[k];
	}
}

/* Copy `size` bytes of the place to dst, for the object of node n: a
 * read that fails is reported at n under -kk, as bpftrace does. */
static void place_copy(struct cg *cg, const struct node *n,
		       const struct cplace *pl, struct cmem dst, uint32_t size)
{
	if (!pl->remote) {
		local_copy(cg, dst, pl->m, size);
		return;
	}
	int helper = read_helper(pl->space);
	vreg r = cg_call(cg, helper, (struct ir_arg[]){
		cg_arg(dst), IR_IMM((int32_t)size),
		IR_ARG(place_addr(cg, pl)) }, 3);
	struct pos outer = cg->pos;
	cg->pos = n->pos;
	cg_check_helper(cg, r, helper);
	cg->pos = outer;
}

/* The C size of n's object, and its bitfield if it is one. */
static uint32_t object_size(const struct node *n, const struct ctype_field **bf)
{
	*bf = NULL;
	if (n->kind == N_FIELD && n->u.field.cfield &&
	    n->u.field.cfield->bit_size)
		*bf = n->u.field.cfield;
	const struct type *t = n->type;
	if (t->kind == TYPE_INT && t->ctype)
		return t->ctype->size;
	return t->size;
}

static uint8_t size_code(uint32_t size)
{
	switch (size) {
	case 1: return BPF_B;
	case 2: return BPF_H;
	case 4: return BPF_W;
	default: return BPF_DW;
	}
}

struct cval cg_cobject(struct cg *cg, const struct node *n)
{
	const struct type *t = n->type;
	if (t->kind != TYPE_INT) {
		struct cmem m = cg_alloc(cg, t->size);
		cg_cobject_to(cg, n, m, t);
		return cg_memval(m, t);
	}
	struct cplace pl;
	place_of(cg, n, &pl);
	const struct ctype_field *bf;
	uint32_t size = object_size(n, &bf);
	uint32_t shift = 0;
	if (bf) {
		/* the bytes that hold the bits, shifted down below */
		uint32_t first = n->u.field.bit_offset % 8;
		shift = first;
		size = (first + bf->bit_size + 7) / 8;
	}
	if (size > 8)
		size = 8;
	vreg d;
	if (!pl.remote && (size == 1 || size == 2 || size == 4 || size == 8) &&
	    (uint32_t)pl.m.off % size == 0) {
		d = cg_load(cg, size_code(size), pl.m);
	} else {
		struct cg_mark mk = cg_mark(cg);
		struct cmem tmp = cg_alloc(cg, 8);
		ir_st(cg->ir, BPF_DW, tmp.base, (int16_t)tmp.off, 0);
		place_copy(cg, n, &pl, tmp, size);
		d = cg_load(cg, BPF_DW, tmp);
		cg_release(cg, mk);
	}
	if (bf) {
		if (shift)
			ir_alui(cg->ir, BPF_RSH, d, d, shift);
		unsigned w = bf->bit_size;
		/* C reads a signed bitfield sign-extended; bpftrace reads
		 * every bitfield as its bits, and 0.26's tests expect that
		 * (a `short b:8` holding 0xd9 is 217) */
		bool sext = t->is_signed && cg->prog->dialect < DIALECT_026;
		if (w < 64) {
			if (sext) {
				ir_alui(cg->ir, BPF_LSH, d, d, 64 - w);
				ir_alui(cg->ir, BPF_ARSH, d, d, 64 - w);
			} else if (w < 32) {
				ir_alui(cg->ir, BPF_AND, d, d, (1ll << w) - 1);
			} else {
				ir_alui(cg->ir, BPF_LSH, d, d, 64 - w);
				ir_alui(cg->ir, BPF_RSH, d, d, 64 - w);
			}
		}
		return cg_regval(d, t);
	}
	cg_normalize(cg, d, t);
	return cg_regval(d, t);
}

void cg_cobject_to(struct cg *cg, const struct node *n, struct cmem dst,
		   const struct type *to)
{
	const struct type *t = n->type;
	if (!to)
		to = t;
	if (t->kind == TYPE_INT || (to->kind != t->kind) ||
	    (t->kind != TYPE_STR && !type_equal(t, to))) {
		struct cval v = cg_cobject(cg, n);
		cg_store(cg, dst, v, to);
		return;
	}
	struct cplace pl;
	place_of(cg, n, &pl);
	uint32_t size = t->size < to->size ? t->size : to->size;
	if (size < to->size)
		cg_zero(cg, cg_at(dst, (int32_t)size), to->size - size);
	place_copy(cg, n, &pl, dst, size);
	/* a char array read whole may fill its string without a NUL;
	 * output stops at the size, as for every string (types.h) */
}

/* (type *)obj where obj is a C object (a char array, a struct): its
 * address, as bpftrace 0.17 takes it. */
struct cval cg_cobject_addr(struct cg *cg, const struct node *n,
			    const struct type *t)
{
	struct cplace pl;
	place_of(cg, n, &pl);
	if (!pl.remote) {
		cg_error(cg, n->pos, "a value held by the script has no "
			 "address to cast");
		return cg_imm(0, t);
	}
	vreg a = ir_vreg(cg->ir);
	ir_mov(cg->ir, a, place_addr(cg, &pl));
	return cg_regval(a, t);
}

static bool typed_ptr(const struct type *t)
{
	return t && t->kind == TYPE_INT && t->is_ptr && t->ctype &&
	       t->ctype->kind == CT_PTR;
}

bool cg_is_ptr_arith(const struct node *n)
{
	if (n->kind != N_BINOP || !typed_ptr(n->type))
		return false;
	enum op op = n->u.binop.op;
	bool l = typed_ptr(n->u.binop.lhs->type);
	bool r = typed_ptr(n->u.binop.rhs->type);
	return (op == OP_ADD && l != r) || (op == OP_SUB && l && !r);
}

/* What one step of pointer arithmetic on a value of type t adds: the
 * pointee's size for a typed pointer (void *: 1), else 1. `p += i`,
 * `p -= i`, `p++` and `p--` step by it, as `p + i` does and as bpftrace
 * 0.17 does. */
int64_t cg_ptr_step(const struct type *t)
{
	const struct ctype *e = typed_ptr(t) ? t->ctype->elem : NULL;
	return e && e->size ? e->size : 1;
}

/* The value of `p += x` or `p -= x` scaled by p's step (other
 * operators and integers: x as it is). */
struct cval cg_scale_step(struct cg *cg, enum op op, const struct type *t,
			  struct cval x)
{
	int64_t step = cg_ptr_step(t);
	if (step == 1 || (op != OP_ADD && op != OP_SUB))
		return x;
	if (x.kind == CV_IMM)
		return cg_imm(x.imm * step, x.t);
	vreg k = ir_vreg(cg->ir);
	ir_mov(cg->ir, k, cg_reg(cg, x));
	ir_alui(cg->ir, BPF_MUL, k, k, step);
	return cg_regval(k, x.t);
}

/* p + i, p - i on a typed pointer: i scaled by the pointee's size. */
struct cval cg_ptr_arith(struct cg *cg, const struct node *n)
{
	const struct node *l = n->u.binop.lhs, *r = n->u.binop.rhs;
	bool left = typed_ptr(l->type);
	const struct node *p = left ? l : r, *i = left ? r : l;
	const struct ctype *e = p->type->ctype->elem;
	uint32_t scale = e && e->size ? e->size : 1;
	vreg d = ir_vreg(cg->ir);
	ir_mov(cg->ir, d, cg_reg(cg, cg_expr(cg, p)));
	vreg k = ir_vreg(cg->ir);
	ir_mov(cg->ir, k, cg_reg(cg, cg_expr(cg, i)));
	if (scale != 1)
		ir_alui(cg->ir, BPF_MUL, k, k, scale);
	ir_alu(cg->ir, n->u.binop.op == OP_SUB ? BPF_SUB : BPF_ADD, d, d, k);
	return cg_regval(d, n->type);
}
