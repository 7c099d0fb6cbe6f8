/* dtrace_cli.c - sonde as dtrace(8): its command line (-n, -s, -P, -m,
 * -f, -q, -c, -p, -o, -x, -w, -l, -e ...), the D program it assembles
 * from them, compile errors in DTrace's words, and -l's listing. Chosen
 * when sonde runs as `dtrace`, is given -n or -s, or a script file
 * ending in .d (dtrace_cli_wanted). */
#include "dtrace_cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/file.h"
#include "base/log.h"

#define PID_MAX_LIMIT (4 * 1024 * 1024)

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* A script file named *.d is D unless its #! line runs bpftrace: a
 * bpftrace script someone named .d stays bpftrace's, as bpftrace would
 * read it. The peek opens without blocking and only a regular file. */
static bool d_script_file(const char *path)
{
	if (!ends_with(path, ".d"))
		return false;
	int fd = file_open_regular(path, false);
	if (fd < 0)
		return true;   /* the D front end names what is wrong */
	char line[256];
	ssize_t n = read(fd, line, sizeof(line) - 1);
	close(fd);
	if (n < 2 || line[0] != '#' || line[1] != '!')
		return true;
	line[n] = '\0';
	line[strcspn(line, "\n")] = '\0';
	return !strstr(line, "bpftrace");
}

bool dtrace_cli_wanted(int argc, char **argv)
{
	const char *base = strrchr(argv[0], '/');
	base = base ? base + 1 : argv[0];
	if (strcmp(base, "dtrace") == 0)
		return true;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--") == 0 || strcmp(a, "-") == 0)
			break;
		if (a[0] != '-')
			return d_script_file(a);
		if (a[1] == '-')
			continue;   /* a long option */
		/* a letter only dtrace(8) has (-n, -s, -x, -P, -m, -w ...),
		 * alone or among bundled flags (-qn), is D */
		for (const char *c = a + 1; *c; c++) {
			if (strchr("nsxPmbwZFCUDGHS", *c))
				return true;
			/* dtrace's -i names a probe by its number; bpftrace has
			 * no -i, and `-ifoo` stays bpftrace's usage error */
			if (*c == 'i') {
				const char *arg = c[1] ? c + 1 : i + 1 < argc ? argv[i + 1] : "";
				return *arg && arg[strspn(arg, "0123456789")] == '\0';
			}
			if (strchr("epcofBId", *c)) {   /* takes an argument */
				if (!c[1])
					i++;
				break;
			}
		}
	}
	return false;
}

static int add_prog(struct dtrace_cli *d, char kind, const char *arg)
{
	if (d->nprogs == DTRACE_CLI_MAX) {
		log_error("more than %d programs (-n, -s, -P, -m, -f)",
			  DTRACE_CLI_MAX);
		return -1;
	}
	d->progs[d->nprogs].kind = kind;
	d->progs[d->nprogs].arg = arg;
	d->nprogs++;
	return 0;
}

void dtrace_cli_usage(FILE *f)
{
	fputs("Usage: dtrace [-qvwlZe] [-o output] [-x opt[=val]] [-c cmd] "
	      "[-p pid]\n"
	      "\t[-s script] [-n name] [-P provider] [-m module] "
	      "[-f function] [args ...]\n\n"
	      "\t-c  run specified command and exit upon its completion\n"
	      "\t-e  exit after compiling request but prior to enabling probes\n"
	      "\t-f  enable or list probes matching the specified function name\n"
	      "\t-l  list probes matching specified criteria\n"
	      "\t-m  enable or list probes matching the specified module name\n"
	      "\t-n  enable or list probes matching the specified probe name\n"
	      "\t-o  set output file\n"
	      "\t-p  grab specified process-ID and cache its symbol tables\n"
	      "\t-P  enable or list probes matching the specified provider name\n"
	      "\t-q  set quiet mode (only output explicitly traced data)\n"
	      "\t-s  enable or list probes according to the specified D script\n"
	      "\t-v  set verbose mode (report stability attributes, arguments)\n"
	      "\t-w  permit destructive actions\n"
	      "\t-x  enable or modify compiler and tracing options\n"
	      "\t-Z  permit probe descriptions that match zero probes\n"
	      "\t--engine=kernel|process  where the probes run (sonde's)\n",
	      f);
}

