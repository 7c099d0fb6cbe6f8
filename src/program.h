/* program.h - the "compiled program": the only value that crosses from the
 * compiler to an engine. Per-probe bytecode, map specs, the event table.
 * It can be dumped (--dump=bpf) and tested without a kernel.
 *
 * Maps. Codegen refers to map i by a BPF_LD_IMM64 with
 * src_reg = BPF_PSEUDO_MAP_FD and imm = i (the index into prog->maps); the
 * engine replaces imm with the real descriptor before loading. No other
 * relocation exists.
 *
 * Value layouts of aggregation maps (per CPU; output merges the CPUs):
 *   COUNT, SUM         u64 / s64
 *   MIN, MAX           { s64 value; u64 set; }   set != 0 once written
 *   AVG, STATS         { s64 count; s64 total; }
 *   HIST, LHIST        u64 count; the map key is the user key (u64 0 when
 *                      the map has no keys) followed by a u64 bucket index
 *                      at offset key_size - 8. Bucket numbering, exactly as
 *                      bpftrace 0.17 computes it (codegen cg_map.c):
 *   HIST  (v compared signed):
 *     0        v < 0                 printed "(..., 0)"
 *     1        v == 0                printed "[0]"
 *     2        v == 1                printed "[1]"
 *     k+2      2^k <= v < 2^(k+1)    printed "[2^k, 2^(k+1))", 1 <= k <= 30
 *     33       v >= 2^31             printed "[2G, 4G)": bpftrace 0.17's
 *              log2 is a 5-step binary search that cannot shift more than
 *              31 in total, so 2^40 also lands here (observed: hist(1<<40)
 *              prints [2G, 4G)). No bucket above 33 exists.
 *   LHIST(v, min, max, step)  (v compared signed; N = (max - min) / step):
 *     0        v < min               printed "(..., min)"
 *     1 + i    min + i*step <= v < min + (i+1)*step, for 0 <= i < N,
 *              computed as 1 + (v - min) / step
 *     N + 1    v > max, and also any v with (v - min) / step == N (v == max,
 *              or v in [min + N*step, max] when step does not divide
 *              max - min): printed "[max, ...)" (observed: lhist(9, 0, 10, 3)
 *              prints under "[10, ...)").
 * Non-aggregation maps store the value's type layout (types.h).
 * Keys: the layout of `key_type` (a tuple for @m[a, b]); a map without
 * keys uses one u64 zero key. Padding inside keys is zero.
 *
 * Events. Every call that needs user space (printf, print, exit, clear,
 * time, ...) writes one record into the ring buffer map:
 *   u64 event_id;  then the arguments laid out as events[event_id].args.
 * Field i of args is the call's argument 1 + i for printf, cat and system
 * (argument 0 is the format), argument i for print(value); join(arr)
 * fills its fields with the strings of arr up to the first NULL pointer
 * (the rest are empty). exit() ends the probe right after its record.
 * A record the ring cannot take is counted in sonde_globals.lost_events.
 */
#ifndef SONDE_PROGRAM_H
#define SONDE_PROGRAM_H

#include <linux/bpf.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/dialect.h"
#include "base/diag.h"
#include "types.h"

#define SONDE_STRLEN_DEFAULT 64

/* count(), sum(), min() and max() read as values (`if (@c > 10)`) are
 * merged over the map's per-CPU slots in the program itself, slot by slot
 * (bpf_map_lookup_percpu_elem) up to this many or the machine's possible
 * CPUs, whichever is more: the process engine keeps 64 per-thread slots
 * (runtime/shm.h RT_SLOTS_DEFAULT), the kernel one per possible CPU. */
#define SONDE_PERCPU_READ_MIN 64
#define SONDE_PERCPU_READ_MAX 4096

/* With prog->hist_sums, hist() and lhist() also add each value to the
 * entry whose bucket index is this, so the sum of what they saw is known
 * (an OpenMetrics histogram has a _sum). Printing skips it: no bucket
 * has that index. */
