/* codegen.c - the code generator's driver: for each expanded probe, AST
 * to IR (cg_*.c), register allocation, assembly; retrying with a smaller
 * stack budget (and the .scratch map) until the program fits in the
 * 512-byte BPF stack. */
#include "codegen.h"

#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "../program.h"
#include "asm.h"
#include "cg.h"
#include "regalloc.h"

/* Stack budgets for objects, tried in order; the rest is for spills. */
static const struct { uint32_t limit; bool scratch; } budgets[] = {
	{ BPF_STACK_MAX, false }, { 256, true }, { 128, true }, { 0, true },
};

static int scratch_map(struct program *prog)
{
	int m = program_find_map(prog, ".scratch");
	if (m >= 0)
		return m;
	struct map_spec s = { .name = ".scratch", .kind = MAP_PERCPU_ARRAY,
			      .key_size = 4, .value_size = 8,
			      .max_entries = 1 };
	return program_add_map(prog, &s);
}

/* Whether exit() must stop the program's other probes: it has exit()
 * and a probe that can fire again (BEGIN and END run once). Programs
 * without either keep their bytecode as it was. */
bool cg_exit_guarded(const struct program *prog)
{
	bool exits = false, repeats = false;
	for (uint32_t i = 0; i < prog->nevents; i++)
		if (prog->events[i].kind == EV_EXIT)
			exits = true;
	for (uint32_t i = 0; i < prog->nprobes; i++)
		if (!(prog->probes[i].caps & PROBE_RUNS_ONCE))
			repeats = true;
	return exits && repeats && prog->globals_map >= 0;
}

/* bpftrace 0.24 (its CHANGELOG: "-p CLI flag now applies to all probes
 * (except BEGIN/END)"; bpftrace.adoc -p: "For all other probes ... the
 * pid will act like a predicate"): the kernel's function and tracepoint
 * probes, which no process bounds; user-space probes and perf events
 * are opened for the process itself. */
static bool pid_predicate(const struct cg *cg)
{
	static const char *const kinds[] = {
		"kprobe", "kretprobe", "tracepoint", "rawtracepoint",
		"fentry", "fexit",
	};
	if (cg->prog->dialect < DIALECT_024 || !cg->probe->kind)
		return false;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strcmp(cg->probe->kind, kinds[i]) == 0)
			return true;
	return false;
}

