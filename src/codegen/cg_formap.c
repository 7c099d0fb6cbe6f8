/* cg_formap.c - for ($kv : @m) { body } (bpftrace 0.21) and len(@m):
 * bpf_for_each_map_elem (5.13+) with the body as a callback subprogram;
 * for ($i : a..b) (bpftrace 0.24) likewise through bpf_loop (5.17+), as
 * the verifier cannot bound a loop whose end it does not know.
 *
 * The callback is generated into its own IR (own vregs, own frame) and
 * appended after the probe's program by codegen.c. It reaches the
 * probe's state through its fourth argument, the address of the probe's
 * frame (the verifier lets a callee read and write its caller's stack
 * through such a pointer):
 *  - variables that live in memory (strings, tuples: cg->var_mem) are
 *    used where they are, through that address (or the per-CPU scratch
 *    map, looked up again);
 *  - integer variables live in vregs, so the caller stores them in the
 *    spill area before the call and loads them back after; the callback
 *    loads them on entry and stores them back before it returns;
 *  - the probe's context pointer is in the spill area too (the verifier
 *    tracks a spilled pointer), and the return flag, which `return` in
 *    the body sets so that the probe stops after the call.
 * `continue` returns 0 (go on), `break` and `return` return 1 (stop).
 * Nested loops nest callbacks; the spill area stays the probe's. */
#include <stdlib.h>
#include <string.h>

#include "asm.h"
#include "cg.h"
#include "regalloc.h"

uint32_t cg_spill_size(uint32_t nvars)
{
	return 8 * nvars + 16;
}

static int32_t spill_var(const struct cg *cg, uint32_t slot)
{
	return cg->spill + 8 * (int32_t)slot;
}

static int32_t spill_ctx(const struct cg *cg)
{
	return cg->spill + 8 * (int32_t)cg->pnode->u.probe.nvars;
}

static int32_t spill_flag(const struct cg *cg)
{
	return spill_ctx(cg) + 8;
}

static bool int_slot(const struct cg *cg, uint32_t slot)
{
	const struct type *t = cg->pnode->u.probe.var_types[slot];
	return !t || type_is_int(t);
}

/* Store (to_spill) or load the integer variables. A value is stored as
 * two 32-bit halves so that the verifier sees the slot as unknown bytes,
 * not a spilled constant: kernels before 6.7 verify a callback once, with
 * the values of its first call, and would drop as dead the branches
 * those values never take (a range loop's end test, `if ($n == 0)`). */
static void move_ints(struct cg *cg, bool to_spill)
{
	for (uint32_t i = 0; i < cg->pnode->u.probe.nvars; i++) {
		if (!int_slot(cg, i))
			continue;
		int16_t off = (int16_t)spill_var(cg, i);
		if (to_spill) {
			vreg hi = ir_vreg(cg->ir);
			ir_stx(cg->ir, BPF_W, cg->root_fp, off, cg->var_reg[i]);
			ir_alui(cg->ir, BPF_RSH, hi, cg->var_reg[i], 32);
			ir_stx(cg->ir, BPF_W, cg->root_fp, (int16_t)(off + 4), hi);
		} else {
			ir_ldx(cg->ir, BPF_DW, cg->var_reg[i], cg->root_fp, off);
		}
	}
}

static int new_sub(struct cg *cg)
{
	struct cg_sub s = { .parent = cg->sub };
	if (vec_push(&cg->subs->v, s)) {
		cg_error(cg, cg->pos, "out of memory");
		return -1;
	}
	return (int)cg->subs->v.n - 1;
}

/* Lower a callback's IR into its slot of cg->subs. */
static void finish_sub(struct cg *cg, struct ir *ir, uint32_t frame, int idx)
{
	struct ra ra;
	ir_prune(ir);
	int err = ir->err ? ir->err : regalloc(ir, frame, 4, &ra);
	struct bpf_insn *insns = NULL;
	uint32_t n = 0;
	if (!err) {
		err = asm_lower(ir, &ra, &insns, &n);
		ra_free(&ra);
	}
	if (err) {
		if (!cg->err)
			cg->err = err;
		return;
	}
	struct cg_sub *s = &cg->subs->v.v[idx];
	s->insns = insns;
	s->n = n;
	s->stack = (ra.stack ? ra.stack + 31 : 32) & ~31u;
}