#define SONDE_HIST_SUM_BUCKET UINT64_MAX

/* kstack/ustack values (types.h KSTACK: s64 id; USTACK: s64 id, u64 pid)
 * are ids in the MAP_STACK_TRACE map of this name, whose values are
 * SONDE_STACK_FRAMES u64 instruction pointers, innermost first, zero
 * after the last frame. A negative id means the stack could not be read
 * (bpf_get_stackid's error) and prints as an empty stack. Codegen adds the
 * map when a script uses a stack. */
#define SONDE_STACK_MAP ".stacks"
#define SONDE_STACK_FRAMES 127

/* Updates of user maps that failed (a full map: the kernel refuses new
 * keys beyond max_entries) are counted per map in the MAP_ARRAY of this
 * name: the u64 at index map_id, for every map that existed when it was
 * added (compile.c adds it after sema). Codegen counts, the engine reads
 * the counts (map_reader.failures) and output warns once per map. */
#define SONDE_MAPFAIL_MAP ".mapfails"
/* kstack(N) / ustack(N) with N other than SONDE_STACK_FRAMES take their
 * ids from a map of N-frame traces named ".stacks_N" (see
 * program_stack_map_name): the kernel truncates a trace to the map's
 * depth before hashing it, so stacks that agree in their first N frames
 * share one id and one map entry, exactly as with bpftrace's map per
 * stack type. */
void program_stack_map_name(char *buf, unsigned long size, uint32_t limit);

/* USTACK ids (the s64 of the value) come in three kinds:
 *   0 <= id < 2^32         an id in a .stacks map (frame-pointer walk,
 *                          prog->ustack_copy == 0);
 *   id & USTACK_ID_SAMPLE  a copied user stack: the EV_USTACK record
 *                          carrying the same id holds registers and stack
 *                          bytes, which output unwinds with the CFI;
 *   id & USTACK_ID_CANON   a stack output has unwound and interned; only
 *                          output writes these (into map keys, merging the
 *                          entries of equal stacks).
 * A negative id is a stack that could not be read (printed empty). */
#define USTACK_ID_SAMPLE (1ull << 62)
#define USTACK_ID_CANON (1ull << 61)

/* The EV_USTACK record: what a ustack evaluation copies when
 * prog->ustack_copy > 0. `regs` is the task's user-mode struct pt_regs
 * (x86-64 order, USTACK_REG_*); prog->ustack_copy bytes follow the
 * header, of which the first stack_len were read from regs[sp] up. */
struct sonde_ustack_record {
	uint64_t event_id;
	uint64_t id;            /* USTACK_ID_SAMPLE | ... */
	uint64_t pid_tgid;      /* bpf_get_current_pid_tgid() */
	uint64_t limit;         /* frames wanted (ustack(N)) */
	uint64_t stack_len;
	uint64_t regs[21];
};
enum {
	USTACK_REG_R15, USTACK_REG_R14, USTACK_REG_R13, USTACK_REG_R12,
	USTACK_REG_BP, USTACK_REG_BX, USTACK_REG_R11, USTACK_REG_R10,
	USTACK_REG_R9, USTACK_REG_R8, USTACK_REG_AX, USTACK_REG_CX,
	USTACK_REG_DX, USTACK_REG_SI, USTACK_REG_DI, USTACK_REG_ORIG_AX,
	USTACK_REG_IP, USTACK_REG_CS, USTACK_REG_FLAGS, USTACK_REG_SP,
	USTACK_REG_SS, USTACK_NREGS
};
/* Default bytes of user stack copied per ustack (perf's default too). */
#define SONDE_USTACK_COPY_DEFAULT 8192

