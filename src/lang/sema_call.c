/* sema_call.c - the semantic pass for function calls: argument counts
 * and types, printf-style format checking, aggregation value types, and
 * the event table entries of calls that talk to user space. */
#include "sema_int.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "../program.h"

static const char *const agg_names[] = {
	"count", "sum", "avg", "min", "max", "stats", "hist", "lhist", NULL,
};

bool sema_is_agg_call(const struct node *n)
{
	if (!n || n->kind != N_CALL)
		return false;
	for (int i = 0; agg_names[i]; i++)
		if (strcmp(n->u.call.name, agg_names[i]) == 0)
			return true;
	return false;
}

static enum func_id func_lookup(const char *name)
{
	for (int i = 0; i < FN_COUNT_; i++)
		if (strcmp(func_names[i], name) == 0)
			return (enum func_id)i;
	return FN_COUNT_;
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

static void eval_args(struct sema *s, struct node *n, uint32_t from)
{
	for (uint32_t i = from; i < nargs(n); i++)
		sema_expr(s, arg(n, i));
}

/* Argument i must be a string literal; returns it or NULL. */
static const char *lit_str(struct sema *s, struct node *n, uint32_t i,
			   const char *what)
{
	struct node *a = arg(n, i);
	sema_expr(s, a);
	if (a->kind == N_STR)
		return a->u.str.s;
	sema_error(s, a->pos, "ARG_TYPE", "%s() expects a string literal as %s",
		   n->u.call.name, what);
	return NULL;
}

/* Argument i must be an integer literal (a positional parameter counts:
 * the final pass has turned it into one). */
static bool lit_int(struct sema *s, struct node *n, uint32_t i,
		    const char *what, int64_t *v)
{
	struct node *a = arg(n, i);
	sema_expr(s, a);
	if (a->kind == N_INT) {
		*v = (int64_t)a->u.ival;
		return true;
	}
	if (a->kind == N_POSITIONAL && !s->final) {
		*v = 1;
		return true;
	}
	sema_error(s, a->pos, "ARG_TYPE",
		   "%s() expects an integer literal as %s", n->u.call.name,
		   what);
	return false;
}

/* Argument i must be an integer expression. */
static const struct type *int_arg(struct sema *s, struct node *n, uint32_t i,
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

static const struct type *str_arg(struct sema *s, struct node *n, uint32_t i,
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

static void add_event(struct sema *s, struct node *n,
		      const struct event_spec *e)
{
	if (s->final)
		n->u.call.event_id = program_add_event(s->prog, e);
}

/* ---------------------------------------------------------------- */
/* printf formats                                                    */

/* Check `fmt` against arguments from index `first`; on success returns
 * the tuple of the argument types (the event record), else NULL. */
static const struct type *check_format(struct sema *s, struct node *n,
				       const char *fmt, uint32_t first,
				       bool *ok)
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
			good = !is_int(t) && t->kind != TYPE_NONE &&
				t->kind != TYPE_RECORD && !type_is_agg(t);
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

/* printf/cat/system: a literal format, then arguments. */
static void format_call(struct sema *s, struct node *n, enum event_kind kind)
{
	if (!argc_ok(s, n, 1, UINT32_MAX))
		return;
	struct node *f = arg(n, 0);
	sema_expr(s, f);
	if (f->kind != N_STR) {
		sema_error(s, f->pos, "PRINTF_FORMAT",
			   "%s() needs a string literal as its format",
			   n->u.call.name);
		eval_args(s, n, 1);
		return;
	}
	bool ok = true;
	const struct type *args = check_format(s, n, f->u.str.s, 1, &ok);
	if (!ok)
		return;
	struct event_spec e = { .kind = kind, .fmt = f->u.str.s,
				.args = args, .map_id = -1 };
	add_event(s, n, &e);
}

/* ---------------------------------------------------------------- */
/* map functions                                                     */

/* The map argument of print/clear/zero/delete. */
static struct sema_map *map_arg(struct sema *s, struct node *n, bool keys)
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

static const struct type *call_print(struct sema *s, struct node *n)
{
	if (!argc_ok(s, n, 1, 3))
		return NULL;
	struct node *a0 = arg(n, 0);
	if (a0->kind == N_MAP && (nargs(n) > 1 || !a0->u.map.keys.n)) {
		struct sema_map *m = map_arg(s, n, false);
		int64_t top = 0, div = 0;
		if (nargs(n) > 1 && !lit_int(s, n, 1, "top", &top))
			return NULL;
		if (nargs(n) > 2 && !lit_int(s, n, 2, "div", &div))
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
		add_event(s, n, &e);
		return type_none();
	}
	if (a0->kind == N_MAP) {
		sema_error(s, a0->pos, "ARG_TYPE",
			   "print() takes a whole map: print(%s), not an element",
			   a0->u.map.name);
		return NULL;
	}
	if (nargs(n) != 1) {
		sema_error(s, n->pos, "ARG_COUNT",
			   "print() of a value takes 1 argument (%u given)",
			   nargs(n));
		eval_args(s, n, 0);
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
	struct event_spec e = { .kind = EV_PRINT_VALUE, .map_id = -1,
				.args = type_tuple(s->a, 1, &t) };
	add_event(s, n, &e);
	return type_none();
}

static const struct type *call_map_op(struct sema *s, struct node *n,
				      enum event_kind kind)
{
	if (!argc_ok(s, n, 1, 1))
		return NULL;
	struct sema_map *m = map_arg(s, n, false);
	if (!m)
		return NULL;
	struct event_spec e = { .kind = kind, .map_id = m->id };
	add_event(s, n, &e);
	return type_none();
}

const struct type *sema_agg(struct sema *s, struct node *n)
{
	enum func_id id = func_lookup(n->u.call.name);
	n->u.call.id = id;
	struct type *t = arena_new(s->a, struct type);
	const struct type *at = NULL;
	switch (id) {
	case FN_COUNT:
		if (!argc_ok(s, n, 0, 0))
			return NULL;
		t->kind = TYPE_COUNT;
		t->size = 8;
		break;
	case FN_SUM: case FN_AVG: case FN_MIN: case FN_MAX: case FN_STATS:
	case FN_HIST:
		if (!argc_ok(s, n, 1, 1))
			return NULL;
		at = int_arg(s, n, 0, "its argument");
		if (!at)
			return NULL;
		t->kind = id == FN_SUM ? TYPE_SUM : id == FN_AVG ? TYPE_AVG :
			id == FN_MIN ? TYPE_MIN : id == FN_MAX ? TYPE_MAX :
			id == FN_STATS ? TYPE_STATS : TYPE_HIST;
		t->size = id == FN_SUM || id == FN_HIST ? 8 : 16;
		t->is_signed = id != FN_HIST && at->is_signed;
		break;
	case FN_LHIST: {
		if (!argc_ok(s, n, 4, 4))
			return NULL;
		at = int_arg(s, n, 0, "its value");
		int64_t mn, mx, st;
		bool ok = lit_int(s, n, 1, "min", &mn);
		ok = lit_int(s, n, 2, "max", &mx) && ok;
		ok = lit_int(s, n, 3, "step", &st) && ok;
		if (!ok || !at)
			return NULL;
		if (s->final && (st < 1 || mx <= mn || mn < 0 || st > mx - mn)) {
			sema_error(s, n->pos, "ARG_TYPE",
				   "lhist(): needs 0 <= min < max and 1 <= step <= max - min "
				   "(min %lld, max %lld, step %lld)",
				   (long long)mn, (long long)mx, (long long)st);
			return NULL;
		}
		t->kind = TYPE_LHIST;
		t->size = 8;
		t->lhist_min = mn;
		t->lhist_max = mx;
		t->lhist_step = st;
		break;
	}
	default:
		return NULL;
	}
	return n->type = t;
}

/* ---------------------------------------------------------------- */
/* the rest                                                          */

static const struct {
	const char *name;
	int sig;
} signals[] = {
	{ "HUP", SIGHUP }, { "INT", SIGINT }, { "QUIT", SIGQUIT },
	{ "ILL", SIGILL }, { "TRAP", SIGTRAP }, { "ABRT", SIGABRT },
	{ "BUS", SIGBUS }, { "FPE", SIGFPE }, { "KILL", SIGKILL },
	{ "USR1", SIGUSR1 }, { "SEGV", SIGSEGV }, { "USR2", SIGUSR2 },
	{ "PIPE", SIGPIPE }, { "ALRM", SIGALRM }, { "TERM", SIGTERM },
	{ "CHLD", SIGCHLD }, { "CONT", SIGCONT }, { "STOP", SIGSTOP },
	{ "TSTP", SIGTSTP }, { "TTIN", SIGTTIN }, { "TTOU", SIGTTOU },
	{ "URG", SIGURG }, { "XCPU", SIGXCPU }, { "XFSZ", SIGXFSZ },
	{ "VTALRM", SIGVTALRM }, { "PROF", SIGPROF }, { "WINCH", SIGWINCH },
	{ "IO", SIGIO }, { "PWR", SIGPWR }, { "SYS", SIGSYS },
};

static const struct type *call_signal(struct sema *s, struct node *n)
{
	if (!argc_ok(s, n, 1, 1))
		return NULL;
	struct node *a = arg(n, 0);
	const struct type *t = sema_expr(s, a);
	if (a->kind == N_STR) {
		const char *name = a->u.str.s;
		if (strncmp(name, "SIG", 3) == 0)
			name += 3;
		for (size_t i = 0; i < sizeof(signals) / sizeof(signals[0]); i++)
			if (strcmp(signals[i].name, name) == 0) {
				if (s->final) {
					a->kind = N_INT;
					a->u.ival = (uint64_t)signals[i].sig;
					a->type = type_s64();
				}
				return type_none();
			}
		sema_error(s, a->pos, "ARG_TYPE", "signal(): unknown signal '%s'",
			   a->u.str.s);
		return NULL;
	}
	if (t && !is_int(t)) {
		sema_error(s, a->pos, "ARG_TYPE",
			   "signal() expects a signal number or name, not '%s'",
			   sema_tname(s, t));
		return NULL;
	}
	return type_none();
}

static const char *const x86_regs[] = {
	"r15", "r14", "r13", "r12", "bp", "bx", "r11", "r10", "r9", "r8",
	"ax", "cx", "dx", "si", "di", "orig_ax", "ip", "cs", "flags", "sp",
	"ss", NULL,
};

static const struct type *call_stack(struct sema *s, struct node *n, bool k)
{
	if (!argc_ok(s, n, 0, 2))
		return NULL;
	struct type *t = arena_new(s->a, struct type);
	t->kind = k ? TYPE_KSTACK : TYPE_USTACK;
	t->size = k ? 8 : 16;
	t->stack_limit = 127;
	uint32_t i = 0;
	if (nargs(n) > 0 && arg(n, 0)->kind == N_IDENT) {
		const char *m = arg(n, 0)->u.str.s;
		if (strcmp(m, "bpftrace") == 0)
			t->stack_mode = 0;
		else if (strcmp(m, "perf") == 0)
			t->stack_mode = 1;
		else if (strcmp(m, "raw") == 0)
			t->stack_mode = 2;
		else {
			sema_error(s, arg(n, 0)->pos, "ARG_TYPE",
				   "%s(): unknown stack mode '%s' (bpftrace, perf "
				   "or raw)", n->u.call.name, m);
			return NULL;
		}
		i = 1;
	}
	if (nargs(n) > i) {
		int64_t lim;
		if (!lit_int(s, n, i, "the frame limit", &lim))
			return NULL;
		if (s->final && (lim < 1 || lim > 1024)) {
			sema_error(s, arg(n, i)->pos, "ARG_TYPE",
				   "%s(): frame limit %lld out of range (1 to 1024)",
				   n->u.call.name, (long long)lim);
			return NULL;
		}
		t->stack_limit = (uint32_t)lim;
		i++;
	}
	if (nargs(n) > i) {
		sema_error(s, arg(n, i)->pos, "ARG_TYPE",
			   "%s() takes ([mode,] [limit])", n->u.call.name);
		return NULL;
	}
	return t;
}

static const struct type *call_sizeof(struct sema *s, struct node *n)
{
	if (!argc_ok(s, n, 1, 1))
		return NULL;
	struct node *a = arg(n, 0);
	uint64_t size = 0;
	if (a->kind == N_IDENT) {
		if (!sema_sizeof_type(s, a, &size))
			return NULL;
	} else {
		const struct type *t = sema_expr(s, a);
		if (!t)
			return NULL;
		size = is_int(t) ? t->bits / 8 : t->size;
	}
	if (s->final) {
		/* a constant: codegen sees a literal */
		n->kind = N_INT;
		n->u.ival = size;
	}
	return type_u64();
}

const struct type *sema_call(struct sema *s, struct node *n)
{
	enum func_id id = func_lookup(n->u.call.name);
	n->u.call.id = id;
	struct type *t;

	if (sema_is_agg_call(n)) {
		sema_error(s, n->pos, "AGG_CONTEXT",
			   "%s() must be assigned to a map: @x = %s(...)",
			   n->u.call.name, n->u.call.name);
		return NULL;
	}
	switch (id) {
	case FN_PRINTF:
		format_call(s, n, EV_PRINTF);
		return type_none();
	case FN_CAT:
		format_call(s, n, EV_CAT);
		return type_none();
	case FN_SYSTEM:
		if (!s->opts || !s->opts->unsafe) {
			sema_error(s, n->pos, "UNSAFE",
				   "system() is unsafe: it needs --unsafe");
			return NULL;
		}
		format_call(s, n, EV_SYSTEM);
		return type_none();
	case FN_SIGNAL:
		if (!s->opts || !s->opts->unsafe) {
			sema_error(s, n->pos, "UNSAFE",
				   "signal() is unsafe: it needs --unsafe");
			return NULL;
		}
		return call_signal(s, n);
	case FN_PRINT:
		return call_print(s, n);
	case FN_TIME: {
		if (!argc_ok(s, n, 0, 1))
			return NULL;
		const char *fmt = "%H:%M:%S\n";
		if (nargs(n) && !(fmt = lit_str(s, n, 0, "its format")))
			return NULL;
		struct event_spec e = { .kind = EV_TIME, .fmt = fmt,
					.map_id = -1 };
		add_event(s, n, &e);
		return type_none();
	}
	case FN_JOIN: {
		if (!argc_ok(s, n, 1, 2))
			return NULL;
		const char *delim = " ";
		const struct type *a = int_arg(s, n, 0, "the array pointer");
		if (nargs(n) > 1 && !(delim = lit_str(s, n, 1, "the delimiter")))
			return NULL;
		if (!a)
			return NULL;
		const struct type *f[SEMA_JOIN_MAX];
		for (int i = 0; i < SEMA_JOIN_MAX; i++)
			f[i] = type_str(s->a, s->prog->strlen);
		struct event_spec e = { .kind = EV_JOIN, .fmt = delim,
					.map_id = -1,
					.args = type_tuple(s->a, SEMA_JOIN_MAX, f) };
		add_event(s, n, &e);
		return type_none();
	}
	case FN_EXIT: {
		if (!argc_ok(s, n, 0, 0))
			return NULL;
		struct event_spec e = { .kind = EV_EXIT, .map_id = -1 };
		add_event(s, n, &e);
		return type_none();
	}
	case FN_CLEAR:
		return call_map_op(s, n, EV_CLEAR_MAP);
	case FN_ZERO:
		return call_map_op(s, n, EV_ZERO_MAP);
	case FN_DELETE:
		if (!argc_ok(s, n, 1, 1))
			return NULL;
		return map_arg(s, n, true) ? type_none() : NULL;
	case FN_STR: {
		if (!argc_ok(s, n, 1, 2))
			return NULL;
		struct node *a = arg(n, 0);
		const struct type *at = a->kind == N_POSITIONAL ?
			sema_positional(s, a, true) : sema_expr(s, a);
		a->type = at;
		if (nargs(n) > 1 && !int_arg(s, n, 1, "the length"))
			return NULL;
		if (at && !is_int(at) && !is_str(at)) {
			sema_error(s, a->pos, "ARG_TYPE",
				   "str() expects a pointer or a string, not '%s'",
				   sema_tname(s, at));
			return NULL;
		}
		return at ? type_str(s->a, s->prog->strlen) : NULL;
	}
	case FN_BUF: {
		if (!argc_ok(s, n, 2, 2))
			return NULL;
		/* buf(ptr, len), or buf(string, len): its first bytes */
		const struct type *a = sema_expr(s, arg(n, 0));
		if (a && !is_int(a) && !is_str(a)) {
			sema_error(s, arg(n, 0)->pos, "ARG_TYPE",
				   "buf() expects a pointer or a string, not '%s'",
				   sema_tname(s, a));
			return NULL;
		}
		const struct type *l = int_arg(s, n, 1, "the length");
		if (!a || !l)
			return NULL;
		uint32_t len = s->prog->strlen;
		if (is_str(a) && a->size < len)
			len = a->size;
		if (arg(n, 1)->kind == N_INT && arg(n, 1)->u.ival < len)
			len = (uint32_t)arg(n, 1)->u.ival;
		return type_simple(s->a, TYPE_BUF, 4 + len);
	}
	case FN_KSYM:
	case FN_USYM:
		if (!argc_ok(s, n, 1, 1) || !int_arg(s, n, 0, "the address"))
			return NULL;
		return id == FN_KSYM ? type_simple(s->a, TYPE_KSYM, 8) :
			type_simple(s->a, TYPE_USYM, 16);
	case FN_KADDR:
	case FN_UADDR:
	case FN_CGROUPID:
		if (!argc_ok(s, n, 1, 1) || !lit_str(s, n, 0, "its argument"))
			return NULL;
		if (id == FN_CGROUPID)
			return type_u64();
		t = arena_new(s->a, struct type);
		*t = *type_u64();
		t->is_ptr = true;
		return t;
	case FN_REG: {
		const char *r;
		if (!argc_ok(s, n, 1, 1) || !(r = lit_str(s, n, 0, "a register")))
			return NULL;
		for (int i = 0; x86_regs[i]; i++)
			if (strcmp(x86_regs[i], r) == 0)
				return type_u64();
		sema_error(s, arg(n, 0)->pos, "ARG_TYPE",
			   "reg(): unknown register '%s'", r);
		return NULL;
	}
	case FN_NTOP: {
		/* ntop([family,] addr): addr an integer (IPv4, its low four
		 * bytes) or the 4 or 16 bytes of an address (IPv4, IPv6). */
		if (!argc_ok(s, n, 1, 2))
			return NULL;
		uint32_t last = nargs(n) - 1;
		if (last && !int_arg(s, n, 0, "the address family"))
			return NULL;
		struct node *an = arg(n, last);
		const struct type *a = an->kind == N_FIELD ?
			sema_field_bytes(s, an) : sema_expr(s, an);
		if (a && !is_int(a) &&
		    !(is_str(a) && (a->size == 4 || a->size == 16))) {
			sema_error(s, an->pos, "ARG_TYPE",
				   "ntop() expects an integer or the 4 or 16 bytes "
				   "of an address, not '%s'", sema_tname(s, a));
			return NULL;
		}
		return a ? type_simple(s->a, TYPE_INET, 24) : NULL;
	}
	case FN_SIZEOF:
		return call_sizeof(s, n);
	case FN_STRNCMP: {
		int64_t len;
		if (!argc_ok(s, n, 3, 3))
			return NULL;
		const struct type *a = str_arg(s, n, 0, "its first argument");
		const struct type *b = str_arg(s, n, 1, "its second argument");
		if (!lit_int(s, n, 2, "the length", &len) || !a || !b)
			return NULL;
		return type_u64();
	}
	case FN_STRCONTAINS: {
		if (!argc_ok(s, n, 2, 2))
			return NULL;
		const struct type *a = str_arg(s, n, 0, "the haystack");
		const struct type *b = str_arg(s, n, 1, "the needle");
		return a && b ? type_u64() : NULL;
	}
	case FN_JSON: {
		if (!argc_ok(s, n, 2, 2))
			return NULL;
		const struct type *a = str_arg(s, n, 0, "the document");
		if (!lit_str(s, n, 1, "the path") || !a)
			return NULL;
		return type_str(s->a, s->prog->strlen);
	}
	case FN_KSTACK:
	case FN_USTACK:
		return call_stack(s, n, id == FN_KSTACK);
	default:
		sema_error(s, n->pos, "BAD_CALL", "unknown function %s()",
			   n->u.call.name);
		eval_args(s, n, 0);
		return NULL;
	}
}
