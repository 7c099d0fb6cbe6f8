/* provider.h - probe providers: one file per probe type behind one table
 * of hooks. A NULL hook means "this probe type cannot do that". Adding a
 * provider means one new file and one line in providers.c; nothing in the
 * compiler core or the engines names a provider. */
#ifndef SONDE_PROVIDER_H
#define SONDE_PROVIDER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "../base/arena.h"
#include "../base/diag.h"
#include "../lang/ast.h"
#include "../program.h"

struct expand_ctx {
	struct arena *arena;
	struct diags *diags;
	int pid;                   /* -p PID or 0 */
	const char *cmd;           /* -c CMD, or NULL */
	/* Set by a provider just before emit() to give that probe its
	 * user-space location (arena memory); compile.c copies it into the
	 * probe. NULL for kernel probes. */
	const struct uprobe_info *emit_uprobe;
	/* Where a provider records (with ap_missing) that what an attach
	 * point names is not on this system: a function not in the file, a
	 * USDT probe not in it, no kernel function matching a wildcard. As
	 * bpftrace 0.17 does, the compiler skips such probes with a warning
	 * while other probes remain, and makes them errors when none does.
	 * NULL: they are errors at once. */
	struct diags *missing;
};

/* What one kernel attachment needs to know about where it goes; filled by
 * the provider's attach hook and executed by the engine. The provider
 * describes the event, the engine owns the descriptors. */
struct attach_req {
	enum {
		ATTACH_PERF_EVENT,  /* perf_event_open(attr, pid, cpu) + link */
		ATTACH_TEST_RUN,    /* BEGIN/END: run once with BPF_PROG_TEST_RUN */
		ATTACH_TRACING,     /* fentry/fexit: raw tracepoint open */
		ATTACH_RAW_TRACEPOINT, /* BPF_RAW_TRACEPOINT_OPEN of `symbol` */
		ATTACH_ITER,        /* iter: a link, then read once (btf_id) */
	} how;
	/* ATTACH_PERF_EVENT: event description */
	uint32_t perf_type;        /* PERF_TYPE_* or a PMU's dynamic type */
	uint64_t perf_config, perf_config1, perf_config2;
	uint64_t sample_period, sample_freq;
	bool all_cpus;             /* one event per online CPU (else cpu 0) */
	int pid;                   /* -1 for all processes */
	/* ATTACH_PERF_EVENT on the uprobe PMU: what the config words encode
	 * (for messages; the provider fills perf_config* as well). The engine
	 * binds such an event to the traced process (-p) when there is one,
	 * with -c to the child only if child_only, and to every process
	 * (pid -1) otherwise: bpftrace 0.17 binds USDT probes to a -c command
	 * but attaches uprobes for every process (scripts filter with
	 * /pid == cpid/), and sonde does the same. */
	const char *path;          /* the file (NULL: not a uprobe) */
	uint64_t offset, ref_ctr_offset;
	bool retprobe;
	bool child_only;
	/* ATTACH_TEST_RUN: when */
	bool at_end;               /* END rather than BEGIN */
	/* ATTACH_TRACING: the kernel function's BTF id in vmlinux (the
	 * program is loaded with it as attach_btf_id). */
	uint32_t btf_id;
	/* ATTACH_PERF_EVENT of PERF_TYPE_BREAKPOINT: HW_BREAKPOINT_R/W/X
	 * (the address and length go in perf_config1/2); follow_process:
	 * bind the event to the traced process (-p, else -c) when there is
	 * one, instead of every CPU. on_request: not attached at start;
	 * the probe's setup program (probe.setup_insns) is attached at its
	 * uprobe instead, and the breakpoint when that asks (EV_WATCH), at
	 * the address it gives, in the traced process; a stopped task is
	 * sent SIGCONT then (stop). */
	uint32_t bp_type;
	bool follow_process;
	bool on_request, stop;
	/* on_request: where the setup program attaches: an event of the
	 * uprobe PMU (type) at the function's file and offset. */
	uint32_t setup_perf_type;
	const char *setup_path;
	uint64_t setup_offset;
	/* One of many probes a wildcard matched: if the kernel refuses it,
	 * warn and go on without it rather than fail the run. */
	bool optional;
	/* Probes of one block whose programs come out the same may share
	 * one program and one multi-target link when the kernel has that
	 * link (the engine probes for it at run time); else each attaches
	 * on its own as described above. */
	enum attach_multi {
		MULTI_NONE,
		MULTI_KPROBE,       /* kprobe_multi link (6.0+): by symbol */
		MULTI_UPROBE,       /* uprobe_multi link (6.6+): path + offset */
		MULTI_SYSCALL,      /* one raw_syscalls program, by number */
	} multi;
	const char *symbol;        /* ATTACH_ITER: the pin file, or NULL;
				    * MULTI_KPROBE: the kernel function;
				    * ATTACH_RAW_TRACEPOINT: the event */
	/* MULTI_SYSCALL: the system call's number, and the perf config of
	 * the raw_syscalls tracepoint (sys_enter or sys_exit, as retprobe
	 * says) whose one program dispatches on it. */
	int syscall_nr;
	uint64_t dispatch_config;
	/* When the hook returns an error: what to tell the user instead of
	 * strerror() ("this kernel has no kprobes ..."). */
	const char *error;
};

/* How the process engine (src/process/) runs one probe, as the
 * provider's `process` hook describes it: in sonde itself, or at an
 * instruction of the traced process (probe->uprobe says where). */