int dtrace_cli_parse(int argc, char **argv, struct options *o,
		     struct dtrace_cli *d)
{
	static const struct option longopts[] = {
		{ "engine", required_argument, NULL, 'E' },
		{ "dry-run", no_argument, NULL, 'e' },
		{ "help", no_argument, NULL, 'H' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	o->dtrace = true;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+n:s:P:m:f:i:qvwlZeCc:p:o:x:b:D:U:I:FVhG",
				longopts, NULL)) != -1) {
		switch (c) {
		case 'n': case 's': case 'P': case 'm': case 'f':
			if (add_prog(d, (char)c, optarg) < 0)
				return EXIT_SCRIPT;
			break;
		case 'i':
			log_error("-i: probe IDs are sonde's own numbering of one "
				  "run's probes; name the probe with -n");
			return EXIT_SCRIPT;
		case 'q': d->quiet = true; break;
		case 'v': log_verbose = 1; break;
		case 'w': d->destructive = true; break;
		case 'l': d->list = true; break;
		case 'Z': d->zdefs = true; break;
		case 'e': o->dry_run = true; break;
		case 'c': o->cmd = optarg; break;
		case 'o': o->out_file = optarg; break;
		case 'b': {   /* -b SIZE is -x bufsize=SIZE */
			char *x = malloc(strlen(optarg) + 9);
			if (!x || d->nx == DTRACE_CLI_MAX) {
				free(x);
				log_error("-b: too many options");
				return EXIT_SCRIPT;
			}
			sprintf(x, "bufsize=%s", optarg);
			d->x[d->nx++] = x;
			break;
		}
		case 'x':
			if (d->nx == DTRACE_CLI_MAX) {
				log_error("-x: more than %d options",
					  DTRACE_CLI_MAX);
				return EXIT_SCRIPT;
			}
			d->x[d->nx++] = optarg;
			break;
		case 'p': {
			char *end;
			errno = 0;
			long v = strtol(optarg, &end, 10);
			if (!*optarg || *end || errno || v < 1 ||
			    v > PID_MAX_LIMIT) {
				fprintf(stderr, "dtrace: invalid pid: %s\n",
					optarg);
				return EXIT_SCRIPT;
			}
			o->pid = (int)v;
			break;
		}
		case 'E':
			o->engine = engine_find(optarg);
			if (!o->engine) {
				log_error("--engine: unknown engine '%s' (kernel or "
					  "process)", optarg);
				return EXIT_SCRIPT;
			}
			break;
		case 'C': d->cpp = true; break;
		case 'D': case 'U': {
			if (d->ndefs == DTRACE_CLI_MAX) {
				log_error("-%c: more than %d", c, DTRACE_CLI_MAX);
				return EXIT_SCRIPT;
			}
			char *def = malloc(strlen(optarg) + 2);
			if (!def)
				return EXIT_SCRIPT;
			def[0] = (char)c;
			strcpy(def + 1, optarg);
			d->defs[d->ndefs++] = def;
			break;
		}
		case 'I':
			if (o->ninclude_dirs == OPTIONS_MAX_INCLUDES) {
				log_error("-I: more than %d directories",
					  OPTIONS_MAX_INCLUDES);
				return EXIT_SCRIPT;
			}
			o->include_dirs[o->ninclude_dirs++] = optarg;
			break;
		case 'F':   /* -F is -x flowindent */
			if (d->nx == DTRACE_CLI_MAX) {
				log_error("-F: too many options");
				return EXIT_SCRIPT;
			}
			d->x[d->nx++] = "flowindent";
			break;
		case 'V':
			printf("dtrace: Sun D 1.6.3 (sonde v%s)\n", SONDE_VERSION);
			exit(EXIT_OK);
		case 'h':
			fprintf(stderr, "dtrace: -h (a C header of a provider "
				"definition's probe macros) is not supported by "
				"sonde's D: include/sonde/sdt.h's SONDE_PROBE() "
				"needs no generated header\n");
			return EXIT_SCRIPT;
		case 'G':
			fprintf(stderr, "dtrace: -G (an object file of a "
				"program's USDT probes) is not supported by "
				"sonde's D: include/sonde/sdt.h's SONDE_PROBE() "
				"writes the probes' notes when the program is "
				"compiled\n");
			return EXIT_SCRIPT;
		case 'H':
			dtrace_cli_usage(stdout);
			exit(EXIT_OK);
		default:
			dtrace_cli_usage(stderr);
			return 2;
		}
	}
	/* `sonde x.d ARGS`: the script, as `dtrace -s x.d ARGS` */
	if (!d->nprogs && optind < argc && ends_with(argv[optind], ".d") &&
	    add_prog(d, 's', argv[optind++]) < 0)
		return EXIT_SCRIPT;
	if (options_env(&o->env, DIALECT_017) < 0)
		return EXIT_SCRIPT;
	if (!d->nprogs && d->list) {
		/* every probe: each provider sonde has on this machine, and
		 * the profile probes DTrace creates in advance; USDT and pid
		 * probes need a process (-p, -c) and a description */
		static const char *const all[] = {
			"dtrace:::", "syscall:::", "proc:::", "sched:::", "io:::",
			"profile:::profile-97", "profile:::profile-199",
			"profile:::profile-499", "profile:::profile-997",
			"profile:::profile-1999", "profile:::profile-4001",
			"profile:::profile-4999", "profile:::tick-1",
			"profile:::tick-10", "profile:::tick-100",
			"profile:::tick-500", "profile:::tick-1000",
			"profile:::tick-5000", NULL,
		};
		for (int i = 0; all[i]; i++)
			if (add_prog(d, 'n', all[i]) < 0)
				return EXIT_SCRIPT;
		/* fbt where the kernel has kprobes */
		if (access("/sys/bus/event_source/devices/kprobe", F_OK) == 0 &&
		    add_prog(d, 'n', "fbt:::") < 0)
			return EXIT_SCRIPT;
		d->zdefs = true;
	}
	if (!d->nprogs) {
		dtrace_cli_usage(stderr);
		return 2;
	}
	if (optind < argc && strcmp(argv[optind], "--") == 0)
		optind++;
	o->positional = argv + optind;
	o->npositional = argc - optind;
	return 0;
}

