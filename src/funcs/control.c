/* control.c - functions that act on the run or the system: exit(), and
 * the unsafe ones, system(), signal() and override(). */
#include "funcs_int.h"

#include <signal.h>
#include <string.h>

/* exit(), or exit(CODE): sonde's exit status (bpftrace 0.21). */
static const struct type *check_exit(struct sema *s, struct node *n)
{
	struct event_spec e = { .kind = EV_EXIT, .map_id = -1 };
	if (nargs(n)) {
		const struct type *t = sema_int_arg(s, n, 0, "the exit code");
		if (!t)
			return NULL;
		const struct type *s64 = type_s64();
		e.args = type_tuple(s->a, 1, &s64);
	}
	sema_add_event(s, n, &e);
	return type_none();
}

/* bpftrace ends the probe at exit(), and sonde the program's other
 * probes (sonde_globals.exiting) before its record is even read. */
static struct cval gen_exit(struct cg *cg, const struct node *n)
{
	if (cg_exit_guarded(cg->prog)) {
		vreg g = cg_globals_ptr(cg);
		uint32_t skip = ir_label(cg->ir);
		ir_jcci(cg->ir, BPF_JEQ, g, 0, skip);
		ir_st(cg->ir, BPF_DW, g,
		      (int16_t)offsetof(struct sonde_globals, exiting), 1);
		ir_place(cg->ir, skip);
	}
	cg_emit_event(cg, n, 0, NULL);
	ir_ja(cg->ir, cg->l_exit);
	return cg_imm(0, n->type);
}

/* unwatch(addr): remove every breakpoint a watchpoint:FUNC+argN probe
 * set at addr; the engine does, on the EV_UNWATCH record (an address no
 * breakpoint watches is quietly nothing, as in bpftrace). */
static const struct type *check_unwatch(struct sema *s, struct node *n)
{
	if (!sema_int_arg(s, n, 0, "the address"))
		return NULL;
	const struct type *u64 = type_u64();
	struct event_spec e = { .kind = EV_UNWATCH, .map_id = -1,
				.args = type_tuple(s->a, 1, &u64) };
	sema_add_event(s, n, &e);
	return type_none();
}

static struct cval gen_unwatch(struct cg *cg, const struct node *n)
{
	cg_emit_event(cg, n, 0, NULL);
	return cg_imm(0, n->type);
}

static const struct type *check_system(struct sema *s, struct node *n)
{
	return funcs_check_format_event(s, n, EV_SYSTEM);
}

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

/* signal(NUM) or signal("NAME"), "SIGNAME" too: a name becomes its
 * number in the final pass. */
static const struct type *check_signal(struct sema *s, struct node *n)
{
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

static struct cval gen_signal(struct cg *cg, const struct node *n)
{
	vreg sig = cg_reg(cg, cg_expr(cg, arg(n, 0)));
	vreg r = cg_call(cg, BPF_FUNC_send_signal,
			 (struct ir_arg[]){ IR_ARG(sig) }, 1);
	cg_check_helper(cg, r, BPF_FUNC_send_signal);
	return cg_imm(0, n->type);
}

/* override(rc): the probed kernel function does not run and returns rc
 * (bpf_override_return: a kprobe on a function the kernel allows error
 * injection into, on a kernel built with CONFIG_BPF_KPROBE_OVERRIDE;
 * otherwise the kernel refuses the program when it is attached). */
static const struct type *check_override(struct sema *s, struct node *n)
{
	return sema_int_arg(s, n, 0, "the return value") ? type_none() : NULL;
}

static struct cval gen_override(struct cg *cg, const struct node *n)
{
	vreg rc = cg_reg(cg, cg_expr(cg, arg(n, 0)));
	vreg r = cg_call(cg, BPF_FUNC_override_return,
			 (struct ir_arg[]){ IR_ARG(cg->ctx), IR_ARG(rc) }, 2);
	cg_check_helper(cg, r, BPF_FUNC_override_return);
	return cg_imm(0, n->type);
}

const struct func funcs_control[] = {
	/* name, arguments min max, flags, needs, check, code */
	{ "exit", 0, 1, 0, 0, check_exit, gen_exit },
	{ "unwatch", 1, 1, 0, 0, check_unwatch, gen_unwatch },
	{ "system", 1, FUNC_ARGS_ANY, FUNC_UNSAFE, 0, check_system, funcs_gen_event },
	{ "signal", 1, 1, FUNC_UNSAFE, 0, check_signal, gen_signal },
	{ "override", 1, 1, FUNC_UNSAFE, PROBE_OVERRIDE, check_override,
	  gen_override },
	{ NULL },
};
