/* watchpoint.c - watchpoint:ADDRESS:LENGTH:MODE and asyncwatchpoint:
 * hardware breakpoints (the perf breakpoint PMU) on a memory address:
 * the program runs when the address is read (r), written (w) or executed
 * (x). With -p or -c the address is the traced process's (the event is
 * bound to it); without, a kernel address watched on every CPU, as
 * bpftrace 0.17 does.
 *
 * bpftrace's second form, watchpoint:FUNCTION+argN:LENGTH:MODE (watch
 * the address an argument holds when the function is entered, stopping
 * the tracee with SIGSTOP until the breakpoint is set, unless async), is
 * not implemented yet: it is refused with that said. */
#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>

#include "probe_util.h"

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
static int watchpoint_parse(struct node *attach, struct expand_ctx *ctx)
{
	const struct provider *pv = provider_find(attach->u.attach.provider);
	const char *kind = pv ? pv->name : "watchpoint";
	const char *text = attach->u.attach.text;
	struct ap_parts parts;
	ap_split(ctx->arena, text, &parts);
	if (parts.n != 4)
		return ap_error(attach, ctx, "%s probes take "
				"'%s:ADDRESS:LENGTH:MODE' (got '%s')", kind,
				kind, text);
	if (strchr(parts.v[1], '+'))
		return ap_error(attach, ctx, "%s: watching a function's "
				"argument (FUNCTION+argN) is not supported yet; "
				"give an address", text);
	uint64_t addr, len;
	const char *why = NULL;
	if (ap_parse_u64(parts.v[1], &addr, &why) < 0)
		return ap_error(attach, ctx, "%s: the address '%s' %s", text,
				parts.v[1], why);
	if (addr == 0)
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
	/* canonical: 0xADDRESS as target, LENGTH:MODE as func */
	ap_set(attach, kind, arena_printf(ctx->arena, "0x%llx",
					  (unsigned long long)addr),
	       arena_printf(ctx->arena, "%llu:%s", (unsigned long long)len,
			    parts.v[3]), 0);
	return 0;
}

static int watchpoint_expand(const struct node *attach, struct expand_ctx *ctx,
			     int (*emit)(void *arg, const char *target,
					 const char *func, uint64_t freq),
			     void *arg)
{
	return emit(arg, attach->u.attach.target, attach->u.attach.func, 0);
}

static int watchpoint_attach(const struct probe *p, struct attach_req *req)
{
	uint64_t addr, len;
	const char *why;
	char mode[8] = "";
	const char *colon = strchr(p->func, ':');
	if (ap_parse_u64(p->target, &addr, &why) < 0 || !colon ||
	    ap_parse_u64(strndupa(p->func, (size_t)(colon - p->func)), &len,
			 &why) < 0)
		return -EINVAL;
	strncpy(mode, colon + 1, sizeof(mode) - 1);
	req->how = ATTACH_PERF_EVENT;
	req->perf_type = PERF_TYPE_BREAKPOINT;
	req->perf_config = 0;
	req->perf_config1 = addr;             /* bp_addr */
	req->perf_config2 = len;              /* bp_len */
	req->bp_type = bp_mode(mode);
	req->sample_period = 1;
	req->all_cpus = true;                 /* a kernel address */
	req->follow_process = true;
	req->pid = -1;
	return 1;
}

const struct provider provider_watchpoint = {
	.name = "watchpoint",
	.parse = watchpoint_parse,
	.expand = watchpoint_expand,
	.prog_type = BPF_PROG_TYPE_PERF_EVENT,
	.caps = PROBE_REGS | PROBE_KSTACK | PROBE_USTACK | PROBE_KERNEL_MEM,
	.attach = watchpoint_attach,
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
};