/* The -n text up to the first '{', '/' or ';': what the matched line
 * names, as dtrace(8) cuts it. */
static char *desc_name(const char *arg)
{
	size_t n = strcspn(arg, "{/;");
	char *s = malloc(n + 1);
	if (s) {
		memcpy(s, arg, n);
		s[n] = 0;
	}
	return s;
}

/* One "FIRST_LINE\tLABEL\n" line per program (-n, -s, -P ...), its
 * first line the one it starts at in the assembled TEXT of LEN bytes:
 * dtrace(8) prints a matched line per program (output/dtrace.c). */
static int add_label(char **label, size_t *cap, const char *text, size_t len,
		     const char *fmt, const char *arg)
{
	unsigned line = 1;
	for (size_t i = 0; i < len; i++)
		line += text[i] == '\n';
	size_t have = *label ? strlen(*label) : 0;
	size_t need = have + strlen(fmt) + strlen(arg) + 16;
	if (need > *cap) {
		char *grown = realloc(*label, need);
		if (!grown)
			return -ENOMEM;
		*label = grown;
		*cap = need;
	}
	char *at = *label + have;
	at += sprintf(at, "%u\t", line);
	at += sprintf(at, fmt, arg);
	strcpy(at, "\n");
	return 0;
}

int dtrace_cli_program(struct dtrace_cli *d, char **text, char **label,
		       const char **name)
{
	size_t cap = 1, len = 0, lcap = 0;
	char *out = malloc(cap);
	if (!out)
		return -ENOMEM;
	out[0] = 0;
	*label = NULL;
	*name = "stdin";
	for (int i = 0; i < d->nprogs; i++) {
		const char *arg = d->progs[i].arg;
		char *piece = NULL;
		size_t plen = 0;
		switch (d->progs[i].kind) {
		case 's':
			piece = file_read(arg, &plen);
			if (!piece) {
				int e = errno;
				fprintf(stderr, "dtrace: failed to open %s: %s\n",
					arg, strerror(e));
				free(out);
				free(*label);
				*label = NULL;
				return -e;
			}
			if (memchr(piece, 0, plen)) {
				fprintf(stderr, "dtrace: failed to compile script "
					"%s: the file holds a NUL byte\n", arg);
				free(piece);
				free(out);
				free(*label);
				*label = NULL;
				return -EINVAL;
			}
			if (add_label(label, &lcap, out, len, "script '%s'",
				      arg) < 0) {
				free(piece);
				goto nomem;
			}
			if (i == 0)     /* errors name the first program */
				*name = arg;
			break;
		default: {
			const char *fmt = d->progs[i].kind == 'n' ? "%s" :
				d->progs[i].kind == 'P' ? "%s:::" :
				d->progs[i].kind == 'm' ? ":%s::" : "::%s:";
			plen = strlen(arg) + 4;
			piece = malloc(plen + 1);
			if (piece)
				snprintf(piece, plen + 1, fmt, arg);
			plen = piece ? strlen(piece) : 0;
			if (piece) {
				char *dn = desc_name(piece);
				int r = add_label(label, &lcap, out, len,
						  "description '%s'",
						  dn ? dn : "");
				free(dn);
				if (r < 0) {
					free(piece);
					goto nomem;
				}
				if (!d->spec)
					d->spec = arg;
			}
		}
		}
		if (!piece)
			goto nomem;
		/* a #! line stays first only in the first piece */
		char *grown = realloc(out, cap + plen + 2);
		if (!grown) {
			free(piece);
			goto nomem;
		}
		out = grown;
		if (i && piece[0] == '#' && piece[1] == '!')
			piece[0] = piece[1] = ' ';
		/* -l: descriptions without bodies, one after another, are
		 * one list of descriptions */
		if (d->list && i && d->progs[i].kind != 's' &&
		    d->progs[i - 1].kind != 's' && len && out[len - 1] == '\n')
			out[len - 1] = ',';
		memcpy(out + len, piece, plen);
		len += plen;
		out[len++] = '\n';
		out[len] = 0;
		cap += plen + 1;
		free(piece);
	}
	*text = out;
	return 0;
nomem:
	free(out);
	free(*label);
	*label = NULL;
	return -ENOMEM;
}

