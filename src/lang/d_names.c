/* d_names.c - D's names for what the AST already has: builtin
 * variables (execname is comm, timestamp nsecs ...), functions (quantize
 * is hist, copyinstr str ...), $macro variables, and D's scopes as maps
 * and variables (a global x is the map @.x, self->x the map @.self.x
 * keyed by tid, this->x the clause variable $this_x). What sonde cannot
 * do yet is an error that says so, never a silent difference. */
#include "d_int.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const struct {
	const char *name;
	enum builtin_id id;
} d_builtins[] = {
	{ "pid", BI_PID }, { "tid", BI_TID }, { "uid", BI_UID },
	{ "gid", BI_GID }, { "execname", BI_COMM }, { "timestamp", BI_NSECS },
	{ "cpu", BI_CPU }, { "curthread", BI_CURTASK },
	{ NULL, 0 },
};

/* D's variables that sonde does not provide yet (README: D language). */
static const char *const d_missing[] = {
	"uregs", "curpsinfo", "curlwpsinfo", "caller", "ucaller", "epid",
	"id", "ipl", "root", "cwd", "arg", "curcpu", "zonename", "projid",
	"taskid", NULL,
};

static const char *const d_probe_parts[] = {
	"probeprov", "probemod", "probefunc", "probename",
};

/* profile-N and tick-N: arg0 is the interrupted kernel PC (0 in user
 * mode), arg1 the user PC (0 in the kernel): the sample's ip, by the
 * privilege level in its cs. */
static struct node *profile_pc(struct d_parser *p, struct pos pos, bool user)
{
	struct node *cs = d_call(p, pos, "reg", d_str(p, pos, "cs"), NULL,
				 NULL);
	struct node *ring = node_new(p->a, N_BINOP, pos);
	ring->u.binop.op = OP_BAND;
	ring->u.binop.lhs = cs;
	ring->u.binop.rhs = d_int(p, pos, 3);
	struct node *cond = node_new(p->a, N_BINOP, pos);
	cond->u.binop.op = user ? OP_NE : OP_EQ;
	cond->u.binop.lhs = ring;
	cond->u.binop.rhs = d_int(p, pos, 0);
	struct node *t = node_new(p->a, N_TERNARY, pos);
	t->u.ternary.cond = cond;
	t->u.ternary.then = d_call(p, pos, "reg", d_str(p, pos, "ip"), NULL,
				   NULL);
	t->u.ternary.els = d_int(p, pos, 0);
	return t;
}

/* CLOCK_REALTIME - CLOCK_MONOTONIC, in nanoseconds, now. */
static int64_t wall_offset(void)
{
	struct timespec mono, real;
	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_REALTIME, &real);
	return ((int64_t)real.tv_sec - mono.tv_sec) * 1000000000 +
		(real.tv_nsec - mono.tv_nsec);
}

/* BASE->NAME (ARROW) or BASE.NAME: a member of a kernel struct that a
 * built-in variable reads through BTF */
static struct node *field(struct d_parser *p, struct pos pos,
			  struct node *base, const char *name, bool arrow)
{
	struct node *f = node_new(p->a, N_FIELD, pos);
	f->u.field.base = base;
	f->u.field.name = name;
	f->u.field.arrow = arrow;
	return f;
}

