/* options.c - the command line (bpftrace 0.17's options and sonde's own)
 * and the BPFTRACE_* environment variables. */
#include "options.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"

void options_usage(FILE *f)
{
	fputs("usage: sonde [options] (-e 'PROGRAM' | FILE) [--] [ARGS...]\n"
	      "       sonde -l ['PATTERN']\n"
	      "\n"
	      "options:\n"
	      "  -e PROGRAM        program text\n"
	      "  -p PID            trace that process\n"
	      "  -c CMD            run CMD once every probe is attached; exit with it\n"
	      "  -o FILE           write output to FILE\n"
	      "  -f text|json      output format\n"
	      "  -B line|full|none output buffering: flushed after every batch of\n"
	      "                    events (line, the default), when the buffer is\n"
	      "                    full, or not buffered\n"
	      "  -q                no 'Attaching' line\n"
	      "  -v                verbose: what is attached, verifier logs\n"
	      "  -l [PATTERN]      list probes\n"
	      "  -d, --dump=ast|bpf  print the AST or the bytecode, then exit\n"
	      "  --dry-run         compile and check, attach nothing\n"
	      "  --engine=kernel|process\n"
	      "                    where the probes run: in the kernel (BPF, root;\n"
	      "                    the default), or inside the traced process (-c\n"
	      "                    CMD; usdt, BEGIN, END and interval probes; no\n"
	      "                    root needed for one's own programs)\n"
	      "  --unsafe          allow system() and signal()\n"
	      "  -I DIR            search DIR for #include files (before the\n"
	      "                    system directories; repeatable)\n"
	      "  --include FILE    #include FILE before the script (repeatable)\n"
	      "  --flamegraph=FILE write an interactive SVG flame graph of the maps\n"
	      "                    keyed by kstack/ustack (counts) to FILE at exit\n"
	      "  --folded=FILE     the same stacks as folded text (flamegraph.pl,\n"
	      "                    speedscope, inferno)\n"
	      "  --ustack=dwarf[:BYTES]|fp\n"
	      "                    how ustack walks user stacks: copy BYTES of stack\n"
	      "                    (default 8192) and unwind them with the binaries'\n"
	      "                    CFI, whole even without frame pointers (default);\n"
	      "                    or follow frame pointers in the kernel (cheaper)\n"
	      "  -V, --version     print the version\n"
	      "  -h, --help        this text\n", f);
}

/* --ustack=fp | dwarf | dwarf:BYTES (a multiple of 4096, 4 KiB to
 * 64 KiB: the bytes go through the ring for every ustack). */
static int parse_ustack(const char *arg, struct options *o)
{
	if (strcmp(arg, "fp") == 0) {
		o->ustack_fp = true;
		return 0;
	}
	if (strncmp(arg, "dwarf", 5) == 0 && (!arg[5] || arg[5] == ':')) {
		o->ustack_fp = false;
		if (!arg[5])
			return 0;
		char *end;
		unsigned long v = strtoul(arg + 6, &end, 0);
		if (!*end && v >= 4096 && v <= 65536 && v % 4096 == 0) {
			o->ustack_copy = (uint32_t)v;
			return 0;
		}
		log_error("--ustack: '%s' is not a stack size (4096 to 65536, "
			  "a multiple of 4096)", arg + 6);
		return -EINVAL;
	}
	log_error("--ustack: unknown mode '%s' (dwarf, dwarf:BYTES or fp)", arg);
	return -EINVAL;
}

