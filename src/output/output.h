/* output.h - everything the user reads: event decoding, printf formatting,
 * map printing at exit (bpftrace 0.17's text, or JSON lines). Output
 * knows nothing of libbpf: it reads maps through a map_reader that an
 * engine implements. */
#ifndef SONDE_OUTPUT_H
#define SONDE_OUTPUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../base/log.h"
#include "../map_reader.h"
#include "../program.h"

struct output_opts {
	/* -f: the output format by its name (formats.c's table: "text",
	 * "json"); NULL is text. output_new fails (EINVAL) on another. */
	const char *format;
	FILE *out;
	bool unsafe;                /* system() allowed */
	uint64_t cat_bytes_max;     /* cat() reads at most (0: 10 KiB) */
	bool no_cpp_demangle;       /* user symbols stay mangled */
	bool no_user_symbols;       /* user addresses print as numbers */
	bool no_warnings;           /* --no-warnings: no helper errors (-k) */
};

struct output;

/* -f NAME: whether an output format is called that; the names, for the
 * error ("'text', 'json'"); how it writes sonde's own messages and
 * diagnostics on stderr, for log_set_line (NULL: the text lines). */
bool output_format_exists(const char *name);
const char *output_format_names(void);
log_line_fn *output_format_log_line(const char *name);
/* -f json's: {"type": TYPE, "data": "MSG"} (json_log.c) */
void output_json_log_line(FILE *out, const char *type, const char *msg);

struct output *output_new(const struct program *prog,
			  const struct output_opts *opts,
			  const struct map_reader *maps);
void output_free(struct output *o);

/* Symbolize ksym/usym values and print kstack/ustack frames (kallsyms,
 * the ELF files and debug files of each process, copied user stacks
 * unwound with the CFI). Without it addresses print as bpftrace prints
 * unresolved ones and stacks as their ids. 0 or -errno. */
int output_stacks_init(struct output *o);

/* "Attaching N probes..." (or its JSON record). */
void output_attaching(struct output *o, unsigned nprobes);
/* Handle one ring-buffer record. Returns 1 when the record asks sonde to
 * exit, 0 otherwise, negative errno for a malformed record. */
int output_event(struct output *o, const void *data, size_t size);
/* The code of the exit(CODE) that ended the run, or -1 (none, or exit()). */
int output_exit_code(const struct output *o);
/* At exit: every non-empty user map, in bpftrace's order and format. */
int output_print_maps(struct output *o);
/* The same without what precedes them at exit (SIGUSR1 asks for it). */
int output_print_maps_now(struct output *o);
/* Fold map entries keyed by single user-stack samples into one entry
 * per distinct stack, in the kernel maps, and every few seconds let go
 * of the stacks and exited processes no map refers to any more (call it
 * now and then while probes run, so such maps do not fill up and memory
 * stays flat). 0 or -errno. */
int output_compact(struct output *o);
/* Whether so many samples arrived since the last compaction that the
 * maps should be compacted now rather than at the next period: a probe
 * that fires tens of thousands of times a second would otherwise fill
 * a map between two periods. */
bool output_compact_due(struct output *o);
/* Flame graphs of every map keyed by a kstack/ustack (alone or with
 * other keys) whose values are counts, sums or integers: folded stacks
 * (flamegraph.pl, speedscope, inferno) to FOLDED and a self-contained
 * interactive SVG to SVG (either may be NULL). -ENOENT when no map
 * qualifies; 0 or -errno. */
int output_flamegraph(struct output *o, FILE *svg, FILE *folded,
		      const char *title);
/* Events the ring could not hold. */
void output_lost(struct output *o, uint64_t n);
/* The run is ending on a stop signal: the records still to come are
 * printed, but the system() commands they ask for are not run (each
 * takes milliseconds, and a probe that fires on their own work keeps
 * the backlog growing: END would never come). Counted, said at free. */
void output_stop_commands(struct output *o);
/* D: what runs the dtrace:::ERROR clauses when a clause faults: fn
 * gets their arguments (arg0 0, arg1 the enabled probe's ID, arg2 the
 * action, arg3 the DIF offset: -1, arg4 the fault, arg5 the address).
 * Without it (or dtrace.has_error), a fault prints DTrace's message. */
void output_on_fault(struct output *o,
		     int (*fn)(void *ctx, const uint64_t args[6]), void *ctx);
/* --mode bench's results (bench:NAME probes, in order): bpftrace 0.26's
 * table (Benchmark, Time(ns), Iterations) or a JSON "benchmark_result"
 * line each. */
