/* options.h - the command line and the BPFTRACE_* environment, parsed
 * into one struct options that main.c wires through a run. */
#ifndef SONDE_OPTIONS_H
#define SONDE_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

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

struct options {
	const char *program_text;   /* -e */
	const char *script_file;
	const char *list_pattern;   /* -l [PATTERN] */
	bool list;
	const char *cmd;            /* -c */
	int pid;                    /* -p */
	const char *out_file;       /* -o */
	enum output_kind format;
	enum buffering buffering;   /* -B */
	bool quiet, dry_run, unsafe;
	const char *dump;           /* ast | bpf */
	const char *flamegraph;     /* --flamegraph=FILE.svg */
	const char *folded;         /* --folded=FILE */
	const struct engine_ops *engine;   /* --engine= (kernel by default) */
	bool ustack_fp;             /* --ustack=fp */
	const char *include_dirs[OPTIONS_MAX_INCLUDES];  /* -I DIR */
	size_t ninclude_dirs;
	const char *include_files[OPTIONS_MAX_INCLUDES]; /* --include FILE */
	size_t ninclude_files;
	uint32_t ustack_copy;       /* --ustack=dwarf:BYTES */
	char **positional;
	int npositional;
};

/* Parse argv into *o: 0, or EXIT_SCRIPT with a message printed. -h and
 * -V print and exit the process. */
int options_parse(int argc, char **argv, struct options *o);
void options_usage(FILE *f);

/* BPFTRACE_STRLEN, BPFTRACE_MAP_KEYS_MAX: the value, or 0 (the default)
 * when unset or out of range (with a warning). */
uint32_t options_env_strlen(void);
uint32_t options_env_map_keys_max(void);

#endif