/* A callback's ends, after its body (at its continue label): go on
 * (0), stop at break (1), or stop at return, the probe too (the flag);
 * the integer variables go back to the spill area on each. */
static void finish_body(struct cg *parent, struct cg *c, struct ir *ir,
			int idx, uint32_t l_brk)
{
	move_ints(c, true);
	ir_reti(ir, 0);
	ir_place(ir, l_brk);
	move_ints(c, true);
	ir_reti(ir, 1);
	ir_place(ir, c->l_exit);         /* return: stop, and the probe too */
	move_ints(c, true);
	ir_st(ir, BPF_DW, c->root_fp, (int16_t)spill_flag(c), 1);
	ir_reti(ir, 1);

	if (c->scr_max > parent->scr_max)
		parent->scr_max = c->scr_max;
	if (c->need_scratch)
		parent->need_scratch = true;
	if (c->err && !parent->err)
		parent->err = c->err;
	if (!c->err && !c->need_scratch)
		finish_sub(parent, ir, c->frame_max, idx);
	ir_free(ir);
}

/* The callback of `n` (its body), as subprogram idx: for over a map
 * (bpf_for_each_map_elem: r2 key, r3 value, r4 the frame), or a for
 * loop's range as a while loop (bpf_loop: r2 the frame; each call tests
 * the condition, runs the body and the step). */
static void gen_body(struct cg *parent, const struct node *n, int idx)
{
	bool range = n->kind == N_WHILE;
	struct ir ir;
	ir_init(&ir);
	struct cg c = *parent;
	c.ir = &ir;
	c.sub = idx;
	c.frame = c.frame_max = 0;
	c.nloops = 0;
	c.scr_max = c.scr;
	c.need_scratch = false;
	c.err = 0;
	c.l_exit = ir_label(&ir);
	uint32_t l_brk = ir_label(&ir), l_cont = ir_label(&ir);

	/* r2 key, r3 value, r4 the probe's frame: saved before anything
	 * can clobber them */
	vreg key = ir_vreg(&ir), val = ir_vreg(&ir);
	c.root_fp = ir_vreg(&ir);
	if (range) {
		c.frame = c.frame_max = 8;
		ir_argsave(&ir, BPF_REG_2, -8);
		ir_ldx(&ir, BPF_DW, c.root_fp, VR_FP, -8);
	} else {
		c.frame = c.frame_max = 24;
		ir_argsave(&ir, BPF_REG_2, -8);
		ir_argsave(&ir, BPF_REG_3, -16);
		ir_argsave(&ir, BPF_REG_4, -24);
		ir_ldx(&ir, BPF_DW, key, VR_FP, -8);
		ir_ldx(&ir, BPF_DW, val, VR_FP, -16);
		ir_ldx(&ir, BPF_DW, c.root_fp, VR_FP, -24);
	}
	c.ctx = ir_vreg(&ir);
	ir_ldx(&ir, BPF_DW, c.ctx, c.root_fp, (int16_t)spill_ctx(&c));
	if (c.use_scratch) {
		c.frame += 8;
		c.frame_max = c.frame;
		int16_t off = -(int16_t)c.frame;
		ir_st(&ir, BPF_W, VR_FP, off, 0);
		c.scratch = cg_call(&c, BPF_FUNC_map_lookup_elem,
				    (struct ir_arg[]){ IR_MAP(c.scratch_map),
						       IR_STK(off) }, 2);
		ir_jcci(&ir, BPF_JEQ, c.scratch, 0, l_brk);
	}
	uint32_t nvars = c.pnode->u.probe.nvars;
	c.var_reg = arena_array(c.a, vreg, nvars ? nvars : 1);
	c.var_mem = arena_array(c.a, struct cmem, nvars ? nvars : 1);
	for (uint32_t i = 0; i < nvars; i++) {
		c.var_reg[i] = ir_vreg(&ir);
		struct cmem m = parent->var_mem[i];
		if (int_slot(&c, i))
			continue;
		if (m.base == parent->root_fp)
			m.base = c.root_fp;
		else if (m.base == parent->scratch)
			m.base = c.scratch;
		c.var_mem[i] = m;
	}
	move_ints(&c, false);

	if (range) {
		c.loops[0] = (struct cg_loop){ l_brk, l_cont };
		c.nloops = 1;
		cg_cond_jump(&c, n->u.loop.cond, false, l_brk);
		cg_block(&c, n->u.loop.body);
		ir_place(&ir, l_cont);
		cg_stmt(&c, n->u.loop.step);
		finish_body(parent, &c, &ir, idx, l_brk);
		return;
	}

	/* $kv = (key, value) */
	const struct node *var = n->u.loop.step, *mn = n->u.loop.cond;
	const struct type *kv = c.pnode->u.probe.var_types[var->u.var.slot];
	struct cmem dst = c.var_mem[var->u.var.slot];
	const struct map_spec *s = &c.prog->maps[mn->u.map.map_id];
	cg_copy(&c, cg_at(dst, (int32_t)kv->offsets[0]), (struct cmem){ key, 0 },
		kv->fields[0]->size);
	struct cmem vdst = cg_at(dst, (int32_t)kv->offsets[1]);
	if (s->value_type->kind == TYPE_COUNT || s->value_type->kind == TYPE_SUM)
		cg_store(&c, vdst, cg_agg_read_at(&c, mn->u.map.map_id,
						  (struct cmem){ key, 0 },
						  kv->fields[1]),
			 kv->fields[1]);
	else
		cg_copy(&c, vdst, (struct cmem){ val, 0 }, kv->fields[1]->size);

	c.loops[0] = (struct cg_loop){ l_brk, l_cont };
	c.nloops = 1;
	cg_block(&c, n->u.loop.body);
	ir_place(&ir, l_cont);
	finish_body(parent, &c, &ir, idx, l_brk);
}

