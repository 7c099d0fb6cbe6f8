/* engine.c - the kernel engine: loads each probe's program, attaches it
 * through perf events, runs BEGIN/END with BPF_PROG_TEST_RUN, and reads
 * the event ring.
 *
 * Ownership is flat: the engine holds every descriptor (maps, programs,
 * perf events, links) in plain arrays, and exactly two functions let go of
 * them: engine_detach_all() for attachments and engine_free() for the rest. Any
 * failure path calls one of them, so nothing stays in the kernel.
 *
 * Events after exit(): bpftrace ignores records that arrive after the one
 * that asked to exit, until END runs; END's own output is printed. The
 * engine does the same with `ignore_events`, and detaches every probe
 * before END so nothing can fire while END runs and maps are printed. */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../base/cancel.h"
#include "../base/log.h"
#include "../base/parallel.h"
#include "../base/proc.h"
#include "../base/privilege.h"
#include "engine_int.h"

#define VERIFIER_LOG_SIZE (4u << 20)
#define DEFAULT_MAX_PROBES 512
/* Fewer programs than this load on the caller's thread alone. */
#define PROGS_PARALLEL_MIN 4

/* The last line of a verifier log that says why, not the statistics the
 * kernel appends after it. */
static void log_reason(const char *log, char *out, size_t size)
{
	out[0] = '\0';
	const char *end = log + strlen(log);
	while (end > log) {
		while (end > log && (end[-1] == '\n' || end[-1] == ' '))
			end--;
		const char *start = end;
		while (start > log && start[-1] != '\n')
			start--;
		size_t len = (size_t)(end - start);
		bool stats = strncmp(start, "processed ", 10) == 0 ||
			     strncmp(start, "verification time", 17) == 0 ||
			     strncmp(start, "stack depth", 11) == 0 ||
			     strncmp(start, "mark_precise", 12) == 0;
		if (len && !stats) {
			if (len >= size)
				len = size - 1;
			memcpy(out, start, len);
			out[len] = '\0';
			return;
		}
		end = start;
	}
}

/* The helper of the verifier log's last call instruction ("12: (85)
 * call bpf_d_path#147"): the one it refused when it says "helper call
 * is not allowed in probe". */
static bool helper_called_last(const char *log, char *out, size_t size)
{
	const char *found = NULL;
	for (const char *p = log; (p = strstr(p, "call bpf_")); p += 9)
		found = p + 5;
	if (!found)
		return false;
	size_t n = strspn(found, "abcdefghijklmnopqrstuvwxyz_0123456789");
	if (!n || n >= size)
		return false;
	memcpy(out, found, n);
	out[n] = '\0';
	return true;
}

/* Give every map reference its descriptor: BPF_LD_IMM64 with a map
 * pseudo source holds the map's index in the program's table. */
int engine_patch_maps(struct engine *e, const struct probe *p,
		      struct bpf_insn *insns, uint32_t ninsns)
{
	for (uint32_t i = 0; i < ninsns; i++) {
		struct bpf_insn *in = &insns[i];
		if (in->code != (BPF_LD | BPF_IMM | BPF_DW))
			continue;
		if (i + 1 >= ninsns)
			return -EINVAL;
		if (in->src_reg == BPF_PSEUDO_MAP_FD ||
		    in->src_reg == BPF_PSEUDO_MAP_VALUE) {
			if (in->imm < 0 || (uint32_t)in->imm >= e->prog->nmaps) {
				log_error("probe %s: instruction %u refers to "
					  "map %d, which does not exist",
					  p->name, i, in->imm);
				return -EINVAL;
			}
			in->imm = e->map_fds[in->imm];
		}
		i++;   /* the second half of the 16-byte instruction */
	}
	return 0;
}

/* Load one probe's program: ep->prog_fd, or ep->load_err and (when the
 * verifier said why) ep->verifier_log. Runs on parallel_for's threads,
 * so it prints nothing; report_load() speaks for it afterwards. */