static void prologue(struct cg *cg)
{
	const struct node *pn = cg->pnode;
	cg->ctx = ir_vreg(cg->ir);
	ir_entry(cg->ir, cg->ctx);
	if (cg->probe->caps & PROBE_ITER) {
		/* an iterator's last call, with no object: nothing to do */
		vreg obj = ir_vreg(cg->ir);
		ir_ldx(cg->ir, BPF_DW, obj, cg->ctx, 8);
		ir_jcci(cg->ir, BPF_JEQ, obj, 0, cg->l_exit);
	}
	if (cg->use_scratch) {
		/* The key lives on the stack whatever the budget. */
		cg->frame += 8;
		cg->frame_max = cg->frame;
		int16_t off = -(int16_t)cg->frame;
		ir_st(cg->ir, BPF_W, VR_FP, off, 0);
		cg->scratch = cg_call(cg, BPF_FUNC_map_lookup_elem,
				      (struct ir_arg[]){ IR_MAP(cg->scratch_map),
							 IR_STK(off) }, 2);
		ir_jcci(cg->ir, BPF_JEQ, cg->scratch, 0, cg->l_exit);
	}
	if (pid_predicate(cg)) {
		/* -p PID (0: none): that process's events only */
		vreg want = cg_global(cg, offsetof(struct sonde_globals,
						   filter_pid));
		uint32_t any = ir_label(cg->ir);
		ir_jcci(cg->ir, BPF_JEQ, want, 0, any);
		vreg tgid = cg_call(cg, BPF_FUNC_get_current_pid_tgid, NULL, 0);
		ir_alui(cg->ir, BPF_RSH, tgid, tgid, 32);
		ir_jcc(cg->ir, BPF_JNE, tgid, want, cg->l_exit);
		ir_place(cg->ir, any);
	}
	if (!(cg->probe->caps & PROBE_RUNS_ONCE) && cg_exit_guarded(cg->prog)) {
		/* after exit(), nothing more (the record may be unread yet) */
		vreg x = cg_global(cg, offsetof(struct sonde_globals, exiting));
		ir_jcci(cg->ir, BPF_JNE, x, 0, cg->l_exit);
	}
	uint32_t nvars = pn->u.probe.nvars;
	cg->root_fp = VR_FP;
	if (ast_has_kind(pn->u.probe.body, N_FOR_MAP) ||
	    ast_has_for_range(pn->u.probe.body)) {
		/* cg_formap.c's spill area, on the stack whatever the
		 * budget: it holds the context pointer */
		cg->frame += cg_spill_size(nvars);
		cg->frame_max = cg->frame;
		cg->spill = -(int32_t)cg->frame;
	}
	cg->var_reg = arena_array(cg->a, vreg, nvars ? nvars : 1);
	cg->var_mem = arena_array(cg->a, struct cmem, nvars ? nvars : 1);
	for (uint32_t i = 0; i < nvars; i++) {
		const struct type *t = pn->u.probe.var_types ?
			pn->u.probe.var_types[i] : NULL;
		cg->var_reg[i] = ir_vreg(cg->ir);
		if (t && t->kind != TYPE_INT && t->size) {
			/* Zeroed: the verifier rejects reads of unwritten
			 * stack, and bpftrace's variables start empty. */
			cg->var_mem[i] = cg_alloc(cg, t->size);
			cg_zero(cg, cg->var_mem[i], t->size);
		} else if (t && ast_takes_address(pn->u.probe.body,
						  (int32_t)i)) {
			/* &$x of an integer (bpftrace 0.2x): a home in
			 * memory too, which every write to $x updates */
			cg->var_mem[i] = cg_alloc(cg, 8);
			cg_zero(cg, cg->var_mem[i], 8);
		}
	}
}

static void subs_free(struct cg_subs *subs)
{
	for (size_t i = 0; i < subs->v.n; i++)
		free(subs->v.v[i].insns);
	vec_free(&subs->v);
}

/* The deepest chain of frames, as the verifier counts them (each frame
 * rounded up to 32 bytes): the probe's, then its callbacks'. */
static uint32_t stack_depth(uint32_t main, const struct cg_subs *subs)
{
	uint32_t top = (main ? main + 31 : 32) & ~31u, deepest = top;
	for (size_t i = 0; i < subs->v.n; i++) {
		uint32_t d = top;
		for (int k = (int)i; k >= 0; k = subs->v.v[k].parent)
			d += subs->v.v[k].stack;
		if (d > deepest)
			deepest = d;
	}
	return subs->len_cb >= 0 ? deepest + 32 : deepest;
}

/* Append the callbacks after the probe's program and point each
 * BPF_PSEUDO_FUNC load at its callback (imm: relative to the next
 * instruction, as the kernel reads it). */
static int link_subs(const struct cg_subs *subs, struct bpf_insn **insns,
		     uint32_t *n)
{
	if (!subs->v.n)
		return 0;
	uint32_t *start = calloc(subs->v.n, sizeof(*start));
	if (!start)
		return -ENOMEM;
	uint64_t total = *n;
	for (size_t i = 0; i < subs->v.n; i++) {
		start[i] = (uint32_t)total;
		total += subs->v.v[i].n;
	}
	if (total > BPF_INSNS_MAX) {
		free(start);
		return -E2BIG;
	}
	struct bpf_insn *all = realloc(*insns, total * sizeof(*all));
	if (!all) {
		free(start);
		return -ENOMEM;
	}
	for (size_t i = 0; i < subs->v.n; i++)
		memcpy(all + start[i], subs->v.v[i].insns,
		       subs->v.v[i].n * sizeof(*all));
	int err = 0;
	for (uint32_t pc = 0; pc + 1 < total; pc++) {
		struct bpf_insn *in = &all[pc];
		if (in->code != (BPF_LD | BPF_IMM | BPF_DW))
			continue;
		if (in->src_reg == BPF_PSEUDO_FUNC) {
			if (in->imm < 0 || (size_t)in->imm >= subs->v.n)
				err = -EINVAL;
			else
				in->imm = (int32_t)start[in->imm] -
					(int32_t)pc - 1;
		}
		pc++;
	}
	free(start);
	*insns = all;
	*n = (uint32_t)total;
	return err;
}

