/* cg_call.c - function calls: each through its function's record
 * (funcs/func.h), and the ring buffer records (events) by which calls
 * talk to user space, with their wake-ups and lost-record accounting. */
#include "cg.h"

#include <stddef.h>

#include "../funcs/func.h"

/* Count a record the ring could not take (struct sonde_globals); when it
 * was exit()'s, say so too, or sonde would never stop. */
static void count_lost_kind(struct cg *cg, enum event_kind kind)
{
	if (cg->prog->globals_map < 0)
		return;
	vreg p = cg_globals_ptr(cg);
	uint32_t skip = ir_label(cg->ir);
	ir_jcci(cg->ir, BPF_JEQ, p, 0, skip);
	vreg one = ir_vreg(cg->ir);
	ir_movi(cg->ir, one, 1);
	ir_xadd(cg->ir, BPF_DW, p,
		(int16_t)offsetof(struct sonde_globals, lost_events), one);
	if (kind == EV_EXIT)
		ir_st(cg->ir, BPF_DW, p,
		      (int16_t)offsetof(struct sonde_globals, exit_lost), 1);
	ir_place(cg->ir, skip);
}

void cg_count_lost(struct cg *cg)
{
	count_lost_kind(cg, EV_PRINTF);
}

/* Wake-ups are batched. Waking the reader costs the probe an irq_work
 * (a self-interrupt, a VM exit under virtualization) and the reader a
 * context switch per record, which at one record per hit is most of what
 * a printf costs the traced program. So records are submitted with
 * BPF_RB_NO_WAKEUP and the reader drains the ring on a short timer
 * (engine.c), except:
 *   - exit(), which should not wait for the timer;
 *   - a burst: the first record that finds the ring a quarter full while
 *     the reader sleeps (sonde_globals.wake_armed, set by the reader
 *     before it sleeps) wakes it, so the ring is drained before it
 *     overflows, at the cost of one wake-up per sleep. */
struct ir_arg cg_wake_flags(struct cg *cg, bool now)
{
	vreg f = ir_vreg(cg->ir);
	if (now) {
		ir_movi(cg->ir, f, BPF_RB_FORCE_WAKEUP);
		return IR_ARG(f);
	}
	int ring = cg->prog->ringbuf_map;
	ir_movi(cg->ir, f, BPF_RB_NO_WAKEUP);
	vreg avail = cg_call(cg, BPF_FUNC_ringbuf_query,
			     (struct ir_arg[]){ IR_MAP(ring),
						IR_IMM(BPF_RB_AVAIL_DATA) }, 2);
	vreg size = cg_call(cg, BPF_FUNC_ringbuf_query,
			    (struct ir_arg[]){ IR_MAP(ring),
					       IR_IMM(BPF_RB_RING_SIZE) }, 2);
	uint32_t quiet = ir_label(cg->ir);
	ir_alui(cg->ir, BPF_LSH, avail, avail, 2);
	ir_jcc(cg->ir, BPF_JLT, avail, size, quiet);
	if (cg->prog->globals_map >= 0) {
		/* Not atomic: two CPUs that both see the flag both wake the
		 * reader, which is harmless. */
		int16_t armed = (int16_t)offsetof(struct sonde_globals,
						  wake_armed);
		vreg g = cg_globals_ptr(cg);
		ir_jcci(cg->ir, BPF_JEQ, g, 0, quiet);
		vreg a = ir_vreg(cg->ir);
		ir_ldx(cg->ir, BPF_DW, a, g, armed);
		ir_jcci(cg->ir, BPF_JEQ, a, 0, quiet);
		ir_st(cg->ir, BPF_DW, g, armed, 0);
	}
	ir_movi(cg->ir, f, BPF_RB_FORCE_WAKEUP);
	ir_place(cg->ir, quiet);
	return IR_ARG(f);
}

/* D: the current speculation (funcs/dtrace.c), if any, in the high 32
 * bits of the record's header */
