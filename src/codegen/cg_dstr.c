/* cg_dstr.c - D's string subroutines (funcs/dtrace_str.c checks them):
 * strlen, strjoin, substr, index, rindex, strchr, strrchr, strstr,
 * toupper, tolower, lltostr, basename and dirname, as the illumos
 * Dynamic Tracing Guide describes them.
 *
 * How. Every one is a few bounded loops over the bytes of its operands
 * (a string's type size bounds it), with the loop counter in a register
 * the verifier follows round by round. What a loop remembers across
 * rounds (the last slash seen, a match's position) is only written in
 * the loop, never tested there, so the verifier does not make it precise
 * and the paths through one round meet again at the next. A string
 * result is built in a frame temporary and copied to its destination at
 * the end, as the destination may be an operand (s = strjoin(s, "x")).
 * That temporary is in the scratch map (cg_alloc_untracked): on the
 * stack, the verifier would tell apart every path by which of its bytes
 * a loop has written, and run the rest of the probe once for each. */
#include "cg.h"

#include <string.h>

static struct cval operand(struct cg *cg, const struct node *n)
{
	struct cval v = cg_expr(cg, n);
	if (v.kind != CV_MEM) {
		cg_error(cg, n->pos, "string operand cannot be compiled");
		v = cg_memval(cg_alloc(cg, 8), n->type);
		cg_zero(cg, v.m, 8);
	}
	return v;
}

static const struct node *argn(const struct node *call, uint32_t i)
{
	return call->u.call.args.v[i];
}

/* r's value in a new register that the verifier knows nothing of (it
 * went through untracked memory): a loop's result, which is its counter
 * when it left, would otherwise keep every way out of the loop apart
 * through the rest of the probe. */
static vreg launder(struct cg *cg, vreg r)
{
	vreg st = cg_addr(cg, cg_alloc_untracked(cg, 8));
	vreg d = ir_vreg(cg->ir);
	ir_stx(cg->ir, BPF_DW, st, 0, r);
	ir_ldx(cg->ir, BPF_DW, d, st, 0);
	return d;
}

/* The bytes before the first NUL of the size bytes at p. */
static vreg str_len(struct cg *cg, vreg p, int64_t size)
{
	struct ir *ir = cg->ir;
	vreg i = ir_vreg(ir), a = ir_vreg(ir), c = ir_vreg(ir);
	uint32_t loop = ir_label(ir), done = ir_label(ir);
	ir_movi(ir, i, 0);
	ir_place(ir, loop);
	ir_jcci(ir, BPF_JGE, i, size, done);
	ir_alu(ir, BPF_ADD, a, p, i);
	ir_ldx(ir, BPF_B, c, a, 0);
	ir_jcci(ir, BPF_JEQ, c, 0, done);
	ir_alui(ir, BPF_ADD, i, i, 1);
	ir_ja(ir, loop);
	ir_place(ir, done);
	return launder(cg, i);
}

/* Append to the result q (qsize bytes, j its length so far, kept below
 * qsize - 1 for the NUL) the bytes of p (psize) from index i on, at most
 * n of them (n < 0: no limit), up to p's NUL. i and n are clobbered. */
static void str_append(struct cg *cg, vreg q, int64_t qsize, vreg j,
		       vreg p, int64_t psize, vreg i, vreg n)
{
	struct ir *ir = cg->ir;
	vreg a = ir_vreg(ir), c = ir_vreg(ir);
	uint32_t loop = ir_label(ir), done = ir_label(ir);
	ir_place(ir, loop);
	ir_jcci(ir, BPF_JGE, j, qsize - 1, done);
	ir_jcci(ir, BPF_JGE, i, psize, done);   /* unsigned: i < 0 too */
	ir_jcci(ir, BPF_JEQ, n, 0, done);
	ir_alu(ir, BPF_ADD, a, p, i);
	ir_ldx(ir, BPF_B, c, a, 0);
	ir_jcci(ir, BPF_JEQ, c, 0, done);
	ir_alu(ir, BPF_ADD, a, q, j);
	ir_stx(ir, BPF_B, a, 0, c);
	ir_alui(ir, BPF_ADD, i, i, 1);
	ir_alui(ir, BPF_ADD, j, j, 1);
	ir_alui(ir, BPF_SUB, n, n, 1);
	ir_ja(ir, loop);
	ir_place(ir, done);
}

