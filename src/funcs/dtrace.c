/* dtrace.c - the actions D's front end (lang/d_names.c) calls that
 * bpftrace's language has no word for. They are named __dtrace_* so
 * that no bpftrace script meets them by accident:
 *   __dtrace_trace(WIDTH, x)     trace(x): x as DTrace prints a traced
 *                                value (WIDTH 1, 2, 4 or 8: the
 *                                integer's D size), quiet or not
 *   __dtrace_print(WIDTH, x)     print(x): its type and value
 *   __dtrace_probe_line("%3d %6d %32s ", cpu, id, "function:name")
 *                                a record's "CPU ID FUNCTION:NAME" start
 *   __dtrace_printa(@m[, fmt])   printa()
 *   __dtrace_stack(kstack)       stack() and ustack() as actions
 *   __dtrace_normalize(@m, n)    normalize(), denormalize() (n = 1)
 *   __dtrace_trunc(@m, n)        trunc(@m, n)
 * Each is one event through the ring; output/dtrace.c prints them. */
#include "funcs_int.h"

#include <string.h>

/* A printf event with a format chosen here, for the arguments from
 * `first` on. */
static const struct type *format_event(struct sema *s, struct node *n,
				       const char *fmt, uint32_t first,
				       enum event_kind kind)
{
	bool ok = true;
	const struct type *args = sema_check_format(s, n, fmt, first, &ok);
	if (!ok)
		return NULL;
	struct event_spec e = { .kind = kind, .fmt = fmt, .args = args,
				.map_id = -1, .pos = n->pos };
	sema_add_event(s, n, &e);
	return type_none();
}

static const struct type *check_trace(struct sema *s, struct node *n)
{
	const struct type *t = sema_expr(s, arg(n, 1));
	if (!t)
		return NULL;
	bool quiet = s->prog->dtrace.quiet;
	const char *fmt;
	if (t->kind == TYPE_STR)
		fmt = quiet ? "%s" : "  %-33s";
	else if (t->kind == TYPE_INT)
		switch (arg(n, 0)->u.ival) {   /* libdtrace's, by size */
		case 1: fmt = quiet ? "%d" : " %3d"; break;
		case 2: fmt = quiet ? "%d" : " %5d"; break;
		case 4: fmt = quiet ? "%d" : " %8d"; break;
		default: fmt = quiet ? "%lld" : " %16lld"; break;
		}
	else {
		sema_error(s, arg(n, 1)->pos, "ARG_TYPE",
			   "trace( ) of a value of type '%s' is not supported "
			   "yet", sema_tname(s, t));
		return NULL;
	}
	return format_event(s, n, fmt, 1, EV_PRINTF);
}

/* __dtrace_print(WIDTH, x): print(x) as libdtrace's dt_print.c prints a
 * scalar at the top: its type, a space, the value (an integer in hex,
 * "%#x" as C prints it: 0 is "0"; a string quoted), a newline. sonde's
 * D knows an integer's width, not its typedef: "int" or "int64_t". */
static const struct type *check_print(struct sema *s, struct node *n)
{
	const struct type *t = sema_expr(s, arg(n, 1));
	if (!t)
		return NULL;
	const char *fmt;
	if (t->kind == TYPE_STR)
		fmt = "string \"%s\"\n";
	else if (t->kind == TYPE_INT && t->is_ptr && t->ctype)
		/* a C pointer: its type as C names it, the address in hex */
		fmt = arena_printf(s->a, "%s %%#llx\n",
				   ctype_name(s->a, t->ctype));
	else if (t->kind == TYPE_INT)
		fmt = arg(n, 0)->u.ival == 8 ? "int64_t %#llx\n" : "int %#x\n";
	else if ((t->kind == TYPE_STRUCT || t->kind == TYPE_ARRAY) &&
		 t->ctype) {
		/* a C value: its bytes, printed by output/dprint.c */
		struct event_spec e = { .kind = EV_PRINT_VALUE, .map_id = -1,
					.args = type_tuple(s->a, 1, &t) };
		sema_add_event(s, n, &e);
		return type_none();
	} else {
		sema_error(s, arg(n, 1)->pos, "ARG_TYPE",
			   "print( ) of a value of type '%s' is not supported "
			   "yet", sema_tname(s, t));
		return NULL;
	}
	return format_event(s, n, fmt, 1, EV_PRINTF);
}

