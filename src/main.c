/* main.c - the wiring of compiler, engine and output for one run, exit
 * codes; the options themselves are parsed in options.c. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <wordexp.h>

#include "base/cancel.h"
#include "base/diag.h"
#include "base/file.h"
#include "base/log.h"
#include "base/outfile.h"
#include "base/procexit.h"
#include "codegen/codegen.h"
#include "cmdcheck.h"
#include "compile.h"
#include "dtrace_cli.h"
#include "elf/elf.h"
#include "engine.h"
#include "export/metrics.h"
#include "export/pprof.h"
#include "info.h"
#include "lang/frontend.h"
#include "options.h"
#include "output/output.h"
#include "output/pcap.h"
#include "preflight.h"
#include "probes/provider.h"

/* Process-wide: set by the signal handler, read by the event loop (a
 * stop signal sets base/cancel.h's cancel_signal). */
static volatile sig_atomic_t child_exited;
static volatile sig_atomic_t maps_requested;   /* SIGUSR1 */

/* run()'s result when a signal stopped it before the run began: main
 * releases everything, then dies of that signal (cancel_die). */
#define RUN_INTERRUPTED (-1)

static char *read_file(const char *path, size_t *len)
{
	return strcmp(path, "-") == 0 ? file_read_fd(0, len) :
					 file_read(path, len);
}

static void on_signal(int sig)
{
	if (sig == SIGCHLD)
		child_exited = 1;
	else if (sig == SIGUSR1)
		maps_requested = 1;
	else
		cancel_request(sig);
}

static void install_signals(void)
{
	/* SA_RESTART: a write to a slow reader must not fail with EINTR
	 * when the -c child exits or the user presses ^C (stdio drops the
	 * buffered output of a failed write). The ring-buffer wait is
	 * epoll_wait, which a signal interrupts whatever the flag says, so
	 * signals still end the wait at once. */
	struct sigaction sa = { .sa_handler = on_signal, .sa_flags = SA_RESTART };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGCHLD, &sa, NULL);
	/* bpftrace prints every map on SIGUSR1 (handled in the run loop) */
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/* -c: the child is forked at once but blocks on a pipe until every probe
 * is attached, so nothing it does before then escapes the trace. The
 * release is a 'g' followed by the environment the engine wants the
 * command to start with ("NAME=VALUE\0" strings), then EOF. */
#define CHILD_ENV_MAX 65536
struct child {
	pid_t pid;
	int release_fd;
	bool traced;        /* held at its exit (see child_hold_exit) */
	bool ending;        /* sonde signals it to end: its death is no news */
	/* its program on $PATH is a script (a shim?): checked at its exit
	 * stop against the probes' files (cmdcheck.c), kernel engine */
	bool shim_check;
	const struct program *prog;
	char shim_name[256], shim_path[PATH_MAX];
};

/* A traced program that a signal killed: said, whatever the script
 * prints (a crash is what the user must hear of first). */
static void say_signalled(const char *who, int pid, int status)
{
	if (!WIFSIGNALED(status))
		return;
	int sig = WTERMSIG(status);
	log_warn("%s %d was killed by signal %d (%s)%s", who, pid, sig,
		 strsignal(sig), WCOREDUMP(status) ? ", core dumped" : "");
}

static int child_spawn(const char *cmd, struct child *ch)
{
	wordexp_t w;
	if (wordexp(cmd, &w, WRDE_NOCMD) != 0 || w.we_wordc == 0) {
		log_error("-c: cannot parse command '%s'", cmd);
		return -EINVAL;
	}
	int fds[2];
	if (pipe2(fds, O_CLOEXEC) < 0) {
		wordfree(&w);
		return -errno;
	}
	/* The child must not run sonde's handlers: a SIGTERM from
	 * child_end() between its release and its exec would only set its
	 * copy of the cancel flag, and the command would run on until the
	 * SIGKILL a second later. Signals wait (blocked) until it has the
	 * default actions back, SIGPIPE included (ignored by sonde, and an
	 * ignored signal stays ignored across exec). */
	sigset_t stop, old;
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGCHLD);
	sigprocmask(SIG_BLOCK, &stop, &old);
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		sigprocmask(SIG_SETMASK, &old, NULL);
		close(fds[0]);
		close(fds[1]);
		wordfree(&w);
		return -e;
	}
	if (pid == 0) {
		static char msg[CHILD_ENV_MAX + 1];
		size_t n = 0;
		ssize_t k;
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGCHLD, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		sigprocmask(SIG_SETMASK, &old, NULL);
		close(fds[1]);
		while (n < CHILD_ENV_MAX &&
		       (k = read(fds[0], msg + n, CHILD_ENV_MAX - n)) != 0) {
			if (k < 0 && errno == EINTR)
				continue;
			if (k < 0)
				break;
			n += (size_t)k;
		}
		/* EOF without a 'g' means sonde gave up: do not run. */
		if (n == 0 || msg[0] != 'g')
			_exit(127);
		msg[n] = '\0';
		for (size_t i = 1; i < n; i += strlen(msg + i) + 1)
			if (strchr(msg + i, '=') && putenv(msg + i) != 0)
				_exit(127);
		execvp(w.we_wordv[0], w.we_wordv);
		fprintf(stderr, "ERROR: -c: cannot run '%s': %s\n",
			w.we_wordv[0], strerror(errno));
		_exit(127);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	wordfree(&w);
	close(fds[0]);
	ch->pid = pid;
	ch->release_fd = fds[1];
	return 0;
}