/* A result under construction: a zeroed temporary of the result's size. */
struct result {
	struct cmem tmp;
	vreg q, j;
	int64_t size;
};

static struct result result_start(struct cg *cg, const struct type *to)
{
	struct result r = { .size = to->size };
	r.tmp = cg_alloc_untracked(cg, to->size);
	cg_zero(cg, r.tmp, to->size);
	r.q = cg_addr(cg, r.tmp);
	r.j = ir_vreg(cg->ir);
	ir_movi(cg->ir, r.j, 0);
	return r;
}

static void result_end(struct cg *cg, struct result *r, struct cmem dst)
{
	cg_copy(cg, dst, r->tmp, (uint32_t)r->size);
}

/* result += p[i ...], at most n bytes (n: a vreg, or none for all) */
static void result_add(struct cg *cg, struct result *r, vreg p, int64_t psize,
		       vreg i, vreg n)
{
	vreg ii = ir_vreg(cg->ir), nn = ir_vreg(cg->ir);
	ir_mov(cg->ir, ii, i);
	if (n)
		ir_mov(cg->ir, nn, n);
	else
		ir_movi(cg->ir, nn, -1);
	str_append(cg, r->q, r->size, r->j, p, psize, ii, nn);
}

static void result_lit(struct cg *cg, struct result *r, const char *s)
{
	cg_str_literal(cg, r->tmp, s, (uint32_t)strlen(s), (uint32_t)r->size);
}

/* ---- strlen, strjoin, substr ------------------------------------------ */

struct cval cg_dstr_strlen(struct cg *cg, const struct node *n)
{
	struct cval s = operand(cg, argn(n, 0));
	return cg_regval(str_len(cg, cg_addr(cg, s.m), s.t->size), n->type);
}

void cg_dstr_strjoin_to(struct cg *cg, const struct node *n, struct cmem dst,
			const struct type *to)
{
	struct cval a = operand(cg, argn(n, 0));
	struct cval b = operand(cg, argn(n, 1));
	struct result r = result_start(cg, to);
	vreg zero = ir_vreg(cg->ir);
	ir_movi(cg->ir, zero, 0);
	result_add(cg, &r, cg_addr(cg, a.m), a.t->size, zero, 0);
	result_add(cg, &r, cg_addr(cg, b.m), b.t->size, zero, 0);
	result_end(cg, &r, dst);
}

/* substr(s, index[, length]) as the guide's reference does it: a
 * negative index counts from the end (what lies before the start is
 * taken off the length), an index past the end is "", a negative length
 * leaves that many bytes off the end. */
void cg_dstr_substr_to(struct cg *cg, const struct node *n, struct cmem dst,
		       const struct type *to)
{
	struct ir *ir = cg->ir;
	struct cval s = operand(cg, argn(n, 0));
	vreg p = cg_addr(cg, s.m);
	vreg idx = ir_vreg(ir), rem = ir_vreg(ir);
	ir_mov(ir, idx, cg_reg(cg, cg_expr(cg, argn(n, 1))));
	if (n->u.call.args.n > 2)
		ir_mov(ir, rem, cg_reg(cg, cg_expr(cg, argn(n, 2))));
	else
		ir_movi(ir, rem, to->size);
	vreg len = str_len(cg, p, s.t->size);
	struct result r = result_start(cg, to);
	uint32_t nonneg = ir_label(ir), empty = ir_label(ir);
	uint32_t copy = ir_label(ir), done = ir_label(ir);
	ir_jcci(ir, BPF_JSGE, idx, 0, nonneg);
	ir_alu(ir, BPF_ADD, idx, idx, len);
	ir_jcci(ir, BPF_JSGE, idx, 0, nonneg);
	/* before the start: what remains of the length starts at 0 */
	ir_alu(ir, BPF_ADD, rem, rem, idx);
	ir_jcci(ir, BPF_JSLE, rem, 0, empty);
	ir_movi(ir, idx, 0);
	ir_place(ir, nonneg);
	ir_jcc(ir, BPF_JSGE, idx, len, empty);
	ir_jcci(ir, BPF_JSGE, rem, 0, copy);
	/* a negative length: that many bytes off the end */
	ir_alu(ir, BPF_ADD, rem, rem, len);
	ir_alu(ir, BPF_SUB, rem, rem, idx);
	ir_jcci(ir, BPF_JSLE, rem, 0, empty);
	ir_place(ir, copy);
	result_add(cg, &r, p, s.t->size, idx, rem);
	ir_ja(ir, done);
	ir_place(ir, empty);
	ir_place(ir, done);
	result_end(cg, &r, dst);
}