void output_bench(struct output *o, const char *const *names,
		  const uint64_t *avg_ns, const uint64_t *iters, size_t n);
/* A run-time warning or error in the chosen format. */
void output_message(struct output *o, const char *level, const char *msg);
/* Warn, once per map, about user maps whose updates failed (full). */
void output_check_maps(struct output *o);

/* ---- user maps for exporters (entries.c) ----------------------------- */

/* What a map holds, as an exporter (OpenMetrics, pprof) names it. */
enum output_value_kind {
	OUTV_COUNT, OUTV_SUM, OUTV_MIN, OUTV_MAX, OUTV_AVG, OUTV_STATS,
	OUTV_HIST, OUTV_LHIST,
	OUTV_INT,       /* @m = 5 */
	OUTV_OTHER,     /* strings, tuples, ...: no number */
};
enum output_field_kind { OUTF_TEXT, OUTF_INT, OUTF_KSTACK, OUTF_USTACK };

/* hist(): bucket indexes 0..64 (program.h numbers them). */
#define OUTPUT_HIST_BUCKETS 65

struct output_map_info {
	const char *name;             /* "@m", or "@" */
	enum output_value_kind kind;
	bool is_signed;
	uint32_t nfields;             /* key fields (0: no key) */
	uint32_t nstacks;             /* of which kstack/ustack */
	int64_t lhist_min, lhist_max, lhist_step;
	uint32_t nbuckets;            /* hist/lhist: bucket indexes */
};

/* 0, or -ENOENT when MAP_ID is not a user map. */
int output_map_info(const struct program *prog, uint32_t map_id,
		    struct output_map_info *mi);
/* The kind of key field I of the map. */
enum output_field_kind output_map_field(const struct program *prog,
					uint32_t map_id, uint32_t i);

/* One frame of a stack in a key. */
struct output_frame {
	uint64_t addr;
	const char *name;             /* its function, or NULL */
	bool kernel;
	int32_t pid;                  /* user frames: the process */
	/* with OUTPUT_WALK_MAPPINGS: the file mapped at addr (kernel:
	 * "[kernel.kallsyms]" or "[module]", range unknown: 0) */
	const char *file;             /* NULL: none known */
	uint64_t start, end, pgoff;
	const uint8_t *build_id;
	size_t build_id_len;
};

/* hist/lhist entries hold one bucket each; this one holds the sum of
 * the values instead (program.h SONDE_HIST_SUM_BUCKET). */
#define OUTPUT_BUCKET_SUM UINT32_MAX

/* One map entry, valid during the callback only. */
struct output_entry {
	const char *const *fields;    /* per key field: its text as print()
				       * shows it in a key; NULL for stacks */
	const struct output_frame *frames;  /* the key's stacks, leaf
				       * first: kernel frames above user ones */
	size_t nframes;
	int64_t pid;                  /* of the key's user stack, or -1 */
	uint64_t value;               /* count, sum, integer, min/max, the
				       * bucket's count; avg/stats: count */
	int64_t total;                /* avg/stats: the total */
	bool set;                     /* min/max: a value was stored */
	uint32_t bucket;              /* hist/lhist: index or BUCKET_SUM */
};

#define OUTPUT_WALK_MAPPINGS 1u   /* fill each frame's file and build ID */

/* Call FN for every entry of user map MAP_ID (one snapshot, merged over
 * CPUs, stacks canonicalized and symbolized). FN returns 0 to go on or
 * -errno to stop. 0 or -errno. */
int output_map_walk(struct output *o, uint32_t map_id, unsigned flags,
		    int (*fn)(void *ctx, const struct output_entry *e),
		    void *ctx);
/* The same in steps: begin takes the snapshot (NULL, errno set, when it
 * cannot), next calls FN for entries until BUDGET_US microseconds have
 * passed (0: no limit) and returns 1 when every entry was seen, 0 when
 * more remain, -errno when FN or a read failed; end lets go. While a
 * walk is open the stacks its snapshot names are kept. */
struct output_walk;
struct output_walk *output_walk_begin(struct output *o, uint32_t map_id,
				      unsigned flags);
int output_walk_next(struct output_walk *wk, uint64_t budget_us,
		     int (*fn)(void *ctx, const struct output_entry *e),
		     void *ctx);
void output_walk_end(struct output_walk *wk);
/* Updates of MAP_ID that failed because it was full (0 if unknown). */
uint64_t output_map_failures(struct output *o, uint32_t map_id);
/* The program the output prints. */
const struct program *output_program(const struct output *o);

#endif
