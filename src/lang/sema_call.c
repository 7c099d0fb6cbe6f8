/* sema_call.c - the semantic pass for function calls: the lookup of the
 * function's record (funcs/func.h) and what every call shares (argument
 * count, --unsafe, where aggregations may appear), then the record's own
 * check; and the argument checks the records have in common: literals,
 * integers, strings, printf formats, map arguments, events. */
#include "sema_int.h"

#include <stdarg.h>
#include <string.h>

#include "../funcs/func.h"
#include "../program.h"

void sema_warning(struct sema *s, struct pos pos, const char *tag,
		  const char *fmt, ...)
{
	if (!s->final)
		return;
	va_list ap;
	va_start(ap, fmt);
	diag_vadd(s->d, DIAG_WARNING, pos, tag, fmt, ap);
	va_end(ap);
}

void sema_runtime_warning(struct sema *s, struct node **slot, struct pos pos,
			  const char *text)
{
	if (!*slot) {
		struct node *c = node_new(s->a, N_CALL, pos);
		struct node *f = node_new(s->a, N_STR, pos);
		f->u.str.s = text;
		f->u.str.len = (uint32_t)strlen(text);
		c->u.call.name = "warnf";
		if (node_list_push(s->a, &c->u.call.args, f) < 0)
			return;
		*slot = c;
	}
	sema_expr(s, *slot);
}

bool sema_is_agg_call(const struct node *n)
{
	const struct func *f;
	return n && n->kind == N_CALL && (f = func_find(n->u.call.name)) &&
		(f->flags & FUNC_AGG);
}

static uint32_t nargs(const struct node *n)
{
	return n->u.call.args.n;
}

static struct node *arg(const struct node *n, uint32_t i)
{
	return n->u.call.args.v[i];
}

/* ARG_COUNT unless min <= argc <= max. */
static bool argc_ok(struct sema *s, struct node *n, uint32_t min, uint32_t max)
{
	uint32_t c = nargs(n);
	if (c >= min && c <= max)
		return true;
	const char *want;
	if (min == max)
		want = min == 0 ? "no arguments" :
			arena_printf(s->a, "%u argument%s", min,
				     min == 1 ? "" : "s");
	else if (max == UINT32_MAX)
		want = arena_printf(s->a, "at least %u argument%s", min,
				    min == 1 ? "" : "s");
	else
		want = arena_printf(s->a, "%u to %u arguments", min, max);
	sema_error(s, n->pos, "ARG_COUNT", "%s() takes %s (%u given)",
		   n->u.call.name, want, c);
	return false;
}

void sema_eval_args(struct sema *s, struct node *n, uint32_t from)
{
	for (uint32_t i = from; i < nargs(n); i++)
		sema_expr(s, arg(n, i));
}

/* Argument i must be a string literal; returns it or NULL. */
const char *sema_lit_str(struct sema *s, struct node *n, uint32_t i,
			 const char *what)
{
	struct node *a = arg(n, i);
	sema_expr(s, a);
	/* str($N) is a literal too, as bpftrace 0.17 takes it
	 * (kaddr(str($1))): the final pass has made $N an N_STR, which
	 * takes the call's place */
	if (a->kind == N_CALL && strcmp(a->u.call.name, "str") == 0 &&
	    a->u.call.args.n == 1) {
		struct node *p = a->u.call.args.v[0];
		if (p->kind == N_POSITIONAL && !p->u.positional.is_count)
			return sema_positional_text(s, p);
		if (p->kind == N_STR)
			*a = *p;
	}
	if (a->kind == N_STR) {
		sema_compile_time_str(s, a);
		return a->u.str.s;
	}
	sema_error(s, a->pos, "ARG_TYPE", "%s() expects a string literal as %s",
		   n->u.call.name, what);
	return NULL;
}

/* Argument i must be an integer literal (a positional parameter counts,
 * with its value in every pass, so what depends on it, an lhist's
 * bounds, is the same in each: the final pass turns it into a literal). */
