/* watchpoint.c - watchpoint:ADDRESS:LENGTH:MODE and asyncwatchpoint:
 * hardware breakpoints (the perf breakpoint PMU) on a memory address:
 * the program runs when the address is read (r), written (w) or executed
 * (x). With -p or -c the address is the traced process's (the event is
 * bound to it); without, a kernel address watched on every CPU, as
 * bpftrace 0.17 does.
 *
 * watchpoint:FUNCTION+argN:LENGTH:MODE watches the address argument N
 * holds when the traced process (-p or -c) enters FUNCTION (a wildcard
 * too: each function its own probe, named as bpftrace names them,
 * watchpoint:./prog:increment_0:4:w, or ./prog:increment:1:4:w for arg1). A setup program at the function's
 * entry (codegen) stops the task with SIGSTOP, unless asyncwatchpoint,
 * and asks the engine for the breakpoint (EV_WATCH); the engine sets it
 * in the process, at that address, with the probe's program, and sends
 * SIGCONT. The same address asked again is not set twice; unwatch(addr)
 * removes it. A CPU has four such registers on x86-64: past them the
 * engine says so (bpftrace's "You are out of watchpoint registers"). */
#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>

#include "user.h"

/* linux/hw_breakpoint.h's bits; the header itself cannot be included
 * beside types.h (its enum has a TYPE_MAX too). */
enum {
	HW_BREAKPOINT_R = 1,
	HW_BREAKPOINT_W = 2,
	HW_BREAKPOINT_X = 4,
};

extern const struct provider provider_watchpoint, provider_asyncwatchpoint;

/* The mode letters as the kernel's bits; 0 when malformed. */
static uint32_t bp_mode(const char *mode)
{
	uint32_t t = 0;
	for (const char *c = mode; *c; c++) {
		uint32_t bit = *c == 'r' ? HW_BREAKPOINT_R :
			*c == 'w' ? HW_BREAKPOINT_W :
			*c == 'x' ? HW_BREAKPOINT_X : 0;
		if (!bit || (t & bit))
			return 0;
		t |= bit;
	}
	return t;
}

/* watchpoint -> ADDRESS ':' LENGTH ':' MODE */
static int watchpoint_parse(struct attach_point *attach, struct expand_ctx *ctx)
{
	const struct provider *pv = provider_find(attach->provider);
	const char *kind = pv ? pv->name : "watchpoint";
	const char *text = attach->text;
	struct ap_parts parts;
	ap_split(ctx->arena, text, &parts);
	if (parts.n != 4)
		return ap_error(attach, ctx, "%s probes take "
				"'%s:ADDRESS:LENGTH:MODE' (got '%s')", kind,
				kind, text);
	uint64_t addr = 0, len;
	const char *why = NULL;
	const char *plus = strrchr(parts.v[1], '+');
	int arg = -1;
	if (plus) {
		/* FUNCTION+argN: arguments in registers, arg0 to arg5 */
		if (strncmp(plus + 1, "arg", 3) || plus[4] < '0' ||
		    plus[4] > '5' || plus[5] || plus == parts.v[1])
			return ap_error(attach, ctx, "%s: '%s' is not "
					"FUNCTION+argN (arg0 to arg5)", text,
					parts.v[1]);
		if (ctx->pid <= 0 && !ctx->cmd)
			return ap_error(attach, ctx, "%s: watching a "
					"function's argument needs the traced "
					"process: -p PID or -c CMD", text);
		arg = plus[4] - '0';
	} else if (ap_parse_u64(parts.v[1], &addr, &why) < 0)
		return ap_error(attach, ctx, "%s: the address '%s' %s", text,
				parts.v[1], why);
	if (addr == 0 && arg < 0)
		return ap_error(attach, ctx, "%s: the address must not be 0",
				text);
	if (ap_parse_u64(parts.v[2], &len, &why) < 0)
		return ap_error(attach, ctx, "%s: the length '%s' %s", text,
				parts.v[2], why);
	if (len != 1 && len != 2 && len != 4 && len != 8)
		return ap_error(attach, ctx, "%s: the length must be 1, 2, 4 "
				"or 8 bytes (got %llu)", text,
				(unsigned long long)len);
	uint32_t mode = bp_mode(parts.v[3]);
	if (!mode)
		return ap_error(attach, ctx, "%s: the mode '%s' is not a set "
				"of r, w and x", text, parts.v[3]);
	if ((mode & HW_BREAKPOINT_X) && mode != HW_BREAKPOINT_X)
		return ap_error(attach, ctx, "%s: x (execute) cannot be "
				"watched together with r or w", text);
	/* canonical: 0xADDRESS (or FUNCTION+argN) as target, LENGTH:MODE
	 * as func; freq is N + 1 for the function form, 0 for an address */
	ap_set(attach, kind, arg >= 0 ? parts.v[1] :
	       arena_printf(ctx->arena, "0x%llx", (unsigned long long)addr),
	       arena_printf(ctx->arena, "%llu:%s", (unsigned long long)len,
			    parts.v[3]), (uint64_t)(arg + 1));
	return 0;
}

struct func_expand {
	struct expand_ctx *ctx;
	const struct user_target *t;
	const struct elf_file *ef;
	const char *func;          /* LENGTH:MODE */
	uint64_t freq;
	int (*emit)(void *arg, const char *target, const char *func,
		    uint64_t freq);
	void *arg;
	int emitted;
};