enum map_kind {
	MAP_HASH,
	MAP_PERCPU_HASH,     /* aggregations */
	MAP_ARRAY,
	MAP_PERCPU_ARRAY,    /* scratch space bigger than the BPF stack */
	MAP_RINGBUF,         /* the event ring */
	MAP_STACK_TRACE,     /* kstack/ustack ids */
	MAP_PERF_EVENT_ARRAY, /* skboutput()'s packets: bpf_skb_output writes
			       * only to a perf buffer (one per CPU) */
};

/* One value per CPU (per thread slot in the process engine) per key. */
static inline bool map_kind_percpu(enum map_kind k)
{
	return k == MAP_PERCPU_HASH || k == MAP_PERCPU_ARRAY;
}

/* Internal maps have names starting with '.'; user maps with '@'. */
struct map_spec {
	const char *name;
	enum map_kind kind;
	uint32_t key_size, value_size, max_entries;
	const struct type *key_type;   /* NULL: single-entry map, u64 0 key */
	const struct type *value_type; /* aggregation or plain value type */
	uint32_t nkeys;                /* user-visible key count (@m[a,b] = 2) */
	bool mmapable;                 /* arrays: the engine maps it into memory
					* and reads it without a syscall */
	bool lru;                      /* hashes: declared lruhash(N) or
					* percpulruhash(N): the kernel evicts
					* (the process engine refuses, as for
					* a full hash) */
};

/* The .globals array map (if present) holds one struct at key 0, written
 * by the engine before anything is attached. */
struct sonde_globals {
	uint64_t start_ns;      /* CLOCK_MONOTONIC (bpf_ktime_get_ns) at start */
	uint64_t cpid;          /* pid of the -c child, or 0 */
	uint64_t filter_pid;    /* -p PID, or 0 */
	uint64_t lost_events;   /* records the ring could not take (BPF adds) */
	/* The reader sets wake_armed before it sleeps; the first record that
	 * finds the ring a quarter full clears it and wakes the reader, so a
	 * burst costs one wake-up, not one per record (codegen wake_flags). */
	uint64_t wake_armed;
	uint64_t exit_lost;     /* exit()'s own record did not fit: stop anyway */
	/* exit() ran: from then on the program's probes (not BEGIN or
	 * END) return at once, so none fires between exit() and the
	 * detach (codegen's prologue; a program without exit() has no
	 * such check) */
	uint64_t exiting;
};

/* skboutput(path, skb, len, offset): a record in the perf buffer
 * (prog->skb_map) is this header, then the skb's first `len` bytes
 * (bpf_skb_output appends them). The packet written to the pcap file
 * is those bytes from the call's offset on. */
struct sonde_skb_record {
	uint64_t id;            /* index in prog->skb_outputs */
	uint64_t len;           /* bytes of the skb that follow */
	uint64_t ns;            /* bpf_ktime_get_boot_ns() */
};

/* One skboutput() call's destination: the pcap file and the bytes of each
 * packet left out at its start (an ethernet header: 14). */
struct skb_output {
	const char *path;
	uint64_t offset;
};
/* The most distinct (path, offset) pairs a script may have: each path is
 * an open file for the whole run. */
#define SONDE_SKB_OUTPUTS_MAX 64