struct attempt {
	uint32_t limit;
	bool scratch;
	int nregs;
};

/* Generate one probe. Returns 0, -EAGAIN when it does not fit the
 * budget, or another -errno (diagnostics in d). */
static int gen_probe(struct program *prog, struct probe *p,
		     const struct node *pn, struct diags *d,
		     const struct attempt *at)
{
	struct ir ir;
	struct ra ra;
	struct cg_subs subs = { .len_cb = -1 };
	struct cg cg = {
		.prog = prog, .probe = p, .pnode = pn, .ir = &ir,
		.a = prog->arena, .d = d, .frame_limit = at->limit,
		.use_scratch = at->scratch, .scratch_map = -1,
		.mapfail_map = program_find_map(prog, SONDE_MAPFAIL_MAP),
		.subs = &subs, .sub = -1,
	};
	int err;

	ir_init(&ir);
	cg.l_exit = ir_label(&ir);
	if (at->scratch)
		cg.scratch_map = scratch_map(prog);
	prologue(&cg);
	if (pn->u.probe.predicate)
		cg_cond_jump(&cg, pn->u.probe.predicate, false, cg.l_exit);
	cg_clause_body(&cg, pn->u.probe.body);
	ir_place(&ir, cg.l_exit);
	ir_reti(&ir, 0);

	/* An overflowing frame is tried again with scratch, whatever
	 * else its offsets broke on the way. */
	err = cg.need_scratch ? -EAGAIN : cg.err ? cg.err : ir.err;
	if (err) {
		ir_free(&ir);
		subs_free(&subs);
		return err;
	}
	ir_prune(&ir);
	err = regalloc(&ir, cg.frame_max, at->nregs, &ra);
	if (!err && stack_depth(ra.stack, &subs) > BPF_STACK_MAX)
		err = -EAGAIN;
	struct bpf_insn *insns = NULL;
	uint32_t n = 0;
	if (!err)
		err = asm_lower(&ir, &ra, &insns, &n);
	ra_free(&ra);
	ir_free(&ir);
	if (!err)
		err = link_subs(&subs, &insns, &n);
	subs_free(&subs);
	if (err == -E2BIG) {
		diag_error(d, pn->pos, "CODEGEN",
			   "%s: program too large (a jump spans more than "
			   "32767 instructions)", p->name);
		return -E2BIG;
	}
	if (!err && n > BPF_INSNS_MAX) {
		diag_error(d, pn->pos, "CODEGEN", "%s: program too large (%u "
			   "instructions; the kernel loads at most %u)",
			   p->name, n, BPF_INSNS_MAX);
		err = -E2BIG;
	}
	if (err) {
		free(insns);
		return err;
	}
	p->insns = arena_array(prog->arena, struct bpf_insn, n ? n : 1);
	memcpy(p->insns, insns, n * sizeof(*insns));
	p->ninsns = n;
	free(insns);
	if (at->scratch) {
		struct map_spec *s = &prog->maps[cg.scratch_map];
		uint32_t need = (cg.scr_max + 7) & ~7u;
		if (need > s->value_size)
			s->value_size = need;
	}
	return 0;
}

/* A watchpoint:FUNC+argN probe's setup program, at the function's
 * entry: stop the task (SIGSTOP) unless async, read the argument from
 * its register (pt_regs: di, si, dx, cx, r8, r9) and send the engine an
 * EV_WATCH record (struct sonde_watch_record) naming the probe and the
 * address. The engine sets the breakpoint and sends SIGCONT. */