struct process_req {
	enum process_how {
		PROCESS_BEGIN,      /* once in sonde, before the first event */
		PROCESS_END,        /* once in sonde, after the last */
		PROCESS_TIMER,      /* in sonde, every period_ns */
		PROCESS_USDT,       /* at a USDT site of the traced process: the
				     * nop the note's address names */
		PROCESS_FUNC,       /* at a function's entry (or an instruction
				     * in it), or its return (uprobe->retprobe):
				     * patched by sonde over ptrace
				     * (src/process/fprobes.c) */
	} how;
	uint64_t period_ns;        /* PROCESS_TIMER */
};

/* What a setup program does at its function's entry: read argument
 * `arg` (an address), stop the task with SIGSTOP unless async (the engine
 * lets it go on once the breakpoint is set) and send an EV_WATCH record. */
struct probe_setup {
	int arg;
	bool stop;
};

struct provider {
	const char *name;          /* canonical: "tracepoint" */
	const char *alias;         /* short: "t", or NULL */
	const char *const *aliases; /* more names ("kfunc"), NULL-terminated, or NULL */
	/* Check an attach point's parts; fill in canonical fields. */
	int (*parse)(struct node *attach, struct expand_ctx *ctx);
	/* Expand wildcards: call emit() once per concrete probe, with
	 * target/func set. Returns 0 or a negative errno (diagnostic added). */
	int (*expand)(const struct node *attach, struct expand_ctx *ctx,
		      int (*emit)(void *arg, const char *target,
				  const char *func, uint64_t freq),
		      void *arg);
	/* The type of `args` (a RECORD) for one expanded probe, or NULL. */
	const struct type *(*args_type)(const struct probe *p,
					struct expand_ctx *ctx);
	enum bpf_prog_type prog_type;
	enum bpf_attach_type expected_attach_type;  /* fentry/fexit */
	/* Probe names keep the provider name as written when it is an
	 * alias ("kfunc:f" stays "kfunc:f", as bpftrace 0.17 names it). */
	bool keep_spelling;
	/* The kernel runs the programs of one event of this type newest
	 * attachment first (uprobes, kprobes, software events ...): the
	 * engine attaches such probes in reverse script order, as bpftrace
	 * 0.17 does, so that blocks run in the order they are written. */
	bool fires_newest_first;
	/* Describe the kernel attachments of one probe (may be several, e.g.
	 * one per CPU is expressed with all_cpus). Returns count or -errno. */
	int (*attach)(const struct probe *p, struct attach_req *req);
	/* The process engine: how it runs this probe without the kernel.
	 * NULL: it cannot (the probe needs the kernel). 0 or -errno. */
	int (*process)(const struct probe *p, struct process_req *req);
	/* What its probes offer (enum probe_cap, program.h). Probes in
	 * user space (PROBE_USER_MEM) are the ones `-l -p PID` lists. */
	uint32_t caps;
	/* override(): may this probe's program change the probed function's
	 * return? 0, or -errno with the reason in why (the engine asks
	 * before loading a program that calls bpf_override_return). NULL:
	 * never (sema already refuses override() without PROBE_OVERRIDE). */
	int (*check_override)(const struct probe *p, char *why, size_t len);
	/* `ctx`: the name of the struct its context points to (arena
	 * memory), looked up in the kernel's BTF; NULL: no ctx. */
	const char *(*ctx_struct)(const struct probe *p, struct arena *a);
	/* -l: print every probe matching pattern; NULL pattern lists all. */
	int (*list)(const char *pattern, int pid, FILE *out);
	/* A probe attached only on request, at an address a setup program
	 * finds (watchpoint:FUNC+argN): 1 with *setup filled when p is
	 * such a probe, else 0. The code generator then makes the setup
	 * program (probe.setup_insns). NULL: never. */
	int (*setup)(const struct probe *p, struct probe_setup *setup);
};

/* The table, in the order -l lists them. */
extern const struct provider *const providers[];
const struct provider *provider_find(const char *name);
/* -l [PATTERN] (list.c): print every probe matching pattern (NULL: all)
 * as bpftrace 0.17 lists them. Returns how many, or -EINVAL for a pattern
 * bpftrace's lexer refuses (the error printed). */
int provider_list_all(const char *pattern, int pid, FILE *out);

/* Diagnostics of probe expansion that say the SYSTEM lacks what a valid
 * script names (exit status 2, as a run-time failure), rather than that
 * the script is wrong (exit status 1). */
#define PROBE_ENV_TAGS(X) \
	X(NO_MATCH, "no tracepoint (or other probe) of that name here") \
	X(NO_KPROBES, "the kernel has no kprobes") \
	X(NO_FILE, "the file a user-space probe names does not exist") \
	X(NOT_ELF, "that file is not an x86-64 ELF file (or is malformed)") \
	X(NO_SYMBOL, "no such function or symbol in that file") \
	X(NO_PROBE, "no such USDT probe in that file or process") \
	X(NO_PROCESS, "the -p process does not exist") \
	X(NO_PERMISSION, "the file or process cannot be read")

/* True when d has errors and every one has a PROBE_ENV_TAGS tag. */
bool provider_env_errors(const struct diags *d);

/* The names of the providers with every capability in `caps`, for
 * messages: "kprobe, uprobe and usdt" (arena memory). */
const char *provider_names_with(struct arena *a, uint32_t caps);

#endif
