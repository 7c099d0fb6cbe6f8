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
	/* --dialect (base/dialect.h): whose words a missing probe is said
	 * in; from 0.24 a probe that names what the system lacks is
	 * recorded with ap_missing by every provider (compile.c then
	 * applies config missing_probes), and providers expand as that
	 * bpftrace does where it changed */
	enum dialect dialect;
	/* config's missing_probes (program.h): 0 when the script does not
	 * set it, and then what the provider finds missing is said as it
	 * always was (tracepoints: errors at once) */
	uint8_t missing_probes;
	/* dtrace -Z: a description that matches nothing is missing (the
	 * rule above), not an error */
	bool zdefs;
	bool unsafe;               /* --unsafe: kprobes skip the traceable check */
	/* Set by a provider whose attach point, though it names no
	 * wildcard, matched as one (0.26's rawtracepoint:NAME is any
	 * module's NAME): nothing matching is then "no valid attach
	 * points", not "no matches". compile.c clears it. */
	bool matched_as_wildcard;
};

struct provider {
	const char *name;          /* canonical: "tracepoint" */
	const char *alias;         /* short: "t", or NULL */
	const char *const *aliases; /* more names ("kfunc"), NULL-terminated, or NULL */
	/* Check an attach point's parts; fill in canonical fields. */
	int (*parse)(struct attach_point *attach, struct expand_ctx *ctx);
	/* Expand wildcards: call emit() once per concrete probe, with
	 * target/func set. Returns 0 or a negative errno (diagnostic added). */
	int (*expand)(const struct attach_point *attach, struct expand_ctx *ctx,
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
	/* only D's front end names it (dtrace:::ERROR): to bpftrace's
	 * language it is an unknown probe type */
	bool d_only;
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
	/* Optional: argN of a probe whose context is no registers, as
	 * 8-byte slots in the context from *off; how many (0: none).
	 * Syscall tracepoints: D's arg0.. (lang/d.c). */
	uint32_t (*ctx_args)(const struct probe *p, uint16_t *off);
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
int provider_list_all(const char *pattern, int pid, enum dialect dialect,
		      FILE *out);

/* --traceable-functions FILE (bpftrace 0.26): the traceable kernel
 * functions from FILE (available_filter_functions' format) instead of
 * tracefs (kfuncs.c), read now (bounded, without blocking). 0, or
 * -errno (-EFBIG: larger than any kernel's list). */
int kfuncs_set_source(const char *path);

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

/* Ask each probe's provider, once, what the engines need of it: its
 * kernel attachment (attach hook), how the process engine runs it
 * (process hook) and, when its program calls bpf_override_return,
 * whether it may (check_override); stored as data in the probe, with
 * the errors, for the engine to report when it loads the program. The
 * driver calls it after codegen (compile.c); engines read only that. */
void providers_describe(struct program *prog);

/* The names of the providers with every capability in `caps`, for
 * messages: "kprobe, uprobe and usdt" (arena memory). */
const char *provider_names_with(struct arena *a, uint32_t caps);

#endif