/* Returns 0, or EXIT_SCRIPT with a message printed. */
int options_parse(int argc, char **argv, struct options *o)
{
	enum { OPT_DRY_RUN = 256, OPT_UNSAFE, OPT_DUMP, OPT_USTACK,
	       OPT_FLAMEGRAPH, OPT_FOLDED, OPT_ENGINE, OPT_INCLUDE };
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
		{ "unsafe", no_argument, NULL, OPT_UNSAFE },
		{ "dump", required_argument, NULL, 'd' },
		{ "ustack", required_argument, NULL, OPT_USTACK },
		{ "flamegraph", required_argument, NULL, OPT_FLAMEGRAPH },
		{ "folded", required_argument, NULL, OPT_FOLDED },
		{ "engine", required_argument, NULL, OPT_ENGINE },
		{ "include", required_argument, NULL, OPT_INCLUDE },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	/* '+': stop at the first non-option so script ARGS are left alone. */
	while ((c = getopt_long(argc, argv, "+e:p:c:o:f:B:qvld:hVI:", longopts,
				NULL)) != -1) {
		switch (c) {
		case 'e': o->program_text = optarg; break;
		case 'c': o->cmd = optarg; break;
		case 'o': o->out_file = optarg; break;
		case 'B':
			if (strcmp(optarg, "line") == 0)
				o->buffering = BUF_LINE;
			else if (strcmp(optarg, "full") == 0)
				o->buffering = BUF_FULL;
			else if (strcmp(optarg, "none") == 0)
				o->buffering = BUF_NONE;
			else {
				log_error("-B must be either 'line', 'full', "
					  "or 'none'");
				return EXIT_SCRIPT;
			}
			break;
		case 'q': o->quiet = true; break;
		case 'v': log_verbose = 1; break;
		case 'l': o->list = true; break;
		case OPT_DRY_RUN: o->dry_run = true; break;
		case OPT_UNSAFE: o->unsafe = true; break;
		case OPT_FLAMEGRAPH: o->flamegraph = optarg; break;
		case 'I':
			if (o->ninclude_dirs == OPTIONS_MAX_INCLUDES) {
				log_error("-I: more than %d directories",
					  OPTIONS_MAX_INCLUDES);
				return EXIT_SCRIPT;
			}
			o->include_dirs[o->ninclude_dirs++] = optarg;
			break;
		case OPT_INCLUDE:
			if (o->ninclude_files == OPTIONS_MAX_INCLUDES) {
				log_error("--include: more than %d files",
					  OPTIONS_MAX_INCLUDES);
				return EXIT_SCRIPT;
			}
			o->include_files[o->ninclude_files++] = optarg;
			break;
		case OPT_FOLDED: o->folded = optarg; break;
		case OPT_ENGINE:
			o->engine = engine_find(optarg);
			if (!o->engine) {
				log_error("--engine: unknown engine '%s' (kernel or "
					  "process)", optarg);
				return EXIT_SCRIPT;
			}
			break;
		case OPT_USTACK:
			if (parse_ustack(optarg, o) < 0)
				return EXIT_SCRIPT;
			break;
		case 'p': {
			char *end;
			long v = strtol(optarg, &end, 10);
			if (*end || v <= 0 || v > 0x7fffffff) {
				log_error("-p: '%s' is not a process id", optarg);
				return EXIT_SCRIPT;
			}
			o->pid = (int)v;
			break;
		}
		case 'f':
			if (strcmp(optarg, "text") == 0)
				o->format = OUTPUT_TEXT;
			else if (strcmp(optarg, "json") == 0) {
				o->format = OUTPUT_JSON;
				log_json = 1;
			}
			else {
				log_error("-f: unknown output format '%s' (text or json)",
					  optarg);
				return EXIT_SCRIPT;
			}
			break;
		case 'd':
			if (strcmp(optarg, "ast") && strcmp(optarg, "bpf")) {
				log_error("--dump: unknown dump '%s' (ast or bpf)",
					  optarg);
				return EXIT_SCRIPT;
			}
			o->dump = optarg;
			break;
		case 'h': options_usage(stdout); exit(EXIT_OK);
		case 'V': printf("sonde v%s\n", SONDE_VERSION); exit(EXIT_OK);
		default: options_usage(stderr); return EXIT_SCRIPT;
		}
	}
	if (o->list) {
		if (optind < argc)
			o->list_pattern = argv[optind++];
		return 0;
	}
	if (!o->program_text) {
		if (optind >= argc) {
			log_error("no program given (use -e 'PROGRAM' or a script FILE)");
			options_usage(stderr);
			return EXIT_SCRIPT;
		}
		o->script_file = argv[optind++];
	}
	if (optind < argc && strcmp(argv[optind], "--") == 0)
		optind++;
	o->positional = argv + optind;
	o->npositional = argc - optind;
	return 0;
}

uint32_t options_env_strlen(void)
{
	const char *s = getenv("BPFTRACE_STRLEN");
	if (!s)
		return 0;
	long v = strtol(s, NULL, 10);
	if (v < 1 || v > 200) {
		log_warn("BPFTRACE_STRLEN=%s ignored (1..200)", s);
		return 0;
	}
	return (uint32_t)v;
}

/* bpftrace's BPFTRACE_MAP_KEYS_MAX: the most keys a map holds. */
uint32_t options_env_map_keys_max(void)
{
	const char *s = getenv("BPFTRACE_MAP_KEYS_MAX");
	if (!s)
		return 0;
	char *end;
	unsigned long v = strtoul(s, &end, 10);
	if (!*s || *end || v < 1 || v > (1ul << 26)) {
		log_warn("BPFTRACE_MAP_KEYS_MAX=%s ignored (1..%lu)", s,
			 1ul << 26);
		return 0;
	}
	return (uint32_t)v;
}