/* ---- searching ---------------------------------------------------------- */

/* Whether q (a string of qsize bytes) is at p + i (p of psize bytes):
 * jumps to yes or no. */
static void match_at(struct cg *cg, vreg p, int64_t psize, vreg i,
		     vreg q, int64_t qsize, uint32_t yes, uint32_t no)
{
	struct ir *ir = cg->ir;
	vreg j = ir_vreg(ir), k = ir_vreg(ir), a = ir_vreg(ir);
	vreg c = ir_vreg(ir), x = ir_vreg(ir);
	uint32_t loop = ir_label(ir);
	ir_movi(ir, j, 0);
	ir_place(ir, loop);
	ir_jcci(ir, BPF_JGE, j, qsize, yes);
	ir_alu(ir, BPF_ADD, a, q, j);
	ir_ldx(ir, BPF_B, c, a, 0);
	ir_jcci(ir, BPF_JEQ, c, 0, yes);
	ir_alu(ir, BPF_ADD, k, i, j);
	ir_jcci(ir, BPF_JGE, k, psize, no);
	ir_alu(ir, BPF_ADD, a, p, k);
	ir_ldx(ir, BPF_B, x, a, 0);
	ir_jcc(ir, BPF_JNE, x, c, no);
	ir_alui(ir, BPF_ADD, j, j, 1);
	ir_ja(ir, loop);
}

/* The first (last: the last) i in [lo, hi] with q at p + i, i at most
 * p's length (the empty string is found at the end), or -1. */
static vreg find(struct cg *cg, vreg p, int64_t psize, vreg q, int64_t qsize,
		 vreg lo, vreg hi, bool last)
{
	struct ir *ir = cg->ir;
	vreg len = str_len(cg, p, psize);
	vreg pos = ir_vreg(ir), i = ir_vreg(ir);
	uint32_t loop = ir_label(ir), yes = ir_label(ir), no = ir_label(ir);
	uint32_t fail = ir_label(ir), done = ir_label(ir);
	ir_movi(ir, pos, -1);
	/* the candidates: [max(lo, 0), min(hi, len)] */
	uint32_t l1 = ir_label(ir), l2 = ir_label(ir);
	vreg from = ir_vreg(ir), to = ir_vreg(ir);
	ir_mov(ir, from, lo);
	ir_jcci(ir, BPF_JSGE, from, 0, l1);
	ir_movi(ir, from, 0);
	ir_place(ir, l1);
	ir_mov(ir, to, hi);
	ir_jcc(ir, BPF_JSLE, to, len, l2);
	ir_mov(ir, to, len);
	ir_place(ir, l2);
	ir_jcc(ir, BPF_JSGT, from, to, fail);
	ir_mov(ir, i, last ? to : from);
	ir_place(ir, loop);
	/* i stays in [0, psize]: the verifier bounds every access by it */
	ir_jcci(ir, BPF_JGT, i, psize, fail);
	match_at(cg, p, psize, i, q, qsize, yes, no);
	ir_place(ir, no);
	if (last) {
		ir_jcc(ir, BPF_JSLE, i, from, fail);
		ir_alui(ir, BPF_SUB, i, i, 1);
	} else {
		ir_jcc(ir, BPF_JSGE, i, to, fail);
		ir_alui(ir, BPF_ADD, i, i, 1);
	}
	ir_ja(ir, loop);
	ir_place(ir, yes);
	ir_mov(ir, pos, i);
	ir_place(ir, fail);
	ir_ja(ir, done);
	ir_place(ir, done);
	return launder(cg, pos);
}