bool sema_lit_int(struct sema *s, struct node *n, uint32_t i,
		  const char *what, int64_t *v)
{
	struct node *a = arg(n, i);
	sema_expr(s, a);
	if (a->kind == N_INT) {
		*v = (int64_t)a->u.ival;
		return true;
	}
	if (a->kind == N_POSITIONAL && !s->final && sema_const_int(s, a, v))
		return true;
	sema_error(s, a->pos, "ARG_TYPE",
		   "%s() expects an integer literal as %s", n->u.call.name,
		   what);
	return false;
}

/* Argument i must be an integer expression. */
const struct type *sema_int_arg(struct sema *s, struct node *n, uint32_t i,
				const char *what)
{
	const struct type *t = sema_expr(s, arg(n, i));
	if (t && !is_int(t)) {
		sema_error(s, arg(n, i)->pos, "ARG_TYPE",
			   "%s() expects an integer as %s, not '%s'",
			   n->u.call.name, what, sema_tname(s, t));
		return NULL;
	}
	return t;
}

const struct type *sema_str_arg(struct sema *s, struct node *n, uint32_t i,
				const char *what)
{
	const struct type *t = sema_expr(s, arg(n, i));
	if (t && !is_str(t)) {
		sema_error(s, arg(n, i)->pos, "ARG_TYPE",
			   "%s() expects a string as %s, not '%s'",
			   n->u.call.name, what, sema_tname(s, t));
		return NULL;
	}
	return t;
}

void sema_add_event(struct sema *s, struct node *n,
		    const struct event_spec *e)
{
	if (s->final && e->args && e->args->size > SEMA_VALUE_MAX &&
	    !sema_has_big_field(e->args))
		sema_note_value_size(s, n->pos, arena_printf(s->a, "the record "
				     "of %s()", n->u.call.name), e->args);
	if (s->final) {
		struct event_spec own = *e;
		own.block = s->block;
		own.block_known = true;
		n->u.call.event_id = program_add_event(s->prog, &own);
	}
}

/* ---------------------------------------------------------------- */
/* printf formats                                                    */

/* Check `fmt` against arguments from index `first`; on success returns
 * the tuple of the argument types (the event record), else NULL. */
const struct type *sema_check_format(struct sema *s, struct node *n,
				     const char *fmt, uint32_t first, bool *ok)
{
	uint32_t argc = nargs(n) > first ? nargs(n) - first : 0;
	const struct type **types = arena_array(s->a, const struct type *,
						argc ? argc : 1);
	for (uint32_t i = 0; i < argc; i++) {
		types[i] = sema_expr(s, arg(n, first + i));
		if (!types[i])
			*ok = false;
	}
	struct pos fpos = arg(n, first - 1)->pos;
	uint32_t k = 0;
	for (const char *p = fmt; *p; p++) {
		if (*p != '%')
			continue;
		const char *start = p++;
		if (*p == '%')
			continue;
		/* a '%' before what cannot begin a conversion ("HIT%\n" in
		 * the book's dcstat.bt) is printed as it is, as bpftrace's
		 * printf (glibc's) prints it */
		if (*p && !strchr("-+ #0123456789.*hlzjtdiuxXocspr", *p)) {
			p--;
			continue;
		}
		while (*p && strchr("-+ #0", *p))
			p++;
		while (*p >= '0' && *p <= '9')
			p++;
		if (*p == '.') {
			p++;
			while (*p >= '0' && *p <= '9')
				p++;
		}
		if (*p == '*') {
			sema_error(s, fpos, "PRINTF_FORMAT",
				   "%s(): '*' width or precision is not "
				   "supported", n->u.call.name);
			*ok = false;
			return NULL;
		}
		while (*p && strchr("hlzjt", *p))
			p++;
		if (!*p || !strchr("diuxXocspr", *p)) {
			if (*p)
				sema_error(s, fpos, "PRINTF_FORMAT",
					   "%s(): unknown conversion '%.*s'",
					   n->u.call.name, (int)(p - start + 1),
					   start);
			else
				sema_error(s, fpos, "PRINTF_FORMAT",
					   "%s(): format ends in the middle of a "
					   "conversion '%s'", n->u.call.name, start);
			*ok = false;
			return NULL;
		}
		if (k >= argc) {
			k++;
			continue;
		}
		const struct type *t = types[k];
		struct pos apos = arg(n, first + k)->pos;
		k++;
		if (!t)
			continue;
		bool good;
		const char *want;
		switch (*p) {
		case 's':
			/* 0.26: an enum's value prints by name with %s */
			good = (!is_int(t) && t->kind != TYPE_NONE &&
				t->kind != TYPE_RECORD && !type_is_agg(t)) ||
			       (is_int(t) && !t->is_ptr && t->ctype &&
				t->ctype->kind == CT_ENUM &&
				s->prog->dialect >= DIALECT_026);
			want = "a string (or a symbol, stack or address)";
			break;
		case 'r':
			good = t->kind == TYPE_BUF || is_str(t);
			want = "a buffer";
			break;
		default:
			good = is_int(t);
			want = "an integer";
		}
		if (!good) {
			sema_error(s, apos, "PRINTF_FORMAT",
				   "%s(): %%%c expects %s, not '%s'",
				   n->u.call.name, *p, want, sema_tname(s, t));
			*ok = false;
		}
	}
	if (k != argc) {
		sema_error(s, n->pos, "PRINTF_FORMAT",
			   "%s(): the format has %u conversion%s but %u "
			   "argument%s given", n->u.call.name, k,
			   k == 1 ? "" : "s", argc, argc == 1 ? " is" : "s are");
		*ok = false;
	}
	if (!*ok)
		return NULL;
	return type_tuple(s->a, argc, types);
}