static int load_one(void *ctx, unsigned i)
{
	struct engine *e = ctx;
	struct engine_probe *ep = &e->probes[i];
	const struct probe *p = ep->probe;
	if (cancel_requested())
		return -ECANCELED;      /* parallel_for starts no more */
	if (ep->leader >= 0)        /* runs its leader's program */
		return 0;
	if (!p->insns || !p->ninsns) {
		ep->load_err = -ENOEXEC;
		return 0;
	}
	/* a syscall dispatcher loads its group's programs behind a jump */
	const struct bpf_insn *src = ep->dispatch ? ep->dispatch_insns : p->insns;
	uint32_t ninsns = ep->dispatch ? ep->dispatch_ninsns : p->ninsns;
	struct bpf_insn *insns = malloc(ninsns * sizeof(*insns));
	if (!insns) {
		ep->load_err = -ENOMEM;
		return 0;
	}
	memcpy(insns, src, ninsns * sizeof(*insns));
	int r = engine_patch_maps(e, p, insns, ninsns);
	if (r < 0) {
		free(insns);
		ep->load_err = r;
		return 0;
	}
	char name[16];
	engine_obj_name(name, sizeof(name), p->name);
	struct engine_load_opts o = { .expected_attach_type = ep->attach_type };
	if (ep->has_req && (ep->req.how == ATTACH_TRACING ||
			    ep->req.how == ATTACH_ITER))
		o.attach_btf_id = ep->req.btf_id;
	/* Load without a verifier log (faster: the log costs the verifier
	 * as much again) and ask again with one only to explain a failure;
	 * -v prints that log whole. */
	int fd = engine_prog_load(p->prog_type, name, insns, ninsns, &o);
	/* BPFTRACE_LOG_SIZE; the kernel wants 128 bytes at least */
	size_t log_size = e->opts.log_size ? e->opts.log_size :
		VERIFIER_LOG_SIZE;
	if (log_size < 128)
		log_size = 128;
	if (fd < 0 && (ep->verifier_log = malloc(log_size))) {
		o.log_buf = ep->verifier_log;
		o.log_size = (uint32_t)log_size;
		o.log_level = 1;
		ep->verifier_log[0] = '\0';
		int fd2 = engine_prog_load(p->prog_type, name, insns, ninsns,
					   &o);
		if (fd2 >= 0)     /* cannot happen twice in a row, but be safe */
			fd = fd2;
		/* Kept until reported: only as long as what was written. */
		char *fit = realloc(ep->verifier_log,
				    strlen(ep->verifier_log) + 1);
		if (fit)
			ep->verifier_log = fit;
	}
	free(insns);
	if (fd >= 0)
		ep->prog_fd = fd;
	else
		ep->load_err = fd;
	return 0;
}

/* What load_one did, said in probe order: 0, or the load's error. A
 * wildcard's probes that the kernel refuses are skipped with a warning
 * (SKIPS: the first few shown, the rest counted); -v adds the verifier
 * log, once per probe block (*LOGGED: the last block whose log was
 * shown), not once per probe of a wildcard that fails alike. */
static int report_load(struct engine *e, struct engine_probe *ep,
		       struct log_repeat *skips, uint32_t *logged)
{
	const struct probe *p = ep->probe;
	int err = ep->load_err;
	char *log = ep->verifier_log;
	ep->verifier_log = NULL;
	if (ep->leader >= 0) {
		log_info("probe %s: runs the program of %s", p->name,
			 e->probes[ep->leader].probe->name);
		return 0;
	}
	if (!err) {
		log_info("probe %s: loaded (%u instructions)", p->name,
			 p->ninsns);
		free(log);
		return 0;
	}
	char reason[512] = "", msg[1024], helper[64];
	if (log)
		log_reason(log, reason, sizeof(reason));
	if (!p->insns || !p->ninsns)
		snprintf(msg, sizeof(msg), "no code was generated");
	else if (err == -EPERM && !reason[0] &&
		 p->prog_type == BPF_PROG_TYPE_TRACING)
		snprintf(msg, sizeof(msg), "the kernel does not allow %s "
			 "programs here (loading one is 'not permitted' "
			 "even to root: BPF trampolines or ftrace are disabled "
			 "or locked down)", ep->has_req &&
			 ep->req.how == ATTACH_ITER ? "iterator" :
			 "fentry/fexit");
	else if (strstr(reason, "helper call is not allowed in probe") &&
		 helper_called_last(log, helper, sizeof(helper)))
		/* bpftrace 0.17's words, then the verifier's */
		snprintf(msg, sizeof(msg), "helper %s not supported in probe "
			 "(the kernel verifier: %s%s)", helper, reason,
			 strcmp(helper, "bpf_d_path") ? "" : "; path() works "
			 "only in the functions the kernel allows d_path in, "
			 "such as filp_close, vfs_getattr, dentry_open");
	else if (reason[0])
		snprintf(msg, sizeof(msg), "the kernel verifier rejected the "
			 "program: %s", reason);
	else
		snprintf(msg, sizeof(msg), "cannot load the program: %s",
			 strerror(-err));
	if (ep->has_req && ep->req.optional)   /* one of a wildcard's */
		log_repeat_warn(skips, "probe %s: %s (skipped)", p->name, msg);
	else
		log_error("probe %s: %s", p->name, msg);
	if (log_verbose && log && log[0] && p->block != *logged) {
		fprintf(stderr, "verifier log for %s:\n%s", p->name, log);
		*logged = p->block;
	}
	free(log);
	return err;
}

