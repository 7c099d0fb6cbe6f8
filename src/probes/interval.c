/* interval.c - interval:UNIT:N: a timer firing every N units on one CPU
 * (a perf cpu-clock event on CPU 0), like bpftrace's interval probe. */
#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>

#include "probe_util.h"

/* Shared with profile: UNIT:N, N > 0, UNIT one of s ms us hz. */
int timer_parse(struct attach_point *attach, struct expand_ctx *ctx,
		const char *kind, const char *what)
{
	struct ap_parts parts;
	ap_split(ctx->arena, attach->text, &parts);
	if (parts.n != 3)
		return ap_error(attach, ctx, "%s probe type requires 2 arguments",
				kind);
	const char *unit = parts.v[1];
	uint64_t ns, n;
	const char *why;
	if (ap_time_unit(unit, &ns) < 0)
		return ap_error(attach, ctx,
				"%s is not an accepted unit of time", unit);
	if (ap_parse_u64(parts.v[2], &n, &why) < 0)
		return ap_error(attach, ctx, "%s: '%s' %s", kind, parts.v[2],
				why);
	if (n == 0)
		return ap_error(attach, ctx,
				"%s %s should be a positive integer", kind, what);
	if (ns && n > UINT64_MAX / ns)
		return ap_error(attach, ctx, "%s: %s %s is too long", kind,
				parts.v[2], unit);
	if (!ns && n > 1000000000ull)
		return ap_error(attach, ctx,
				"%s: %s hz is faster than once a nanosecond",
				kind, parts.v[2]);
	ap_set(attach, kind, arena_strdup(ctx->arena, unit),
	       arena_printf(ctx->arena, "%llu", (unsigned long long)n), n);
	return 0;
}

int timer_expand(const struct attach_point *attach, struct expand_ctx *ctx,
		 int (*emit)(void *arg, const char *target, const char *func,
			     uint64_t freq),
		 void *arg)
{
	return emit(arg, attach->target, attach->func,
		    attach->freq);
}

/* The perf cpu-clock event that ticks every period; hz is turned into a
 * period so the kernel's sample-rate cap does not apply. */
int timer_attach(const struct probe *p, struct attach_req *req, bool all_cpus)
{
	uint64_t ns;
	if (!p->target || ap_time_unit(p->target, &ns) < 0 || !p->freq)
		return -EINVAL;
	req->how = ATTACH_PERF_EVENT;
	req->perf_type = PERF_TYPE_SOFTWARE;
	req->perf_config = PERF_COUNT_SW_CPU_CLOCK;
	req->sample_period = ns ? p->freq * ns : 1000000000ull / p->freq;
	req->sample_freq = 0;
	req->all_cpus = all_cpus;
	req->pid = -1;
	return 1;
}

static int interval_parse(struct attach_point *attach, struct expand_ctx *ctx)
{
	return timer_parse(attach, ctx, "interval", "period");
}

static int interval_attach(const struct probe *p, struct attach_req *req)
{
	return timer_attach(p, req, false);
}

/* The process engine runs it in sonde on a timer of the same period. */
static int interval_process(const struct probe *p, struct process_req *req)
{
	uint64_t ns;
	if (!p->target || ap_time_unit(p->target, &ns) < 0 || !p->freq)
		return -EINVAL;
	req->how = PROCESS_TIMER;
	req->period_ns = ns ? p->freq * ns : 1000000000ull / p->freq;
	return 0;
}

const struct provider provider_interval = {
	.name = "interval",
	.alias = "i",
	.parse = interval_parse,
	.expand = timer_expand,
	.prog_type = BPF_PROG_TYPE_PERF_EVENT,
	.caps = PROBE_REGS | PROBE_KSTACK | PROBE_USTACK | PROBE_KERNEL_MEM,
	.attach = interval_attach,
	.process = interval_process,
};