/* The text the diagnostic's position spans in the script (a probe
 * description), or NULL. */
static char *span_text(const struct diags *ds, struct pos pos)
{
	const char *t = ds->src ? ds->src->text : NULL;
	if (!t || !pos.line || pos.file || !pos.col || !pos.len)
		return NULL;
	for (unsigned l = 1; l < pos.line; l++) {
		t = strchr(t, '\n');
		if (!t)
			return NULL;
		t++;
	}
	size_t linelen = strcspn(t, "\n");
	if (pos.col - 1 + pos.len > linelen)
		return NULL;
	return strndup(t + pos.col - 1, pos.len);
}

/* The message with D's names for what the front end made of them:
 * @.self.x is self->x, @.x the global x, $this_x this->x (malloc'd). */
static char *d_names(const char *msg)
{
	static const char *const from[] = { "@.self.", "$this_", "this_",
					    "@." };
	static const char *const to[] = { "self->", "this->", "this->", "" };
	size_t cap = strlen(msg) * 2 + 1, n = 0;
	char *out = malloc(cap);
	if (!out)
		return NULL;
	for (const char *c = msg; *c;) {
		size_t i = 0;
		while (i < 4 && strncmp(c, from[i], strlen(from[i])))
			i++;
		if (i < 4) {
			n += (size_t)sprintf(out + n, "%s", to[i]);
			c += strlen(from[i]);
		} else {
			out[n++] = *c++;
		}
	}
	out[n] = 0;
	return out;
}