/* the front end writes the format: "%3d %6d %32s " */
static const struct type *check_probe_line(struct sema *s, struct node *n)
{
	return funcs_check_format_event(s, n, EV_DTRACE_PROBE);
}

/* __dtrace_printa(@m, FORMAT or "", @more...) */
static const struct type *check_printa(struct sema *s, struct node *n)
{
	struct sema_map *m = sema_map_arg(s, n, false);
	if (!m)
		return NULL;
	const char *fmt = nargs(n) > 1 ? lit_arg(n, 1) : "";
	if (nargs(n) > 1)
		sema_compile_time_str(s, arg(n, 1));
	uint32_t nmore = nargs(n) > 2 ? nargs(n) - 2 : 0;
	int32_t *more = nmore ? arena_array(s->a, int32_t, nmore) : NULL;
	for (uint32_t i = 0; i < nmore; i++) {
		struct node *a = arg(n, i + 2);
		struct sema_map *x = a->kind == N_MAP ? sema_map_whole(s, a) :
			NULL;
		if (!x)
			return NULL;
		more[i] = x->id;
	}
	struct event_spec e = { .kind = EV_DTRACE_PRINTA, .map_id = m->id,
				.fmt = *fmt ? fmt : NULL, .pos = n->pos,
				.more_maps = more, .nmore_maps = nmore };
	sema_add_event(s, n, &e);
	return type_none();
}

/* stack(), ustack() as an action: the stack on lines of its own */
static const struct type *check_stack(struct sema *s, struct node *n)
{
	const struct type *t = sema_expr(s, arg(n, 0));
	if (!t)
		return NULL;
	if (t->kind != TYPE_KSTACK && t->kind != TYPE_USTACK) {
		sema_error(s, arg(n, 0)->pos, "ARG_TYPE", "__dtrace_stack( ) "
			   "takes a stack");
		return NULL;
	}
	struct event_spec e = { .kind = EV_PRINT_VALUE, .map_id = -1,
				.args = type_tuple(s->a, 1, &t) };
	sema_add_event(s, n, &e);
	return type_none();
}

/* normalize(@m, n) and trunc(@m, n): the map, and n in the record */
static const struct type *map_int_event(struct sema *s, struct node *n,
					enum event_kind kind)
{
	struct sema_map *m = sema_map_arg(s, n, false);
	const struct type *t = sema_int_arg(s, n, 1, "the count");
	if (!m || !t)
		return NULL;
	struct event_spec e = { .kind = kind, .map_id = m->id,
				.args = type_tuple(s->a, 1, &t) };
	sema_add_event(s, n, &e);
	return type_none();
}

static const struct type *check_normalize(struct sema *s, struct node *n)
{
	return map_int_event(s, n, EV_DTRACE_NORMALIZE);
}

static const struct type *check_trunc(struct sema *s, struct node *n)
{
	return map_int_event(s, n, EV_DTRACE_TRUNC);
}

/* ---- speculations ----------------------------------------------------
 * A per-CPU map ".dspec" holds { the current speculation, the count of
 * speculations made on this CPU }. speculation() is a new id: the count
 * (24 bits) and the CPU (8 bits), never 0; speculate(id) sets the
 * current one, which every record's header then carries (cg_call.c)
 * until the clause ends (speculate(0), lang/d_clauses.c); commit(id)
 * and discard(id) are events: output/dspec.c holds a speculation's
 * records until one of them arrives. A BPF program runs on one CPU
 * from start to end, so the map's value is the clause's own. */

