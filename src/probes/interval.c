/* interval.c - interval:UNIT:N: a timer firing every N units on one CPU
 * (a perf cpu-clock event on CPU 0), like bpftrace's interval probe. */
#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>

#include "probe_util.h"

/* bpftrace 0.2x's KIND:COUNT, a number of nanoseconds or a duration
 * (interval:1s, profile:100ms), as KIND:ns:N. 0 or -EINVAL (said). */
static int timer_duration(struct attach_point *attach, struct expand_ctx *ctx,
			  const char *kind, const char *what, const char *spec)
{
	static const struct { const char *unit; uint64_t ns; } units[] = {
		{ "", 1 }, { "ns", 1 }, { "us", 1000 }, { "ms", 1000000 },
		{ "s", 1000000000ull }, { "m", 60000000000ull },
		{ "h", 3600000000000ull }, { "d", 86400000000000ull },
	};
	size_t digits = strspn(spec, "0123456789");
	const char *unit = spec + digits;
	uint64_t per = 0;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (strcmp(unit, units[i].unit) == 0)
			per = units[i].ns;
	if (!digits || !per)
		return ap_error(attach, ctx, "%s: '%s' is not a duration (a "
				"number of nanoseconds, or with a unit: ns, us, "
				"ms, s, m, h, d; or %s:UNIT:N)", kind, spec, kind);
	const char *why;
	uint64_t n;
	if (ap_parse_u64(arena_strndup(ctx->arena, spec, digits), &n, &why) < 0)
		return ap_error(attach, ctx, "%s: '%s' %s", kind, spec, why);
	if (n == 0)
		return ap_error(attach, ctx, "%s %s should be a positive integer",
				kind, what);
	if (n > UINT64_MAX / per)
		return ap_error(attach, ctx, "%s: %s is too long", kind, spec);
	n *= per;
	ap_set(attach, kind, "ns",
	       arena_printf(ctx->arena, "%llu", (unsigned long long)n), n);
	return 0;
}

/* Shared with profile: UNIT:N, N > 0, UNIT one of s ms us hz (and ns);
 * or, as bpftrace 0.2x has it, a duration alone. */
int timer_parse(struct attach_point *attach, struct expand_ctx *ctx,
		const char *kind, const char *what)
{
	struct ap_parts parts;
	ap_split(ctx->arena, attach->text, &parts);
	if (parts.n == 2 && parts.v[1][0] >= '0' && parts.v[1][0] <= '9')
		return timer_duration(attach, ctx, kind, what, parts.v[1]);
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
	uint64_t ns = 1;   /* "ns": bpftrace 0.2x's interval:1s (timer_duration) */
	if (!p->target || (strcmp(p->target, "ns") != 0 &&
			   ap_time_unit(p->target, &ns) < 0) || !p->freq)
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
	uint64_t ns = 1;   /* "ns": interval:1s (timer_duration) */
	if (!p->target || (strcmp(p->target, "ns") != 0 &&
			   ap_time_unit(p->target, &ns) < 0) || !p->freq)
		return -EINVAL;
	req->how = PROCESS_TIMER;
	req->period_ns = ns ? p->freq * ns : 1000000000ull / p->freq;
	return 0;
}

int timer_list(const struct provider *pv, const char *pattern, FILE *out)
{
	static const char *const units[] = { "hz", "us", "ms", "s" };
	if (provider_list_dialect() < DIALECT_026 ||
	    !provider_list_wants(pv, pattern))
		return 0;
	int found = 0;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		char name[64], bare[64];
		snprintf(name, sizeof(name), "%s:%s:", pv->name, units[i]);
		snprintf(bare, sizeof(bare), "%s:%s", pv->name, units[i]);
		if (provider_list_match(pv, pattern, name) ||
		    provider_list_match_counted(pv, pattern, bare)) {
			fprintf(out, "%s\n", name);
			found++;
		}
	}
	return found;
}

extern const struct provider provider_interval;

static int interval_list(const char *pattern, int pid, FILE *out)
{
	return timer_list(&provider_interval, pattern, out);
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
	.list = interval_list,
};
