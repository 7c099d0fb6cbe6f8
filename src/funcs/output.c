/* output.c - functions that print: printf, print, time, join, cat send
 * one event record each through the ring buffer (program.h's event table
 * says what user space does with it); debugf() writes to the kernel's
 * trace buffer itself. None has a value. */
#include "funcs_int.h"

#include <string.h>

/* An event's fields are the call's last arguments (after a format, if
 * there is one): the check hooks below build the event that way. */
struct cval funcs_gen_event(struct cg *cg, const struct node *call)
{
	int32_t id = call->u.call.event_id;
	const struct type *args = id >= 0 && (uint32_t)id < cg->prog->nevents ?
		cg->prog->events[id].args : NULL;
	/* a pinned iterator's reader gets its printf text (PROBE_ITER) */
	if ((cg->probe->caps & PROBE_ITER) && cg->probe->func &&
	    cg->prog->events[id].kind == EV_PRINTF)
		return cg_seq_printf(cg, call);
	uint32_t n = args ? args->nfields : 0;
	cg_emit_event(cg, call, nargs(call) > n ? nargs(call) - n : 0, NULL);
	return cg_imm(0, call->type);
}

/* printf/cat/system (control.c): a literal format, then arguments. */
const struct type *funcs_check_format_event(struct sema *s, struct node *n,
					    enum event_kind kind)
{
	struct node *f = arg(n, 0);
	sema_expr(s, f);
	if (f->kind == N_BLOCK_EXPR && f->u.blockx.value &&
	    f->u.blockx.value->kind == N_STR &&
	    (!f->u.blockx.body || !f->u.blockx.body->u.list.n)) {
		/* { "fmt" }: a macro whose body is a literal (`macro fmt()
		 * { "hi" }`, bpftrace 0.24), the literal itself */
		*f = *f->u.blockx.value;
	}
	if (f->kind != N_STR) {
		sema_error(s, f->pos, "PRINTF_FORMAT",
			   "%s() needs a string literal as its format",
			   n->u.call.name);
		sema_eval_args(s, n, 1);
		return type_none();
	}
	sema_compile_time_str(s, f);    /* never in the BPF program */
	bool ok = true;
	const struct type *args = sema_check_format(s, n, f->u.str.s, 1, &ok);
	if (!ok)
		return type_none();
	struct event_spec e = { .kind = kind, .fmt = f->u.str.s,
				.args = args, .map_id = -1, .pos = n->pos };
	sema_add_event(s, n, &e);
	return type_none();
}

static const struct type *check_printf(struct sema *s, struct node *n)
{
	return funcs_check_format_event(s, n, EV_PRINTF);
}

static const struct type *check_errorf(struct sema *s, struct node *n)
{
	return funcs_check_format_event(s, n, EV_ERRORF);
}

static const struct type *check_warnf(struct sema *s, struct node *n)
{
	return funcs_check_format_event(s, n, EV_WARNF);
}

static const struct type *check_cat(struct sema *s, struct node *n)
{
	return funcs_check_format_event(s, n, EV_CAT);
}