struct node *d_name(struct d_parser *p, const char *name, struct pos pos)
{
	for (uint32_t i = 0; i < p->ninlines; i++) {
		const struct node *v = p->inlines[i].value;
		if (strcmp(p->inlines[i].name, name) != 0)
			continue;
		return v->kind == N_INT ? d_int(p, pos, v->u.ival) :
			d_str(p, pos, v->u.str.s);
	}
	if (strcmp(name, "NULL") == 0)   /* D's <sys/null.h> NULL */
		return d_int(p, pos, 0);
	if (strmap_get(&p->enumerators, name) >= 0) {
		/* an enum's constant: its value from the C declarations */
		struct node *id = node_new(p->a, N_IDENT, pos);
		id->u.str.s = name;
		id->u.str.len = (uint32_t)strlen(name);
		return id;
	}
	if (strcmp(name, "B_READ") == 0)   /* io.d's b_flags bits */
		return d_int(p, pos, D_B_READ);
	if (strcmp(name, "B_WRITE") == 0)
		return d_int(p, pos, D_B_WRITE);
	for (int i = 0; d_builtins[i].name; i++)
		if (strcmp(d_builtins[i].name, name) == 0)
			return d_builtin(p, pos, d_builtins[i].id, 0);
	if (strncmp(name, "arg", 3) == 0 && name[3] >= '0' && name[3] <= '9' &&
	    !name[4]) {
		if (p->profile_clause && name[3] <= '1')
			return profile_pc(p, pos, name[3] == '1');
		/* fbt and pid return: arg1 is the return value (arg0, the
		 * returning instruction's offset, sonde does not know) */
		if (p->return_clause && name[3] <= '1')
			return name[3] == '1' ? d_builtin(p, pos, BI_RETVAL, 0) :
				d_int(p, pos, 0);
		return d_builtin(p, pos, BI_ARG, (uint32_t)(name[3] - '0'));
	}
	for (int i = 0; i < 4; i++)
		if (strcmp(d_probe_parts[i], name) == 0)
			return d_builtin(p, pos, BI_DPROBE, (uint32_t)i);
	if (strcmp(name, "ppid") == 0) {
		/* the parent's process id, from the task's BTF */
		struct node *parent = field(p, pos, d_builtin(p, pos, BI_CURTASK, 0),
					    "real_parent", true);
		struct node *tgid = field(p, pos, parent, "tgid", true);
		/* unsigned, as pid and $target are to sonde */
		struct node *c = node_new(p->a, N_CAST, pos);
		c->u.cast.type_name = "uint64";
		c->u.cast.expr = tgid;
		return c;
	}
	if (strcmp(name, "stackdepth") == 0 || strcmp(name, "ustackdepth") == 0)
		return d_call(p, pos, "__dtrace_stackdepth",
			      d_int(p, pos, name[0] == 'u'), NULL, NULL);
	if (strcmp(name, "vtimestamp") == 0) {
		/* the thread's on-CPU nanoseconds: the scheduler's own count,
		 * task->se.sum_exec_runtime. Oracle's DTrace for Linux 2.x has
		 * no vtimestamp; the kernel adds the running stretch to it at
		 * each tick, switch and accounting update, so it lags the
		 * truth by under a tick (README: D language). */
		struct node *se = field(p, pos, d_builtin(p, pos, BI_CURTASK, 0),
					"se", true);
		return field(p, pos, se, "sum_exec_runtime", false);
	}
	if (strcmp(name, "walltimestamp") == 0) {
		/* the monotonic clock the probes read, moved to the wall
		 * clock by the distance between the two now */
		struct node *n = node_new(p->a, N_BINOP, pos);
		n->u.binop.op = OP_ADD;
		n->u.binop.lhs = d_builtin(p, pos, BI_NSECS, 0);
		n->u.binop.rhs = d_int(p, pos, (uint64_t)wall_offset());
		return n;
	}
	if (strcmp(name, "errno") == 0) {
		if (!p->syscall_return) {
			d_error(p, pos, "errno is supported only in "
				"syscall::*:return clauses yet");
			return NULL;
		}
		/* the return value, when it is an error: -errno */
		struct node *ret = node_new(p->a, N_CAST, pos);
		ret->u.cast.type_name = "int64";
		ret->u.cast.expr = d_builtin(p, pos, BI_ARG, 0);
		struct node *neg = node_new(p->a, N_BINOP, pos);
		neg->u.binop.op = OP_SUB;
		neg->u.binop.lhs = d_int(p, pos, 0);
		neg->u.binop.rhs = ret;
		struct node *cond = node_new(p->a, N_BINOP, pos);
		cond->u.binop.op = OP_GT;
		cond->u.binop.lhs = neg;
		cond->u.binop.rhs = d_int(p, pos, 0);
		struct node *neg2 = node_new(p->a, N_BINOP, pos);
		*neg2 = *neg;
		struct node *t = node_new(p->a, N_TERNARY, pos);
		t->u.ternary.cond = cond;
		t->u.ternary.then = neg2;
		t->u.ternary.els = d_int(p, pos, 0);
		struct node *as_int = node_new(p->a, N_CAST, pos);  /* an int */
		as_int->u.cast.type_name = "int32";
		as_int->u.cast.expr = t;
		return as_int;
	}
	for (int i = 0; d_missing[i]; i++)
		if (strcmp(d_missing[i], name) == 0) {
			d_error(p, pos, "built-in variable %s is not supported "
				"yet by sonde's D", name);
			return NULL;
		}
	/* a global scalar */
	struct node *m = node_new(p->a, N_MAP, pos);
	m->u.map.name = arena_printf(p->a, "@.%s", name);
	return m;
}