/* Start the command, with env (NULL, or "NAME=VALUE" strings) added to
 * its environment. */
static void child_release(struct child *ch, const char *const *env)
{
	if (ch->release_fd < 0)
		return;
	char msg[CHILD_ENV_MAX];
	size_t n = 0;
	msg[n++] = 'g';
	for (size_t i = 0; env && env[i]; i++) {
		size_t len = strlen(env[i]) + 1;
		if (n + len > sizeof(msg)) {
			log_warn("-c: the command's environment is too large; "
				 "%s left out", env[i]);
			continue;
		}
		memcpy(msg + n, env[i], len);
		n += len;
	}
	for (size_t done = 0; done < n;) {
		ssize_t k = write(ch->release_fd, msg + done, n - done);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			log_warn("-c: could not start the command: %s",
				 strerror(errno));
			break;
		}
		done += (size_t)k;
	}
	close(ch->release_fd);
	ch->release_fd = -1;
}

/* A user address means something only with the mappings of its
 * process, which vanish when it exits. A -c command may well exit
 * before sonde has read the last records about it (copied user stacks
 * are unwound when read), so when the script keeps user stacks or
 * symbols the child is held at its exit with ptrace (PTRACE_O_TRACEEXIT:
 * the exit stop comes before its memory is torn down), the ring is
 * drained, and only then is it let go. Other stops (signals, job
 * control) pass through unchanged. Without ptrace (the command traces
 * itself, say) sonde does without. */
static void child_hold_exit(struct child *ch)
{
	if (ptrace(PTRACE_SEIZE, ch->pid, 0,
		   PTRACE_O_TRACEEXIT | PTRACE_O_EXITKILL) == 0)
		ch->traced = true;
	else
		log_info("-c: cannot hold the command at its exit (%s); "
			 "stacks of its last moments may not be symbolized",
			 strerror(errno));
}

static bool program_keeps_user_addresses(const struct program *prog)
{
	for (uint32_t i = 0; i < prog->nevents; i++)
		if (prog->events[i].kind == EV_USTACK ||
		    prog->events[i].kind == EV_NEW_PID)
			return true;
	return false;
}

/* Let a held child go on its own (sonde leaves before it ends): stop it
 * for a moment to detach, passing on a signal it was about to get. */
static void child_untrace(struct child *ch)
{
	if (ch->pid <= 0 || !ch->traced)
		return;
	ch->traced = false;
	if (ptrace(PTRACE_INTERRUPT, ch->pid, 0, 0) < 0)
		return;
	for (;;) {
		int status;
		pid_t r = waitpid(ch->pid, &status, __WALL);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 || !WIFSTOPPED(status))
			return;
		int event = status >> 16;
		int sig = event || WSTOPSIG(status) == SIGTRAP ? 0 :
			WSTOPSIG(status);
		ptrace(PTRACE_DETACH, ch->pid, 0, (void *)(uintptr_t)sig);
		return;
	}
}

static bool child_gone(struct child *ch, const struct engine_ops *eng,
		       struct engine *e, bool block);

/* The run ended while the -c command still runs: it is ended with the
 * run, as bpftrace does, after exit() as after a stop signal or a
 * failure (or if it never got to start): SIGTERM and, a second later,
 * SIGKILL, so sonde's own exit never waits on it (a command that ran on
 * kept sonde waiting for good, a stop signal restarting the wait). The
 * engine is gone by then: nothing to drain at its exit stop. */
static void child_end(struct child *ch, const struct engine_ops *eng)
{
	ch->ending = true;
	kill(ch->pid, SIGTERM);
	for (int i = 0; i < 100 && ch->pid > 0; i++) {
		if (child_gone(ch, eng, NULL, false))
			return;
		usleep(10 * 1000);
	}
	if (ch->pid > 0) {
		log_info("-c: the command did not end on SIGTERM within 1 s: "
			 "SIGKILL");
		kill(ch->pid, SIGKILL);
	}
	while (ch->pid > 0 && !child_gone(ch, eng, NULL, true))
		;
}

/* Reap the child if it has exited, after draining the ring at its exit
 * stop; true once it is gone. */
