/* software.c - software:EVENT[:COUNT]: the kernel's software perf
 * counters, sampled every COUNT events on every CPU. Also the shared
 * table-driven code behind hardware.c. */
#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>

#include "probe_util.h"

/* bpftrace 0.17's list, names, aliases and default periods. */
static const struct perf_counter software_events[] = {
	{ "alignment-faults", "", PERF_COUNT_SW_ALIGNMENT_FAULTS, 1 },
	{ "bpf-output", "", PERF_COUNT_SW_BPF_OUTPUT, 1 },
	{ "context-switches", "cs", PERF_COUNT_SW_CONTEXT_SWITCHES, 1000 },
	{ "cpu-clock", "cpu", PERF_COUNT_SW_CPU_CLOCK, 1000000 },
	{ "cpu-migrations", "", PERF_COUNT_SW_CPU_MIGRATIONS, 1 },
	{ "dummy", "", PERF_COUNT_SW_DUMMY, 1 },
	{ "emulation-faults", "", PERF_COUNT_SW_EMULATION_FAULTS, 1 },
	{ "major-faults", "", PERF_COUNT_SW_PAGE_FAULTS_MAJ, 1 },
	{ "minor-faults", "", PERF_COUNT_SW_PAGE_FAULTS_MIN, 100 },
	{ "page-faults", "faults", PERF_COUNT_SW_PAGE_FAULTS, 100 },
	{ "task-clock", "", PERF_COUNT_SW_TASK_CLOCK, 1000000 },
};
#define NSOFTWARE (unsigned)(sizeof(software_events) / sizeof(software_events[0]))

static const struct perf_counter *counter_find(const struct perf_counter *tab,
					       unsigned n, const char *name)
{
	for (unsigned i = 0; i < n; i++)
		if (strcmp(tab[i].name, name) == 0 ||
		    (tab[i].alias[0] && strcmp(tab[i].alias, name) == 0))
			return &tab[i];
	return NULL;
}

int perf_counter_parse(const struct perf_counter *tab, unsigned n,
		       const char *kind, struct attach_point *attach,
		       struct expand_ctx *ctx)
{
	struct ap_parts parts;
	ap_split(ctx->arena, attach->text, &parts);
	if (parts.n != 2 && parts.n != 3)
		return ap_error(attach, ctx,
				"%s probe type requires 1 or 2 arguments", kind);
	const char *event = parts.v[1];
	if (ap_has_wildcard(event))
		return ap_error(attach, ctx,
				"wildcards are not allowed for %s probe type",
				kind);
	if (!counter_find(tab, n, event))
		return ap_error(attach, ctx, "%s is not a %s probe", event, kind);
	uint64_t count = 0;
	const char *func = NULL, *why;
	if (parts.n == 3) {
		if (ap_parse_u64(parts.v[2], &count, &why) < 0)
			return ap_error(attach, ctx, "%s: '%s' %s", kind,
					parts.v[2], why);
		func = arena_printf(ctx->arena, "%llu",
				    (unsigned long long)count);
	}
	ap_set(attach, kind, event, func, count);
	return 0;
}

int perf_counter_expand(const struct attach_point *attach,
			int (*emit)(void *arg, const char *target,
				    const char *func, uint64_t freq),
			void *arg)
{
	return emit(arg, attach->target, attach->func,
		    attach->freq);
}

int perf_counter_attach(const struct perf_counter *tab, unsigned n,
			uint32_t perf_type, const struct probe *p,
			struct attach_req *req)
{
	const struct perf_counter *c = p->target ?
		counter_find(tab, n, p->target) : NULL;
	if (!c)
		return -EINVAL;
	req->how = ATTACH_PERF_EVENT;
	req->perf_type = perf_type;
	req->perf_config = c->config;
	/* A count of 0 means the default, as in bpftrace. */
	req->sample_period = p->freq ? p->freq : c->default_period;
	req->sample_freq = 0;
	req->all_cpus = true;
	req->pid = -1;
	return 1;
}

int perf_counter_list(const struct perf_counter *tab, unsigned n,
		      const struct provider *pv, const char *pattern,
		      FILE *out)
{
	int found = 0;
	if (!provider_list_wants(pv, pattern))
		return 0;
	for (unsigned i = 0; i < n; i++) {
		char name[128];
		snprintf(name, sizeof(name), "%s:%s:", pv->name, tab[i].name);
		/* The trailing ':' is where the count goes. */
		char bare[128];
		snprintf(bare, sizeof(bare), "%s:%s", pv->name, tab[i].name);
		if (provider_list_match(pv, pattern, name) ||
		    provider_list_match(pv, pattern, bare) ||
		    provider_list_match_counted(pv, pattern, bare)) {
			fprintf(out, "%s\n", name);
			found++;
		}
		/* bpftrace 0.26 lists an event's alias too (its test:
		 * -l "software:*" shows software:cpu:) */
		if (!tab[i].alias[0] ||
		    provider_list_dialect() < DIALECT_026)
			continue;
		snprintf(name, sizeof(name), "%s:%s:", pv->name, tab[i].alias);
		snprintf(bare, sizeof(bare), "%s:%s", pv->name, tab[i].alias);
		if (provider_list_match(pv, pattern, name) ||
		    provider_list_match(pv, pattern, bare) ||
		    provider_list_match_counted(pv, pattern, bare)) {
			fprintf(out, "%s\n", name);
			found++;
		}
	}
	return found;
}

static int software_parse(struct attach_point *attach, struct expand_ctx *ctx)
{
	return perf_counter_parse(software_events, NSOFTWARE, "software",
				  attach, ctx);
}

static int software_expand(const struct attach_point *attach, struct expand_ctx *ctx,
			   int (*emit)(void *arg, const char *target,
				       const char *func, uint64_t freq),
			   void *arg)
{
	return perf_counter_expand(attach, emit, arg);
}

static int software_attach(const struct probe *p, struct attach_req *req)
{
	return perf_counter_attach(software_events, NSOFTWARE,
				   PERF_TYPE_SOFTWARE, p, req);
}

extern const struct provider provider_software;

static int software_list(const char *pattern, int pid, FILE *out)
{
	return perf_counter_list(software_events, NSOFTWARE,
				 &provider_software, pattern, out);
}

const struct provider provider_software = {
	.name = "software",
	.alias = "s",
	.parse = software_parse,
	.expand = software_expand,
	.prog_type = BPF_PROG_TYPE_PERF_EVENT,
	.caps = PROBE_REGS | PROBE_KSTACK | PROBE_USTACK | PROBE_KERNEL_MEM,
	.attach = software_attach,
	.list = software_list,
	.fires_newest_first = true,
};