static void tag_speculation(struct cg *cg, vreg rec, int32_t id)
{
	struct ir *ir = cg->ir;
	int map = funcs_dspec_map(cg->prog);
	struct cg_mark mk = cg_mark(cg);
	struct cmem key = cg_alloc(cg, 8);
	ir_st(ir, BPF_W, key.base, (int16_t)key.off, 0);
	vreg v = cg_call(cg, BPF_FUNC_map_lookup_elem,
			 (struct ir_arg[]){ IR_MAP(map), cg_arg(key) }, 2);
	uint32_t none = ir_label(ir);
	ir_jcci(ir, BPF_JEQ, v, 0, none);
	vreg s = ir_vreg(ir);
	ir_ldx(ir, BPF_DW, s, v, 0);
	ir_jcci(ir, BPF_JEQ, s, 0, none);
	ir_alui(ir, BPF_LSH, s, s, 32);
	ir_alui(ir, BPF_OR, s, s, id);
	ir_stx(ir, BPF_DW, rec, 0, s);
	ir_place(ir, none);
	cg_release(cg, mk);
}

void cg_emit_event(struct cg *cg, const struct node *n, uint32_t first,
		   cg_event_fill fill)
{
	int32_t id = n->u.call.event_id;
	if (id < 0 || (uint32_t)id >= cg->prog->nevents ||
	    cg->prog->ringbuf_map < 0) {
		cg_error(cg, n->pos, "%s() has no event", n->u.call.name);
		return;
	}
	const struct event_spec *e = &cg->prog->events[id];
	const struct type *args = e->args;
	uint32_t size = 8 + (args ? args->size : 0);
	/* A copied user stack is a ring record of its own that must come
	 * before the record that refers to it: such arguments are computed
	 * before this record is reserved, and copied in. */
	struct cg_mark outer = cg_mark(cg);
	struct cmem pre[16];
	bool has_pre[16] = { false };
	if (args && !fill && cg->prog->ustack_copy) {
		for (uint32_t i = 0; i < args->nfields && i < 16; i++) {
			if (first + i >= n->u.call.args.n ||
			    !type_has_kind(args->fields[i], TYPE_USTACK))
				continue;
			pre[i] = cg_alloc(cg, args->fields[i]->size);
			cg_expr_to(cg, n->u.call.args.v[first + i], pre[i],
				   args->fields[i]);
			has_pre[i] = true;
		}
	}
	vreg rec = cg_call(cg, BPF_FUNC_ringbuf_reserve,
			   (struct ir_arg[]){ IR_MAP(cg->prog->ringbuf_map),
					      IR_IMM((int32_t)size), IR_IMM(0) },
			   3);
	uint32_t lost = ir_label(cg->ir), done = ir_label(cg->ir);
	ir_jcci(cg->ir, BPF_JEQ, rec, 0, lost);
	ir_st(cg->ir, BPF_DW, rec, 0, id);
	if (cg->prog->dtrace.speculates)
		tag_speculation(cg, rec, id);
	bool open = cg->nopen < 8;
	if (open)
		cg->open_recs[cg->nopen++] = rec;
	if (fill) {
		fill(cg, n, rec, args);
	} else if (args) {
		for (uint32_t i = 0; i < args->nfields; i++) {
			if (first + i >= n->u.call.args.n)
				break;
			struct cmem to = { rec, 8 + (int32_t)args->offsets[i] };
			if (i < 16 && has_pre[i]) {
				cg_copy(cg, to, pre[i], args->fields[i]->size);
				continue;
			}
			struct cg_mark mk = cg_mark(cg);
			cg_expr_to(cg, n->u.call.args.v[first + i], to,
				   args->fields[i]);
			cg_release(cg, mk);
		}
	}
	if (open)
		cg->nopen--;
	struct ir_arg flags = cg_wake_flags(cg, e->kind == EV_EXIT);
	cg_callv(cg, BPF_FUNC_ringbuf_submit,
		(struct ir_arg[]){ IR_ARG(rec), flags }, 2);
	ir_ja(cg->ir, done);
	ir_place(cg->ir, lost);
	count_lost_kind(cg, e->kind);
	ir_place(cg->ir, done);
	cg_release(cg, outer);
}

