/* dtrace.c - the actions D's front end (lang/d_names.c) calls that
 * bpftrace's language has no word for. They are named __dtrace_* so
 * that no bpftrace script meets them by accident:
 *   __dtrace_trace(WIDTH, x)     trace(x): x as DTrace prints a traced
 *                                value (WIDTH 4 or 8: the integer's D
 *                                size), quiet or not
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
		fmt = arg(n, 0)->u.ival == 4 ? (quiet ? "%d" : " %8d") :
			quiet ? "%lld" : " %16lld";
	else {
		sema_error(s, arg(n, 1)->pos, "ARG_TYPE",
			   "trace( ) of a value of type '%s' is not supported "
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

/* printa's event carries no fields: the map is read when it arrives */
static struct cval gen_printa(struct cg *cg, const struct node *call)
{
	cg_emit_event(cg, call, nargs(call), NULL);   /* no fields */
	return cg_imm(0, call->type);
}

const struct func funcs_dtrace[] = {
	{ "__dtrace_trace", 2, 2, 0, 0, check_trace, funcs_gen_event },
	{ "__dtrace_probe_line", 4, 4, 0, 0, check_probe_line, funcs_gen_event },
	{ "__dtrace_printa", 1, FUNC_ARGS_ANY, 0, 0, check_printa, gen_printa },
	{ "__dtrace_stack", 1, 1, 0, 0, check_stack, funcs_gen_event },
	{ "__dtrace_normalize", 2, 2, 0, 0, check_normalize, funcs_gen_event },
	{ "__dtrace_trunc", 2, 2, 0, 0, check_trunc, funcs_gen_event },
	{ NULL },
};