static bool child_gone(struct child *ch, const struct engine_ops *eng,
		       struct engine *e, bool block)
{
	if (ch->pid <= 0)
		return false;
	for (;;) {
		int status;
		pid_t r = waitpid(ch->pid, &status, (block ? 0 : WNOHANG) | __WALL);
		if (r == 0)
			return false;
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 || WIFEXITED(status) || WIFSIGNALED(status)) {
			if (r > 0 && !ch->ending)
				say_signalled("the -c command, process", ch->pid,
					      status);
			ch->pid = 0;
			return true;
		}
		if (!WIFSTOPPED(status) || !ch->traced)
			continue;
		int event = status >> 16;
		if (event == PTRACE_EVENT_EXIT) {
			if (e)
				eng->drain(e);
			if (ch->shim_check && !cmdcheck_maps_probed(ch->pid, ch->prog)) {
				char exe[64], ran[PATH_MAX];
				snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)ch->pid);
				ssize_t n = readlink(exe, ran, sizeof(ran) - 1);
				ran[n > 0 ? n : 0] = '\0';
				cmdcheck_report(ch->prog, ch->shim_name,
						ch->shim_path, ran);
			}
			ptrace(PTRACE_DETACH, ch->pid, 0, 0);
			ch->traced = false;
		} else if (event == PTRACE_EVENT_STOP) {
			ptrace(PTRACE_LISTEN, ch->pid, 0, 0);   /* job control */
		} else {
			ptrace(PTRACE_CONT, ch->pid, 0,
			       (void *)(uintptr_t)WSTOPSIG(status));
		}
	}
}

struct run_ctx {
	struct output *out;
	bool exit_requested;
	bool stopping;          /* a stop signal came: no more system() */
};

static int on_event(void *arg, const void *data, size_t size)
{
	struct run_ctx *rc = arg;
	if (!rc->out)
		return 0;
	/* Seen per record, not per batch: a batch of system() records
	 * takes seconds, and END must come promptly after ^C. */
	if (!rc->stopping && cancel_requested()) {
		rc->stopping = true;
		output_stop_commands(rc->out);
	}
	int r = output_event(rc->out, data, size);
	if (r == 1) {
		rc->exit_requested = true;
		return 1;
	}
	return 0;
}

/* D's dtrace:::ERROR: a clause faulted (output/dtrace.c) */
struct fault_ctx {
	const struct engine_ops *eng;
	struct engine *e;
};

static int on_fault(void *arg, const uint64_t args[6])
{
	struct fault_ctx *f = arg;
	return f->eng->run_fault ? f->eng->run_fault(f->e, args) : 0;
}

static bool process_alive(int pid)
{
	return kill(pid, 0) == 0 || errno == EPERM;
}

/* An output file, or NULL with the reason printed. */
static FILE *open_output(const char *option, const char *path)
{
	char why[PATH_MAX + 256];
	FILE *f = outfile_open(path, why, sizeof(why));
	if (!f)
		log_error("%s %s: %s", option, path, *why ? why : strerror(errno));
	return f;
}

/* --flamegraph / --folded / --pprof: opened before anything attaches (a
 * path that cannot be written fails the run at once, as -o does),
 * written at exit. */
struct flame_files {
	FILE *svg, *folded, *pprof;
};

static int open_flamegraphs(const struct options *o, struct flame_files *ff)
{
	if (o->flamegraph && !(ff->svg = open_output("--flamegraph", o->flamegraph)))
		return -1;
	if (o->folded && !(ff->folded = open_output("--folded", o->folded)))
		return -1;
	if (o->pprof && !(ff->pprof = open_output("--pprof", o->pprof)))
		return -1;
	return 0;
}

/* Write and close them: EXIT_OK, or EXIT_RUNTIME with the reason said. */
static int write_flamegraphs(const struct options *o, struct output *out,
			     struct flame_files *ff)
{
	int ret = EXIT_OK;
	if (out && (ff->svg || ff->folded)) {
		int r = output_flamegraph(out, ff->svg, ff->folded, NULL);
		if (r == -ENOENT) {
			log_warn("no map is keyed by kstack or ustack with "
				 "count(), sum() or integer values: the flame "
				 "graph is empty");
		} else if (r < 0) {
			log_error("flame graph: %s", strerror(-r));
			ret = EXIT_RUNTIME;
		}
	}
	if (ff->svg && fclose(ff->svg) != 0) {
		log_error("--flamegraph %s: %s", o->flamegraph, strerror(errno));
		ret = EXIT_RUNTIME;
	}
	if (ff->folded && fclose(ff->folded) != 0) {
		log_error("--folded %s: %s", o->folded, strerror(errno));
		ret = EXIT_RUNTIME;
	}
	if (!out && ff->pprof) {  /* never written: closed */
		fclose(ff->pprof);
		ff->pprof = NULL;
	}
	ff->svg = ff->folded = NULL;   /* the profile is write_pprof's */
	return ret;
}

/* --pprof at exit, into the file opened with the flame graph files:
 * EXIT_OK, or EXIT_RUNTIME with the reason said. */
static int write_pprof(const struct options *o, struct output *out,
		       struct flame_files *ff, double run_ms)
{
	if (!ff->pprof)
		return EXIT_OK;
	int ret = EXIT_OK;
	struct pprof_opts po = {
		.units = o->pprof_units, .nunits = o->npprof_units,
		.duration_ns = (int64_t)(run_ms * 1e6),
	};
	int r = pprof_write(out, ff->pprof, &po);
	if (r == -ENOENT) {
		log_warn("no map is keyed by kstack or ustack with count(), "
			 "sum() or integer values: the profile is empty");
	} else if (r < 0) {
		log_error("--pprof %s: %s", o->pprof, strerror(-r));
		ret = EXIT_RUNTIME;
	}
	if (fclose(ff->pprof) != 0) {
		log_error("--pprof %s: %s", o->pprof, strerror(errno));
		ret = EXIT_RUNTIME;
	}
	ff->pprof = NULL;
	return ret;
}

