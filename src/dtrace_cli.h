/* dtrace_cli.h - sonde as dtrace(8): the command line, the program it
 * assembles, compile errors and -l's listing in DTrace's words. */
#ifndef SONDE_DTRACE_CLI_H
#define SONDE_DTRACE_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "base/diag.h"
#include "options.h"
#include "program.h"

#define DTRACE_CLI_MAX 64

struct dtrace_cli {
	struct { char kind; const char *arg; } progs[DTRACE_CLI_MAX];
	int nprogs;              /* -n -s -P -m -f, in order */
	const char *x[DTRACE_CLI_MAX];  /* -x NAME[=VALUE], -b SIZE */
	int nx;
	bool quiet, destructive, list;
	bool zdefs;              /* -Z: descriptions may match nothing */
	bool cpp;                /* -C */
	const char *defs[DTRACE_CLI_MAX];  /* -D: "DNAME=V", -U: "UNAME" */
	int ndefs;
	const char *spec;        /* the first -n (its errors name it) */
};

/* Whether argv asks for D: run as `dtrace`, -n or -s, or a .d file. */
bool dtrace_cli_wanted(int argc, char **argv);
/* 0, or an exit code with the message printed. */
int dtrace_cli_parse(int argc, char **argv, struct options *o,
		     struct dtrace_cli *d);
void dtrace_cli_usage(FILE *f);
/* The D text of every -n/-s/-P/-m/-f in order (malloc'd), the matched
 * line's label (malloc'd) and the name errors give the script. */
int dtrace_cli_program(struct dtrace_cli *d, char **text, char **label,
		       const char **name);
void dtrace_cli_diags(const struct dtrace_cli *d, const struct diags *ds,
		      const char *name, FILE *f);
void dtrace_cli_list(const struct program *prog, FILE *f);

#endif