struct node *d_psinfo(struct d_parser *p, const char *base,
		      const char *member, struct pos pos)
{
	static const struct { const char *member, *as; } m[] = {
		{ "pr_pid", "pid" }, { "pr_ppid", "ppid" }, { "pr_uid", "uid" },
		{ "pr_gid", "gid" }, { "pr_fname", "execname" },
		{ "pr_lwpid", "tid" },
		{ NULL, NULL },
	};
	bool lwp = strcmp(base, "curlwpsinfo") == 0;
	for (int i = 0; m[i].member; i++)
		if (!strcmp(m[i].member, member) &&
		    lwp == !strcmp(member, "pr_lwpid"))
			return d_name(p, m[i].as, pos);
	d_error(p, pos, "%s->%s is not supported yet by sonde's D (it has "
		"%s)", base, member, lwp ? "pr_lwpid" : "pr_pid, pr_ppid, "
		"pr_uid, pr_gid and pr_fname");
	return NULL;
}

struct node *d_macro(struct d_parser *p, const struct d_tok *t)
{
	const char *s = t->s;
	if (s[0] >= '0' && s[0] <= '9') {
		char *end;
		unsigned long n = strtoul(s, &end, 10);
		if (*end || n > 1000) {
			d_error(p, t->pos, "invalid macro argument $%s", s);
			return NULL;
		}
		struct node *x = node_new(p->a, N_POSITIONAL, t->pos);
		x->u.positional.index = (uint32_t)n;
		if (n == 0)   /* $0: the script's name */
			return d_str(p, t->pos, p->o->script_name ?
				     p->o->script_name : "");
		return t->dollar2 ? d_call(p, t->pos, "str", x, NULL, NULL) : x;
	}
	if (strcmp(s, "target") == 0) {
		if (p->o->pid > 0)
			return d_int(p, t->pos, (uint64_t)p->o->pid);
		if (p->o->cmd)
			return d_builtin(p, t->pos, BI_CPID, 0);
		d_error(p, t->pos,
			"$target is defined only with -c CMD or -p PID");
		return NULL;
	}
	uint64_t v;
	if (strcmp(s, "pid") == 0)
		v = (uint64_t)getpid();
	else if (strcmp(s, "ppid") == 0)
		v = (uint64_t)getppid();
	else if (strcmp(s, "uid") == 0)
		v = getuid();
	else if (strcmp(s, "gid") == 0)
		v = getgid();
	else {
		d_error(p, t->pos, "macro variable $%s is not defined", s);
		return NULL;
	}
	return d_int(p, t->pos, v);
}

static struct d_parser *type_parser;   /* during d_int_type_of */

static const char *var_name(const struct node *n)
{
	return n->kind == N_VAR ? n->u.var.name :
		n->kind == N_MAP ? n->u.map.name : NULL;
}

void d_note_assign(struct d_parser *p, const struct node *target,
		   const struct node *value)
{
	const char *name = var_name(target);
	if (name && value && value->kind == N_CAST &&
	    strchr(value->u.cast.type_name, '*') && !d_ptr_type(p, target)) {
		/* a pointer variable's type, for copyinto() */
		struct d_ptr_var *v = arena_new(p->a, struct d_ptr_var);
		v->name = name;
		v->type = value->u.cast.type_name;
		v->next = p->ptr_vars;
		p->ptr_vars = v;
	}
	if (!name || !value || value->kind == N_CALL ||
	    strmap_get(&p->ints, name) >= 0)
		return;
	/* the first assignment decides, as in D: the expression's type */
	strmap_put(&p->ints, name, d_int_type_of(p, value));
}

const char *d_ptr_type(struct d_parser *p, const struct node *var)
{
	const char *name = var_name(var);
	for (struct d_ptr_var *v = p->ptr_vars; v && name; v = v->next)
		if (strcmp(v->name, name) == 0)
			return v->type;
	return NULL;
}

void d_declare_int(struct d_parser *p, const char *name, int type)
{
	if (strmap_get(&p->ints, name) < 0)
		strmap_put(&p->ints, name, type);
}

int d_int_type_of(struct d_parser *p, const struct node *n)
{
	struct d_parser *saved = type_parser;
	type_parser = p;
	int t = d_int_type(n);
	type_parser = saved;
	return t;
}