/* After a batch of output: 0, or -errno once the output refuses what is
 * written. A pipe or socket that fails has lost its reader (-EPIPE; sonde
 * ignores SIGPIPE so that it can detach before it goes). An interrupted
 * write is not a failure: the data stays buffered and goes out later. */
static int output_status(FILE *f, bool flush)
{
	errno = 0;
	if (!(flush && fflush(f) == EOF) && !ferror(f))
		return 0;
	int err = errno;
	if (err == EINTR || err == EAGAIN) {
		clearerr(f);
		return 0;
	}
	struct stat st;
	if (err != EPIPE && fstat(fileno(f), &st) == 0 &&
	    (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)))
		err = EPIPE;
	return err ? -err : -EIO;
}

/* 0 when the output broke because its reader went away (`| head`): that
 * ends the run quietly and successfully. Anything else is an error. */
static int output_failed(int err, const struct options *o)
{
	if (err == -EPIPE)
		return EXIT_OK;
	if (o->stdout_closed && !o->out_file) {   /* closed_stdout() */
		log_error("standard output is closed: the program's output "
			  "has nowhere to go (redirect it, or use -o FILE)");
		return EXIT_RUNTIME;
	}
	log_error("writing the output%s%s: %s", o->out_file ? " to " : "",
		  o->out_file ? o->out_file : "", strerror(-err));
	return EXIT_RUNTIME;
}

/* Where the output goes when sonde was started with stdout closed
 * (`>&-`). fd 1 holds /dev/null (preflight_std_fds), so that no BPF
 * object takes it; this stream refuses every write, so that what the
 * program prints ends the run as a failed write does instead of
 * vanishing. */
static ssize_t closed_write(void *cookie, const char *buf, size_t size)
{
	errno = EBADF;
	return -1;
}

static FILE *closed_stdout(void)
{
	return fopencookie(NULL, "w", (cookie_io_functions_t){
		.write = closed_write });
}

/* Whether the program has only begin/end probes and would exit after
 * begin in its dialect: 0.24's and later, or a script spelling them
 * lowercase (which only 0.24 and later accept). */
/* The probes the attach line counts: each one, or under --dialect=0.26
 * each probe once however many places it has (a USDT probe at several
 * sites: 0.26's usdt test "attach to multiple probes with different
 * number of locations by wildcard" expects 3 for 6 sites). */
static unsigned attach_count(const struct program *prog)
{
	if (prog->dialect < DIALECT_026)
		return prog->nprobes;
	/* a probe's sites are expanded one after another */
	unsigned n = 0;
	for (uint32_t i = 0; i < prog->nprobes; i++) {
		const struct probe *p = &prog->probes[i], *q = p - 1;
		n += !(i && q->block == p->block && p->name && q->name &&
		       strcmp(q->name, p->name) == 0);
	}
	return n;
}

/* --mode bench: the results of the bench:NAME probes, printed together
 * as one table; at most BENCH_MAX of them are kept. */
#define BENCH_MAX 256
struct benches {
	const char *names[BENCH_MAX];
	uint64_t avg[BENCH_MAX], iters[BENCH_MAX];
	size_t n;
};

static int bench_report(void *arg, const char *name, uint64_t avg_ns,
			uint64_t iters)
{
	struct benches *b = arg;
	if (b->n < BENCH_MAX) {
		b->names[b->n] = name;
		b->avg[b->n] = avg_ns;
		b->iters[b->n++] = iters;
	}
	return 0;
}

static int run_benches(const struct engine_ops *eng, struct engine *e,
		       struct output *out)
{
	if (!eng->run_bench) {
		log_error("--mode bench: bench probes run in the kernel "
			  "engine only");
		return -EOPNOTSUPP;
	}
	struct benches *b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	/* what BEGIN printed first, what the benches printed before
	 * their table */
	if (eng->drain)
		eng->drain(e);
	int r = eng->run_bench(e, bench_report, b);
	if (r >= 0 && eng->drain)
		eng->drain(e);
	if (r >= 0)
		output_bench(out, b->names, b->avg, b->iters, b->n);
	free(b);
	return r;
}

static bool only_run_once(const struct program *prog)
{
	bool lower = false;
	for (uint32_t i = 0; i < prog->nprobes; i++) {
		if (!(prog->probes[i].caps & PROBE_RUNS_ONCE))
			return false;
		lower |= islower((unsigned char)prog->probes[i].name[0]) != 0;
	}
	return prog->dialect >= DIALECT_024 || lower;
}