/* A wildcard's matches that the kernel refuses are skipped while another
 * probe remains; when it refused every probe that needed attaching,
 * nothing would be traced, and the run fails as a probe naming nothing
 * on this system does (exit 2). 0, or -ENOENT with that said. */
int engine_some_probe_left(const struct engine *e)
{
	uint32_t wanted = 0, skipped = 0;
	for (uint32_t i = 0; i < e->nprobes; i++) {
		const struct engine_probe *ep = &e->probes[i];
		if (ep->has_req && ep->req.how != ATTACH_TEST_RUN) {
			wanted++;
			skipped += ep->skipped;
		}
	}
	if (!wanted || skipped < wanted)
		return 0;
	log_error("no probe is left to trace: the kernel refused all %u "
		  "(the warnings above say why)", wanted);
	return -ENOENT;
}

/* Records handled per poll before returning to the caller: a probe that
 * fires on sonde's own work (its writes, its syscalls) could otherwise
 * keep the ring non-empty forever and starve signal and exit checks. */
#define POLL_BUDGET 8192
/* ... and the time they may take in one poll: records can cost
 * milliseconds each (a user stack unwound, a new process's files read),
 * and a poll of 8192 of them would hold off for seconds what the caller
 * does between polls (a metrics scrape, the sweeps that bound memory).
 * Past it the rest waits in the ring for the next poll, which does not
 * sleep. */
#define POLL_BUDGET_MS 50.0

/* One more record handled: whether the poll's budget is spent. */
static bool poll_spent(struct engine *e)
{
	if (++e->handled >= POLL_BUDGET ||
	    (e->poll_deadline_ms > 0 && log_now_ms() >= e->poll_deadline_ms))
		e->spent = true;
	return e->spent;
}

/* The longest a record waits in the ring when nothing wakes the reader:
 * short enough that output looks immediate, long enough that an idle
 * sonde costs nothing measurable. */
#define DRAIN_INTERVAL_MS 10

/* on_sample's way to stop libbpf's loop; the record in hand is consumed. */
#define SAMPLE_BREAK (-ECANCELED)

static int on_sample(void *ctx, void *data, size_t size)
{
	struct engine *e = ctx;
	if (!e->first_read) {
		e->first_read = true;
		log_info("first record read %.1f ms after attaching",
			 log_now_ms() - e->armed_ms);
	}
	/* the engine's own records (watch.c), even after exit(): a task a
	 * setup program stopped must be let go */
	if (engine_watch_record(e, data, size))
		return poll_spent(e) ? SAMPLE_BREAK : 0;
	/* Breaking out consumes the record in hand, so it is handled
	 * first, whatever the reason to stop. */
	if (!e->ignore_events && e->opts.on_event &&
	    e->opts.on_event(e->opts.event_ctx, data, size) == 1) {
		e->stopped = true;
		e->ignore_events = true;
		return SAMPLE_BREAK;
	}
	return poll_spent(e) ? SAMPLE_BREAK : 0;
}

int engine_ring_open(struct engine *e)
{
	if (e->rb || e->prog->ringbuf_map < 0)
		return 0;
	int fd = e->map_fds[e->prog->ringbuf_map];
	e->rb = ring_buffer__new(fd, on_sample, e, NULL);
	if (!e->rb) {
		int r = -errno;
		log_error("cannot open the event ring: %s", strerror(-r));
		return r ? r : -EINVAL;
	}
	return 0;
}

/* skboutput(): bpf_skb_output writes to a perf buffer per CPU (a ring
 * buffer it cannot use), read beside the event ring at each poll. */