int d_int_width_of(struct d_parser *p, const struct node *n)
{
	return D_INT_SIZE(d_int_type_of(p, n));
}

int d_int_width(const struct node *n)
{
	return D_INT_SIZE(d_int_type(n));
}

/* C's integer promotion: a char or short operand is an int. */
static int promote(int t)
{
	return D_INT_SIZE(t) < 4 ? 4 : t;
}

/* The usual arithmetic conversions (the guide's "Type Conversions"):
 * the wider operand's type; of two the same size, unsigned if either
 * is. */
static int usual(int a, int b)
{
	a = promote(a);
	b = promote(b);
	if (D_INT_SIZE(a) != D_INT_SIZE(b))
		return D_INT_SIZE(a) > D_INT_SIZE(b) ? a : b;
	return a | (b & D_INT_UNSIGNED);
}

/* A cast's type name (cast_type's words: "int8" ... "uint64"). */
static int named_type(const char *tn)
{
	bool uns = tn[0] == 'u';
	int size = strstr(tn, "64") ? 8 : strstr(tn, "32") ? 4 :
		strstr(tn, "16") ? 2 : strstr(tn, "8") ? 1 : 8;
	return size | (uns ? D_INT_UNSIGNED : 0);
}

int d_int_type(const struct node *n)
{
	switch (n->kind) {
	case N_VAR:
	case N_MAP: {
		int t = type_parser ? strmap_get(&type_parser->ints,
						 var_name(n)) : -1;
		return t > 0 ? t : 8;
	}
	case N_IDENT:   /* an enum's constant */
		return 4;
	case N_INT:
		/* a constant D types otherwise is a cast (d_parser.c) */
		return n->u.ival <= 0x7fffffff ? 4 : 8;
	case N_BUILTIN:
		switch (n->u.builtin.id) {
		case BI_PID: case BI_TID: case BI_CPU: case BI_CPID:
			return 4;                       /* pid_t, id_t ... */
		case BI_UID: case BI_GID:
			return 4 | D_INT_UNSIGNED;      /* uid_t, gid_t */
		case BI_NSECS:
			return 8 | D_INT_UNSIGNED;      /* timestamp */
		default:
			return 8;
		}
	case N_CALL:   /* index() and rindex() are D ints, sizeof size_t */
		if (strcmp(n->u.call.name, "sizeof") == 0 ||
		    strcmp(n->u.call.name, "offsetof") == 0)
			return 8 | D_INT_UNSIGNED;
		/* htons() ... (d_subr.c): the width they convert at */
		if (strcmp(n->u.call.name, "bswap") == 0 &&
		    n->u.call.args.n == 1)
			return d_int_type(n->u.call.args.v[0]);
		if (strcmp(n->u.call.name, "rand") == 0)
			return 4;
		return strcmp(n->u.call.name, "__dtrace_index") == 0 ||
			strcmp(n->u.call.name, "__dtrace_rindex") == 0 ? 4 : 8;
	case N_FIELD:   /* ppid */
		return strcmp(n->u.field.name, "tgid") == 0 ? 4 :
			8 | D_INT_UNSIGNED;
	case N_CAST:
		if (n->u.cast.expr->kind == N_FIELD &&   /* ppid */
		    !strcmp(n->u.cast.type_name, "uint64"))
			return d_int_type(n->u.cast.expr);
		if (strchr(n->u.cast.type_name, '*'))  /* a pointer */
			return 8 | D_INT_UNSIGNED;
		return named_type(n->u.cast.type_name);
	case N_BINOP:
		if (n->u.binop.op >= OP_LAND)   /* && || and comparisons */
			return 4;
		/* a shift has its left operand's (promoted) type */
		if (n->u.binop.op == OP_SHL || n->u.binop.op == OP_SHR)
			return promote(d_int_type(n->u.binop.lhs));
		return usual(d_int_type(n->u.binop.lhs),
			     d_int_type(n->u.binop.rhs));
	case N_UNOP:
		return n->u.unop.op == OP_LNOT ? 4 :
			promote(d_int_type(n->u.unop.operand));
	case N_TERNARY:
		return usual(d_int_type(n->u.ternary.then),
			     d_int_type(n->u.ternary.els));
	default:
		return 8;
	}
}