static const char *helper_name(int helper)
{
	switch (helper) {
	case BPF_FUNC_map_update_elem: return "map_update_elem";
	case BPF_FUNC_map_delete_elem: return "map_delete_elem";
	case BPF_FUNC_map_lookup_elem: return "map_lookup_elem";
	case BPF_FUNC_probe_read: return "probe_read";
	case BPF_FUNC_probe_read_str: return "probe_read_str";
	case BPF_FUNC_probe_read_user: return "probe_read_user";
	case BPF_FUNC_probe_read_user_str: return "probe_read_user_str";
	case BPF_FUNC_probe_read_kernel: return "probe_read_kernel";
	case BPF_FUNC_probe_read_kernel_str: return "probe_read_kernel_str";
	case BPF_FUNC_send_signal: return "send_signal";
	case BPF_FUNC_override_return: return "override_return";
	case BPF_FUNC_get_stackid: return "get_stackid";
	case BPF_FUNC_d_path: return "d_path";
	case BPF_FUNC_trace_printk: return "trace_printk";
	default: return NULL;
	}
}

static bool is_read(int helper)
{
	switch (helper) {
	case BPF_FUNC_probe_read: case BPF_FUNC_probe_read_str:
	case BPF_FUNC_probe_read_user: case BPF_FUNC_probe_read_user_str:
	case BPF_FUNC_probe_read_kernel: case BPF_FUNC_probe_read_kernel_str:
		return true;
	default:
		return false;
	}
}

static void check_helper(struct cg *cg, vreg ret, int helper, bool found);

void cg_check_helper(struct cg *cg, vreg ret, int helper)
{
	check_helper(cg, ret, helper, false);
}

void cg_check_found(struct cg *cg, vreg ptr)
{
	check_helper(cg, ptr, BPF_FUNC_map_lookup_elem, true);
}

/* Report a failed helper (-k, -kk for reads and lookups, as bpftrace
 * 0.17 does) at cg->pos: ret < 0, or with `found` a lookup's NULL
 * (reported as 0, bpftrace's "Failed to map_lookup_elem: 0"). */
static void check_helper(struct cg *cg, vreg ret, int helper, bool found)
{
	const char *name = helper_name(helper);
	int level = cg->prog->helper_check;
	if (!level || !name || ((is_read(helper) || found) && level < 2) ||
	    cg->prog->ringbuf_map < 0)
		return;
	const struct type *s64 = type_s64();
	struct event_spec e = { .kind = EV_HELPER_ERROR, .fmt = name,
				.map_id = -1, .pos = cg->pos,
				.args = type_tuple(cg->a, 1, &s64) };
	int id = program_add_event(cg->prog, &e);
	uint32_t ok = ir_label(cg->ir);
	ir_jcci(cg->ir, found ? BPF_JNE : BPF_JSGE, ret, 0, ok);
	vreg rec = cg_call(cg, BPF_FUNC_ringbuf_reserve,
			   (struct ir_arg[]){ IR_MAP(cg->prog->ringbuf_map),
					      IR_IMM(16), IR_IMM(0) }, 3);
	uint32_t lost = ir_label(cg->ir);
	ir_jcci(cg->ir, BPF_JEQ, rec, 0, lost);
	ir_st(cg->ir, BPF_DW, rec, 0, id);
	if (found)
		ir_st(cg->ir, BPF_DW, rec, 8, 0);
	else
		ir_stx(cg->ir, BPF_DW, rec, 8, ret);
	cg_callv(cg, BPF_FUNC_ringbuf_submit,
		(struct ir_arg[]){ IR_ARG(rec), cg_wake_flags(cg, false) }, 2);
	ir_ja(cg->ir, ok);
	ir_place(cg->ir, lost);
	count_lost_kind(cg, EV_HELPER_ERROR);
	ir_place(cg->ir, ok);
}