/* print(@m [, top [, div]]) prints a map, print(value) a value. */
static const struct type *check_print(struct sema *s, struct node *n)
{
	struct node *a0 = arg(n, 0);
	if (a0->kind == N_MAP && (nargs(n) > 1 || !a0->u.map.keys.n)) {
		struct sema_map *m = sema_map_arg(s, n, false);
		int64_t top = 0, div = 0;
		if (nargs(n) > 1 && !sema_lit_int(s, n, 1, "top", &top))
			return NULL;
		if (nargs(n) > 2 && !sema_lit_int(s, n, 2, "div", &div))
			return NULL;
		if (top < 0 || div < 0) {
			sema_error(s, n->pos, "ARG_TYPE",
				   "print(): top and div must not be negative");
			return NULL;
		}
		if (!m)
			return NULL;
		struct event_spec e = { .kind = EV_PRINT_MAP, .map_id = m->id,
					.top = (uint64_t)top,
					.div = (uint64_t)div };
		sema_add_event(s, n, &e);
		return type_none();
	}
	if (a0->kind == N_MAP && s->prog->dialect < DIALECT_021) {
		/* from 0.21 ("Add ability to call print() with indexed
		 * maps to print single map values"), a value like any
		 * other */
		sema_error(s, a0->pos, "ARG_TYPE",
			   "print() takes a whole map: print(%s), not an element",
			   a0->u.map.name);
		return NULL;
	}
	if (nargs(n) != 1) {
		sema_error(s, n->pos, "ARG_COUNT",
			   "print() of a value takes 1 argument (%u given)",
			   nargs(n));
		sema_eval_args(s, n, 0);
		return NULL;
	}
	const struct type *t = sema_expr(s, a0);
	if (!t)
		return NULL;
	if (t->kind == TYPE_NONE || t->kind == TYPE_RECORD) {
		sema_error(s, a0->pos, "ARG_TYPE",
			   "print() cannot print a value of type '%s'",
			   sema_tname(s, t));
		return NULL;
	}
	if (t->kind == TYPE_INT && t->is_ptr && t->ctype &&
	    t->ctype->kind == CT_PTR && s->prog->dialect < DIALECT_026) {
		/* bpftrace 0.17: "... type passed to print() is not printable";
		 * 0.26 prints the address, in hex (its tests print
		 * args.file of fentry:vfs_write) */
		sema_error(s, a0->pos, "ARG_TYPE",
			   "print() cannot print a pointer ('%s'): print(*p) "
			   "prints what it points at, print((uint64)p) the "
			   "address", sema_tname(s, t));
		return NULL;
	}
	struct event_spec e = { .kind = EV_PRINT_VALUE, .map_id = -1,
				.args = type_tuple(s->a, 1, &t) };
	sema_add_event(s, n, &e);
	return type_none();
}

/* time([fmt]): the format is applied by user space when the event is
 * read (default "%H:%M:%S\n"). */
static const struct type *check_time(struct sema *s, struct node *n)
{
	const char *fmt = "%H:%M:%S\n";
	if (nargs(n) && !(fmt = sema_lit_str(s, n, 0, "its format")))
		return NULL;
	struct event_spec e = { .kind = EV_TIME, .fmt = fmt, .map_id = -1 };
	sema_add_event(s, n, &e);
	return type_none();
}

/* join(argv [, delim]): up to SEMA_JOIN_MAX strings read through an
 * array of pointers; the delimiter travels in the event's fmt. */
static const struct type *check_join(struct sema *s, struct node *n)
{
	const char *delim = " ";
	const struct type *a = sema_int_arg(s, n, 0, "the array pointer");
	if (nargs(n) > 1 && !(delim = sema_lit_str(s, n, 1, "the delimiter")))
		return NULL;
	if (!a)
		return NULL;
	const struct type *f[SEMA_JOIN_MAX];
	for (int i = 0; i < SEMA_JOIN_MAX; i++)
		f[i] = type_str(s->a, s->prog->strlen);
	struct event_spec e = { .kind = EV_JOIN, .fmt = delim, .map_id = -1,
				.args = type_tuple(s->a, SEMA_JOIN_MAX, f) };
	sema_add_event(s, n, &e);
	return type_none();
}

/* The strings of join(), stopping at the first NULL pointer (the rest
 * stay empty). */
static void join_fill(struct cg *cg, const struct node *n, vreg rec,
		      const struct type *args)
{
	struct cmem base = { rec, 8 };
	vreg arr = cg_reg(cg, cg_expr(cg, arg(n, 0)));
	uint32_t done = ir_label(cg->ir);
	struct cg_mark mk = cg_mark(cg);
	struct cmem tmp = cg_alloc(cg, 8);
	cg_zero(cg, cg_at(base, 0), args->size);
	for (uint32_t i = 0; i < args->nfields; i++) {
		vreg p = ir_vreg(cg->ir);
		ir_mov(cg->ir, p, arr);
		ir_alui(cg->ir, BPF_ADD, p, p, 8 * (int64_t)i);
		ir_st(cg->ir, BPF_DW, tmp.base, (int16_t)tmp.off, 0);
		cg_callv(cg, BPF_FUNC_probe_read,
			(struct ir_arg[]){ cg_arg(tmp), IR_IMM(8), IR_ARG(p) },
			3);
		vreg s = cg_load(cg, BPF_DW, tmp);
		ir_jcci(cg->ir, BPF_JEQ, s, 0, done);
		cg_callv(cg, BPF_FUNC_probe_read_str,
			(struct ir_arg[]){
				cg_arg(cg_at(base, (int32_t)args->offsets[i])),
				IR_IMM((int32_t)args->fields[i]->size),
				IR_ARG(s) }, 3);
	}
	ir_place(cg->ir, done);
	cg_release(cg, mk);
}