static void on_skb(void *ctx, int cpu, void *data, __u32 size)
{
	struct engine *e = ctx;
	(void)cpu;
	if (e->opts.on_packet)
		e->opts.on_packet(e->opts.packet_ctx, data, size);
}

static void on_skb_lost(void *ctx, int cpu, __u64 n)
{
	struct engine *e = ctx;
	(void)cpu;
	e->skb_lost += n;
}

/* Pages per CPU: BPFTRACE_PERF_RB_PAGES (bpftrace's variable, for this
 * very buffer), else 64; a power of two, as the kernel wants. */
static size_t skb_pages(void)
{
	unsigned long v = 64;
	const char *env = getenv("BPFTRACE_PERF_RB_PAGES");
	if (env) {
		char *end;
		unsigned long p = strtoul(env, &end, 10);
		if (*env && !*end && p > 0 && p <= (1ul << 20))
			v = p;
	}
	size_t pages = 1;
	while (pages < v)
		pages <<= 1;
	return pages;
}

static int skb_open(struct engine *e)
{
	int fd = e->map_fds[e->prog->skb_map];
	e->skb_pb = perf_buffer__new(fd, skb_pages(), on_skb, on_skb_lost, e,
				     NULL);
	if (!e->skb_pb) {
		int r = -errno;
		log_error("cannot open skboutput()'s perf buffer: %s",
			  strerror(-r));
		return r ? r : -EINVAL;
	}
	return 0;
}

static void skb_consume(struct engine *e)
{
	if (e->skb_pb)
		perf_buffer__consume(e->skb_pb);
}

static unsigned max_probes(void)
{
	const char *s = getenv("BPFTRACE_MAX_PROBES");
	if (s) {
		char *end;
		unsigned long v = strtoul(s, &end, 10);
		if (*s && !*end && v > 0 && v < 1000000)
			return (unsigned)v;
		log_warn("BPFTRACE_MAX_PROBES=%s ignored", s);
	}
	return DEFAULT_MAX_PROBES;
}

/* A program that calls bpf_override_return changes the probed function's
 * return: its provider must have said the function allows that
 * (probe.override_err, providers_describe). */
static int check_override(const struct engine_probe *ep)
{
	const struct probe *p = ep->probe;
	int r = p->override_err;
	if (r < 0)
		log_error("probe %s: %s", p->name, p->override_why ?
			  p->override_why : "this probe type cannot override "
			  "a return");
	return r;
}

/* engine_load's two independent kernel waits (parallel_for's work). */
static int setup_one(void *ctx, unsigned i)
{
	struct engine *e = ctx;
	if (i == 0)
		return engine_maps_create(e);
	engine_multi_ask(e, engine_multi_questions(e));
	return 0;
}

int engine_load(const struct program *prog, const struct engine_opts *opts,
		struct engine **out)
{
	*out = NULL;
	if (!privilege_can_trace()) {
		log_error("cannot load the programs: not permitted: %s (sonde runs as uid %d "
			  "without them)", PRIVILEGE_NEEDED, (int)geteuid());
		return -EPERM;
	}
	unsigned limit = max_probes();
	if (prog->nprobes > limit) {
		log_error("cannot attach %u probes: the limit is %u (raise it "
			  "with BPFTRACE_MAX_PROBES, carefully: too many probes "
			  "can make the system unresponsive)",
			  prog->nprobes, limit);
		return -E2BIG;
	}
	struct engine *e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->prog = prog;
	e->opts = *opts;
	e->mapfail_map = -1;
	e->has_kprobe_multi = e->has_uprobe_multi = -1;
	engine_reader_init(e);
	int r = libbpf_num_possible_cpus();
	if (r < 0)
		goto fail;
	e->ncpus = r;

	e->probes = calloc(prog->nprobes ? prog->nprobes : 1,
			   sizeof(*e->probes));
	r = -ENOMEM;
	if (!e->probes)
		goto fail;
	e->nprobes = prog->nprobes;
	for (uint32_t i = 0; i < e->nprobes; i++) {
		e->probes[i].probe = &prog->probes[i];
		e->probes[i].prog_fd = -1;
		e->probes[i].setup_fd = -1;
		e->probes[i].leader = -1;
		e->probes[i].attach_type = prog->probes[i].expected_attach_type;
	}