static int gen_setup(struct program *prog, struct probe *p, uint32_t index,
		     const struct probe_setup *su)
{
	static const int16_t arg_regs[] = { 112, 104, 96, 88, 72, 64 };
	if (su->arg < 0 || su->arg > 5 || prog->ringbuf_map < 0)
		return -EINVAL;
	struct event_spec e = { .kind = EV_WATCH, .map_id = -1 };
	int id = program_add_event(prog, &e);
	if (id < 0)
		return id;
	struct ir ir;
	struct ra ra;
	ir_init(&ir);
	uint32_t out = ir_label(&ir);
	vreg ctx = ir_vreg(&ir), addr = ir_vreg(&ir), rec = ir_vreg(&ir);
	ir_entry(&ir, ctx);
	ir_ldx(&ir, BPF_DW, addr, ctx, arg_regs[su->arg]);
	if (su->stop)
		ir_call(&ir, VR_NONE, BPF_FUNC_send_signal,
			(struct ir_arg[]){ IR_IMM(SIGSTOP) }, 1);
	ir_call(&ir, rec, BPF_FUNC_ringbuf_reserve,
		(struct ir_arg[]){ IR_MAP(prog->ringbuf_map),
				   IR_IMM((int32_t)sizeof(struct sonde_watch_record)),
				   IR_IMM(0) }, 3);
	ir_jcci(&ir, BPF_JEQ, rec, 0, out);
	ir_st(&ir, BPF_DW, rec, offsetof(struct sonde_watch_record, event_id),
	      id);
	ir_st(&ir, BPF_DW, rec, offsetof(struct sonde_watch_record, probe),
	      index);
	ir_stx(&ir, BPF_DW, rec, offsetof(struct sonde_watch_record, addr),
	       addr);
	ir_call(&ir, VR_NONE, BPF_FUNC_ringbuf_submit,
		(struct ir_arg[]){ IR_ARG(rec), IR_IMM(0) }, 2);
	ir_place(&ir, out);
	ir_reti(&ir, 0);
	int err = ir.err;
	if (!err)
		err = regalloc(&ir, 0, 4, &ra);
	struct bpf_insn *insns = NULL;
	uint32_t n = 0;
	if (!err) {
		err = asm_lower(&ir, &ra, &insns, &n);
		ra_free(&ra);
	}
	ir_free(&ir);
	if (err)
		return err;
	p->setup_insns = arena_array(prog->arena, struct bpf_insn, n ? n : 1);
	memcpy(p->setup_insns, insns, n * sizeof(*insns));
	p->nsetup_insns = n;
	free(insns);
	return 0;
}

int codegen_program(const struct node *root, struct program *prog,
		    struct diags *d)
{
	int ret = 0;
	if (!root || root->kind != N_PROGRAM)
		return -EINVAL;
	for (uint32_t i = 0; i < prog->nprobes; i++) {
		struct probe *p = &prog->probes[i];
		if (p->block >= root->u.list.n)
			return -EINVAL;
		const struct node *pn = root->u.list.v[p->block];
		unsigned errors = d->nerrors;
		int err = -EAGAIN;
		for (size_t b = 0; b < sizeof(budgets) / sizeof(*budgets) &&
				   err == -EAGAIN; b++) {
			struct attempt at = { budgets[b].limit,
					      budgets[b].scratch, 4 };
			err = gen_probe(prog, p, pn, d, &at);
		}
		if (err == -EAGAIN)
			diag_error(d, pn->pos, "STACK",
				   "%s: the program needs more than %d bytes "
				   "of BPF stack", p->name, BPF_STACK_MAX);
		else if (err && d->nerrors == errors)
			/* every failure is said, if only by its errno */
			diag_error(d, pn->pos, "CODEGEN", "%s: the program "
				   "cannot be generated: %s", p->name,
				   strerror(-err));
		if (!err && p->has_setup &&
		    (err = gen_setup(prog, p, i, &p->setup)) < 0)
			diag_error(d, pn->pos, "CODEGEN", "%s: its setup program "
				   "cannot be made: %s", p->name, strerror(-err));
		if (err && !ret)
			ret = err == -EAGAIN ? -E2BIG : err;
	}
	return ret;
}