/* index(s, sub[, start]), rindex(s, sub[, start]): a position or -1 */
struct cval cg_dstr_index(struct cg *cg, const struct node *n)
{
	struct ir *ir = cg->ir;
	bool last = strcmp(n->u.call.name, "__dtrace_rindex") == 0;
	struct cval s = operand(cg, argn(n, 0));
	struct cval sub = operand(cg, argn(n, 1));
	vreg lo = ir_vreg(ir), hi = ir_vreg(ir);
	vreg start = 0;
	if (n->u.call.args.n > 2)
		start = cg_reg(cg, cg_expr(cg, argn(n, 2)));
	if (last) {
		ir_movi(ir, lo, 0);
		if (start)
			ir_mov(ir, hi, start);
		else
			ir_movi(ir, hi, s.t->size);
	} else {
		if (start)
			ir_mov(ir, lo, start);
		else
			ir_movi(ir, lo, 0);
		ir_movi(ir, hi, s.t->size);
	}
	vreg pos = find(cg, cg_addr(cg, s.m), s.t->size, cg_addr(cg, sub.m),
			sub.t->size, lo, hi, last);
	return cg_regval(pos, n->type);
}

/* strstr(s, sub): s from sub's first place on, or "" (D's NULL) */
void cg_dstr_strstr_to(struct cg *cg, const struct node *n, struct cmem dst,
		       const struct type *to)
{
	struct ir *ir = cg->ir;
	struct cval s = operand(cg, argn(n, 0));
	struct cval sub = operand(cg, argn(n, 1));
	vreg p = cg_addr(cg, s.m);
	vreg lo = ir_vreg(ir), hi = ir_vreg(ir);
	ir_movi(ir, lo, 0);
	ir_movi(ir, hi, s.t->size);
	vreg pos = find(cg, p, s.t->size, cg_addr(cg, sub.m), sub.t->size,
			lo, hi, false);
	struct result r = result_start(cg, to);
	uint32_t none = ir_label(ir);
	ir_jcci(ir, BPF_JSLT, pos, 0, none);
	result_add(cg, &r, p, s.t->size, pos, 0);
	ir_place(ir, none);
	result_end(cg, &r, dst);
}

/* strchr(s, c), strrchr(s, c): s from c's first (last) place on, or "" */
void cg_dstr_strchr_to(struct cg *cg, const struct node *n, struct cmem dst,
		       const struct type *to)
{
	struct ir *ir = cg->ir;
	bool last = strcmp(n->u.call.name, "__dtrace_strrchr") == 0;
	struct cval s = operand(cg, argn(n, 0));
	vreg ch = ir_vreg(ir);
	ir_mov(ir, ch, cg_reg(cg, cg_expr(cg, argn(n, 1))));
	ir_alui(ir, BPF_AND, ch, ch, 0xff);
	vreg p = cg_addr(cg, s.m);
	int64_t size = s.t->size;
	/* the last match so far in untracked memory, not a register the
	 * verifier would tell each path apart by */
	vreg st = cg_addr(cg, cg_alloc_untracked(cg, 8));
	vreg i = ir_vreg(ir), pos = ir_vreg(ir), a = ir_vreg(ir), c = ir_vreg(ir);
	uint32_t loop = ir_label(ir), done = ir_label(ir), hit = ir_label(ir);
	uint32_t next = ir_label(ir);
	ir_st(ir, BPF_DW, st, 0, -1);
	ir_movi(ir, i, 0);
	ir_place(ir, loop);
	ir_jcci(ir, BPF_JGE, i, size, done);
	ir_alu(ir, BPF_ADD, a, p, i);
	ir_ldx(ir, BPF_B, c, a, 0);
	ir_jcc(ir, BPF_JEQ, c, ch, hit);
	ir_jcci(ir, BPF_JEQ, c, 0, done);
	ir_ja(ir, next);
	ir_place(ir, hit);
	ir_stx(ir, BPF_DW, st, 0, i);
	if (!last)
		ir_ja(ir, done);
	ir_jcci(ir, BPF_JEQ, c, 0, done);   /* strrchr(s, 0): the end */
	ir_place(ir, next);
	ir_alui(ir, BPF_ADD, i, i, 1);
	ir_ja(ir, loop);
	ir_place(ir, done);
	ir_ldx(ir, BPF_DW, pos, st, 0);
	struct result r = result_start(cg, to);
	uint32_t none = ir_label(ir);
	ir_jcci(ir, BPF_JSLT, pos, 0, none);
	result_add(cg, &r, p, size, pos, 0);
	ir_place(ir, none);
	result_end(cg, &r, dst);
}

