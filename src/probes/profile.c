/* profile.c - profile:UNIT:N: sampling every N units on every CPU (a perf
 * cpu-clock event per CPU), like bpftrace's profile probe. */
#include "probe_util.h"

static int profile_parse(struct attach_point *attach, struct expand_ctx *ctx)
{
	return timer_parse(attach, ctx, "profile", "frequency");
}

static int profile_attach(const struct probe *p, struct attach_req *req)
{
	return timer_attach(p, req, true);
}

extern const struct provider provider_profile;

static int profile_list(const char *pattern, int pid, FILE *out)
{
	return timer_list(&provider_profile, pattern, out);
}

const struct provider provider_profile = {
	.name = "profile",
	.alias = "p",
	.parse = profile_parse,
	.expand = timer_expand,
	.prog_type = BPF_PROG_TYPE_PERF_EVENT,
	.caps = PROBE_REGS | PROBE_KSTACK | PROBE_USTACK | PROBE_KERNEL_MEM,
	.attach = profile_attach,
	.list = profile_list,
};