/* D's functions that sonde does not provide yet. */
static const char *const d_missing_funcs[] = {

	"copyout", "copyoutstr", "jstack", "uaddr", "bcopy",
	"mutex_owned", "progenyof", "chill", "breakpoint", "panic",
	"freopen", "ftruncate", "setopt", "inet_ntoa6", "ddi_pathname",
	"cleanpath",
	"link_ntop", NULL,
};

/* printf's D-only conversions as sonde's: %Y (a walltimestamp) is the
 * time as DTrace prints it ("2024 Jan  5 10:11:12", through
 * strftime()), %a and %A (an address: its kernel or user symbol), %S
 * (a string) %s. The format is rewritten in place, arguments wrapped. */
static bool printf_conversions(struct d_parser *p, struct node_list *args)
{
	struct node *f = args->v[0];
	if (f->kind != N_STR)
		return true;
	const char *in = f->u.str.s;
	/* each conversion grows by 2 at most ("ll") */
	char *out = arena_alloc(p->a, 2 * strlen(in) + 1), *w = out;
	uint32_t argi = 1;
	for (const char *c = in; *c;) {
		if (*c != '%') {
			*w++ = *c++;
			continue;
		}
		if (c[1] == '%') {
			*w++ = *c++;
			*w++ = *c++;
			continue;
		}
		const char *q = c + 1;
		bool sized = false;
		while (*q && strchr("-+ #0123456789.*hlLjzt?", *q)) {
			if (*q == '*')
				argi++;
			sized |= strchr("hlLjzt", *q) != NULL;
			q++;
		}
		memcpy(w, c, (size_t)(q - c));
		w += q - c;
		if (!*q)
			break;
		char conv = *q;
		if (argi < args->n) {
			struct node *a = args->v[argi];
			struct pos pos = a->pos;
			switch (conv) {
			case 'Y': {
				struct node *t = node_new(p->a, N_BINOP, pos);
				t->u.binop.op = OP_SUB;
				t->u.binop.lhs = a;
				t->u.binop.rhs = d_int(p, pos,
						       (uint64_t)wall_offset());
				args->v[argi] = d_call(p, pos, "strftime",
					d_str(p, pos, "%Y %b %e %T"), t, NULL);
				conv = 's';
				break;
			}
			case 'a':
			case 'A':
				args->v[argi] = d_call(p, pos, conv == 'a' ?
						       "ksym" : "usym", a, NULL,
						       NULL);
				conv = 's';
				break;
			case 'S':
				conv = 's';
				break;
			default:
				/* D sizes a conversion by its argument's D type
				 * (libdtrace's pfprint_sint/_uint): a narrower
				 * one is cast to its size, signed for %d and %i,
				 * unsigned for the others, and printed 64-bit */
				if (strchr("diuxXo", conv) && !sized) {
					*w++ = 'l';
					*w++ = 'l';
					int size = d_int_width_of(p, a);
					if (size < 8) {
						struct node *cv = node_new(p->a,
							N_CAST, pos);
						cv->u.cast.type_name = arena_printf(
							p->a, "%sint%d",
							strchr("di", conv) ? "" : "u",
							size * 8);
						cv->u.cast.expr = a;
						args->v[argi] = cv;
					}
				}
				break;
			}
		}
		*w++ = conv;
		argi++;
		c = q + 1;
	}
	*w = 0;
	f->u.str.s = out;
	f->u.str.len = (uint32_t)(w - out);
	return true;
}

static struct node *call_with(struct d_parser *p, struct pos pos,
			      const char *name, struct node_list *args)
{
	struct node *c = node_new(p->a, N_CALL, pos);
	c->u.call.name = name;
	c->u.call.args = *args;
	return c;
}

static bool arity(struct d_parser *p, const char *name, struct pos pos,
		  const struct node_list *args, uint32_t lo, uint32_t hi)
{
	if (args->n >= lo && args->n <= hi)
		return true;
	d_error(p, pos, "%s( ) prototype mismatch: %u arguments passed, "
		"%u%s expected", name, args->n, lo,
		hi > lo ? " or more" : "");
	return false;
}