static int run(const struct options *o, const struct program *prog)
{
	struct run_ctx rc = { 0 };
	struct child ch = { .pid = 0, .release_fd = -1 };
	const struct engine_ops *eng = o->engine;
	struct engine *e = NULL;
	struct output *out = NULL;
	struct pcap_files *pcaps = NULL;
	FILE *outf = stdout;
	int ret = EXIT_RUNTIME;
	bool leave_child = false;
	struct procexit *pexit = NULL;
	struct metrics *mx = NULL;

	/* --metrics: a wrong label or address is found (and the port
	 * taken) before anything is attached */
	if (o->metrics && !(mx = metrics_new(o->metrics, prog, o->metrics_maps,
					     o->metrics_labels,
					     o->nmetrics_labels)))
		return errno == EINVAL ? EXIT_SCRIPT : EXIT_RUNTIME;
	if (pprof_check(prog, o->pprof_units, o->npprof_units) < 0) {
		metrics_free(mx);
		return EXIT_SCRIPT;
	}

	/* From here on there is something to undo: a stop signal sets
	 * the cancel flag, which every step checks (see base/cancel.h). */
	install_signals();
	if (o->out_file && !(outf = open_output("-o", o->out_file)))
		return EXIT_RUNTIME;
	/* stdout closed: what the program prints is an error, and only
	 * that (not sonde's banner or the blank lines before the maps) */
	bool nowhere = !o->out_file && o->stdout_closed;
	if (nowhere && !(outf = closed_stdout()))
		return EXIT_RUNTIME;
	struct flame_files flames = { 0 };
	if (open_flamegraphs(o, &flames) < 0)
		goto out;
	/* Records are formatted into a buffer and written in batches; with
	 * -B none every record is one write as soon as it is formatted. */
	if (o->buffering == BUF_NONE)
		setvbuf(outf, NULL, _IONBF, 0);
	else
		setvbuf(outf, NULL, _IOFBF, 1 << 16);
	/* skboutput()'s files, before anything runs (as bpftrace) */
	if (prog->nskb_outputs && !(pcaps = pcap_files_open(prog)))
		goto out;
	if (o->cmd && child_spawn(o->cmd, &ch) < 0)
		goto out;
	/* a script on $PATH that may run another program than the probes
	 * name (cmdcheck.c) */
	ch.prog = prog;
	bool shim = o->cmd && cmdcheck_script(o->cmd, ch.shim_name,
					      sizeof(ch.shim_name), ch.shim_path,
					      sizeof(ch.shim_path)) == 1 &&
		    cmdcheck_wanted(prog, ch.shim_path);
	if (o->pid)
		pexit = procexit_watch(o->pid);
	if (cancel_requested())
		goto cancelled;

	struct fault_ctx fault = { 0 };
	struct engine_opts eo = { .pid = o->pid, .cpid = ch.pid,
				  .follow_forks = o->follow_forks,
				  .cmd_name = shim ? ch.shim_name : NULL,
				  .cmd_script = shim ? ch.shim_path : NULL,
				  .on_event = on_event, .event_ctx = &rc,
				  .on_packet = pcap_files_write,
				  .packet_ctx = pcaps,
				  .log_size = o->env.log_size };
	double t0 = log_now_ms();
	int lr = eng->load(prog, &eo, &e);
	if (lr == -EPERM && geteuid() != 0 && eng != &engine_process &&
	    engine_process.check(prog, &eo, true) == 0)
		log_error("the kernel engine needs root (CAP_BPF and CAP_PERFMON); "
			  "these probes can run inside the traced program "
			  "instead, without root: --engine=process%s",
			  o->cmd ? "" : " -c CMD");
	if (lr < 0)
		goto failed;
	double t1 = log_now_ms();
	struct output_opts oo = {
		.format = o->format, .out = outf, .unsafe = o->unsafe,
		.cat_bytes_max = o->env.cat_bytes_max,
		.no_cpp_demangle = o->env.no_cpp_demangle,
		.no_user_symbols = o->env.no_user_symbols,
		.no_warnings = o->no_warnings,
	};
	out = output_new(prog, &oo, eng->map_reader(e));
	if (!out) {
		log_error("output: %s", strerror(errno));
		goto out;
	}
	rc.out = out;
	fault.eng = eng;
	fault.e = e;
	output_on_fault(out, on_fault, &fault);
	metrics_set_output(mx, out);
	if (output_stacks_init(out) < 0) {
		log_error("output: %s", strerror(ENOMEM));
		goto out;
	}
	if (!o->quiet && !nowhere)
		output_attaching(out, attach_count(prog));
	if (mx && !o->quiet)
		fprintf(stderr, "sonde: serving metrics at %s\n", metrics_url(mx));
	fflush(outf);
	/* BEGIN first, then the other probes, as bpftrace 0.17 runs them:
	 * an interval's clock starts after BEGIN (`BEGIN { @t = nsecs }
	 * i:s:1 { ... nsecs - @t ... }` sees a whole second). The -c
	 * command starts only after both. */
	if (cancel_requested())
		goto cancelled;
	if (eng->run_begin(e) < 0)
		goto out;
	if (eng->attach(e) < 0)
		goto failed;
	log_info("loaded %u maps and %u programs in %.1f ms, attached in %.1f ms",
		 prog->nmaps, prog->nprobes, t1 - t0, log_now_ms() - t1);
	if (getenv("__BPFTRACE_NOTIFY_PROBES_ATTACHED")) {
		/* bpftrace's test runner waits for this exact line. bpftrace
		 * 0.17 writes it on stderr (src/bpftrace.cpp), so a command
		 * piping the output (`| python3 -c 'json.load(...)'`) never
		 * reads it as data. 0.26 writes it on stdout (its tests
		 * drop it with `| tail -n +2` before parsing the JSON). */
		FILE *nf = prog->dialect >= DIALECT_026 ? stdout : stderr;
		fputs("__BPFTRACE_NOTIFY_PROBES_ATTACHED\n", nf);
		fflush(nf);
	}
	/* The last moment to give up before the -c command starts. */
	if (cancel_requested())
		goto cancelled;
	/* (the process engine knows what the command ran from its agent) */
	ch.shim_check = shim && eng != &engine_process;
	if (ch.pid > 0 && (program_keeps_user_addresses(prog) || ch.shim_check))
		child_hold_exit(&ch);
	if (cancel_requested())
		goto cancelled;
	child_release(&ch, eng->child_env ? eng->child_env(e) : NULL);

	/* bpftrace 0.24 exits once begin has run when nothing else can
	 * fire (its CHANGELOG: "Automatically exit if only BEGIN/END probes
	 * are specified"); 0.17 waits for Ctrl-C. A script that spells
	 * them begin/end, which 0.17 refuses, is a 0.24 script. */
	if (!o->cmd && !o->pid && only_run_once(prog))
		rc.exit_requested = true;
	if (o->bench) {
		if (run_benches(eng, e, out) < 0)
			goto out;
		rc.exit_requested = true;
	}
	double last_compact = log_now_ms(), last_check = last_compact;
	double run_start = last_compact;
	int oerr = 0;
	while (!rc.exit_requested && !cancel_requested()) {
		/* a scrape in progress renders a map per turn, between
		 * two reads of the ring: no sleeping until it is done */
		int r = eng->poll(e, metrics_busy(mx) ? 0 : 100);
		oerr = output_status(outf, o->buffering != BUF_FULL);
		if (oerr < 0) {
			/* Nobody reads what END and the maps would print:
			 * detach and go, leaving a -c command to finish on
			 * its own (as bpftrace, killed by SIGPIPE, would). */
			ret = output_failed(oerr, o);
			leave_child = true;
			goto out;
		}
		if (maps_requested) {
			maps_requested = 0;
			output_print_maps_now(out);
		}
		/* A full map says so once, soon after it fills. */
		if (log_now_ms() - last_check >= 1000) {
			output_check_maps(out);
			last_check = log_now_ms();
		}
		/* Maps keyed by user-stack samples merge their entries in
		 * the kernel now and then (and sooner when samples come
		 * fast), so they do not fill up. */
		if (log_now_ms() - last_compact >= 250 ||
		    output_compact_due(out)) {
			output_compact(out);
			last_compact = log_now_ms();
		}
		if (mx)
			metrics_step(mx, eng->lost_events(e));
		if (r == 1)
			break;
		if (r < 0 && r != -EINTR) {
			if (r != -ECANCELED)   /* the engine said why */
				log_error("reading events: %s", strerror(-r));
			goto out;
		}
		if (o->cmd && child_exited) {
			child_exited = 0;
			int cpid = ch.pid;
			if (child_gone(&ch, eng, e, false)) {
				/* dtrace(8)'s notice, which -q silences */
				if (prog->dtrace.on && !o->quiet)
					fprintf(stderr, "dtrace: pid %d has "
						"exited\n", cpid);
				break;
			}
		}
		if (o->pid && !process_alive(o->pid)) {
			int st;
			if (procexit_status(pexit, &st))
				say_signalled("the -p process", o->pid, st);
			if (prog->dtrace.on && !o->quiet)
				fprintf(stderr, "dtrace: pid %d has exited\n",
					o->pid);
			break;
		}
	}
	eng->drain(e);
	if (eng->run_end(e) < 0)
		goto out;
	eng->drain(e);
	output_check_maps(out);
	if (prog->config.no_print_maps)
		;   /* config = { print_maps_on_exit = false } */
	else if (nowhere)
		output_print_maps_now(out);
	else
		output_print_maps(out);
	int fret = write_flamegraphs(o, out, &flames);
	int pret = write_pprof(o, out, &flames, log_now_ms() - run_start);
	if (fret == EXIT_OK)
		fret = pret;
	unsigned long long lost = eng->lost_events(e);
	if (lost)
		output_lost(out, lost);
	oerr = output_status(outf, true);
	ret = oerr < 0 ? output_failed(oerr, o) : fret;
	if (ret == EXIT_OK && output_exit_code(out) >= 0)
		ret = output_exit_code(out);   /* exit(CODE) */
	leave_child = oerr < 0;
	goto out;
failed:
	/* a step that saw the cancel flag gave up: not a failure */
	if (!cancel_requested())
		goto out;
cancelled:
	ret = RUN_INTERRUPTED;
out:
	if (outf)
		fflush(outf);
	eng->free(e);   /* detach everything before the child may go on */
	pcap_files_close(pcaps);   /* after the engine's last packets */
	metrics_free(mx);
	output_free(out);
	if (ch.release_fd >= 0)
		close(ch.release_fd);   /* EOF: an unreleased child exits */
	if (ch.pid > 0 && leave_child)
		child_untrace(&ch);
	if (ch.pid > 0 && !leave_child)
		child_end(&ch, eng);
	if (outf && outf != stdout)
		fclose(outf);
	write_flamegraphs(o, NULL, &flames);   /* closed, if not written */
	procexit_free(pexit);
	return ret;
}