enum event_kind {
	EV_PRINTF,      /* fmt + args */
	EV_PRINT_MAP,   /* map_id, top, div */
	EV_PRINT_VALUE, /* args: one value */
	EV_CLEAR_MAP,   /* map_id */
	EV_ZERO_MAP,    /* map_id */
	EV_EXIT,
	EV_TIME,        /* fmt (strftime) */
	EV_JOIN,        /* args: one array of strings, delimiter in fmt */
	EV_CAT,         /* fmt + args: file name */
	EV_SYSTEM,      /* fmt + args: command */
	EV_USTACK,      /* struct sonde_ustack_record + stack bytes */
	EV_NEW_PID,     /* args: u64 pid, the first time a probe saw it keep
			 * a user address or stack (output remembers its
			 * mappings while it runs) */
	EV_HELPER_ERROR, /* -k: args: s64 return code of helper `fmt`,
			  * called by the script at `pos` */
	/* watchpoint:FUNC+argN: a probe's setup program asks for its
	 * breakpoint at an address (struct sonde_watch_record); unwatch(a)
	 * asks to remove every breakpoint at a (args: u64 address). The
	 * engine handles both: output never sees them. */
	EV_WATCH,
	EV_UNWATCH,
	/* errorf()/warnf() (bpftrace 0.24): fmt + args, printed as an
	 * error or warning from the script's place `pos` */
	EV_ERRORF,
	EV_WARNF,
	/* D (lang/d*.c): the line a clause's record begins with when not
	 * quiet (fmt + args: CPU, ID, FUNCTION:NAME), after DTrace's
	 * heading the first time; printa(@m) and printa(fmt, @m): map_id,
	 * fmt or NULL */
	EV_DTRACE_PROBE,
	EV_DTRACE_PRINTA,
	/* normalize(@m, n) (denormalize: n = 1) and trunc(@m, n): map_id,
	 * args: n */
	EV_DTRACE_NORMALIZE,
	EV_DTRACE_TRUNC,
	/* commit(id), discard(id): args: the speculation's id. A record
	 * made after speculate(id) carries id in its header's high 32 bits
	 * (output/dspec.c holds it until one of these) */
	EV_DTRACE_COMMIT,
	EV_DTRACE_DISCARD,
	/* tracemem(addr, n): args: the bytes (a buf) */
	EV_DTRACE_TRACEMEM,
	/* D: a clause read memory it may not (copyinstr(), a pointer):
	 * the record is the address (u64) after the id; top is the probe's
	 * ID (its index + 1), div the clause's action number, fmt the
	 * probe's PROV:MOD:FUNC:NAME. The clause stopped there; the
	 * dtrace:::ERROR clauses run (engine run_fault) or, with none,
	 * DTrace's default message is printed. */
	EV_DTRACE_FAULT,
};

/* The EV_WATCH record: the probe (index in the program's probes) whose
 * breakpoint goes at addr in the traced process. */
struct sonde_watch_record {
	uint64_t event_id;
	uint64_t probe;
	uint64_t addr;
};

struct event_spec {
	enum event_kind kind;
	const char *fmt;          /* printf/cat/system format, time fmt, join delim */
	const struct type *args;  /* tuple of argument types, or NULL */
	int32_t map_id;           /* EV_PRINT_MAP/CLEAR/ZERO */
	uint64_t top, div;        /* EV_PRINT_MAP: print(@m, top, div) */
	struct pos pos;           /* EV_HELPER_ERROR: where in the script */
	/* The script's probe block whose code emits it (set by sema), so
	 * that an engine knows which of its probes may write it; any
	 * probe's when !block_known (records codegen adds: stacks, pids,
	 * helper errors). */
	uint32_t block;
	bool block_known;
	/* EV_DTRACE_PRINTA of several aggregations: the others, after
	 * map_id (their values joined by key) */
	const int32_t *more_maps;
	uint32_t nmore_maps;
};

struct provider;
struct usdt_arg;   /* elf/elf.h */

/* What a probe offers the script and how it runs, declared by its
 * provider (struct provider's caps, like libbpf's section table with its
 * per-kind flags) and copied into each probe: the compiler and the
 * engines ask these, never a provider's name. */