void cg_for_map(struct cg *cg, const struct node *n)
{
	bool range = n->kind == N_WHILE;
	const struct node *mn = n->u.loop.cond;
	if (!cg->spill || (!range && (mn->u.map.map_id < 0 ||
	    !cg->pnode->u.probe.var_types[n->u.loop.step->u.var.slot]))) {
		cg_error(cg, n->pos, "for loop cannot be compiled");
		return;
	}
	int idx = new_sub(cg);
	if (idx < 0)
		return;
	gen_body(cg, n, idx);

	move_ints(cg, true);
	if (cg->sub < 0) {
		vreg ctx = cg->ctx;
		ir_stx(cg->ir, BPF_DW, cg->root_fp, (int16_t)spill_ctx(cg), ctx);
	}
	ir_st(cg->ir, BPF_DW, cg->root_fp, (int16_t)spill_flag(cg), 0);
	vreg fn = ir_vreg(cg->ir);
	ir_ldfunc(cg->ir, fn, idx);
	struct ir_arg frame = cg->sub < 0 ? IR_STK(0) : IR_ARG(cg->root_fp);
	if (range)   /* each call tests the condition: nr is a bound only */
		cg_callv(cg, BPF_FUNC_loop,
			 (struct ir_arg[]){ IR_IMM(CG_LOOP_MAX), IR_ARG(fn), frame,
					    IR_IMM(0) }, 4);
	else
		cg_callv(cg, BPF_FUNC_for_each_map_elem,
			 (struct ir_arg[]){ IR_MAP(mn->u.map.map_id), IR_ARG(fn),
					    frame, IR_IMM(0) }, 4);
	move_ints(cg, false);
	vreg flag = ir_vreg(cg->ir);
	ir_ldx(cg->ir, BPF_DW, flag, cg->root_fp, (int16_t)spill_flag(cg));
	ir_jcci(cg->ir, BPF_JNE, flag, 0, cg->l_exit);
}

struct cval cg_map_len(struct cg *cg, const struct node *map)
{
	if (map->u.map.map_id < 0)
		return cg_imm(0, type_s64());
	if (cg->subs->len_cb < 0) {
		int idx = new_sub(cg);
		if (idx < 0)
			return cg_imm(0, type_s64());
		struct ir ir;
		ir_init(&ir);
		ir_reti(&ir, 0);
		finish_sub(cg, &ir, 0, idx);
		ir_free(&ir);
		cg->subs->v.v[idx].parent = -2;   /* called from anywhere */
		cg->subs->len_cb = idx;
	}
	vreg fn = ir_vreg(cg->ir);
	ir_ldfunc(cg->ir, fn, cg->subs->len_cb);
	vreg r = cg_call(cg, BPF_FUNC_for_each_map_elem,
			 (struct ir_arg[]){ IR_MAP(map->u.map.map_id), IR_ARG(fn),
					    IR_IMM(0), IR_IMM(0) }, 4);
	return cg_regval(r, type_s64());
}
