/* d_translate.c - args[] of the proc, sched and io probes, as DTrace's
 * translators give them (psinfo_t, lwpsinfo_t, bufinfo_t, devinfo_t),
 * from the fields of the kernel tracepoint each probe sits on (d.c's
 * sdt_map). Only the members a tracepoint can supply exist; any other
 * is an error naming those there are. The guide's argument lists:
 *
 *   proc:::exec           args[0] string, the path
 *   proc:::create         args[0] psinfo_t *, the child
 *   proc:::signal-send    args[0] lwpsinfo_t *, args[1] psinfo_t *, the
 *                         receiver; args[2] int, the signal
 *   proc:::signal-handle  args[0] int, the signal
 *   sched:::off-cpu       args[0] lwpsinfo_t *, args[1] psinfo_t *, the
 *                         thread about to run
 *   sched:::wakeup        args[0] lwpsinfo_t *, args[1] psinfo_t *, the
 *                         thread woken
 *   io:::start, io:::done args[0] bufinfo_t *, args[1] devinfo_t *
 *
 * A tracepoint's pid is the thread's id: pr_pid of a thread other than
 * a process's first is its own id, not its process's. */
#include "d_int.h"

#include <stdio.h>
#include <string.h>

enum tr_kind {
	TR_FIELD,       /* the tracepoint's field, as it is */
	TR_INT,         /* the field as a D int */
	TR_STR,         /* the string a user pointer field points to */
	TR_SECTORS,     /* a sector count field, in bytes */
	TR_MAJOR,       /* dev_t's major and minor numbers */
	TR_MINOR,
	TR_RWFLAGS,     /* B_READ or B_WRITE from the rwbs field */
};

static const struct translation {
	const char *tracepoint;  /* sdt_map's */
	uint32_t arg;
	const char *member;      /* NULL: args[arg] itself */
	const char *field;
	enum tr_kind kind;
} translations[] = {
	{ "syscalls:sys_enter_execve", 0, NULL, "filename", TR_STR },
	{ "sched:sched_process_fork", 0, "pr_pid", "child_pid", TR_INT },
	{ "sched:sched_process_fork", 0, "pr_ppid", "parent_pid", TR_INT },
	{ "sched:sched_process_fork", 0, "pr_fname", "child_comm", TR_FIELD },
	{ "signal:signal_generate", 0, "pr_lwpid", "pid", TR_INT },
	{ "signal:signal_generate", 1, "pr_pid", "pid", TR_INT },
	{ "signal:signal_generate", 1, "pr_fname", "comm", TR_FIELD },
	{ "signal:signal_generate", 2, NULL, "sig", TR_INT },
	{ "signal:signal_deliver", 0, NULL, "sig", TR_INT },
	{ "sched:sched_switch", 0, "pr_lwpid", "next_pid", TR_INT },
	{ "sched:sched_switch", 0, "pr_pri", "next_prio", TR_INT },
	{ "sched:sched_switch", 1, "pr_pid", "next_pid", TR_INT },
	{ "sched:sched_switch", 1, "pr_fname", "next_comm", TR_FIELD },
	{ "sched:sched_wakeup", 0, "pr_lwpid", "pid", TR_INT },
	{ "sched:sched_wakeup", 0, "pr_pri", "prio", TR_INT },
	{ "sched:sched_wakeup", 1, "pr_pid", "pid", TR_INT },
	{ "sched:sched_wakeup", 1, "pr_fname", "comm", TR_FIELD },
	{ "block:block_rq_issue", 0, "b_bcount", "bytes", TR_FIELD },
	{ "block:block_rq_issue", 0, "b_blkno", "sector", TR_FIELD },
	{ "block:block_rq_issue", 0, "b_lblkno", "sector", TR_FIELD },
	{ "block:block_rq_issue", 0, "b_flags", "rwbs", TR_RWFLAGS },
	{ "block:block_rq_issue", 0, "b_edev", "dev", TR_FIELD },
	{ "block:block_rq_issue", 1, "dev_major", "dev", TR_MAJOR },
	{ "block:block_rq_issue", 1, "dev_minor", "dev", TR_MINOR },
	{ "block:block_rq_complete", 0, "b_bcount", "nr_sector", TR_SECTORS },
	{ "block:block_rq_complete", 0, "b_blkno", "sector", TR_FIELD },
	{ "block:block_rq_complete", 0, "b_lblkno", "sector", TR_FIELD },
	{ "block:block_rq_complete", 0, "b_flags", "rwbs", TR_RWFLAGS },
	{ "block:block_rq_complete", 0, "b_error", "error", TR_INT },
	{ "block:block_rq_complete", 0, "b_edev", "dev", TR_FIELD },
	{ "block:block_rq_complete", 1, "dev_major", "dev", TR_MAJOR },
	{ "block:block_rq_complete", 1, "dev_minor", "dev", TR_MINOR },
	{ NULL, 0, NULL, NULL, 0 },
};