enum probe_cap {
	PROBE_ARGN       = 1u << 0,   /* arg0..argN: the call's arguments */
	PROBE_SARGN      = 1u << 1,   /* sarg0..: words on the user stack */
	PROBE_RETVAL     = 1u << 2,   /* retval: the function's return value */
	PROBE_FUNC       = 1u << 3,   /* func: the probed function */
	PROBE_ARGS       = 1u << 4,   /* args->field: a record of arguments */
	PROBE_KSTACK     = 1u << 5,   /* kstack means something here */
	PROBE_USTACK     = 1u << 6,   /* ustack means something here */
	PROBE_USER_MEM   = 1u << 7,   /* its pointers are user memory */
	PROBE_RUNS_ONCE  = 1u << 8,   /* run once by sonde itself (BEGIN) */
	PROBE_REGS       = 1u << 9,   /* context is struct pt_regs: reg() */
	PROBE_TYPED_RET  = 1u << 10,  /* retval typed by the args record */
	PROBE_OVERRIDE   = 1u << 11,  /* override() may change its return */
	PROBE_KERNEL_MEM = 1u << 12,  /* its pointers are kernel memory */
	PROBE_TRACING    = 1u << 13,  /* a BTF tracing program (fentry, fexit,
				       * iter): path(), skboutput() */
	PROBE_ITER       = 1u << 14,  /* an iterator: runs once per object
				       * (ctx's 2nd word), then with it NULL
				       * (skipped); mixes with no other probe.
				       * Its target is the object; its func,
				       * if any, the file it is pinned to,
				       * whose reader gets its printf text */
};

/* Where a user-space probe (uprobe, uretprobe, usdt) sits, as the code
 * generator needs it: USDT arguments, uaddr(), the load bias of a
 * position-independent file. Filled by the provider at expansion. */
struct uprobe_info {
	const char *path;          /* the file opened (/proc/PID/root/... with -p) */
	uint64_t vaddr;            /* link-time address of the probed instruction */
	uint64_t offset;           /* its file offset (the uprobe PMU's config2) */
	uint64_t ref_ctr_offset;   /* USDT semaphore's file offset, or 0 */
	bool retprobe;
	bool usdt;
	bool wild;                 /* one of the functions a wildcard matched */
	bool is_dyn;               /* ET_DYN: run-time address = vaddr + bias */
	bool bias_known;           /* bias read from /proc/PID/maps (-p) */
	uint64_t bias;
	/* USDT: the site's arguments, symbols already folded into val with
	 * symbol[0] kept non-zero to say "add the load bias". */
	const struct usdt_arg *args;
	uint32_t nargs;
	int args_error;            /* USDT: -errno when the specs could not be used */
	const char *args_text;     /* USDT: the note's argument string */
};

/* One attach point as its front end split it, for the provider it names
 * to check and expand: the AST keeps one in each N_ATTACH node (ast.h),
 * and the driver hands it to the provider (its parse hook may set the
 * canonical fields), so a provider sees no syntax tree. */