static int emit_func(void *arg, const struct elf_sym *sym)
{
	struct func_expand *x = arg;
	x->ctx->emit_uprobe = user_info(x->ctx, x->t, x->ef, sym->addr,
					sym->offset);
	/* named as bpftrace 0.17 names it: watchpoint:FILE:FUNCTION[:N]:
	 * LENGTH:MODE, the argument's number left out when it is 0 */
	int n = (int)x->freq - 1;
	char argn[16] = "";
	if (n > 0)
		snprintf(argn, sizeof(argn), ":%d", n);
	int r = x->emit(x->arg, x->t->shown,
			arena_printf(x->ctx->arena, "%s%s:%s", sym->name, argn,
				     x->func), x->freq);
	x->ctx->emit_uprobe = NULL;
	x->emitted++;
	return r < 0 ? r : 0;
}

/* FUNCTION+argN: a probe for each function of the traced program the
 * name (or wildcard) matches, its uprobe at the function's entry. */
static int expand_func(const struct attach_point *attach, struct expand_ctx *ctx,
		       int (*emit)(void *arg, const char *target,
				   const char *func, uint64_t freq),
		       void *arg)
{
	const char *kind = attach->provider;
	const char *target = attach->target;
	const char *plus = strrchr(target, '+');
	char *name = arena_strndup(ctx->arena, target, (size_t)(plus - target));
	/* the program: -p's executable, or -c's first word */
	char *prog = NULL;
	if (ctx->pid <= 0 && ctx->cmd) {
		const char *c = ctx->cmd + strspn(ctx->cmd, " \t");
		prog = arena_strndup(ctx->arena, c, strcspn(c, " \t"));
	}
	struct user_target *t = arena_new(ctx->arena, struct user_target);
	struct elf_file *ef;
	int r = user_open(attach, ctx, kind, prog, t, &ef);
	if (r < 0)
		return r;
	struct func_expand x = { .ctx = ctx, .t = t, .ef = ef,
				 .func = attach->func,
				 .freq = attach->freq, .emit = emit,
				 .arg = arg };
	r = elf_match(ef, name, emit_func, &x);
	elf_close(ef);
	if (r < 0)
		return r;
	if (!x.emitted)
		return ap_missing(attach, ctx, "NO_SYMBOL", "%s: no function "
				  "%s '%s' in '%s'", kind,
				  ap_has_wildcard(name) ? "matches" : "named",
				  name, t->shown);
	return 0;
}

static int watchpoint_expand(const struct attach_point *attach, struct expand_ctx *ctx,
			     int (*emit)(void *arg, const char *target,
					 const char *func, uint64_t freq),
			     void *arg)
{
	if (attach->freq)
		return expand_func(attach, ctx, emit, arg);
	return emit(arg, attach->target, attach->func, 0);
}

static int watchpoint_attach(const struct probe *p, struct attach_req *req)
{
	uint64_t addr = 0, len;
	const char *why;
	char mode[8] = "";
	/* LENGTH:MODE ends func (FUNCTION[:N]:LENGTH:MODE in the function
	 * form) */
	const char *colon = strrchr(p->func, ':'), *lenp = p->func;
	for (const char *c = p->func; colon && c < colon; c++)
		if (*c == ':')
			lenp = c + 1;
	if ((!p->freq && ap_parse_u64(p->target, &addr, &why) < 0) || !colon ||
	    ap_parse_u64(strndupa(lenp, (size_t)(colon - lenp)), &len,
			 &why) < 0)
		return -EINVAL;
	strncpy(mode, colon + 1, sizeof(mode) - 1);
	req->how = ATTACH_PERF_EVENT;
	req->perf_type = PERF_TYPE_BREAKPOINT;
	req->perf_config = 0;
	req->perf_config1 = addr;             /* bp_addr */
	req->perf_config2 = len;              /* bp_len */
	req->bp_type = bp_mode(mode);
	/* x86 takes an execute breakpoint only as long as a word (its
	 * hw_breakpoint.c); the length written says nothing there, so
	 * `watchpoint:ADDR:1:x` attaches as bpftrace attaches it */
	if (req->bp_type == HW_BREAKPOINT_X)
		req->perf_config2 = sizeof(long);
	req->sample_period = 1;
	req->all_cpus = true;                 /* a kernel address */
	req->follow_process = true;
	req->pid = -1;
	/* FUNCTION+argN: set when the setup program asks, at its address;
	 * the setup program at the function's entry, a uprobe */
	req->on_request = p->freq != 0;
	req->stop = p->provider == &provider_watchpoint;
	if (req->on_request) {
		int r = p->uprobe ? pmu_type("uprobe", &req->setup_perf_type) :
			-EINVAL;
		if (r < 0)
			return r;
		req->setup_path = p->uprobe->path;
		req->setup_offset = p->uprobe->offset;
	}
	return 1;
}

static int watchpoint_setup(const struct probe *p, struct probe_setup *setup)
{
	if (!p->freq || !p->uprobe)
		return 0;
	setup->arg = (int)p->freq - 1;
	setup->stop = p->provider == &provider_watchpoint;
	return 1;
}

const struct provider provider_watchpoint = {
	.name = "watchpoint",
	.parse = watchpoint_parse,
	.expand = watchpoint_expand,
	.prog_type = BPF_PROG_TYPE_PERF_EVENT,
	.caps = PROBE_REGS | PROBE_KSTACK | PROBE_USTACK | PROBE_KERNEL_MEM,
	.attach = watchpoint_attach,
	.setup = watchpoint_setup,
};

/* The same for an address: async differs only in the FUNCTION+argN form
 * (no SIGSTOP of the tracee). */
const struct provider provider_asyncwatchpoint = {
	.name = "asyncwatchpoint",
	.parse = watchpoint_parse,
	.expand = watchpoint_expand,
	.prog_type = BPF_PROG_TYPE_PERF_EVENT,
	.caps = PROBE_REGS | PROBE_KSTACK | PROBE_USTACK | PROBE_KERNEL_MEM,
	.attach = watchpoint_attach,
	.setup = watchpoint_setup,
};