/* ---- case, numbers, paths ----------------------------------------------- */

/* toupper(s), tolower(s): ASCII letters changed, the rest kept */
void cg_dstr_case_to(struct cg *cg, const struct node *n, struct cmem dst,
		     const struct type *to)
{
	struct ir *ir = cg->ir;
	bool upper = strcmp(n->u.call.name, "__dtrace_toupper") == 0;
	struct cval s = operand(cg, argn(n, 0));
	vreg p = cg_addr(cg, s.m);
	struct result r = result_start(cg, to);
	int64_t lim = s.t->size < r.size - 1 ? s.t->size : r.size - 1;
	vreg i = ir_vreg(ir), a = ir_vreg(ir), c = ir_vreg(ir);
	uint32_t loop = ir_label(ir), done = ir_label(ir), keep = ir_label(ir);
	ir_movi(ir, i, 0);
	ir_place(ir, loop);
	ir_jcci(ir, BPF_JGE, i, lim, done);
	ir_alu(ir, BPF_ADD, a, p, i);
	ir_ldx(ir, BPF_B, c, a, 0);
	ir_jcci(ir, BPF_JEQ, c, 0, done);
	ir_jcci(ir, BPF_JLT, c, upper ? 'a' : 'A', keep);
	ir_jcci(ir, BPF_JGT, c, upper ? 'z' : 'Z', keep);
	ir_alui(ir, BPF_XOR, c, c, 0x20);
	ir_place(ir, keep);
	ir_alu(ir, BPF_ADD, a, r.q, i);
	ir_stx(ir, BPF_B, a, 0, c);
	ir_alui(ir, BPF_ADD, i, i, 1);
	ir_ja(ir, loop);
	ir_place(ir, done);
	result_end(cg, &r, dst);
}

/* lltostr(n[, base]): n in base 10 (signed) or in base 2..36 (unsigned,
 * 16 after "0x", 8 after "0", as the illumos implementation writes
 * them). The digits are written from the end of a 72-byte buffer. */
void cg_dstr_lltostr_to(struct cg *cg, const struct node *n, struct cmem dst,
			const struct type *to)
{
	struct ir *ir = cg->ir;
	int64_t base = 10;
	if (n->u.call.args.n > 1)
		base = (int64_t)argn(n, 1)->u.ival;   /* a literal: sema */
	vreg v = ir_vreg(ir), neg = ir_vreg(ir);
	ir_mov(ir, v, cg_reg(cg, cg_expr(cg, argn(n, 0))));
	ir_movi(ir, neg, 0);
	if (base == 10) {
		uint32_t pos = ir_label(ir);
		ir_jcci(ir, BPF_JSGE, v, 0, pos);
		ir_movi(ir, neg, 1);
		ir_neg(ir, v, v);
		ir_place(ir, pos);
	}
	enum { BUF = 72 };
	struct cmem buf = cg_alloc_untracked(cg, BUF);
	cg_zero(cg, buf, BUF);
	vreg b = cg_addr(cg, buf);
	vreg k = ir_vreg(ir), d = ir_vreg(ir), a = ir_vreg(ir);
	uint32_t loop = ir_label(ir), digits = ir_label(ir), alpha = ir_label(ir);
	uint32_t put = ir_label(ir);
	ir_movi(ir, k, BUF - 2);   /* the last byte is the NUL */
	ir_place(ir, loop);
	ir_mov(ir, d, v);
	ir_alui(ir, BPF_MOD, d, d, base);
	ir_jcci(ir, BPF_JGE, d, 10, alpha);
	ir_alui(ir, BPF_ADD, d, d, '0');
	ir_ja(ir, put);
	ir_place(ir, alpha);
	ir_alui(ir, BPF_ADD, d, d, 'a' - 10);
	ir_place(ir, put);
	ir_alu(ir, BPF_ADD, a, b, k);
	ir_stx(ir, BPF_B, a, 0, d);
	ir_alui(ir, BPF_DIV, v, v, base);
	ir_jcci(ir, BPF_JEQ, v, 0, digits);
	ir_jcci(ir, BPF_JLE, k, 3, digits);
	ir_alui(ir, BPF_SUB, k, k, 1);
	ir_ja(ir, loop);
	ir_place(ir, digits);
	/* k is the first digit's index (at least 3: room for a prefix) */
	const char *prefix = base == 16 ? "0x" : base == 8 ? "0" : NULL;
	uint32_t nosign = ir_label(ir);
	for (const char *c = prefix ? prefix + strlen(prefix) : NULL;
	     c && c-- > prefix;) {
		ir_alui(ir, BPF_SUB, k, k, 1);
		ir_alu(ir, BPF_ADD, a, b, k);
		ir_st(ir, BPF_B, a, 0, *c);
	}
	ir_jcci(ir, BPF_JEQ, neg, 0, nosign);
	ir_alui(ir, BPF_SUB, k, k, 1);
	ir_alu(ir, BPF_ADD, a, b, k);
	ir_st(ir, BPF_B, a, 0, '-');
	ir_place(ir, nosign);
	struct result r = result_start(cg, to);
	result_add(cg, &r, b, BUF, k, 0);
	result_end(cg, &r, dst);
}