static struct cval gen_join(struct cg *cg, const struct node *n)
{
	cg_emit_event(cg, n, 0, join_fill);
	return cg_imm(0, n->type);
}

/* bpf_trace_printk takes at most three arguments after the format. */
#define DEBUGF_ARGS 3

/* debugf(fmt, ...): bpf_trace_printk, to /sys/kernel/tracing/trace_pipe;
 * strings are passed by address, as the kernel's %s wants them. */
static const struct type *check_debugf(struct sema *s, struct node *n)
{
	struct node *f = arg(n, 0);
	sema_expr(s, f);
	if (f->kind != N_STR) {
		sema_error(s, f->pos, "PRINTF_FORMAT",
			   "debugf() needs a string literal as its format");
		sema_eval_args(s, n, 1);
		return type_none();
	}
	bool ok = true;
	const struct type *args = sema_check_format(s, n, f->u.str.s, 1, &ok);
	if (!ok)
		return type_none();
	if (args->nfields > DEBUGF_ARGS) {
		sema_error(s, n->pos, "PRINTF_FORMAT",
			   "debugf(): bpf_trace_printk takes at most %d "
			   "arguments (%u given)", DEBUGF_ARGS, args->nfields);
		return type_none();
	}
	for (uint32_t i = 0; i < args->nfields; i++)
		if (!is_int(args->fields[i]) && !is_str(args->fields[i])) {
			sema_error(s, arg(n, i + 1)->pos, "ARG_TYPE",
				   "debugf() takes integers and strings, not '%s'",
				   sema_tname(s, args->fields[i]));
			return type_none();
		}
	sema_warning(s, n->pos, "DEBUGF",
		     "The debugf() builtin is not recommended for production "
		     "use. For more information see bpf_trace_printk in "
		     "bpf-helpers(7).");
	return type_none();
}

static struct cval gen_debugf(struct cg *cg, const struct node *n)
{
	const char *fmt = lit_arg(n, 0);
	uint32_t len = (uint32_t)strlen(fmt) + 1;
	struct cmem f = cg_alloc(cg, len);
	cg_str_literal(cg, f, fmt, len - 1, len);
	struct ir_arg a[2 + DEBUGF_ARGS] = { cg_arg(f), IR_IMM((int32_t)len) };
	uint32_t na = 2;
	for (uint32_t i = 1; i < nargs(n) && na < 2 + DEBUGF_ARGS; i++) {
		const struct node *x = arg(n, i);
		struct cval v = cg_expr(cg, x);
		if (is_int(x->type)) {
			a[na++] = IR_ARG(cg_reg(cg, v));
			continue;
		}
		if (v.kind != CV_MEM) {
			struct cmem m = cg_alloc(cg, x->type->size);
			cg_store(cg, m, v, x->type);
			v = cg_memval(m, x->type);
		}
		a[na++] = cg_arg(v.m);
	}
	cg_callv(cg, BPF_FUNC_trace_printk, a, (int)na);
	return cg_imm(0, n->type);
}

const struct func funcs_output[] = {
	{ "printf", 1, FUNC_ARGS_ANY, 0, 0, check_printf, funcs_gen_event },
	{ "errorf", 1, FUNC_ARGS_ANY, 0, 0, check_errorf, funcs_gen_event },
	{ "warnf", 1, FUNC_ARGS_ANY, 0, 0, check_warnf, funcs_gen_event },
	{ "print", 1, 3, 0, 0, check_print, funcs_gen_event },
	{ "time", 0, 1, 0, 0, check_time, funcs_gen_event },
	{ "join", 1, 2, 0, 0, check_join, gen_join },
	{ "cat", 1, FUNC_ARGS_ANY, 0, 0, check_cat, funcs_gen_event },
	{ "debugf", 1, FUNC_ARGS_ANY, 0, 0, check_debugf, gen_debugf },
	{ NULL },
};