	for (uint32_t i = 0; i < e->nprobes; i++) {
		struct engine_probe *ep = &e->probes[i];
		/* What the provider said first: BEGIN/END must be known before
		 * attaching, fentry/fexit programs are loaded for their
		 * function, and a bad probe is better found early. */
		if (!ep->probe->has_attach)
			continue;
		r = -ECANCELED;
		if (cancel_requested())
			goto fail;
		ep->req = ep->probe->attach;
		r = ep->probe->attach_err;
		if (r < 0) {
			log_error("probe %s: cannot attach: %s",
				  ep->probe->name, ep->req.error ?
				  ep->req.error : strerror(-r));
			goto fail;
		}
		ep->has_req = true;
		r = check_override(ep);
		if (r < 0)
			goto fail;
		/* A user-space probe follows the traced process: through a
		 * thread that lives (its main thread may have exited, and
		 * the kernel binds no event to a zombie) */
		if (ep->req.path && e->opts.pid > 0)
			ep->req.pid = proc_live_tid(e->opts.pid);
		else if (ep->req.path && ep->req.child_only &&
			 e->opts.cpid > 0)
			ep->req.pid = e->opts.cpid;
		/* --follow-forks: a perf event inherited by every process it
		 * forks (a uprobe_multi link binds one process only) */
		if (ep->req.path && ep->req.pid > 0 && e->opts.follow_forks) {
			ep->req.inherit = true;
			if (ep->req.multi == MULTI_UPROBE)
				ep->req.multi = MULTI_NONE;
		}
		/* A watchpoint watches the traced process's memory when
		 * there is one (-p, else -c), the kernel's otherwise. */
		if (ep->req.follow_process &&
		    (e->opts.pid > 0 || e->opts.cpid > 0)) {
			ep->req.pid = e->opts.pid > 0 ? e->opts.pid : e->opts.cpid;
			ep->req.all_cpus = false;
		}
	}
	/* Two waits on the kernel that do not depend on each other, side
	 * by side: creating the maps (the ring's pages) and asking whether
	 * it has multi links (a program loaded for the question), which
	 * the plans below need. */
	double t0 = log_now_ms();
	unsigned waits = engine_multi_questions(e) ? 2 : 1;
	r = parallel_for(waits, waits, setup_one, e);
	if (r < 0)
		goto fail;
	log_info("created %u maps in %.1f ms", prog->nmaps, log_now_ms() - t0);
	r = engine_globals_write(e);
	if (r < 0)
		goto fail;
	engine_maps_mmap(e);
	double t1 = log_now_ms();

	r = engine_syscalls_plan(e);
	if (r < 0)
		goto fail;
	r = engine_multi_plan(e);
	if (r < 0)
		goto fail;
	/* The verifier checks privileged programs in parallel, and a
	 * script's programs are independent: load them on every CPU, then
	 * say what happened in probe order. */
	double t2 = log_now_ms();
	r = parallel_for(e->nprobes, e->nprobes < PROGS_PARALLEL_MIN ? 1 : 0,
			 load_one, e);
	log_info("loaded the programs in %.1f ms (planned in %.1f ms before)",
		 log_now_ms() - t2, t2 - t1);
	if (r == -ECANCELED) {          /* interrupted: nothing to say */
		for (uint32_t i = 0; i < e->nprobes; i++) {
			free(e->probes[i].verifier_log);
			e->probes[i].verifier_log = NULL;
		}
		goto fail;
	}
	r = 0;
	struct log_repeat skips = { 0 };
	uint32_t logged = UINT32_MAX;
	for (uint32_t i = 0; i < e->nprobes; i++) {
		struct engine_probe *ep = &e->probes[i];
		if (r < 0) {            /* after a failure: only clean up */
			free(ep->verifier_log);
			ep->verifier_log = NULL;
			continue;
		}
		r = report_load(e, ep, &skips, &logged);
		if (r < 0 && ep->has_req && ep->req.optional) {
			ep->skipped = true;
			r = 0;
		}
		/* a group's members go where their leader goes */
		if (ep->leader >= 0 && e->probes[ep->leader].skipped)
			ep->skipped = true;
		if (r == 0 && !ep->skipped)
			r = engine_watch_load(e, ep);
	}
	log_repeat_end(&skips, "probes skipped");
	if (r == 0)
		r = engine_some_probe_left(e);
	if (r < 0)
		goto fail;