/* basename(s), dirname(s), as basename(1) and dirname(1): trailing
 * slashes do not count, "" is ".", a path of slashes is "/". One pass
 * notes where the last component starts (base), where the slashes
 * before it start (dir) and its last byte (end), in untracked memory
 * (the verifier would keep apart every path by those positions in
 * registers); then the copy. */
void cg_dstr_path_to(struct cg *cg, const struct node *n, struct cmem dst,
		     const struct type *to)
{
	enum { RUN = 0, DSTART = 8, BSTART = 16, END = 24 };
	struct ir *ir = cg->ir;
	bool dir = strcmp(n->u.call.name, "__dtrace_dirname") == 0;
	struct cval s = operand(cg, argn(n, 0));
	vreg p = cg_addr(cg, s.m);
	int64_t size = s.t->size;
	vreg st = cg_addr(cg, cg_alloc_untracked(cg, 32));
	vreg i = ir_vreg(ir), a = ir_vreg(ir), c = ir_vreg(ir);
	vreg prev = ir_vreg(ir), t = ir_vreg(ir);
	uint32_t loop = ir_label(ir), done = ir_label(ir), slash = ir_label(ir);
	uint32_t next = ir_label(ir);
	ir_movi(ir, i, 0);
	ir_movi(ir, prev, '/');     /* as if after a slash */
	ir_st(ir, BPF_DW, st, RUN, -1);
	ir_st(ir, BPF_DW, st, DSTART, -1);
	ir_st(ir, BPF_DW, st, BSTART, 0);
	ir_st(ir, BPF_DW, st, END, -1);
	ir_place(ir, loop);
	ir_jcci(ir, BPF_JGE, i, size, done);
	ir_alu(ir, BPF_ADD, a, p, i);
	ir_ldx(ir, BPF_B, c, a, 0);
	ir_jcci(ir, BPF_JEQ, c, 0, done);
	ir_jcci(ir, BPF_JEQ, c, '/', slash);
	ir_stx(ir, BPF_DW, st, END, i);
	ir_jcci(ir, BPF_JNE, prev, '/', next);
	ir_stx(ir, BPF_DW, st, BSTART, i);     /* a component starts */
	ir_ldx(ir, BPF_DW, t, st, RUN);
	ir_stx(ir, BPF_DW, st, DSTART, t);
	ir_ja(ir, next);
	ir_place(ir, slash);
	ir_jcci(ir, BPF_JEQ, prev, '/', next);
	ir_stx(ir, BPF_DW, st, RUN, i);        /* a run of slashes starts */
	ir_place(ir, next);
	ir_mov(ir, prev, c);
	ir_alui(ir, BPF_ADD, i, i, 1);
	ir_ja(ir, loop);
	ir_place(ir, done);
	i = launder(cg, i);   /* the length */
	vreg end = ir_vreg(ir), bstart = ir_vreg(ir), dstart = ir_vreg(ir);
	ir_ldx(ir, BPF_DW, end, st, END);
	ir_ldx(ir, BPF_DW, bstart, st, BSTART);
	ir_ldx(ir, BPF_DW, dstart, st, DSTART);
	struct result r = result_start(cg, to);
	uint32_t fin = ir_label(ir), dot = ir_label(ir), root = ir_label(ir);
	uint32_t some = ir_label(ir);
	ir_jcci(ir, BPF_JSGE, end, 0, some);
	ir_jcci(ir, BPF_JEQ, i, 0, dot);
	ir_ja(ir, root);
	ir_place(ir, some);
	vreg zero = ir_vreg(ir), cnt = ir_vreg(ir);
	if (dir) {
		ir_jcci(ir, BPF_JSLT, dstart, 0, dot);
		ir_jcci(ir, BPF_JEQ, dstart, 0, root);
		ir_movi(ir, zero, 0);
		result_add(cg, &r, p, size, zero, dstart);
	} else {
		ir_mov(ir, cnt, end);
		ir_alui(ir, BPF_ADD, cnt, cnt, 1);
		ir_alu(ir, BPF_SUB, cnt, cnt, bstart);
		result_add(cg, &r, p, size, bstart, cnt);
	}
	ir_ja(ir, fin);
	ir_place(ir, dot);
	result_lit(cg, &r, ".");
	ir_ja(ir, fin);
	ir_place(ir, root);
	result_lit(cg, &r, "/");
	ir_place(ir, fin);
	result_end(cg, &r, dst);
}

