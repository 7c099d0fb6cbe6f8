/* hardware.c - hardware:EVENT[:COUNT]: CPU performance counters sampled
 * every COUNT events on every CPU (needs a PMU; VMs often have none). */
#include <linux/perf_event.h>

#include "probe_util.h"

/* bpftrace 0.17's list, names, aliases and default periods. */
static const struct perf_counter hardware_events[] = {
	{ "backend-stalls", "", PERF_COUNT_HW_STALLED_CYCLES_BACKEND, 1000000 },
	{ "branch-instructions", "branches", PERF_COUNT_HW_BRANCH_INSTRUCTIONS, 100000 },
	{ "branch-misses", "", PERF_COUNT_HW_BRANCH_MISSES, 100000 },
	{ "bus-cycles", "", PERF_COUNT_HW_BUS_CYCLES, 100000 },
	{ "cache-misses", "", PERF_COUNT_HW_CACHE_MISSES, 1000000 },
	{ "cache-references", "", PERF_COUNT_HW_CACHE_REFERENCES, 1000000 },
	{ "cpu-cycles", "cycles", PERF_COUNT_HW_CPU_CYCLES, 1000000 },
	{ "frontend-stalls", "", PERF_COUNT_HW_STALLED_CYCLES_FRONTEND, 1000000 },
	{ "instructions", "", PERF_COUNT_HW_INSTRUCTIONS, 1000000 },
	{ "ref-cycles", "", PERF_COUNT_HW_REF_CPU_CYCLES, 1000000 },
};
#define NHARDWARE (unsigned)(sizeof(hardware_events) / sizeof(hardware_events[0]))

static int hardware_parse(struct attach_point *attach, struct expand_ctx *ctx)
{
	return perf_counter_parse(hardware_events, NHARDWARE, "hardware",
				  attach, ctx);
}

static int hardware_expand(const struct attach_point *attach, struct expand_ctx *ctx,
			   int (*emit)(void *arg, const char *target,
				       const char *func, uint64_t freq),
			   void *arg)
{
	return perf_counter_expand(attach, emit, arg);
}

static int hardware_attach(const struct probe *p, struct attach_req *req)
{
	return perf_counter_attach(hardware_events, NHARDWARE,
				   PERF_TYPE_HARDWARE, p, req);
}

extern const struct provider provider_hardware;

static int hardware_list(const char *pattern, int pid, FILE *out)
{
	return perf_counter_list(hardware_events, NHARDWARE,
				 &provider_hardware, pattern, out);
}

const struct provider provider_hardware = {
	.name = "hardware",
	.alias = "h",
	.parse = hardware_parse,
	.expand = hardware_expand,
	.prog_type = BPF_PROG_TYPE_PERF_EVENT,
	.caps = PROBE_REGS | PROBE_KSTACK | PROBE_USTACK | PROBE_KERNEL_MEM,
	.attach = hardware_attach,
	.list = hardware_list,
};