struct attach_point {
	const char *text;     /* the attach point as written */
	const char *provider; /* canonical: "tracepoint", not "t" */
	const char *target;   /* path/category/unit, may be NULL */
	const char *func;     /* symbol/name/event, may be NULL */
	const char *extra;    /* usdt: probe name when 3 parts */
	uint64_t freq;        /* interval/profile/software count */
	struct pos pos;       /* where it is written, for diagnostics */
	const char *desc;     /* the front end's spelling (D's probe
			       * description), or NULL */
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
	/* --follow-forks: the event (perf_event_open's inherit) goes to
	 * every process pid forks from then on (set by the engine) */
	bool inherit;
	uint64_t offset, ref_ctr_offset;
	bool retprobe;
	bool child_only;
	/* ATTACH_TEST_RUN: when */
	bool at_end;               /* END rather than BEGIN */
	bool on_fault;             /* D's dtrace:::ERROR: at each fault */
	bool bench;                /* bench:NAME, run by --mode bench only */
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
		PROCESS_FAULT,      /* in sonde, at each fault of a D clause
				     * (dtrace:::ERROR) */
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

/* One expanded attach point with its own program. */
struct probe {
	const struct provider *provider;
	uint32_t caps;             /* enum probe_cap: its provider's */
	const char *name;          /* expanded, canonical: "tracepoint:sched:sched_switch" */
	const char *target;        /* category, path, unit ... (provider-defined) */
	const char *func;          /* event, symbol ... (provider-defined) */
	uint64_t freq;             /* interval/profile/software parameter */
	uint32_t block;            /* index of the script's probe block */
	enum bpf_prog_type prog_type;
	enum bpf_attach_type expected_attach_type;
	struct bpf_insn *insns;
	uint32_t ninsns;
	void *provider_data;       /* owned by the provider, arena-allocated */
	const struct type *args_type; /* `args` record, or NULL (provider's args_type) */
	const struct uprobe_info *uprobe; /* user-space probes, else NULL */
	/* watchpoint:FUNC+argN: the program attached at the function's
	 * entry (uprobe above, a BPF_PROG_TYPE_KPROBE program) that asks
	 * for this probe's breakpoint (EV_WATCH); the probe itself is
	 * attached only then. NULL otherwise. */
	struct bpf_insn *setup_insns;
	uint32_t nsetup_insns;
	/* What its provider says of it, asked once by the driver so that
	 * the engines read data and never call a provider: */
	const char *kind;          /* the provider's name ("kprobe"), for
				    * messages */
	const char *ctx_struct;    /* `ctx`: the struct its context points
				    * to, looked up in the kernel's BTF;
				    * NULL: none (or pt_regs by prog_type) */
	bool has_setup;            /* watchpoint:FUNC+argN: codegen makes */
	struct probe_setup setup;  /* ... a setup program (setup_insns) */
	bool fires_newest_first;   /* struct provider's flag of that name */
	/* The front end's own names for it: D's probe description as
	 * written (the attach point's `desc`), and its provider, module,
	 * function, name and "function:name" (frontend.h's name_probes);
	 * NULL: none */
	const char *desc;
	const char *dname[5];
	/* argN as 8-byte slots in the context from ctx_args_off (the
	 * provider's ctx_args): ctx_nargs of them, 0: none */
	uint16_t ctx_args_off;
	uint8_t ctx_nargs;
	/* providers_describe (probes/provider.h), after codegen: */
	bool has_attach;           /* false: no kernel attachment (the
				    * provider has no attach hook) */
	int attach_err;            /* the attach hook's -errno, or 0 */
	struct attach_req attach;  /* ... and what it described */
	int process_err;           /* the process hook's -errno (-EOPNOTSUPP:
				    * none), or 0 */
	struct process_req process;
	/* Only when the program calls bpf_override_return: 0, or the
	 * -errno why its provider refuses, with the reason. */
	int override_err;
	const char *override_why;
};

struct program {
	struct arena *arena;       /* owns everything below */
	struct probe *probes;
	uint32_t nprobes;
	struct map_spec *maps;
	uint32_t nmaps;
	struct event_spec *events;
	uint32_t nevents;
	int32_t ringbuf_map;       /* index of the event ring, or -1 */
	int32_t globals_map;       /* index of .globals, or -1 */
	int32_t skb_map;           /* skboutput()'s perf buffer (only when
				    * nskb_outputs is not 0) */
	struct skb_output *skb_outputs;
	uint32_t nskb_outputs;
	uint32_t strlen;           /* string size in bytes */
	uint32_t nblocks;          /* probe blocks in the script */
	/* ustack: bytes of user stack copied for output to unwind (DWARF
	 * CFI); 0 walks frame pointers in the kernel (bpf_get_stackid). */
	uint32_t ustack_copy;
	/* The C types the script names (types.h): its own declarations and
	 * headers first, then the resolvers (the kernel's BTF). Values of
	 * STRUCT/ARRAY type point into it, so output reads it too. */
	struct ctypes *ctypes;
	/* Literal strings that values refer to by index and output needs to
	 * print them: strftime() formats, cgroup_path() filters. */
	const char **strings;
	uint32_t nstrings;
	/* -k (1) / -kk (2): helpers that fail report it (EV_HELPER_ERROR),
	 * with the script's name and text to show where. */
	int helper_check;
	const char *src_name, *src_text;
	/* hist()/lhist() keep the sum of their values (SONDE_HIST_SUM_BUCKET):
	 * the metrics endpoint asks for it */
	bool hist_sums;
	/* A config block's settings (config.c) for the run; zero: not set */
	struct {
		uint8_t stack_mode;       /* kstack/ustack's default mode */
		uint8_t missing_probes;   /* config's: 0 not set, 1 error,
					   * 2 warn, 3 ignore */
		bool no_print_maps;       /* print_maps_on_exit = false */
		bool no_cpp_demangle;     /* cpp_demangle = false */
		uint64_t cat_bytes_max, log_size;
		uint32_t perf_rb_pages, max_bpf_progs, max_probes;
		const char *license;
	} config;
	/* `let @m = KIND(N);` declarations (config.c), applied to the maps
	 * once sema has made them */
	struct map_decl {
		const char *name;
		uint32_t max_entries;
		bool lru;
		struct pos pos;
	} *map_decls;
	uint32_t nmap_decls;
	/* --dialect: the bpftrace minor version whose output and behaviour
	 * to follow (below DIALECT_024, 0.17's in everything sonde tells
	 * apart) */
	enum dialect dialect;
	/* D's (lang/d.c): output as dtrace(8) prints it (output/dtrace.c) */
	struct {
		bool on;               /* the script is D */
		bool quiet;            /* -q, #pragma D option quiet */
		/* -F, -x flowindent: record lines "CPU FUNCTION", the
		 * function indented by its entry/return depth on its CPU */
		bool flowindent;
		/* speculate() is called: records carry the speculation in
		 * their header (the per-CPU map ".dspec" holds the current
		 * one and the id counter: funcs/dtrace.c) */
		bool speculates;
		/* dtrace:::ERROR clauses exist: a fault runs them */
		bool has_error;
		/* what the matched lines name, one "FIRST_LINE\tLABEL\n"
		 * line per program (-n, -s, -P ...: "description 'BEGIN '",
		 * "script 'x.d'"), FIRST_LINE where it starts in the text */
		const char *label;
		/* each probe block's first line in the text (nblocks) */
		const uint32_t *block_lines;
		/* each aggregation's key widths as D types them (4: an
		 * int, printed %8d; 8: %16lld), in key order */
		const struct dtrace_agg_keys {
			const char *name;
			uint8_t width[8];
		} *aggs;
		uint32_t naggs;
		/* clauses per probe block (1 if absent): the matched line
		 * counts a probe once per clause that enables it */
		const uint32_t *clauses;
		uint32_t nclauses;
	} dtrace;
};

/* The program's tables, filled by sema and codegen. The add functions
 * return the new index; find returns it or -ENOENT. */
int program_add_map(struct program *p, const struct map_spec *m);
int program_add_event(struct program *p, const struct event_spec *e);
int program_find_map(const struct program *p, const char *name);
/* The index of (path, offset) in p->skb_outputs, added if new; -E2BIG
 * beyond SONDE_SKB_OUTPUTS_MAX. */
int program_add_skb_output(struct program *p, const char *path,
			   uint64_t offset);
/* The index of string s in p->strings, added (copied) if new. */
int program_add_string(struct program *p, const char *s);
/* How many different programs the probes have: probes of one block
 * whose code came out the same count once, as bpftrace 0.17 counts the
 * programs it generates (a wildcard's probes share one unless the code
 * names the probe). */
uint32_t program_distinct_programs(const struct program *p);
/* bpftrace 0.17's default BPFTRACE_MAX_BPF_PROGS */
#define SONDE_MAX_BPF_PROGS_DEFAULT 512
/* Frees the program and everything its arena owns. NULL is a no-op. */
void program_free(struct program *p);

#endif