/* ---- strtok --------------------------------------------------------------- */

/* Whether c is one of the bytes of the string d (dsize bytes): jumps */
static void in_set(struct cg *cg, vreg c, vreg d, int64_t dsize, uint32_t yes,
		   uint32_t no)
{
	struct ir *ir = cg->ir;
	vreg k = ir_vreg(ir), a = ir_vreg(ir), x = ir_vreg(ir);
	uint32_t loop = ir_label(ir);
	ir_movi(ir, k, 0);
	ir_place(ir, loop);
	ir_jcci(ir, BPF_JGE, k, dsize, no);
	ir_alu(ir, BPF_ADD, a, d, k);
	ir_ldx(ir, BPF_B, x, a, 0);
	ir_jcci(ir, BPF_JEQ, x, 0, no);
	ir_jcc(ir, BPF_JEQ, x, c, yes);
	ir_alui(ir, BPF_ADD, k, k, 1);
	ir_ja(ir, loop);
}

/* strtok(s, delim), and strtok(NULL, delim) (the third argument 1):
 * what is left of the string lives in this CPU's value of the map
 * ".dstrtok" (strsize bytes), from one call to the next. The token is
 * what follows the delimiters at its start up to the next delimiter,
 * which is skipped; no token: "" (D's NULL). */