	/* The ring's reader is opened after attaching (engine_attach), or
	 * at the first read: the ring takes records without one. */
	if (prog->ringbuf_map >= 0 && (uint32_t)prog->ringbuf_map >= prog->nmaps) {
		r = -EINVAL;
		goto fail;
	}
	/* skboutput()'s perf buffer before: a CPU's slot without its perf
	 * event would refuse packets. */
	if (prog->nskb_outputs) {
		if (prog->skb_map < 0 || (uint32_t)prog->skb_map >= prog->nmaps) {
			r = -EINVAL;
			goto fail;
		}
		r = skb_open(e);
		if (r < 0)
			goto fail;
	}
	*out = e;
	return 0;
fail:
	engine_free(e);
	return r < 0 ? r : -EINVAL;
}

/* Run with BPF_PROG_TEST_RUN the probes sonde runs itself: BEGIN or
 * END (AT_END), or D's dtrace:::ERROR (ON_FAULT), whose context words
 * arg0..arg5 are the fault's ARGS. */
static int run_once(struct engine *e, bool at_end, bool on_fault,
		    const uint64_t *args)
{
	/* Room for any context the program may read (12 u64 arguments,
	 * zero past ARGS): BEGIN/END have no arguments. */
	uint64_t ctx[12] = { 0 };
	if (args)
		memcpy(ctx, args, 6 * sizeof(*args));
	for (uint32_t i = 0; i < e->nprobes; i++) {
		struct engine_probe *ep = &e->probes[i];
		if (!ep->has_req || ep->req.how != ATTACH_TEST_RUN ||
		    ep->req.on_fault != on_fault || ep->req.bench)
			continue;
		if (on_fault ? ep->prog_fd < 0 : ep->req.at_end != at_end)
			continue;
		LIBBPF_OPTS(bpf_test_run_opts, o, .ctx_in = ctx,
			    .ctx_size_in = sizeof(ctx));
		int r = bpf_prog_test_run_opts(ep->prog_fd, &o);
		if (r < 0) {
			log_error("probe %s: cannot run: %s", ep->probe->name,
				  strerror(-r));
			return r;
		}
	}
	return 0;
}

#define BPFFS "/sys/fs/bpf"
#define BPFFS_MAGIC 0xcafe4a11

/* Pin LINK at PATH. Where nothing has mounted the BPF file system at
 * /sys/fs/bpf (systemd does; a minimal system or a container may not),
 * mount it there, as bpftool does, and pin again. */
static int pin_link(int link, const char *path)
{
	int r = bpf_obj_pin(link, path);
	struct statfs st;
	if (r != -ENOENT || strncmp(path, BPFFS "/", sizeof(BPFFS)) != 0 ||
	    (statfs(BPFFS, &st) == 0 && st.f_type == BPFFS_MAGIC))
		return r;
	if (mount("bpf", BPFFS, "bpf", 0, "mode=0700") < 0)
		return r;
	log_info("mounted the BPF file system at " BPFFS);
	return bpf_obj_pin(link, path);
}

/* Each iterator runs as its iterator file is read: the program prints
 * through the ring, so what read() returns (seq output) is empty and
 * only waited for. A pinned one is pinned instead, for its readers (its
 * printf writes to them). Then the run ends, as bpftrace's does. */
int engine_run_iterators(struct engine *e)
{
	char buf[4096];
	bool any = false;
	for (uint32_t i = 0; i < e->nprobes; i++) {
		struct engine_probe *ep = &e->probes[i];
		if (!ep->has_req || ep->req.how != ATTACH_ITER ||
		    !ep->link_fds.n)
			continue;
		any = true;
		if (ep->req.symbol) {
			/* pinned: whoever reads the file runs it */
			int r = pin_link(ep->link_fds.v[0], ep->req.symbol);
			if (r < 0) {
				log_error("probe %s: cannot pin the iterator to "
					  "%s: %s", ep->probe->name,
					  ep->req.symbol, strerror(-r));
				return r;
			}
			printf("Program pinned to %s\n", ep->req.symbol);
			fflush(stdout);
			continue;
		}
		int fd = bpf_iter_create(ep->link_fds.v[0]);
		if (fd < 0) {
			log_error("probe %s: cannot create the iterator: %s",
				  ep->probe->name, strerror(-fd));
			return fd;
		}
		ssize_t n;
		while ((n = read(fd, buf, sizeof(buf))) > 0 ||
		       (n < 0 && errno == EINTR && !cancel_requested()))
			;
		int err = n < 0 ? -errno : 0;
		close(fd);
		if (err < 0) {
			log_error("probe %s: the iterator failed: %s",
				  ep->probe->name, strerror(-err));
			return err;
		}
	}
	e->iters_done = any;
	return 0;
}