/* Until run() begins, nothing needs undoing: SIGINT and SIGTERM keep
 * their default action and end sonde at once, as they end bpftrace
 * while it compiles. */
static bool is_regular_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

struct list_arg {
	const struct options *o;
	int found;
};

static int list_attach_point(void *arg, const char *text)
{
	struct list_arg *la = arg;
	int r = provider_list_all(text, la->o->pid, la->o->dialect, stdout);
	if (r > 0)
		la->found += r;
	return 0;
}

/* `-l -e PROGRAM`, `-l FILE` under --dialect=0.26: what each of the
 * script's attach points lists (bpftrace.adoc "Listing Probes": "can be
 * combined with -e or filename args to see all the probes that a
 * program would attach to"); 0.17 ignores the program and lists all. */
static int list_script(const struct options *o)
{
	size_t len = 0;
	char *text = NULL;
	const char *name = "stdin";
	if (!o->program_text) {
		text = read_file(o->list_pattern, &len);
		if (!text) {
			log_error("failed to open file '%s': %s",
				  o->list_pattern, strerror(errno));
			return EXIT_SCRIPT;
		}
		name = o->list_pattern;
	}
	struct diag_source src = {
		.name = name, .text = text ? text : o->program_text,
	};
	struct diags d;
	diags_init(&d, &src);
	struct compile_opts co = {
		.name = src.name, .text = src.text,
		.positional = o->positional, .npositional = o->npositional,
		.pid = o->pid, .cmd = o->cmd, .dialect = o->dialect,
		.include_dirs = o->include_dirs,
		.ninclude_dirs = o->ninclude_dirs,
		.include_files = o->include_files,
		.ninclude_files = o->ninclude_files,
	};
	struct list_arg la = { .o = o };
	int r = compile_attach_points(&co, &d, list_attach_point, &la);
	diags_print(&d, stderr);
	diags_free(&d);
	free(text);
	return r < 0 ? EXIT_SCRIPT : EXIT_OK;
}

