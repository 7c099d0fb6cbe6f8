/* options.c - the command line (bpftrace 0.17's options and sonde's own)
 * and the BPFTRACE_* environment variables. */
#include "options.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "probes/provider.h"

#define PID_MAX_LIMIT (4 * 1024 * 1024)   /* include/linux/threads.h, 64-bit */

/* bpftrace 0.17's -h, naming sonde, with sonde's own options after. */
void options_usage(FILE *f)
{
	fputs("USAGE:\n"
	      "    sonde [options] filename\n"
	      "    sonde [options] - <stdin input>\n"
	      "    sonde [options] -e 'program'\n"
	      "\n"
	      "OPTIONS:\n"
	      "    -B MODE        output buffering mode ('line', 'full', 'none')\n"
	      "    -f FORMAT      output format ('text', 'json')\n"
	      "    -o file        redirect sonde output to file\n"
	      "    -e 'program'   execute this program\n"
	      "    -h, --help     show this help message\n"
	      "    -I DIR         add the directory to the include search path\n"
	      "    --include FILE add an #include file before preprocessing\n"
	      "    -l [search]    list probes\n"
	      "    -p PID         enable USDT probes on PID\n"
	      "    -c 'CMD'       run CMD and enable USDT probes on resulting process\n"
	      "    --usdt-file-activation\n"
	      "                   activate usdt semaphores based on file path\n"
	      "    --unsafe       allow unsafe builtin functions\n"
	      "    -q             keep messages quiet\n"
	      "    --info         Print information about kernel BPF support\n"
	      "    -k             emit a warning when a bpf helper returns an error (except read functions)\n"
	      "    -kk            check all bpf helper functions\n"
	      "    -V, --version  sonde version\n"
	      "    --no-warnings  disable all warning messages\n"
	      "    --debuginfo DIR[:DIR]\n"
	      "                   also look for the debug files of stripped\n"
	      "                   programs there (matched by build ID)\n"
	      "    --mode run|bench\n"
	      "                   bench: time each bench:NAME probe, then end\n"
	      "    --probe-filter REGEX\n"
	      "                   only the probes whose name matches REGEX\n"
	      "                   (BEGIN and END always run)\n"
	      "\n"
	      "TROUBLESHOOTING OPTIONS:\n"
	      "    -v                      verbose messages\n"
	      "    -d, --dump=ast|bpf      (dry run) print the AST or the BPF bytecode\n"
	      "    --dry-run               (dry run) compile and check, attach nothing\n"
	      "\n"
	      "SONDE OPTIONS:\n"
	      "    --follow-forks          trace the -p process or the -c command and\n"
	      "                            every process it forks from then on (not\n"
	      "                            what they exec, but the probes' program)\n"
	      "    --dialect=VERSION       behave as that bpftrace (0.17 to 0.26)\n"
	      "                            where a later one changed what a script\n"
	      "                            prints or does (the attach line, exiting\n"
	      "                            after begin, ...); both languages are\n"
	      "                            accepted either way (default: 0.17)\n"
	      "    --traceable-functions=FILE\n"
	      "                            the kernel functions kprobes may trace\n"
	      "                            (available_filter_functions' format),\n"
	      "                            read from FILE instead of tracefs\n"
	      "    --engine=kernel|process where the probes run: in the kernel (BPF,\n"
	      "                            root; the default), or inside the traced\n"
	      "                            process (-c CMD or -p PID; uprobe,\n"
	      "                            uretprobe, usdt, BEGIN, END and interval\n"
	      "                            probes; no root needed for one's own\n"
	      "                            programs)\n"
	      "    --flamegraph=FILE       write an interactive SVG flame graph of the\n"
	      "                            maps keyed by kstack/ustack to FILE at exit\n"
	      "    --folded=FILE           the same stacks as folded text\n"
	      "                            (flamegraph.pl, speedscope, inferno)\n"
	      "    --pprof=FILE            write the maps keyed by kstack/ustack as a\n"
	      "                            gzipped pprof profile to FILE at exit\n"
	      "                            (go tool pprof, Pyroscope, Parca)\n"
	      "    --pprof-unit=@MAP:UNIT  the unit of a sum() map's values in the\n"
	      "                            profile (nanoseconds, bytes, ...)\n"
	      "    --metrics=[HOST:]PORT   serve the maps as Prometheus metrics\n"
	      "                            (OpenMetrics) at http://HOST:PORT/metrics\n"
	      "                            while the program runs; HOST defaults to\n"
	      "                            127.0.0.1 (0.0.0.0 or [::] for every\n"
	      "                            interface)\n"
	      "    --metrics-labels=@MAP:NAME[,NAME...]\n"
	      "                            name the labels of MAP's key fields\n"
	      "                            (default: key, or key0, key1, ...; stacks:\n"
	      "                            stack)\n"
	      "    --metrics-maps=@MAP[,@MAP...]\n"
	      "                            serve only these maps (default: every\n"
	      "                            aggregation; maps of plain integers only\n"
	      "                            when named here)\n"
	      "    --ustack=dwarf[:BYTES]|fp\n"
	      "                            how ustack walks user stacks: copy BYTES of\n"
	      "                            stack (default 8192) and unwind them with\n"
	      "                            the binaries' CFI (default), or follow frame\n"
	      "                            pointers in the kernel\n"
	      "\n"
	      "ENVIRONMENT:\n"
	      "    BPFTRACE_STRLEN             [default: 64] bytes on BPF stack per str()\n"
	      "    BPFTRACE_NO_CPP_DEMANGLE    [default: 0] disable C++ symbol demangling\n"
	      "    BPFTRACE_MAP_KEYS_MAX       [default: 4096] max keys in a map\n"
	      "    BPFTRACE_CAT_BYTES_MAX      [default: 10k] maximum bytes read by cat builtin\n"
	      "    BPFTRACE_MAX_PROBES         [default: 512] max number of probes\n"
	      "    BPFTRACE_MAX_BPF_PROGS      [default: 512] max number of generated BPF programs\n"
	      "    BPFTRACE_LOG_SIZE           [default: 1000000] log size in bytes\n"
	      "    BPFTRACE_PERF_RB_PAGES      [default: 64] pages per CPU to allocate for ring buffer\n"
	      "    BPFTRACE_NO_USER_SYMBOLS    [default: 0] disable user symbol resolution\n"
	      "    BPFTRACE_CACHE_USER_SYMBOLS [default: auto] enable user symbol cache\n"
	      "    BPFTRACE_VMLINUX            [default: none] vmlinux path used for kernel symbol resolution\n"
	      "    BPFTRACE_BTF                [default: none] BTF file\n"
	      "\n"
	      "EXAMPLES:\n"
	      "sonde -l '*sleep*'\n"
	      "    list probes containing \"sleep\"\n"
	      "sonde -e 'kprobe:do_nanosleep { printf(\"PID %d sleeping...\\n\", pid); }'\n"
	      "    trace processes calling sleep\n"
	      "sonde -e 'tracepoint:raw_syscalls:sys_enter { @[comm] = count(); }'\n"
	      "    count syscalls by process name\n", f);
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
/* -p PID: a decimal number in [1, PID_MAX_LIMIT] (the kernel's ceiling
 * on 64-bit, whatever pid_max is set to): 0 and *pid, else -1. */
static int pid_parse(const char *arg, int *pid)
{
	char *end;
	errno = 0;
	long v = strtol(arg, &end, 10);
	if (end == arg || *end || errno || v < 1 || v > PID_MAX_LIMIT)
		return -1;
	*pid = (int)v;
	return 0;
}

/* Why pid_parse refused arg, as bpftrace says it: 0.17's two messages,
 * or 0.26's three (what its runtime tests expect: basic's "pid fails
 * validation" and "pid outside of valid pid range"). */
static void pid_report(const char *arg, enum dialect d)
{
	char *end;
	(void)strtol(arg, &end, 10);
	if (d >= DIALECT_026) {
		if (end == arg)
			log_error("Failed to parse pid: invalid integer: %s",
				  arg);
		else if (*end)
			log_error("Failed to parse pid: invalid trailing "
				  "bytes: %s", arg);
		else
			log_error("Pid out of range: %s", arg);
	} else if (end == arg || *end) {
		log_error("pid '%s' is not a valid decimal number", arg);
	} else {
		log_error("pid '%s' out of valid pid range [1,%d]", arg,
			  PID_MAX_LIMIT);
	}
}

/* --debuginfo's copies of its arguments: the directories' storage for
 * the whole run, held here (a leak checker sees only pointers into them
 * otherwise) */
static char *debuginfo_kept[OPTIONS_MAX_INCLUDES] __attribute__((used));
static size_t nkept;

int options_parse(int argc, char **argv, struct options *o)
{
	enum { OPT_DRY_RUN = 256, OPT_UNSAFE, OPT_DUMP, OPT_USTACK,
	       OPT_FLAMEGRAPH, OPT_FOLDED, OPT_ENGINE, OPT_INFO,
	       OPT_NO_WARNINGS, OPT_USDT_FILE_ACTIVATION, OPT_INCLUDE,
	       OPT_METRICS, OPT_METRICS_LABELS, OPT_METRICS_MAPS, OPT_PPROF,
	       OPT_PPROF_UNIT, OPT_FOLLOW_FORKS, OPT_DIALECT, OPT_VERIFY_IR,
	       OPT_PROBE_FILTER, OPT_MODE, OPT_BENCH, OPT_DEBUGINFO,
	       OPT_TRACEABLE };
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
		{ "info", no_argument, NULL, OPT_INFO },
		{ "no-warnings", no_argument, NULL, OPT_NO_WARNINGS },
		{ "follow-forks", no_argument, NULL, OPT_FOLLOW_FORKS },
		{ "usdt-file-activation", no_argument, NULL,
		  OPT_USDT_FILE_ACTIVATION },
		{ "include", required_argument, NULL, OPT_INCLUDE },
		{ "metrics", required_argument, NULL, OPT_METRICS },
		{ "metrics-labels", required_argument, NULL, OPT_METRICS_LABELS },
		{ "metrics-maps", required_argument, NULL, OPT_METRICS_MAPS },
		{ "pprof", required_argument, NULL, OPT_PPROF },
		{ "pprof-unit", required_argument, NULL, OPT_PPROF_UNIT },
		{ "dialect", required_argument, NULL, OPT_DIALECT },
		/* bpftrace's own debugging option (its LLVM IR checked):
		 * sonde has no IR, and bpftrace 0.26's test runner passes
		 * it to every command */
		{ "verify-llvm-ir", no_argument, NULL, OPT_VERIFY_IR },
		/* long forms of -p, -c and -o that bpftrace 0.2x accepts
		 * (its runtime tests pass --pid, --cmd and --output) */
		{ "pid", required_argument, NULL, 'p' },
		{ "cmd", required_argument, NULL, 'c' },
		{ "output", required_argument, NULL, 'o' },
		{ "probe-filter", required_argument, NULL, OPT_PROBE_FILTER },
		/* bpftrace 0.26: --mode bench runs the bench:NAME probes
		 * (language.md "bench" spells it --bench) */
		{ "mode", required_argument, NULL, OPT_MODE },
		{ "bench", no_argument, NULL, OPT_BENCH },
		{ "debuginfo", required_argument, NULL, OPT_DEBUGINFO },
		/* bpftrace 0.2x: -l's long form; the kernel functions
		 * kprobes may trace, from a file (available_filter_functions'
		 * format) instead of tracefs */
		{ "list", no_argument, NULL, 'l' },
		{ "traceable-functions", required_argument, NULL, OPT_TRACEABLE },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	const char *bad_pid = NULL;
	/* Options may follow the script file and its arguments, as getopt
	 * permutes them for bpftrace (`bpftrace script.bt -c CMD`, `-l
	 * PATTERN -p PID`); `--` ends the options, so ARGS that begin
	 * with '-' go after it. */
	while ((c = getopt_long(argc, argv, "e:p:c:o:f:B:qvld:hVkI:", longopts,
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
		case OPT_INFO: o->info = true; break;
		case OPT_FOLLOW_FORKS:
			o->follow_forks = true;
			break;
		case OPT_NO_WARNINGS:
			o->no_warnings = true;
			log_no_warnings = 1;
			break;
		/* sonde raises semaphores through the uprobe's reference
		 * counter (every kernel since 4.20): every process is
		 * activated, so, as in bpftrace with uprobe refcounts,
		 * this changes nothing. */
		case OPT_USDT_FILE_ACTIVATION: o->usdt_file_activation = true; break;
		case 'k':
			if (o->helper_check < 2)
				o->helper_check++;
			break;
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
		case OPT_METRICS: o->metrics = optarg; break;
		case OPT_METRICS_MAPS: o->metrics_maps = optarg; break;
		case OPT_METRICS_LABELS:
			if (o->nmetrics_labels == OPTIONS_MAX_INCLUDES) {
				log_error("--metrics-labels: more than %d maps",
					  OPTIONS_MAX_INCLUDES);
				return EXIT_SCRIPT;
			}
			o->metrics_labels[o->nmetrics_labels++] = optarg;
			break;
		case OPT_PPROF: o->pprof = optarg; break;
		case OPT_PPROF_UNIT:
			if (o->npprof_units == OPTIONS_MAX_INCLUDES) {
				log_error("--pprof-unit: more than %d maps",
					  OPTIONS_MAX_INCLUDES);
				return EXIT_SCRIPT;
			}
			o->pprof_units[o->npprof_units++] = optarg;
			break;
		case OPT_ENGINE:
			o->engine = engine_find(optarg);
			if (!o->engine) {
				log_error("--engine: unknown engine '%s' (kernel or "
					  "process)", optarg);
				return EXIT_SCRIPT;
			}
			break;
		case OPT_DIALECT:
			if (dialect_parse(optarg, &o->dialect) < 0) {
				log_error("--dialect: unknown bpftrace version '%s' "
					  "(0.17 to 0.26)", optarg);
				return EXIT_SCRIPT;
			}
			break;
		case OPT_VERIFY_IR: break;
		case OPT_PROBE_FILTER: o->probe_filter = optarg; break;
		case OPT_BENCH: o->bench = true; break;
		case OPT_DEBUGINFO: {
			/* DIR[:DIR...], and the option repeated */
			if (nkept == OPTIONS_MAX_INCLUDES) {
				log_error("--debuginfo: at most %d times",
					  OPTIONS_MAX_INCLUDES);
				return EXIT_SCRIPT;
			}
			char *copy = strdup(optarg), *save = NULL;
			if (!copy) {
				log_error("--debuginfo: out of memory");
				return EXIT_SCRIPT;
			}
			debuginfo_kept[nkept++] = copy;
			for (char *d = strtok_r(copy, ":", &save); d;
			     d = strtok_r(NULL, ":", &save)) {
				if (o->ndebuginfo == OPTIONS_MAX_INCLUDES) {
					log_error("--debuginfo: at most %d "
						  "directories",
						  OPTIONS_MAX_INCLUDES);
					return EXIT_SCRIPT;
				}
				o->debuginfo[o->ndebuginfo++] = d;
			}
			break;
		}
		case OPT_MODE:
			if (strcmp(optarg, "bench") == 0)
				o->bench = true;
			else if (strcmp(optarg, "run") == 0)
				o->bench = false;
			else {
				log_error("--mode: unknown mode '%s' (run or "
					  "bench)", optarg);
				return EXIT_SCRIPT;
			}
			break;
		case OPT_TRACEABLE: {
			int tr = kfuncs_set_source(optarg);
			if (tr < 0) {
				log_error("--traceable-functions: cannot read "
					  "'%s': %s", optarg, tr == -EFBIG ?
					  "larger than any kernel's list of "
					  "functions (64 MiB)" : strerror(-tr));
				return EXIT_SCRIPT;
			}
			break;
		}
		case OPT_USTACK:
			if (parse_ustack(optarg, o) < 0)
				return EXIT_SCRIPT;
			break;
		case 'p':
			/* reported after the loop, in the words of the
			 * dialect (--dialect may come later) */
			if (pid_parse(optarg, &o->pid) < 0 && !bad_pid)
				bad_pid = optarg;
			break;
		case 'f':
			if (!output_format_exists(optarg)) {
				log_error("Invalid output format \"%s\"\n"
					  "Valid formats: %s", optarg,
					  output_format_names());
				return EXIT_SCRIPT;
			}
			o->format = optarg;
			log_set_line(output_format_log_line(optarg));
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
	if (bad_pid) {
		pid_report(bad_pid, o->dialect);
		return EXIT_SCRIPT;
	}
	if (options_env(&o->env, o->dialect) < 0)
		return EXIT_SCRIPT;
	if (o->follow_forks && !o->pid && !o->cmd && !o->list) {
		log_error("--follow-forks follows the process of -p PID or -c CMD: "
			  "give one");
		return EXIT_SCRIPT;
	}
	if (o->info)
		return 0;
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

/* ---- BPFTRACE_* ----------------------------------------------------- */

/* An unsigned number in [min, max], or an error naming the variable. */
static int env_uint(const char *name, uint64_t min, uint64_t max,
		    uint64_t *out)
{
	const char *s = getenv(name);
	if (!s)
		return 0;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (!*s || *end || errno || *s == '-' || v < min || v > max) {
		log_error("%s='%s': expected a number from %llu to %llu", name, s,
			  (unsigned long long)min, (unsigned long long)max);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

/* 0 or 1, as bpftrace accepts them. */
static int env_bool(const char *name, int *out)
{
	const char *s = getenv(name);
	if (!s)
		return 0;
	if (strcmp(s, "0") && strcmp(s, "1")) {
		log_error("%s='%s': expected 0 or 1", name, s);
		return -EINVAL;
	}
	*out = s[0] == '1';
	return 0;
}

/* BPFTRACE_CACHE_USER_SYMBOLS: 0 or 1 (bpftrace 0.17), or from 0.20
 * the names its config's cache_user_symbols takes: PER_PROGRAM and
 * PER_PID (1), NONE (0). */
static int env_cache(const char *name, enum dialect d, int *out)
{
	const char *s = getenv(name);
	if (!s || d < DIALECT_020)
		return env_bool(name, out);
	if (!strcmp(s, "PER_PROGRAM") || !strcmp(s, "PER_PID") ||
	    !strcmp(s, "NONE")) {
		*out = s[1] != 'O';
		return 0;
	}
	if (strcmp(s, "0") && strcmp(s, "1")) {
		log_error("%s='%s': expected PER_PROGRAM, PER_PID or NONE",
			  name, s);
		return -EINVAL;
	}
	*out = s[0] == '1';
	return 0;
}

/* A file that must be there when named. */
static int env_file(const char *name, const char **out)
{
	const char *s = getenv(name);
	if (!s)
		return 0;
	if (!*s || access(s, R_OK) < 0) {
		log_error("%s='%s': %s", name, s, *s ? strerror(errno) :
			  "empty");
		return -EINVAL;
	}
	*out = s;
	return 0;
}

int options_env(struct options_env *env, enum dialect d)
{
	uint64_t strlen_ = 0, keys = 0, cat = 0, log = 0, probes = 0,
		progs = 0, pages = 0;
	int demangle = 0, nosyms = 0, cache = -1;
	memset(env, 0, sizeof(*env));
	/* strings live on the 512-byte BPF stack: 200 at most, as in
	 * bpftrace */
	if (env_uint("BPFTRACE_STRLEN", 1, 200, &strlen_) ||
	    env_uint("BPFTRACE_MAP_KEYS_MAX", 1, 1u << 26, &keys) ||
	    env_uint("BPFTRACE_CAT_BYTES_MAX", 1, 1ull << 30, &cat) ||
	    env_uint("BPFTRACE_LOG_SIZE", 1, 1u << 30, &log) ||
	    env_uint("BPFTRACE_MAX_PROBES", 1, 1000000, &probes) ||
	    env_uint("BPFTRACE_MAX_BPF_PROGS", 1, 1000000, &progs) ||
	    env_uint("BPFTRACE_PERF_RB_PAGES", 1, 1u << 20, &pages) ||
	    env_bool("BPFTRACE_NO_CPP_DEMANGLE", &demangle) ||
	    env_bool("BPFTRACE_NO_USER_SYMBOLS", &nosyms) ||
	    env_cache("BPFTRACE_CACHE_USER_SYMBOLS", d, &cache) ||
	    env_file("BPFTRACE_VMLINUX", &env->vmlinux) ||
	    env_file("BPFTRACE_BTF", &env->btf))
		return -EINVAL;
	env->strlen = (uint32_t)strlen_;
	env->map_keys_max = (uint32_t)keys;
	env->cat_bytes_max = cat;
	env->log_size = log;
	env->max_probes = (uint32_t)probes;
	env->max_bpf_progs = (uint32_t)progs;
	env->perf_rb_pages = (uint32_t)pages;
	env->no_cpp_demangle = demangle;
	env->no_user_symbols = nosyms;
	env->cache_user_symbols = cache;
	return 0;
}