/* D's dtrace:::ERROR probes, run at a clause's fault with its
 * arguments as the context's words (arg0..arg5). */
int engine_run_fault(struct engine *e, const uint64_t args[6])
{
	return run_once(e, false, true, args);
}

/* BEGIN runs before the other probes are attached (main.c), as in
 * bpftrace 0.17: an interval's clock starts after it. */
int engine_run_begin(struct engine *e)
{
	return run_once(e, false, false, NULL);
}

/* --mode bench: each bench:NAME in script order, run back to back for
 * about BENCH_BUDGET_MS (at most BENCH_MAX_ITERS times), timed from
 * sonde: a raw tracepoint program's test run takes no repeat count, so
 * each run is a BPF_PROG_TEST_RUN of its own and the average holds that
 * system call's cost too. */
#define BENCH_BUDGET_MS 100.0
#define BENCH_MAX_ITERS 1000000u

int engine_run_bench(struct engine *e,
		     int (*report)(void *arg, const char *name,
				   uint64_t avg_ns, uint64_t iters),
		     void *arg)
{
	uint64_t ctx[12] = { 0 };
	for (uint32_t i = 0; i < e->nprobes; i++) {
		struct engine_probe *ep = &e->probes[i];
		if (!ep->has_req || ep->req.how != ATTACH_TEST_RUN ||
		    !ep->req.bench || ep->prog_fd < 0)
			continue;
		uint64_t iters = 0;
		double t0 = log_now_ms(), t = t0;
		while (iters < BENCH_MAX_ITERS && t - t0 < BENCH_BUDGET_MS &&
		       !cancel_requested()) {
			for (int k = 0; k < 100; k++, iters++) {
				LIBBPF_OPTS(bpf_test_run_opts, o, .ctx_in = ctx,
					    .ctx_size_in = sizeof(ctx));
				int r = bpf_prog_test_run_opts(ep->prog_fd, &o);
				if (r < 0) {
					log_error("probe %s: cannot run: %s",
						  ep->probe->name,
						  strerror(-r));
					return r;
				}
			}
			t = log_now_ms();
		}
		uint64_t avg = iters ? (uint64_t)((t - t0) * 1e6 / iters) : 0;
		const char *name = ep->probe->func ? ep->probe->func :
			ep->probe->name;
		int r = report(arg, name, avg, iters);
		if (r < 0)
			return r;
	}
	return 0;
}

int engine_run_end(struct engine *e)
{
	/* Nothing fires during END and the map printing after it; events
	 * still in the ring are delivered (or ignored after exit()) first. */
	double t0 = log_now_ms();
	engine_release_each(e, engine_stop_probe);
	if (e->nprobes)
		log_info("stopped %u probe%s in %.1f ms", e->nprobes,
			 e->nprobes == 1 ? "" : "s", log_now_ms() - t0);
	engine_drain(e);
	engine_watch_stop(e);
	e->ignore_events = false;
	e->stopped = false;
	return run_once(e, true, false, NULL);
}

/* What a ring_buffer__poll/consume result means to engine_poll. */
static int ring_result(struct engine *e, int r)
{
	if (e->stopped) {
		e->stopped = false;
		return 1;
	}
	if (r == SAMPLE_BREAK && e->spent)
		return 0;
	return r < 0 ? r : 0;
}

/* exit() whose record the ring could not take still ends the run. */
static bool exit_lost(struct engine *e)
{
	return e->globals && !e->ignore_events && e->globals->exit_lost;
}

/* Records mostly arrive without a wake-up (codegen wake_flags), so the
 * reader sleeps on the ring's epoll descriptor for at most the drain
 * interval and then consumes whatever is there, woken early only by a
 * burst (the ring a quarter full) or by exit(). After a poll that stopped
 * on its budget the next one does not sleep at all. */