/* -l's argument names a script rather than probes: a ".bt" file */
static bool looks_like_script(const char *arg)
{
	size_t n = strlen(arg);
	return n > 3 && strcmp(arg + n - 3, ".bt") == 0 && !strchr(arg, ':');
}

int main(int argc, char **argv)
{
	unsigned closed_fds = preflight_std_fds();
	cancel_reset_signals();
	struct options o = { .engine = &engine_kernel };
	/* D, as dtrace(8) (dtrace_cli.c), or bpftrace's language */
	static struct dtrace_cli dcli;
	bool dmode = dtrace_cli_wanted(argc, argv);
	int r = dmode ? dtrace_cli_parse(argc, argv, &o, &dcli) :
		options_parse(argc, argv, &o);
	o.stdout_closed = closed_fds & (1u << STDOUT_FILENO);
	if (r)
		return r;
	elf_debuginfo_dirs(o.debuginfo, o.ndebuginfo);
	if (o.info)
		return info_print(stdout, o.dialect) < 0 ? EXIT_RUNTIME : EXIT_OK;
	/* What would fail only after attaching fails now. */
	if (dmode && o.pid && kill(o.pid, 0) < 0 && errno == ESRCH) {
		fprintf(stderr, "dtrace: failed to grab pid %d: No such "
			"process\n", o.pid);
		return EXIT_SCRIPT;
	}
	if (o.pid && preflight_pid(o.pid) < 0)
		return EXIT_SCRIPT;     /* a wrong -p, as bpftrace: nothing ran */
	if (o.pid && o.engine->preflight_pid && !o.list &&
	    o.engine->preflight_pid(o.pid) < 0)
		return EXIT_RUNTIME;
	if (o.list && !dmode && o.dialect >= DIALECT_026 &&
	    (o.program_text || (o.list_pattern && is_regular_file(o.list_pattern))))
		return list_script(&o);
	if (o.list && !dmode && o.dialect >= DIALECT_026 && o.list_pattern &&
	    looks_like_script(o.list_pattern) && access(o.list_pattern, F_OK))
		/* bpftrace 0.26's words (its test "warning on non existent
		 * file") */
		log_warn("It appears that '%s' is a filename but the file "
			 "does not exist. Treating '%s' as a search pattern.",
			 o.list_pattern, o.list_pattern);
	if (o.list && !dmode)
		return provider_list_all(o.list_pattern, o.pid, o.dialect, stdout) < 0 ?
			EXIT_SCRIPT : EXIT_OK;
	if (o.cmd && preflight_command(o.cmd) < 0)
		return EXIT_RUNTIME;

	char *file_text = NULL, *dlabel = NULL;
	size_t file_len = 0;
	const char *dname = NULL;
	if (dmode) {
		if (dtrace_cli_program(&dcli, &file_text, &dlabel, &dname) < 0)
			return EXIT_SCRIPT;
		o.program_text = file_text;
		file_text = NULL;
	} else if (o.script_file) {
		file_text = read_file(o.script_file, &file_len);
		if (!file_text) {
			log_error("failed to open file '%s': %s", o.script_file,
				  strerror(errno));
			return EXIT_SCRIPT;
		}
	}
	struct diag_source src = {
		.name = dmode ? dname : o.script_file ? o.script_file : "stdin",
		.text = o.script_file ? file_text : o.program_text,
	};
	struct diags d;
	diags_init(&d, &src);
	d.no_warnings = o.no_warnings;
	if (file_text && diag_check_nul(&d, file_text, file_len)) {
		diags_print(&d, stderr);
		diags_free(&d);
		free(file_text);
		return EXIT_SCRIPT;
	}
	struct compile_opts co = {
		.name = src.name, .text = src.text,
		.positional = o.positional, .npositional = o.npositional,
		.pid = o.pid, .child = o.cmd != NULL, .cmd = o.cmd,
		.unsafe = o.unsafe,
		.strlen = o.env.strlen,
		.map_keys_max = o.env.map_keys_max,
		.dump_ast = o.dump && strcmp(o.dump, "ast") == 0 ? stdout : NULL,
		.ustack_fp = o.ustack_fp, .ustack_copy = o.ustack_copy,
		/* 0.26's -k checks reads and lookups too (0.17's -kk) */
		.helper_check = o.dialect >= DIALECT_026 && o.helper_check ?
			2 : o.helper_check,
		.hist_sums = o.metrics != NULL,
		.dialect = o.dialect,
		.probe_filter = o.probe_filter,
		.include_dirs = o.include_dirs,
		.ninclude_dirs = o.ninclude_dirs,
		.include_files = o.include_files,
		.ninclude_files = o.ninclude_files,
	};
	struct frontend_settings dset = { 0 };
	if (dmode) {
		co.frontend = &frontend_dtrace;
		co.quiet = dcli.quiet;
		co.xopts = dcli.x;
		co.nxopts = (size_t)dcli.nx;
		co.settings = &dset;
		co.unsafe = dcli.destructive;
		co.zdefs = dcli.zdefs;
		co.cpp = dcli.cpp;
		co.defines = dcli.defs;
		co.ndefines = (size_t)dcli.ndefs;
	}
	double t0 = log_now_ms();
	struct program *prog = compile(&co, &d);
	if (dmode)
		dtrace_cli_diags(&dcli, &d, src.name, stderr);
	else
		diags_print(&d, stderr);
	if (dmode && prog) {
		prog->dtrace.label = dlabel;
		o.quiet = dset.quiet;
		o.unsafe = dset.destructive || dcli.destructive;
		if (o.unsafe && !o.quiet)
			fprintf(stderr, "dtrace: allowing destructive actions\n");
		if (dcli.list) {
			dtrace_cli_list(prog, stdout);
			program_free(prog);
			diags_free(&d);
			free((char *)o.program_text);
			free(dlabel);
			return EXIT_OK;
		}
	}
	if (prog) {
		/* a config block's settings, where the environment set none */
		if (!o.env.cat_bytes_max)
			o.env.cat_bytes_max = prog->config.cat_bytes_max;
		if (!o.env.log_size)
			o.env.log_size = prog->config.log_size;
		if (!o.env.max_bpf_progs)
			o.env.max_bpf_progs = prog->config.max_bpf_progs;
		if (!getenv("BPFTRACE_NO_CPP_DEMANGLE"))
			o.env.no_cpp_demangle |= prog->config.no_cpp_demangle;
	}
	if (prog)
		log_info("compiled %u probes in %.1f ms", prog->nprobes,
			 log_now_ms() - t0);
	int ret;
	uint32_t max_progs = o.env.max_bpf_progs ? o.env.max_bpf_progs :
		SONDE_MAX_BPF_PROGS_DEFAULT;
	if (!prog)   /* a valid script naming what this system lacks: 2
		      * (dtrace: 1, whatever failed) */
		ret = provider_env_errors(&d) && !dmode ? EXIT_RUNTIME :
			EXIT_SCRIPT;
	else if (program_distinct_programs(prog) > max_progs) {
		/* bpftrace 0.17's words */
		log_error("Your program is trying to generate more than %u BPF "
			  "programs, which exceeds the current limit of %u.\n"
			  "You can increase the limit through the "
			  "BPFTRACE_MAX_BPF_PROGS environment variable.",
			  program_distinct_programs(prog), max_progs);
		ret = EXIT_SCRIPT;
	}
	else if (o.dump && strcmp(o.dump, "bpf") == 0) {
		program_dump_bpf(stdout, prog);
		ret = EXIT_OK;
	} else if (o.engine->check &&
		   o.engine->check(prog, &(struct engine_opts){
			.pid = o.pid, .cpid = o.cmd ? -1 : 0 }, false) < 0)
		ret = EXIT_SCRIPT;
	else if (o.dump || o.dry_run)
		ret = EXIT_OK;
	else
		ret = run(&o, prog);
	program_free(prog);
	diags_free(&d);
	free(file_text);
	if (dmode)
		free((char *)o.program_text);
	free(dlabel);
	if (ret == RUN_INTERRUPTED) {
		cancel_die();
		return 128 + cancel_signal;
	}
	return ret;
}