int funcs_dspec_map(struct program *prog)
{
	int m = program_find_map(prog, ".dspec");
	if (m >= 0)
		return m;
	struct map_spec s = { .name = ".dspec", .kind = MAP_PERCPU_ARRAY,
			      .key_size = 4, .value_size = 16,
			      .max_entries = 1 };
	return program_add_map(prog, &s);
}

/* this CPU's .dspec value, or 0 */
static vreg dspec_value(struct cg *cg)
{
	int map = funcs_dspec_map(cg->prog);
	struct cmem key = cg_alloc(cg, 8);
	ir_st(cg->ir, BPF_W, key.base, (int16_t)key.off, 0);
	return cg_call(cg, BPF_FUNC_map_lookup_elem,
		       (struct ir_arg[]){ IR_MAP(map), cg_arg(key) }, 2);
}

static const struct type *check_speculation(struct sema *s, struct node *n)
{
	return type_u64();
}

static struct cval gen_speculation(struct cg *cg, const struct node *n)
{
	struct ir *ir = cg->ir;
	vreg v = dspec_value(cg), id = ir_vreg(ir), t = ir_vreg(ir);
	uint32_t none = ir_label(ir), done = ir_label(ir);
	ir_jcci(ir, BPF_JEQ, v, 0, none);
	ir_ldx(ir, BPF_DW, id, v, 8);
	ir_alui(ir, BPF_ADD, id, id, 1);
	ir_stx(ir, BPF_DW, v, 8, id);
	ir_alui(ir, BPF_AND, id, id, 0xffffff);
	ir_alui(ir, BPF_LSH, id, id, 8);
	vreg cpu = cg_call(cg, BPF_FUNC_get_smp_processor_id, NULL, 0);
	ir_mov(ir, t, cpu);
	ir_alui(ir, BPF_AND, t, t, 0xff);
	ir_alu(ir, BPF_OR, id, id, t);
	ir_jcci(ir, BPF_JNE, id, 0, done);
	ir_movi(ir, id, 0xff);      /* the count wrapped on CPU 0 */
	ir_ja(ir, done);
	ir_place(ir, none);
	ir_movi(ir, id, 0);
	ir_place(ir, done);
	return cg_regval(id, n->type);
}

static const struct type *check_speculate(struct sema *s, struct node *n)
{
	if (!sema_int_arg(s, n, 0, "the speculation"))
		return NULL;
	s->prog->dtrace.speculates = true;
	return type_none();
}

static struct cval gen_speculate(struct cg *cg, const struct node *n)
{
	vreg id = cg_reg(cg, cg_expr(cg, arg(n, 0)));
	vreg v = dspec_value(cg);
	uint32_t none = ir_label(cg->ir);
	ir_jcci(cg->ir, BPF_JEQ, v, 0, none);
	ir_alui(cg->ir, BPF_AND, id, id, 0xffffffff);
	ir_stx(cg->ir, BPF_DW, v, 0, id);
	ir_place(cg->ir, none);
	return cg_imm(0, type_none());
}

static const struct type *spec_event(struct sema *s, struct node *n,
				     enum event_kind kind)
{
	const struct type *t = sema_int_arg(s, n, 0, "the speculation");
	if (!t)
		return NULL;
	struct event_spec e = { .kind = kind, .map_id = -1,
				.args = type_tuple(s->a, 1, &t) };
	sema_add_event(s, n, &e);
	return type_none();
}

static const struct type *check_commit(struct sema *s, struct node *n)
{
	return spec_event(s, n, EV_DTRACE_COMMIT);
}

static const struct type *check_discard(struct sema *s, struct node *n)
{
	return spec_event(s, n, EV_DTRACE_DISCARD);
}

/* copyin(addr, n) anywhere but in stringof() (which makes it str()) */
static const struct type *check_copyin(struct sema *s, struct node *n)
{
	sema_error(s, n->pos, "UNSUPPORTED", "copyin( ) is supported only "
		   "as stringof(copyin(addr, size)) yet by sonde's D "
		   "(copyinstr(addr) reads a string)");
	return NULL;
}