/* The map argument of print/clear/zero/delete. */
struct sema_map *sema_map_arg(struct sema *s, struct node *n, bool keys)
{
	struct node *m = arg(n, 0);
	if (m->kind != N_MAP) {
		sema_expr(s, m);
		sema_error(s, m->pos, "ARG_TYPE", "%s() expects a map",
			   n->u.call.name);
		return NULL;
	}
	if (!keys && m->u.map.keys.n) {
		sema_error(s, m->pos, "ARG_TYPE",
			   "%s() takes a whole map: %s, not %s[...]",
			   n->u.call.name, m->u.map.name, m->u.map.name);
		return NULL;
	}
	if (!keys)
		return sema_map_whole(s, m);
	struct sema_map *e = sema_map_defined(s, m);
	if (e)
		m->type = e->value;
	return e;
}

/* ---------------------------------------------------------------- */
/* the lookup                                                        */

/* The record of a call (NULL, with BAD_CALL, when there is none) once
 * what every call shares holds: not an aggregation unless `agg`, --unsafe
 * where it must be, an argument count in bounds, probes that offer what
 * it needs. */
static const struct func *call_func(struct sema *s, struct node *n, bool agg)
{
	const struct func *f = func_find(n->u.call.name);
	n->u.call.fn = f;
	if (!f) {
		sema_error(s, n->pos, "BAD_CALL", "unknown function %s()",
			   n->u.call.name);
		sema_eval_args(s, n, 0);
		return NULL;
	}
	if ((f->flags & FUNC_AGG) && !agg) {
		sema_error(s, n->pos, "AGG_CONTEXT",
			   "%s() must be assigned to a map: @x = %s(...)",
			   n->u.call.name, n->u.call.name);
		return NULL;
	}
	if ((f->flags & FUNC_UNSAFE) && (!s->opts || !s->opts->unsafe)) {
		sema_error(s, n->pos, "UNSAFE",
			   "%s() is unsafe: it needs --unsafe", n->u.call.name);
		return NULL;
	}
	if (!argc_ok(s, n, f->min_args,
		     f->max_args == FUNC_ARGS_ANY ? UINT32_MAX : f->max_args))
		return NULL;
	if (f->needs && !sema_require(s, n->pos, f->needs,
				      arena_printf(s->a, "%s()", f->name)))
		return NULL;
	return f;
}

const struct type *sema_agg(struct sema *s, struct node *n)
{
	const struct func *f = call_func(s, n, true);
	if (!f)
		return NULL;
	return n->type = f->check(s, n);
}

const struct type *sema_call(struct sema *s, struct node *n)
{
	const struct func *f = call_func(s, n, false);
	if (!f)
		return NULL;
	return f->check(s, n);
}