void cg_d_fault(struct cg *cg, vreg ret, vreg addr)
{
	const struct probe *p = cg->probe;
	if (!cg->prog->dtrace.on || cg->prog->ringbuf_map < 0 || !p)
		return;
	const char *const *dn = p->dname;
	struct event_spec e = {
		.kind = EV_DTRACE_FAULT, .map_id = -1, .pos = cg->pos,
		.fmt = arena_printf(cg->a, "%s:%s:%s:%s", dn[0] ? dn[0] : "",
				    dn[1] ? dn[1] : "", dn[2] ? dn[2] : "",
				    dn[3] ? dn[3] : ""),
		.top = (uint64_t)(p - cg->prog->probes) + 1,
		.div = cg->d_action,   /* 0: the predicate */
	};
	int id = program_add_event(cg->prog, &e);
	uint32_t ok = ir_label(cg->ir);
	ir_jcci(cg->ir, BPF_JSGE, ret, 0, ok);
	vreg rec = cg_call(cg, BPF_FUNC_ringbuf_reserve,
			   (struct ir_arg[]){ IR_MAP(cg->prog->ringbuf_map),
					      IR_IMM(16), IR_IMM(0) }, 3);
	uint32_t lost = ir_label(cg->ir), done = ir_label(cg->ir);
	ir_jcci(cg->ir, BPF_JEQ, rec, 0, lost);
	ir_st(cg->ir, BPF_DW, rec, 0, id);
	ir_stx(cg->ir, BPF_DW, rec, 8, addr);
	cg_callv(cg, BPF_FUNC_ringbuf_submit,
		(struct ir_arg[]){ IR_ARG(rec), cg_wake_flags(cg, false) }, 2);
	ir_ja(cg->ir, done);
	ir_place(cg->ir, lost);
	count_lost_kind(cg, EV_DTRACE_FAULT);
	ir_place(cg->ir, done);
	/* the clause stops, its records under way dropped (a for loop's
	 * callback cannot leave the probe: it goes on, as bpftrace's
	 * reads do; so do more than 8 records nested) */
	if (cg->sub < 0 && cg->nopen < 8) {
		for (uint32_t i = cg->nopen; i-- > 0;)
			cg_callv(cg, BPF_FUNC_ringbuf_discard, (struct ir_arg[]){
				 IR_ARG(cg->open_recs[i]), IR_IMM(0) }, 2);
		ir_ja(cg->ir, cg->in_clause ? cg->l_clause : cg->l_exit);
	}
	ir_place(cg->ir, ok);
}

struct cval cg_call_expr(struct cg *cg, const struct node *n)
{
	const struct func *f = n->u.call.fn;
	struct pos outer = cg->pos;
	cg->pos = n->pos;
	if (f && f->gen) {
		struct cval v = f->gen(cg, n);
		cg->pos = outer;
		return v;
	}
	if (f && f->gen_to && n->type && n->type->kind != TYPE_NONE) {
		struct cmem m = cg_alloc(cg, n->type->size);
		f->gen_to(cg, n, m, n->type);
		cg->pos = outer;
		return cg_memval(m, n->type);
	}
	cg->pos = outer;
	cg_error(cg, n->pos, "%s() cannot be compiled here", n->u.call.name);
	return cg_imm(0, n->type);
}

void cg_call_to(struct cg *cg, const struct node *n, struct cmem dst,
		const struct type *to)
{
	const struct func *f = n->u.call.fn;
	struct pos outer = cg->pos;
	if (!to)
		to = n->type;
	cg->pos = n->pos;
	if (f && f->gen_to) {
		f->gen_to(cg, n, dst, to);
		cg->pos = outer;
		return;
	}
	if (f && f->gen) {
		cg_store(cg, dst, f->gen(cg, n), to);
		cg->pos = outer;
		return;
	}
	cg->pos = outer;
	cg_error(cg, n->pos, "%s() cannot be compiled here", n->u.call.name);
	cg_zero(cg, dst, to->size);
}

void cg_call_stmt(struct cg *cg, const struct node *n)
{
	struct cg_mark mk = cg_mark(cg);
	const struct node *outer = cg->stmt_call;
	cg->stmt_call = n;
	cg_call_expr(cg, n);
	cg->stmt_call = outer;
	cg_release(cg, mk);
}