/* __dtrace_tracemem(buf(addr, n)): the bytes, printed as a table */
static const struct type *check_tracemem(struct sema *s, struct node *n)
{
	const struct type *t = sema_expr(s, arg(n, 0));
	if (!t)
		return NULL;
	if (t->kind != TYPE_BUF) {
		sema_error(s, arg(n, 0)->pos, "ARG_TYPE", "tracemem( ) takes "
			   "an address and a size");
		return NULL;
	}
	struct event_spec e = { .kind = EV_DTRACE_TRACEMEM, .map_id = -1,
				.args = type_tuple(s->a, 1, &t) };
	sema_add_event(s, n, &e);
	return type_none();
}

/* stackdepth, ustackdepth: __dtrace_stackdepth(USER): the frames
 * bpf_get_stack() writes (at most 127, the kernel's default
 * perf_event_max_stack), into untracked scratch */
#define DEPTH_FRAMES 127
static const struct type *check_stackdepth(struct sema *s, struct node *n)
{
	int64_t user;
	if (!sema_lit_int(s, n, 0, "user", &user))
		return NULL;
	if (!sema_require(s, n->pos, user ? PROBE_USTACK : PROBE_KSTACK,
			  user ? "ustackdepth" : "stackdepth"))
		return NULL;
	return type_u64();
}

static struct cval gen_stackdepth(struct cg *cg, const struct node *n)
{
	struct ir *ir = cg->ir;
	bool user = arg(n, 0)->u.ival != 0;
	struct cmem buf = cg_alloc_untracked(cg, DEPTH_FRAMES * 8);
	vreg r = cg_call(cg, BPF_FUNC_get_stack, (struct ir_arg[]){
		IR_ARG(cg->ctx), cg_arg(buf), IR_IMM(DEPTH_FRAMES * 8),
		IR_IMM(user ? BPF_F_USER_STACK : 0) }, 4);
	uint32_t ok = ir_label(ir);
	cg_normalize(cg, r, type_int(cg->a, 32, true));
	ir_jcci(ir, BPF_JSGE, r, 0, ok);
	ir_movi(ir, r, 0);            /* no stack: depth 0 */
	ir_place(ir, ok);
	ir_alui(ir, BPF_RSH, r, r, 3);
	return cg_regval(r, n->type);
}

/* printa's event carries no fields: the map is read when it arrives */
static struct cval gen_printa(struct cg *cg, const struct node *call)
{
	cg_emit_event(cg, call, nargs(call), NULL);   /* no fields */
	return cg_imm(0, call->type);
}

const struct func funcs_dtrace[] = {
	{ "__dtrace_trace", 2, 2, 0, 0, check_trace, funcs_gen_event },
	{ "__dtrace_print", 2, 2, 0, 0, check_print, funcs_gen_event },
	{ "__dtrace_probe_line", 4, 4, 0, 0, check_probe_line, funcs_gen_event },
	{ "__dtrace_printa", 1, FUNC_ARGS_ANY, 0, 0, check_printa, gen_printa },
	{ "__dtrace_stack", 1, 1, 0, 0, check_stack, funcs_gen_event },
	{ "__dtrace_normalize", 2, 2, 0, 0, check_normalize, funcs_gen_event },
	{ "__dtrace_trunc", 2, 2, 0, 0, check_trunc, funcs_gen_event },
	{ "__dtrace_stackdepth", 1, 1, 0, 0, check_stackdepth, gen_stackdepth },
	{ "__dtrace_tracemem", 1, 1, 0, 0, check_tracemem, funcs_gen_event },
	{ "__dtrace_copyin", 2, 2, 0, 0, check_copyin, NULL },
	{ "__dtrace_speculation", 0, 0, 0, 0, check_speculation,
	  gen_speculation },
	{ "__dtrace_speculate", 1, 1, 0, 0, check_speculate, gen_speculate },
	{ "__dtrace_commit", 1, 1, 0, 0, check_commit, funcs_gen_event },
	{ "__dtrace_discard", 1, 1, 0, 0, check_discard, funcs_gen_event },
	{ NULL },
};