struct node *d_map_call(struct d_parser *p, const char *name,
			struct node_list *args, struct pos pos)
{
	static const struct { const char *d, *sonde; uint8_t lo, hi; bool rec; }
	same[] = {
		{ "printf", "printf", 1, 255, true },
		{ "exit", "exit", 1, 1, true },
		{ "system", "system", 1, 255, true },
		{ "copyinstr", "str", 1, 2, false },
		{ "json", "json", 2, 2, false },
		{ "count", "count", 0, 0, false },
		{ "sum", "sum", 1, 1, false },
		{ "avg", "avg", 1, 1, false },
		{ "min", "min", 1, 1, false },
		{ "max", "max", 1, 1, false },
		{ "quantize", "hist", 1, 1, false },
		{ "stddev", "__dtrace_stddev", 1, 1, false },
		{ "llquantize", "__dtrace_llquantize", 5, 5, false },
		{ "speculation", "__dtrace_speculation", 0, 0, false },
		{ "speculate", "__dtrace_speculate", 1, 1, true },
		{ "commit", "__dtrace_commit", 1, 1, false },
		{ "discard", "__dtrace_discard", 1, 1, false },
		{ "clear", "zero", 1, 1, false },
		{ "raise", "signal", 1, 1, false },
		{ "func", "ksym", 1, 1, false },
		{ "sym", "ksym", 1, 1, false },
		{ "ufunc", "usym", 1, 1, false },
		{ "usym", "usym", 1, 1, false },
		{ "mod", "__dtrace_mod", 1, 1, false },
		{ "umod", "__dtrace_umod", 1, 1, false },
		{ "stack", "kstack", 0, 1, false },
		{ "ustack", "ustack", 0, 2, false },
		{ NULL, NULL, 0, 0, false },
	};
	for (int i = 0; same[i].d; i++) {
		if (strcmp(same[i].d, name) != 0)
			continue;
		if (!arity(p, name, pos, args, same[i].lo, same[i].hi))
			return NULL;
		p->records |= same[i].rec;
		if (!strcmp(name, "printf") && !printf_conversions(p, args))
			return NULL;
		return call_with(p, pos, same[i].sonde, args);
	}
	if (strcmp(name, "trace") == 0 || strcmp(name, "print") == 0) {
		if (!arity(p, name, pos, args, 1, 1))
			return NULL;
		const struct node *a0 = args->v[0];
		if (a0->kind == N_MAP && a0->u.map.name[1] != '.') {
			/* libdtrace's D_TRACE_AGG, D_PRINT_AGG */
			d_error(p, a0->pos, "%s( ) may not be applied to an "
				"aggregation%s", name, name[0] == 'p' ?
				" -- did you mean printa()?" : "");
			return NULL;
		}
		p->records = true;
		int w = d_int_width_of(p, args->v[0]);
		struct node *x = args->v[0];
		if (w < 4) {
			/* a char or short: its record's bytes, read back
			 * unsigned (libdtrace prints a uint8_t/uint16_t) */
			x = node_new(p->a, N_CAST, pos);
			x->u.cast.type_name = w == 1 ? "uint8" : "uint16";
			x->u.cast.expr = args->v[0];
		}
		return d_call(p, pos, name[0] == 't' ? "__dtrace_trace" :
			      "__dtrace_print", d_int(p, pos, (uint64_t)w),
			      x, NULL);
	}
	if (strcmp(name, "printa") == 0) {
		if (!arity(p, name, pos, args, 1, 255))
			return NULL;
		p->records = true;
		bool fmt = args->v[0]->kind == N_STR;
		if (fmt && args->n < 2) {
			d_error(p, pos, "printa( ) needs an aggregation");
			return NULL;
		}
		for (uint32_t i = fmt; i < args->n; i++) {
			struct node *m = args->v[i];
			if (m->kind != N_MAP || m->u.map.keys.n ||
			    m->u.map.name[1] == '.') {
				d_error(p, m->pos, "printa( ) argument #%u must "
					"be an aggregation", i + 1);
				return NULL;
			}
		}
		/* __dtrace_printa(@first, FORMAT or "", @more...) */
		struct node *c = d_call(p, pos, "__dtrace_printa", args->v[fmt],
					fmt ? args->v[0] : d_str(p, pos, ""),
					NULL);
		for (uint32_t i = fmt + 1; i < args->n; i++)
			node_list_push(p->a, &c->u.call.args, args->v[i]);
		return c;
	}
	if (strcmp(name, "lquantize") == 0) {
		if (!arity(p, name, pos, args, 3, 4))
			return NULL;
		struct node *c = call_with(p, pos, "lhist", args);
		if (args->n == 3)
			node_list_push(p->a, &c->u.call.args, d_int(p, pos, 1));
		return c;
	}
	if (strcmp(name, "trunc") == 0) {
		if (!arity(p, name, pos, args, 1, 2))
			return NULL;
		if (args->n == 2)
			return call_with(p, pos, "__dtrace_trunc", args);
		return call_with(p, pos, "clear", args);
	}
	if (strcmp(name, "normalize") == 0 || strcmp(name, "denormalize") == 0) {
		bool de = name[0] == 'd';
		if (!arity(p, name, pos, args, de ? 1 : 2, de ? 1 : 2))
			return NULL;
		if (de)
			node_list_push(p->a, args, d_int(p, pos, 1));
		return call_with(p, pos, "__dtrace_normalize", args);
	}
	static const struct { const char *name; uint8_t lo, hi; }
	strfn[] = {
		{ "strlen", 1, 1 }, { "strjoin", 2, 2 }, { "substr", 2, 3 },
		{ "index", 2, 3 }, { "rindex", 2, 3 }, { "strchr", 2, 2 },
		{ "strrchr", 2, 2 }, { "strstr", 2, 2 }, { "toupper", 1, 1 },
		{ "tolower", 1, 1 }, { "lltostr", 1, 2 }, { "basename", 1, 1 },
		{ "dirname", 1, 1 }, { NULL, 0, 0 },
	};
	for (int i = 0; strfn[i].name; i++) {
		if (strcmp(strfn[i].name, name) != 0)
			continue;
		if (!arity(p, name, pos, args, strfn[i].lo, strfn[i].hi))
			return NULL;
		return call_with(p, pos, arena_printf(p->a, "__dtrace_%s", name),
				 args);
	}
	if (strcmp(name, "tracemem") == 0) {
		if (!arity(p, name, pos, args, 2, 3))
			return NULL;
		p->records = true;
		struct node *b = d_call(p, pos, "buf", args->v[0], args->v[1],
					NULL);
		return d_call(p, pos, "__dtrace_tracemem", b, NULL, NULL);
	}
	if (strcmp(name, "strtok") == 0) {
		/* strtok(NULL, d): go on with the last string */
		if (!arity(p, name, pos, args, 2, 2))
			return NULL;
		struct node *s = args->v[0];
		bool cont = s->kind == N_INT && s->u.ival == 0;
		return d_call(p, pos, "__dtrace_strtok",
			      cont ? d_str(p, pos, "") : s, args->v[1],
			      d_int(p, pos, cont));
	}
	if (strcmp(name, "copyin") == 0) {
		/* only stringof(copyin(addr, n)) yet: its bytes as a string
		 * are str(addr, n) (funcs/dtrace.c says so of the rest) */
		if (!arity(p, name, pos, args, 2, 2))
			return NULL;
		return call_with(p, pos, "__dtrace_copyin", args);
	}
	if (strcmp(name, "copyinto") == 0) {
		/* copyinto(addr, size, dest): a statement (d_parser.c makes
		 * it dest = (its pointer type)uptr(addr)) */
		if (!arity(p, name, pos, args, 3, 3))
			return NULL;
		struct node *dest = args->v[2];
		if (dest->kind != N_VAR && dest->kind != N_MAP) {
			d_error(p, dest->pos, "copyinto( ) argument #3 must be a "
				"variable that alloca( ) set, in sonde's D");
			return NULL;
		}
		return call_with(p, pos, "__dtrace_copyinto", args);
	}
	if (strcmp(name, "alloca") == 0) {
		/* scratch memory for copyinto() only: copyinto names the
		 * user memory it copies (d_parser.c), so this is the NULL
		 * it starts as */
		if (!arity(p, name, pos, args, 1, 1))
			return NULL;
		return d_int(p, pos, 0);
	}
	if (strcmp(name, "stringof") == 0) {
		if (!arity(p, name, pos, args, 1, 1))
			return NULL;
		struct node *a = args->v[0];
		if (a->kind == N_CALL &&
		    strcmp(a->u.call.name, "__dtrace_copyin") == 0)
			a->u.call.name = "str";
		return a;
	}
	bool handled;
	struct node *subr = d_subr_call(p, name, args, pos, &handled);
	if (handled)
		return subr;
	for (int i = 0; d_missing_funcs[i]; i++)
		if (strcmp(d_missing_funcs[i], name) == 0) {
			d_error(p, pos, "%s( ) is not supported yet by sonde's D",
				name);
			return NULL;
		}
	d_error(p, pos, "failed to resolve %s: Unknown function", name);
	return NULL;
}
