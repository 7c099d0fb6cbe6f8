/* options.h - the command line and the BPFTRACE_* environment, parsed
 * into one struct options that main.c wires through a run. */
#ifndef SONDE_OPTIONS_H
#define SONDE_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "base/dialect.h"
#include "engine.h"
#include "output/output.h"

#define SONDE_VERSION "0.1.0"

enum exit_code { EXIT_OK = 0, EXIT_SCRIPT = 1, EXIT_RUNTIME = 2 };

/* -B, bpftrace's modes. sonde's "line" does not write each line with its
 * own syscall (at half a million lines a second that alone would cap the
 * rate): the reader takes records from the ring in batches, at least every
 * 10 ms, and flushes after each batch, so no line waits longer than that. */
enum buffering { BUF_LINE, BUF_FULL, BUF_NONE };

#define OPTIONS_MAX_INCLUDES 64     /* -I and --include, each */

/* BPFTRACE_* variables. Zero means "not set": the part that uses one
 * knows its default. */
struct options_env {
	uint32_t strlen;            /* STRLEN: string size, 1..200 */
	uint32_t map_keys_max;      /* MAP_KEYS_MAX */
	uint64_t cat_bytes_max;     /* CAT_BYTES_MAX: cat() reads at most */
	uint64_t log_size;          /* LOG_SIZE: verifier log bytes */
	uint32_t max_probes;        /* MAX_PROBES */
	uint32_t max_bpf_progs;     /* MAX_BPF_PROGS */
	uint32_t perf_rb_pages;     /* PERF_RB_PAGES: ring pages per CPU */
	bool no_cpp_demangle;       /* NO_CPP_DEMANGLE=1 */
	bool no_user_symbols;       /* NO_USER_SYMBOLS=1 */
	int cache_user_symbols;     /* CACHE_USER_SYMBOLS: -1 auto, 0, 1 */
	const char *vmlinux;        /* VMLINUX */
	const char *btf;            /* BTF */
};

struct options {
	const char *program_text;   /* -e */
	const char *script_file;
	const char *list_pattern;   /* -l [PATTERN] */
	bool list;
	const char *cmd;            /* -c */
	int pid;                    /* -p */
	const char *out_file;       /* -o */
	const char *format;         /* -f: an output format's name */
	enum buffering buffering;   /* -B */
	bool quiet, dry_run, unsafe;
	const char *dump;           /* ast | bpf */
	const char *flamegraph;     /* --flamegraph=FILE.svg */
	const char *folded;         /* --folded=FILE */
	const char *metrics;        /* --metrics=[HOST:]PORT */
	const char *metrics_maps;   /* --metrics-maps=@a,@b */
	const char *metrics_labels[OPTIONS_MAX_INCLUDES]; /* --metrics-labels */
	size_t nmetrics_labels;
	const char *pprof;          /* --pprof=FILE */
	const char *pprof_units[OPTIONS_MAX_INCLUDES]; /* --pprof-unit */
	size_t npprof_units;
	const struct engine_ops *engine;   /* --engine= (kernel by default) */
	bool ustack_fp;             /* --ustack=fp */
	const char *include_dirs[OPTIONS_MAX_INCLUDES];  /* -I DIR */
	size_t ninclude_dirs;
	const char *include_files[OPTIONS_MAX_INCLUDES]; /* --include FILE */
	size_t ninclude_files;
	uint32_t ustack_copy;       /* --ustack=dwarf:BYTES */
	bool info;                  /* --info */
	int helper_check;           /* -k: 1, -kk: 2 */
	bool no_warnings;           /* --no-warnings */
	bool usdt_file_activation;  /* --usdt-file-activation */
	bool follow_forks;          /* --follow-forks */
	enum dialect dialect;       /* --dialect=VERSION (0: 0.17) */
	const char *probe_filter;   /* --probe-filter REGEX */
	bool bench;                 /* --mode bench: time the bench probes */
	const char *debuginfo[OPTIONS_MAX_INCLUDES]; /* --debuginfo DIR:DIR */
	size_t ndebuginfo;
	char **positional;
	int npositional;
	struct options_env env;     /* BPFTRACE_* */
	bool stdout_closed;         /* fd 1 was closed when sonde started */
	bool dtrace;                /* the D front end (dtrace_cli.c) */
};

/* Parse argv and the environment into *o: 0, or EXIT_SCRIPT with a
 * message printed. -h and -V print and exit the process. */
int options_parse(int argc, char **argv, struct options *o);
void options_usage(FILE *f);

/* The BPFTRACE_* environment (bpftrace 0.17's, section 9 of its reference
 * guide, and those its -h lists) into *env: 0, or -EINVAL with a message
 * naming the variable when one holds a value bpftrace would refuse.
 * Unset variables leave their default (0: the default of whoever uses
 * it). */
int options_env(struct options_env *env, enum dialect d);

#endif
