/* info.c - `sonde --info`: the system, the build and what this kernel's
 * BPF offers, in the sections and lines of bpftrace 0.17's --info (tools
 * grep them to decide what to run: "uprobe refcount", "kfunc", ...), each
 * answer asked of the kernel (kernel/features.c). Lines bpftrace prints
 * about its own build that mean nothing for sonde say what sonde does
 * instead; sonde's own abilities (ring buffer, uprobe_multi) are added to
 * the section they belong to. */
#include "info.h"

#include <linux/bpf.h>
#include <stdio.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "kernel/features.h"
#include "options.h"

static const char *yes_no(bool b)
{
	return b ? "yes" : "no";
}

static bool exists(const char *path)
{
	return access(path, F_OK) == 0;
}

/* The kernel registers a PMU per dynamic probe type it has. */
static bool has_pmu(const char *name)
{
	char path[128];
	snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/type",
		 name);
	return exists(path);
}

static const struct {
	const char *name;
	int helper;
} helpers[] = {
	{ "probe_read", BPF_FUNC_probe_read },
	{ "probe_read_str", BPF_FUNC_probe_read_str },
	{ "probe_read_user", BPF_FUNC_probe_read_user },
	{ "probe_read_user_str", BPF_FUNC_probe_read_user_str },
	{ "probe_read_kernel", BPF_FUNC_probe_read_kernel },
	{ "probe_read_kernel_str", BPF_FUNC_probe_read_kernel_str },
	{ "get_current_cgroup_id", BPF_FUNC_get_current_cgroup_id },
	{ "send_signal", BPF_FUNC_send_signal },
	{ "override_return", BPF_FUNC_override_return },
	{ "get_boot_ns", BPF_FUNC_ktime_get_boot_ns },
	/* what bpftrace 0.2x's --info adds and sonde uses: func, jiffies,
	 * aggregation reads (count() as a value, for over count() maps) */
	{ "get_func_ip", BPF_FUNC_get_func_ip },
	{ "jiffies64", BPF_FUNC_jiffies64 },
	{ "lookup_percpu_elem", BPF_FUNC_map_lookup_percpu_elem },
	{ "for_each_map_elem", BPF_FUNC_for_each_map_elem },
};

static const struct {
	const char *name;
	int type;
} maps[] = {
	{ "hash", BPF_MAP_TYPE_HASH },
	{ "percpu hash", BPF_MAP_TYPE_PERCPU_HASH },
	{ "array", BPF_MAP_TYPE_ARRAY },
	{ "percpu array", BPF_MAP_TYPE_PERCPU_ARRAY },
	{ "stack_trace", BPF_MAP_TYPE_STACK_TRACE },
	{ "perf_event_array", BPF_MAP_TYPE_PERF_EVENT_ARRAY },
	{ "ringbuf", BPF_MAP_TYPE_RINGBUF },
};

int info_print(FILE *out, enum dialect dialect)
{
	struct utsname u;
	if (uname(&u) == 0)
		fprintf(out, "System\n  OS: %s %s %s\n  Arch: %s\n\n", u.sysname,
			u.release, u.version, u.machine);

	fprintf(out, "Build\n"
		"  version: v%s\n"
		"  LLVM: none (sonde generates BPF bytecode itself)\n"
		"  unsafe uprobe: no\n"
		"  bfd: no\n"
		"  libdw (DWARF support): yes\n\n", SONDE_VERSION);

	fputs("Kernel helpers\n", out);
	for (size_t i = 0; i < sizeof(helpers) / sizeof(helpers[0]); i++)
		fprintf(out, "  %s: %s\n", helpers[i].name,
			yes_no(kfeat_helper(BPF_PROG_TYPE_KPROBE, helpers[i].helper)));
	fprintf(out, "  dpath: %s\n", yes_no(kfeat_dpath()));
	fprintf(out, "  skboutput: %s\n\n", yes_no(kfeat_skboutput()));

	fprintf(out, "Kernel features\n"
		"  Instruction limit: %u\n"
		"  Loop support: %s\n"
		"  btf: %s\n"
		"  map batch: %s\n"
		"  uprobe refcount: %s\n\n",
		kfeat_insn_limit(), yes_no(kfeat_loops()), yes_no(kfeat_btf()),
		yes_no(kfeat_map_batch()),
		yes_no(exists("/sys/bus/event_source/devices/uprobe/format/"
			  "ref_ctr_offset")));

	fputs("Map types\n", out);
	for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); i++)
		fprintf(out, "  %s: %s\n", maps[i].name, yes_no(kfeat_map(maps[i].type)));

	/* A probe type is there when the kernel loads its programs and, for
	 * dynamic probes, has the PMU they attach through. */
	bool kprobe = kfeat_prog(BPF_PROG_TYPE_KPROBE);
	fprintf(out, "\nProbe types\n"
		"  kprobe: %s\n"
		"  tracepoint: %s\n"
		"  perf_event: %s\n"
		"  kfunc: %s\n"
		"  iter:task: %s\n"
		"  iter:task_file: %s\n"
		"  kprobe_multi: %s\n"
		"  uprobe: %s\n"
		"  uprobe_multi: %s\n"
		"  raw_tp_special: %s\n",
		yes_no(kprobe && has_pmu("kprobe")),
		yes_no(kfeat_prog(BPF_PROG_TYPE_TRACEPOINT)),
		yes_no(kfeat_prog(BPF_PROG_TYPE_PERF_EVENT)),
		yes_no(kfeat_fentry()), yes_no(kfeat_iter("task")),
		yes_no(kfeat_iter("task_file")),
		yes_no(has_pmu("kprobe") && kfeat_multi(false)),
		yes_no(kprobe && has_pmu("uprobe")), yes_no(kfeat_multi(true)),
		yes_no(kfeat_raw_tp_test_run()));
	/* bpftrace 0.24 merges a kprobe and kretprobe of one function into
	 * a kprobe session where the kernel has them (6.10); sonde attaches
	 * them apart on every kernel, so it never uses one */
	if (dialect >= DIALECT_024)
		fputs("  kprobe_session: no\n", out);
	return ferror(out) ? -1 : 0;
}