void cg_dstr_strtok_to(struct cg *cg, const struct node *n, struct cmem dst,
		       const struct type *to)
{
	struct ir *ir = cg->ir;
	struct program *prog = cg->prog;
	int map = program_find_map(prog, ".dstrtok");
	int64_t size = to->size;
	if (map < 0) {
		struct map_spec ms = { .name = ".dstrtok",
				       .kind = MAP_PERCPU_ARRAY, .key_size = 4,
				       .value_size = (uint32_t)size,
				       .max_entries = 1 };
		map = program_add_map(prog, &ms);
	}
	bool cont = argn(n, 2)->u.ival != 0;
	struct cval dl = operand(cg, argn(n, 1));
	vreg d = cg_addr(cg, dl.m);
	struct result r = result_start(cg, to);
	struct cmem key = cg_alloc(cg, 8);
	ir_st(ir, BPF_W, key.base, (int16_t)key.off, 0);
	vreg st = cg_call(cg, BPF_FUNC_map_lookup_elem,
			  (struct ir_arg[]){ IR_MAP(map), cg_arg(key) }, 2);
	uint32_t out = ir_label(ir);
	ir_jcci(ir, BPF_JEQ, st, 0, out);
	if (!cont) {    /* a new string: it is the state now */
		struct cval s = operand(cg, argn(n, 0));
		uint32_t m = s.t->size < (uint32_t)size ? s.t->size :
			(uint32_t)size;
		cg_zero(cg, (struct cmem){ st, 0 }, (uint32_t)size);
		cg_copy(cg, (struct cmem){ st, 0 }, s.m, m);
		ir_st(ir, BPF_B, st, (int16_t)(size - 1), 0);
	}
	vreg i = ir_vreg(ir), a = ir_vreg(ir), c = ir_vreg(ir);
	vreg t = ir_vreg(ir), len = ir_vreg(ir), e = ir_vreg(ir);
	uint32_t skip = ir_label(ir), skipped = ir_label(ir);
	uint32_t next = ir_label(ir), tok = ir_label(ir), ended = ir_label(ir);
	uint32_t in = ir_label(ir);
	/* the delimiters at the start */
	ir_movi(ir, i, 0);
	ir_place(ir, skip);
	ir_jcci(ir, BPF_JGE, i, size, skipped);
	ir_alu(ir, BPF_ADD, a, st, i);
	ir_ldx(ir, BPF_B, c, a, 0);
	ir_jcci(ir, BPF_JEQ, c, 0, skipped);
	in_set(cg, c, d, dl.t->size, next, skipped);
	ir_place(ir, next);
	ir_alui(ir, BPF_ADD, i, i, 1);
	ir_ja(ir, skip);
	ir_place(ir, skipped);
	/* unknown to the verifier from here: each way out of the loop
	 * above would otherwise walk the one below on its own */
	ir_mov(ir, i, launder(cg, i));
	ir_mov(ir, t, i);                   /* the token's start */
	/* the token: up to a delimiter or the end */
	ir_place(ir, tok);
	ir_jcci(ir, BPF_JGE, i, size, ended);
	ir_alu(ir, BPF_ADD, a, st, i);
	ir_ldx(ir, BPF_B, c, a, 0);
	ir_jcci(ir, BPF_JEQ, c, 0, ended);
	uint32_t more = ir_label(ir);
	in_set(cg, c, d, dl.t->size, in, more);
	ir_place(ir, more);
	ir_alui(ir, BPF_ADD, i, i, 1);
	ir_ja(ir, tok);
	ir_place(ir, in);
	/* a delimiter ends it: the rest starts after it */
	ir_mov(ir, e, launder(cg, i));
	ir_mov(ir, len, e);
	ir_alu(ir, BPF_SUB, len, len, t);
	result_add(cg, &r, st, size, t, len);
	ir_alui(ir, BPF_ADD, e, e, 1);
	uint32_t shift = ir_label(ir);
	ir_ja(ir, shift);
	ir_place(ir, ended);
	ir_mov(ir, e, launder(cg, i));
	ir_mov(ir, len, e);
	ir_alu(ir, BPF_SUB, len, len, t);
	result_add(cg, &r, st, size, t, len);
	/* what is left moves to the start of the state */
	ir_place(ir, shift);
	{
		vreg j = ir_vreg(ir), k = ir_vreg(ir), x = ir_vreg(ir);
		uint32_t loop = ir_label(ir), done = ir_label(ir);
		ir_movi(ir, j, 0);
		ir_place(ir, loop);
		ir_jcci(ir, BPF_JGE, j, size, done);
		ir_alu(ir, BPF_ADD, k, e, j);
		ir_movi(ir, x, 0);
		uint32_t put = ir_label(ir);
		ir_jcci(ir, BPF_JGE, k, size, put);
		ir_alu(ir, BPF_ADD, a, st, k);
		ir_ldx(ir, BPF_B, x, a, 0);
		ir_place(ir, put);
		ir_alu(ir, BPF_ADD, a, st, j);
		ir_stx(ir, BPF_B, a, 0, x);
		ir_alui(ir, BPF_ADD, j, j, 1);
		ir_ja(ir, loop);
		ir_place(ir, done);
	}
	ir_place(ir, out);
	result_end(cg, &r, dst);
}
