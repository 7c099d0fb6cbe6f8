/* output_int.h - what the files of the output part share: the output
 * object, a growable text buffer, and the per-seam entry points (printf
 * formatting, value text, JSON, map printing, bpftrace's sort).
 *
 * How output works. Every ring-buffer record starts with an event id;
 * events.c looks the id up in prog->events, checks the record's size
 * against the argument tuple, and dispatches. Text is always built in a
 * buffer first (struct sbuf) and written with one fwrite, so a record
 * that turns out to be malformed halfway prints nothing. Maps are read
 * through the engine's map_reader as snapshots; maps.c merges per-CPU
 * values, sorts entries the way bpftrace 0.17 does and renders text or
 * JSON. Value text (value.c) is shared by printf %s, print(), map keys
 * and map values, so a type prints the same everywhere. */
#ifndef SONDE_OUTPUT_INT_H
#define SONDE_OUTPUT_INT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "output.h"

/* ---- text buffer --------------------------------------------------- */

/* A NUL-terminated growable string. On allocation failure it sets `oom`
 * and stops growing; the caller checks once at the end. */
struct sbuf {
	char *s;
	size_t n, cap;
	bool oom;
};

void sbuf_free(struct sbuf *b);
/* Room for `more` bytes (and the NUL) after b->n: a writer may then fill
 * b->s + b->n directly and advance b->n. False (oom set) when there is
 * none. */