int engine_poll(struct engine *e, int timeout_ms)
{
	if (e->iters_done) {        /* what they printed, then the end */
		int r = engine_drain(e);
		return r < 0 ? r : 1;
	}
	int r = engine_ring_open(e);       /* if attaching did not (nothing to) */
	if (r < 0)
		return r;
	if (!e->rb) {
		/* No ring: just wait, so signals still end the wait. */
		if (poll(NULL, 0, timeout_ms) < 0)
			return -errno;
		skb_consume(e);
		return 0;
	}
	if (timeout_ms < 0 || timeout_ms > DRAIN_INTERVAL_MS)
		timeout_ms = DRAIN_INTERVAL_MS;
	if (!e->backlog) {
		if (e->globals)
			__atomic_store_n(&e->globals->wake_armed, 1,
					 __ATOMIC_SEQ_CST);
		struct epoll_event ev;
		if (epoll_wait(ring_buffer__epoll_fd(e->rb), &ev, 1,
			       timeout_ms) < 0 && errno == EINTR)
			return -EINTR;
	}
	skb_consume(e);
	e->handled = 0;
	e->spent = false;
	e->poll_deadline_ms = log_now_ms() + POLL_BUDGET_MS;
	r = ring_result(e, ring_buffer__consume(e->rb));
	e->poll_deadline_ms = 0;
	e->backlog = e->spent;
	if (r == 0 && !e->backlog && exit_lost(e)) {
		e->ignore_events = true;
		return 1;
	}
	return r;
}

int engine_drain(struct engine *e)
{
	if (!e)
		return 0;
	skb_consume(e);
	int r = engine_ring_open(e);       /* if attaching did not (nothing to) */
	if (r < 0 || !e->rb)
		return r;
	/* Until empty, but not forever if probes keep firing. */
	for (int round = 0; round < 64; round++) {
		e->handled = 0;
		e->spent = false;
		r = ring_result(e, ring_buffer__consume(e->rb));
		if (r != 0 || !e->spent)
			return r;
	}
	return 0;
}

const struct map_reader *engine_map_reader(struct engine *e)
{
	return e ? &e->reader : NULL;
}

/* Codegen counts the records the ring refused in the .globals record
 * (struct sonde_globals.lost_events). */
unsigned long long engine_lost_events(struct engine *e)
{
	if (!e || e->prog->globals_map < 0)
		return 0;
	if (e->globals)
		return __atomic_load_n(&e->globals->lost_events,
				       __ATOMIC_RELAXED);
	const struct map_spec *m = &e->prog->maps[e->prog->globals_map];
	if (m->value_size < sizeof(struct sonde_globals))
		return 0;
	uint8_t *value = calloc(1, m->value_size);
	uint32_t key = 0;
	struct sonde_globals g = { 0 };
	if (value && bpf_map_lookup_elem(e->map_fds[e->prog->globals_map],
					 &key, value) == 0)
		memcpy(&g, value, sizeof(g));
	free(value);
	return g.lost_events;
}

void engine_free(struct engine *e)
{
	if (!e)
		return;
	double t0 = log_now_ms();
	engine_detach_all(e);
	engine_watch_stop(e);
	skb_consume(e);             /* what came before the detach */
	if (e->skb_lost)
		log_warn("skboutput(): %llu packets lost: the perf buffer was "
			 "full (BPFTRACE_PERF_RB_PAGES sets its pages per CPU)",
			 e->skb_lost);
	perf_buffer__free(e->skb_pb);
	ring_buffer__free(e->rb);
	for (uint32_t i = 0; i < e->nprobes; i++) {
		if (e->probes[i].prog_fd >= 0)
			close(e->probes[i].prog_fd);
		if (e->probes[i].setup_fd >= 0)
			close(e->probes[i].setup_fd);
		free(e->probes[i].verifier_log);
		free(e->probes[i].dispatch_insns);
		vec_free(&e->probes[i].members);
	}
	free(e->probes);
	engine_maps_close(e);
	log_info("released programs, maps and the ring in %.1f ms",
		 log_now_ms() - t0);
	free(e);
}

const struct engine_ops engine_kernel = {
	.name = "kernel",
	.load = engine_load,
	.attach = engine_attach,
	.run_begin = engine_run_begin,
	.run_bench = engine_run_bench,
	.run_end = engine_run_end,
	.run_fault = engine_run_fault,
	.poll = engine_poll,
	.drain = engine_drain,
	.map_reader = engine_map_reader,
	.lost_events = engine_lost_events,
	.free = engine_free,
};