/* "dtrace: failed to compile script x.d: line 3: message": the first
 * error, as DTrace stops at it (-n: "invalid probe specifier TEXT").
 * A probe that matches nothing is said in DTrace's words. */
void dtrace_cli_diags(const struct dtrace_cli *d, const struct diags *ds,
		      const char *name, FILE *f)
{
	for (size_t i = 0; i < ds->list.n; i++) {
		const struct diag *g0 = &ds->list.v[i];
		struct diag one = *g0;
		const struct diag *g = &one;
		char *desc = NULL, *msg = NULL;
		if (g0->level == DIAG_ERROR && g0->tag &&
		    (!strcmp(g0->tag, "NO_MATCH") || !strcmp(g0->tag, "NO_SYMBOL") ||
		     !strcmp(g0->tag, "NO_PROBE")) &&
		    (desc = span_text(ds, g0->pos)) &&
		    asprintf(&msg, "probe description %s does not match any "
			     "probes (%s)", desc, g0->msg) > 0)
			one.msg = msg;
		free(desc);
		if (one.msg == g0->msg && (msg = d_names(g0->msg)))
			one.msg = msg;
		if (g0->tag && !strcmp(g0->tag, "UNDEF_MAP") &&
		    !strncmp(g0->msg, "map @.", 6)) {
			/* DTrace's words for a variable never assigned */
			char *var = d_names(g0->msg + 4);
			if (var) {
				var[strcspn(var, " ")] = 0;
				if (one.msg != g0->msg)
					free(one.msg);
				if (asprintf(&one.msg, "failed to resolve %s: "
					     "Unknown variable name", var) < 0)
					one.msg = (char *)g0->msg;
				free(var);
			}
		}
		if (g->level == DIAG_WARNING && d->zdefs && g0->tag &&
		    (!strcmp(g0->tag, "NO_MATCH") ||
		     !strcmp(g0->tag, "NO_SYMBOL") ||
		     !strcmp(g0->tag, "NO_PROBE"))) {
			/* -Z: a description that matches nothing is said
			 * only by its "matched 0 probes" line */
			if (one.msg != g0->msg)
				free(one.msg);
			continue;
		}
		if (g->level == DIAG_WARNING) {
			fprintf(f, "dtrace: warning: %s\n", g->msg);
			if (one.msg != g0->msg)
				free(one.msg);
			continue;
		}
		if (g0->tag && !strcmp(g0->tag, "UNSAFE")) {
			/* a destructive action without -w: dtrace(8) fails to
			 * enable the program, named as it was given */
			fprintf(f, "dtrace: failed to enable '%s': destructive "
				"actions not allowed\n",
				d->spec && !strcmp(name, "stdin") ? d->spec : name);
			if (one.msg != g0->msg)
				free(one.msg);
			return;
		}
		if (!g->pos.line)   /* -x options, before any script line */
			fprintf(f, "dtrace: %s\n", g->msg);
		else if (d->spec && !strcmp(name, "stdin"))
			fprintf(f, "dtrace: invalid probe specifier %s: %s\n",
				d->spec, g->msg);
		else if (g->pos.line)
			fprintf(f, "dtrace: failed to compile script %s: line "
				"%u: %s\n", name, g->pos.line, g->msg);
		else
			fprintf(f, "dtrace: failed to compile script %s: %s\n",
				name, g->msg);
		if (one.msg != g0->msg)
			free(one.msg);
		return;
	}
}

void dtrace_cli_list(const struct program *prog, FILE *f)
{
	fprintf(f, "%5s %10s %17s %33s %s\n", "ID", "PROVIDER", "MODULE",
		"FUNCTION", "NAME");
	for (uint32_t i = 0; i < prog->nprobes; i++) {
		const struct probe *p = &prog->probes[i];
#define S(k) (p->dname[k] ? p->dname[k] : "")
		fprintf(f, "%5u %10s %17s %33s %s\n", i + 1, S(0), S(1), S(2),
			S(3));
#undef S
	}
}