static struct node *translate(struct d_parser *p, const struct translation *t,
			      struct pos pos)
{
	struct node *f = node_new(p->a, N_FIELD, pos);
	f->u.field.base = d_builtin(p, pos, BI_ARGS, 0);
	f->u.field.name = t->field;
	f->u.field.arrow = true;
	switch (t->kind) {
	case TR_INT:
		return d_cast(p, pos, "int32", f);
	case TR_STR:
		return d_call(p, pos, "str", f, NULL, NULL);
	case TR_SECTORS:
		return d_binop(p, pos, OP_MUL, d_cast(p, pos, "uint64", f),
			     d_int(p, pos, 512));
	case TR_MAJOR:   /* the kernel's dev_t: major << 20 | minor */
		return d_cast(p, pos, "int32", d_binop(p, pos, OP_SHR, f,
						   d_int(p, pos, 20)));
	case TR_MINOR:
		return d_cast(p, pos, "int32", d_binop(p, pos, OP_BAND, f,
						   d_int(p, pos, 0xfffff)));
	case TR_RWFLAGS: {
		/* "R..." reads; the rest write (W, WS, D, F ...) */
		struct node *is_read = d_binop(p, pos, OP_EQ,
			d_call(p, pos, "strncmp", f, d_str(p, pos, "R"),
			       d_int(p, pos, 1)), d_int(p, pos, 0));
		struct node *n = node_new(p->a, N_TERNARY, pos);
		n->u.ternary.cond = is_read;
		n->u.ternary.then = d_int(p, pos, D_B_READ);
		n->u.ternary.els = d_int(p, pos, D_B_WRITE);
		return n;
	}
	default:
		return f;
	}
}

struct node *d_translate_arg(struct d_parser *p, uint32_t arg,
			     const char *member, struct pos pos)
{
	const char *tp = p->sdt_tracepoint;
	char have[256] = "";
	size_t n = 0;
	for (int i = 0; translations[i].tracepoint; i++) {
		const struct translation *t = &translations[i];
		if (strcmp(t->tracepoint, tp) != 0 || t->arg != arg)
			continue;
		if (!member && !t->member)
			return translate(p, t, pos);
		if (member && t->member && strcmp(t->member, member) == 0)
			return translate(p, t, pos);
		if (!t->member)
			continue;
		int w = snprintf(have + n, sizeof(have) - n, "%s%s",
				 n ? ", " : "", t->member);
		if (w > 0 && (size_t)w < sizeof(have) - n)
			n += (size_t)w;
	}
	if (member && n)
		d_error(p, pos, "args[%u]->%s is not available in sonde's D "
			"at this probe (its tracepoint has %s)", arg, member,
			have);
	else if (member)
		d_error(p, pos, "args[%u] has no members in sonde's D at this "
			"probe", arg);
	else
		d_error(p, pos, "args[%u] is not available in sonde's D at this "
			"probe%s", arg, n ? " (only its members are)" : "");
	return NULL;
}