bool sbuf_reserve(struct sbuf *b, size_t more);
void sbuf_putc(struct sbuf *b, char c);
void sbuf_put(struct sbuf *b, const char *s, size_t n);
void sbuf_puts(struct sbuf *b, const char *s);
void sbuf_printf(struct sbuf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void sbuf_vprintf(struct sbuf *b, const char *fmt, va_list ap);
/* Drop everything from offset n on. */
void sbuf_truncate(struct sbuf *b, size_t n);

/* ---- the output object --------------------------------------------- */

/* Hooks for values whose text needs symbol tables or the stack maps.
 * Until the stacks/symbolization part installs them (output_set_hooks),
 * addresses print as bpftrace prints an address it cannot resolve and a
 * stack prints as its id. Each hook appends to `out`. */
struct output_hooks {
	void *ctx;
	/* ksym(addr) (pid = -1) / usym(addr) in pid; with module, D's
	 * mod()/umod(): the module's name instead. */
	void (*sym)(void *ctx, struct sbuf *out, uint64_t addr, int64_t pid,
		    bool user, bool module);
	/* A KSTACK/USTACK value (raw bytes per types.h), indented by
	 * `indent` spaces per frame (4 in map keys, 8 elsewhere). */
	void (*stack)(void *ctx, struct sbuf *out, const struct type *t,
		      const uint8_t *data, unsigned indent);
};

struct stacks;
struct cgroup_cache;
struct output;
/* One map being printed (maps.c) and one entry of it, merged over
 * CPUs: what a format's `map` hook gets. */
struct ment {
	const uint8_t *key;     /* user key bytes */
	const uint8_t *raw;     /* the value of a non-aggregation map */
	uint64_t a, b;          /* count/sum: a; min/max: a value, b set;
				 * avg/stats: a count, b total */
	uint64_t *buckets;      /* hist/lhist */
	uint64_t bucket;        /* hist/lhist entry: its bucket index */
	uint64_t total;         /* hist/lhist: sum of buckets */
	int64_t avg;            /* avg/stats */
};

struct mctx {
	struct output *o;
	const struct map_spec *m;
	const struct type *vt;
	uint32_t ksize;         /* user key bytes */
	uint32_t nb;            /* buckets per hist/lhist key */
	uint64_t div;
};


/* "[k1, k2]" of a map entry's key (nothing for a keyless map). */
void maps_key_text(const struct mctx *mc, struct sbuf *out,
		   const uint8_t *key);
/* The same, in JSON: "KEY": (nothing for a keyless map). */
void maps_key_json(const struct mctx *mc, struct sbuf *out,
		   const uint8_t *key);
/* A tseries() map as text or JSON (tseries.c); 0 or -errno. */
int tseries_render(const struct mctx *mc, const struct map_snapshot *s,
		   struct sbuf *out, bool json);

/* One output format (-f): how each kind of output is written. Every
 * place that writes output asks the format through o->fmt rather than
 * testing which one it is; a new kind of output adds a hook to every
 * table, and a new format is a table in a file of its own and a line in
 * formats.c's list, where -f finds it by name. Hooks append to `out`
 * (the caller writes it) unless they say otherwise. */
struct output_format {
	const char *name;                  /* what -f names: "text", "json" */
	/* The layout a D program (dtrace.on) prints in, when this format
	 * has one of its own (text: D's; output_format_dtrace). */
	const struct output_format *d_layout;
	/* sonde's own messages and diagnostics on stderr (log.h); NULL:
	 * the text lines. */
	log_line_fn *log_line;
	/* "Attaching N probes..." */
	void (*attaching)(struct output *o, struct sbuf *out, unsigned nprobes);
	/* Events the ring buffer could not hold. */
	void (*lost)(struct output *o, struct sbuf *out, uint64_t n);
	/* A run-time warning or error: text writes "LEVEL: msg" to stderr
	 * (out untouched), JSON a message line into out. */
	void (*message)(struct output *o, struct sbuf *out, const char *level,
			const char *msg);
	/* The script's own warnf()/errorf() message msg[0..n), made at
	 * e->pos: text writes it on stderr with the source line, JSON a
	 * message line into out. Returns 0 or a negative errno. */
	int (*script_message)(struct output *o, struct sbuf *out,
			      const struct event_spec *e, bool err,
			      const char *msg, size_t n);
	/* An event whose output is text (printf, time, join, cat, system):
	 * `type` is bpftrace's JSON type for it, `newline` whether text
	 * output ends it with one (join does). */
	void (*text_event)(struct output *o, struct sbuf *out, const char *type,
			   const char *text, size_t n, bool newline);
	/* print(value): one value on its own line. */
	void (*print_value)(struct output *o, struct sbuf *out,
			    const struct type *t, const uint8_t *data);
	/* A value inside a map entry (a map value, not an aggregation). */
	void (*value)(struct output *o, struct sbuf *out, const struct type *t,
		      const uint8_t *data);
	/* What precedes the maps printed at exit. */
	void (*maps_begin)(struct output *o, struct sbuf *out);
	/* One map's entries, sorted (maps.c). */
	void (*map)(const struct mctx *mc, struct sbuf *out,
		    struct ment *const *v, size_t n, uint64_t top);
	/* An error that bpftrace writes to stderr in any format (cat() of a
	 * file it cannot open). */
	void (*error_stderr)(struct output *o, const char *msg);
	/* -k: helper `e->fmt`, called at e->pos, returned ret < 0. */
	void (*helper_error)(struct output *o, struct sbuf *out,
			     const struct event_spec *e, int64_t ret);
};

/* text's table, which D's layout builds on (dtrace.c) */
extern const struct output_format output_format_text;
/* The format -f names (formats.c's list), or NULL. */
const struct output_format *output_format_find(const char *name);

/* ---- dprint.c: D's print() of a C struct, union or array value ------ */
void dprint_value(struct output *o, struct sbuf *out, const struct ctype *t,
		  const uint8_t *data, size_t size);

/* ---- dtrace.c: D's records (EV_DTRACE_*) ---------------------------- */

void dtrace_faults_end(struct output *o);
int dtrace_fault(struct output *o, const struct event_spec *e,
		 const uint8_t *data, size_t size);
int dtrace_probe_line(struct output *o, const struct event_spec *e,
		      const uint8_t *data, size_t size);
int dtrace_printa(struct output *o, const struct event_spec *e);
/* normalize()/denormalize() and trunc(@m, n) */
int dtrace_tracemem(struct output *o, const struct event_spec *e,
		    const uint8_t *d, size_t size);
int dtrace_map_op(struct output *o, const struct event_spec *e,
		  const uint8_t *data);

struct output {
	const struct program *prog;
	struct output_opts opts;
	const struct output_format *fmt;  /* from opts.format */
	struct map_reader maps;
	bool have_maps;
	struct output_hooks hooks;
	bool have_hooks;
	uint64_t lost;
	uint8_t *map_warned;        /* per map: its "full" warning is out */
	bool broken;                /* a write failed: the reader is gone */
	struct stacks *stacks;      /* output_stacks_init, or NULL */
	double last_sweep_ms;       /* output_sweep (stacks_gc.c) */
	/* output_compact: samples of generations before sample_mark_gen,
	 * current at sample_mark_ms, are pruned a grace later */
	uint32_t sample_mark_gen;
	double sample_mark_ms;
	/* sample entries compaction moved into a full map and lost: a
	 * probe took the slot freed for their canonical entry */
	uint64_t compact_lost;
	struct timespec boottime;   /* wall clock when nsecs was 0 */
	bool boottime_ok;
	struct cgroup_cache *cgroups; /* cgroup_path()'s found paths */
	struct output_walk *walks;  /* entries.c walks under way */
	bool no_commands;           /* output_stop_commands */
	uint64_t commands_skipped;  /* ... system() calls not run since */
	/* A printf record's text and its line, built here record after
	 * record: buffers kept, not allocated and freed per record. */
	struct sbuf scratch_text, scratch_line;
	int exit_code;              /* exit(CODE)'s, once one came */
	bool exit_code_set;
	/* D (dtrace.c): the CPU ID FUNCTION:NAME heading is out; the
	 * format of the printa() being printed (NULL: the default) */
	bool dtrace_heading;
	struct dspecs *dspecs;      /* D's speculations held (dspec.c) */
	const char *printa_fmt;
	uint8_t *dtrace_printed;    /* per map: printa() printed it */
	bool dtrace_exiting;        /* the aggregations at exit */
	uint64_t *dtrace_normal;    /* per map: normalize()'s divisor, or 0 */
	struct dtrace_join *dtrace_join;  /* printa(@a, @b ...) under way */
	bool dtrace_truncating;     /* trunc(@m, n) under way: ... */
	int64_t dtrace_trunc;       /* ... n */
	bool line_open;             /* the last write did not end a line */
	uint16_t *flow_indent;      /* D's -F: per CPU, the indent (spaces) */
	uint32_t *flow_last;        /* ... and the last record's probe ID */
	/* output_on_fault: the ERROR clauses' runner */
	int (*on_fault)(void *ctx, const uint64_t args[6]);
	void *fault_ctx;
	uint64_t dtrace_faults;     /* faults reported (bounded: dtrace.c) */
};

/* The script's line at pos with '~' under its span (formats.c). */
void output_source_excerpt(struct output *o, struct sbuf *out, struct pos pos);

/* Install (or, with NULL, remove) the symbol and stack hooks. */
void output_set_hooks(struct output *o, const struct output_hooks *h);

/* Write the buffer to the output stream (nothing if it overflowed). */
int output_write(struct output *o, const struct sbuf *b);

/* ---- format.c: printf ---------------------------------------------- */

/* One conversion as written: %[flags][width][.prec][length]conv. */
struct fmt_spec {
	char flags[6];          /* any of "-+ #0", in order seen */
	int width, prec;        /* -1 when absent */
	char length[3];         /* "", "hh", "h", "l", "ll", "j", "z", "t" */
	char conv;              /* d i u x X o c s p r */
	char rmode;             /* %r: 0, 'x' or 'h' (%rx, %rh) */
};

/* Parse a conversion at p (which points at the '%'). Returns the length
 * of the conversion text, or 0 when p does not start one (including
 * "%%"). */
size_t fmt_parse_spec(const char *p, struct fmt_spec *spec);

/* Format `fmt` with the arguments laid out as `args` (a tuple, or NULL)
 * in data[0..size), bpftrace 0.17's way: with no arguments the format is
 * printed as it is; otherwise the text up to and including each
 * conversion goes through C printf (so "%%" there becomes "%") and the
 * text after the last conversion is copied as it is. Returns 0 or
 * -EINVAL when the data is shorter than the tuple. */
int fmt_format(struct output *o, struct sbuf *out, const char *fmt,
	       const struct type *args, const uint8_t *data, size_t size);

/* One integer value as a conversion prints it (used by tests). */
void fmt_int(struct sbuf *out, const struct fmt_spec *spec, uint64_t v,
	     const struct type *t);

/* ---- value.c: one value as text ------------------------------------ */

/* Where a value is printed decides small things: pointers are hex in map
 * keys, stacks are indented by 4 in keys and 8 elsewhere. */
enum value_ctx { VCTX_VALUE, VCTX_KEY };

/* An integer of type t stored as 8 bytes, widened per bits/is_signed. */
uint64_t value_int(const struct type *t, const uint8_t *data);
int64_t value_sint(const struct type *t, const uint8_t *data);
void value_text(struct output *o, struct sbuf *out, const struct type *t,
		const uint8_t *data, enum value_ctx ctx);
/* buf(): bpftrace's escaping. mode 0: printable bytes as they are, other
 * bytes as \xNN; 'x': every byte as \xNN; 'h': "NN NN ...". */
void value_buf_text(struct sbuf *out, const uint8_t *bytes, size_t n,
		    char mode);
/* The bytes of a BUF value (clamped to the type's size). */
const uint8_t *value_buf_bytes(const struct type *t, const uint8_t *data,
			       size_t *n);

/* ---- resolve.c: values user space turns into text ------------------ */

/* strftime() (TIMESTAMP), strerror() (ERRNO), cgroup_path() (CGROUP_PATH)
 * and macaddr() (MACADDR) values as bpftrace 0.17 prints them. o may be
 * NULL (no program strings then, no cache). */
void resolve_timestamp(struct output *o, struct sbuf *out,
		       const uint8_t *data);
void resolve_errno(struct sbuf *out, const uint8_t *data);
void resolve_cgroup_path(struct output *o, struct sbuf *out,
			 const uint8_t *data);
void resolve_macaddr(struct sbuf *out, const uint8_t *data);
/* The boot time, read once when the output is made (0 or -errno). */
int resolve_boot_time(struct timespec *bt);
/* ... the one the output read, or read now if it could not (0 or
 * -errno) */
int output_boot_time(const struct output *o, struct timespec *bt);
void resolve_cache_free(struct cgroup_cache *c);

/* ---- cvalue.c: C struct/union/array values (TYPE_STRUCT, TYPE_ARRAY) */

/* As bpftrace prints them: "{ .a = 1 }", in map keys "{.a=1}". */
void cvalue_text(struct sbuf *out, const struct type *t, const uint8_t *data,
		 bool key);
/* As bpftrace 0.26 prints them, keys and values alike: "{ .a = 1, .p =
 * 0x7ffc... }" (pointer members in hex, as its tests expect) */
void cvalue_text_026(struct sbuf *out, const struct type *t,
		     const uint8_t *data);
/* { "a": 1 } */
void cvalue_json(struct sbuf *out, const struct type *t, const uint8_t *data,
		 bool tight);

/* ---- json.c ---------------------------------------------------------- */

/* s[0..n) as a JSON string with quotes, escaped as bpftrace escapes. */
void json_str(struct sbuf *out, const char *s, size_t n);
void json_value(struct output *o, struct sbuf *out, const struct type *t,
		const uint8_t *data);
/* {"type": "<type>", "data": "<text>"} and a newline. */
void json_message(struct sbuf *out, const char *type, const char *text,
		  size_t n);

/* ---- maps.c ---------------------------------------------------------- */

/* print(@m, top, div) and each map at exit. */
int maps_print(struct output *o, uint32_t map_id, uint64_t top,
	       uint64_t div);
/* Entry I of snapshot S merged over CPUs as print() merges it: count,
 * sum, integer and hist/lhist bucket values in A; min/max the value in A
 * and whether one was set in B; avg/stats the count in A, total in B. */
void maps_merge_values(const struct type *vt, const struct map_snapshot *s,
		       uint32_t i, uint64_t *a, uint64_t *b);
/* The two renderings of one sorted map (the formats' `map` hooks). */
void maps_render_text(const struct mctx *mc, struct sbuf *out,
		      struct ment *const *v, size_t n, uint64_t top);
void maps_render_json(const struct mctx *mc, struct sbuf *out,
		      struct ment *const *v, size_t n, uint64_t top);

/* ---- stacks.c: stack values, unwinding, symbols -------------------- */

void stacks_free(struct stacks *s);
/* An EV_USTACK record (whole, event id included): unwind and intern. */
int stacks_sample(struct stacks *s, const void *data, size_t size);
/* EV_NEW_PID: remember the mappings of PID while it runs. */
void stacks_new_pid(struct stacks *s, int64_t pid);
/* The canonical USTACK id (USTACK_ID_CANON | n) of a sample id, and the
 * generation in which the sample arrived; -ENOENT when unknown. */
/* The symbol ADDR is in (in PID when USER): its start and module (as
 * struct sym has them). 0, or -ENOENT when nothing names it. */
int stacks_sym_of(struct stacks *s, uint64_t addr, int64_t pid, bool user,
		  uint64_t *start, const char **module);
int stacks_canon_of(struct stacks *s, uint64_t sample_id, uint64_t *canon_id,
		    uint32_t *gen);
uint32_t stacks_gen(struct stacks *s);
/* How many samples arrived in the current generation. */
uint32_t stacks_gen_samples(const struct stacks *s);
/* A usym value a map holds: the address and its process. */
struct usym_ref {
	int32_t pid;
	uint64_t addr;
};
/* Let go of the canonical stacks that neither CANON_REFS (ids found in
 * maps) nor a sample names, and of the processes that have exited, were
 * not seen for a few seconds, and are neither in PID_REFS (pids of
 * stacks found in maps that are not canonical: read from the kernel's
 * stack maps when printed), nor named by USYM_REFS, nor the owners of a
 * stack kept. Such an exited process that only kept stacks and USYM_REFS
 * refer to is frozen (usym_process_freeze): named for those addresses,
 * its mappings and files let go. Returns how many were let go or
 * frozen, or -ENOMEM (nothing freed). USYM_REFS is sorted. */
int stacks_gc(struct stacks *s, const uint64_t *canon_refs, size_t ncanon_refs,
	      int32_t *pid_refs, size_t npid_refs, struct usym_ref *usym_refs,
	      size_t nusym_refs);
/* Processes remembered and canonical stacks kept (tests, -v); how long a
 * process is kept after it was last seen, and a sample after its record
 * came (default 5 s; tests shorten it). */
size_t stacks_nprocs(const struct stacks *s);
size_t stacks_ncanon(const struct stacks *s);
void stacks_set_grace(struct stacks *s, uint64_t ns);
uint64_t stacks_grace(const struct stacks *s);

/* ---- stacks_gc.c ----------------------------------------------------- */

/* Collect the user stacks and pids the maps still hold and let stacks.c
 * go of the rest; at most every 2 s unless NOW. 0 or -errno. */
int output_sweep(struct output *o, bool now);
/* Forget the samples that arrived before generation BEFORE. */
void stacks_prune(struct stacks *s, uint32_t before);
void stacks_next_gen(struct stacks *s);
/* The frames of a KSTACK/USTACK value (innermost first, up to CAP) and,
 * for a user stack, its pid (-1 for kernel stacks). */
int stacks_resolve(struct stacks *s, const struct type *t,
		   const uint8_t *data, uint64_t *ips, size_t cap, size_t *n,
		   int64_t *pid);
struct ksyms *stacks_ksyms(struct stacks *s);
struct usyms *stacks_usyms(struct stacks *s);

/* ---- stackmaps.c: maps keyed by copied user stacks ----------------- */

/* Whether M's keys hold ustack sample ids (copied user stacks). */
bool stackmaps_keyed_by_samples(const struct output *o,
				const struct map_spec *m);
/* Turn the sample ids in a snapshot's keys into canonical ids and merge
 * the entries that become equal. 0 or -ENOMEM. */
int stackmaps_canonicalize(struct output *o, const struct map_spec *m,
			   struct map_snapshot *s);

/* ---- entries.c ----------------------------------------------------- */

/* FN for every key the open walks have yet to read (the sweep keeps
 * what they name). */
void output_walks_keys(struct output *o,
		       void (*fn)(void *ctx, struct output *o,
				  const struct map_spec *m, const uint8_t *key,
				  uint32_t size),
		       void *ctx);

/* ---- flame.c ------------------------------------------------------- */

/* Whether map M is drawn by output_flamegraph. */
bool flame_map_qualifies(const struct map_spec *m);

/* ---- sort.c ---------------------------------------------------------- */

/* libstdc++'s std::sort (introsort, GCC 12), step for step: bpftrace
 * sorts map entries with it, and it is not stable, so entries with equal
 * values come out in its order. Sorts n elements of `size` bytes. */
void cxx_sort(void *base, size_t n, size_t size,
	      bool (*less)(const void *a, const void *b, void *ctx),
	      void *ctx);
/* std::stable_sort: any stable sort gives the same order. */
void cxx_stable_sort(void *base, size_t n, size_t size,
		     bool (*less)(const void *a, const void *b, void *ctx),
		     void *ctx);

/* dspec.c: D's speculations. A record of speculation id (its header's
 * high half), rendered into the speculation's buffer; commit(id) or
 * discard(id); the end (held ones dropped, drops reported). */
int dspec_record(struct output *o, uint32_t id, const void *data,
		 size_t size);
int dspec_end(struct output *o, uint32_t id, bool commit);
void dspec_free(struct output *o);

#endif
