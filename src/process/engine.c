/* engine.c - the process engine on sonde's side: the same compiled
 * program as the kernel engine's, run without kernel BPF.
 *
 * Probes that run in sonde itself (BEGIN, END, interval timers) run here,
 * through src/vm/ with the user-space helpers of src/runtime/. Probes at
 * sites of the traced process (USDT) run in that process: the agent
 * library (src/agent/), preloaded into the -c command or loaded into a
 * running -p process over ptrace (fprobes.c, attach.c), maps the region
 * sonde built (layout.c), patches the sites and runs their bytecode when
 * they are reached. Function entries and returns (uprobe, uretprobe) run
 * there too, but sonde patches them itself, with the process stopped
 * (fprobes.c). Both sides write the same maps and the same event
 * ring in shared memory, which sonde reads as it reads the kernel's: the
 * ring into the same event handler, the maps through a map_reader
 * (reader.c). What the providers say (their `process` hook) decides what
 * runs where; a probe whose provider has none needs the kernel, and
 * check() refuses the script.
 *
 * The traced process can write anything into the region: sonde's own
 * probes write a ring of their own (so their events cannot be forged),
 * a record of the shared ring must be of an event the agents' probes
 * write, and a region found broken (ring.c's checks, a map's, the
 * guard's) ends the session with one error naming the process.
 *
 * Events follow the kernel engine's rules: records after exit() are
 * ignored until END runs, the reader drains the ring at least every
 * DRAIN_INTERVAL_MS and is woken early by a burst or by exit() (the
 * agents write to an eventfd), and END runs after every agent has
 * detached, so nothing fires while END runs and the maps are printed. */
#include <errno.h>
#include <linux/bpf.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../base/log.h"
#include "../vm/vm.h"
#include "guard.h"
#include "tracee.h"
#include "proc_int.h"

/* Records handled per poll, and the time they may take: records can
 * cost milliseconds each (a user stack unwound, a new process's files
 * read), and what the caller does between polls (a metrics scrape, the
 * sweeps that bound memory, signals) must not wait seconds. Past either
 * the rest waits in the ring for the next poll, which does not sleep
 * (as in the kernel engine). */
#define POLL_BUDGET 8192
#define POLL_BUDGET_MS 50.0
/* A map lock the traced process holds for good (it may write anything
 * there) costs sonde this many yields per operation, not the agent's
 * 20,000 (reader.c stops after a few such failures). */
#define SONDE_LOCK_YIELDS 200
#define DRAIN_INTERVAL_MS 10

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#define HELPER_NAME(x) #x
static const char *const helper_names[] = {
	__BPF_FUNC_MAPPER(HELPER_NAME)
};
#undef HELPER_NAME

/* The first helper the bytecode calls that the runtime lacks, or -1. */
static int missing_helper(const struct probe *p)
{
	for (uint32_t i = 0; i < p->ninsns; i++) {
		const struct bpf_insn *in = &p->insns[i];
		if (in->code != (BPF_JMP | BPF_CALL) || in->src_reg != 0)
			continue;
		if (in->imm < 0 || (uint32_t)in->imm >= rt_nhelpers ||
		    !rt_helpers[in->imm])
			return in->imm;
	}
	return -1;
}

static int process_check(const struct program *prog,
			 const struct engine_opts *opts, bool quiet)
{
	unsigned bad = 0;
	void (*say)(const char *, ...) = quiet ? log_info : log_error;
	for (uint32_t i = 0; i < prog->nprobes && bad < 20; i++) {
		const struct probe *p = &prog->probes[i];
		const struct process_req req = p->process;
		if (p->process_err < 0) {
			say("probe %s: the process engine cannot run %s probes: "
			    "they need the kernel (use the kernel engine, without "
			    "--engine=process)", p->name, p->kind ? p->kind : "these");
			bad++;
			continue;
		}
		if ((req.how == PROCESS_USDT || req.how == PROCESS_FUNC) &&
		    !opts->cpid && opts->pid <= 0) {
			say("probe %s: the process engine runs it inside the "
			    "traced program: name it with -c CMD or -p PID",
			    p->name);
			bad++;
		}
		int h = missing_helper(p);
		if (h == BPF_FUNC_get_current_task) {
			say("probe %s: curtask is the kernel's task_struct: the "
			    "process engine cannot read it (use the kernel "
			    "engine)", p->name);
			bad++;
		} else if (h >= 0) {
			say("probe %s: the program calls bpf_%s, which the process "
			    "engine does not provide", p->name,
			    (size_t)h < sizeof(helper_names) / sizeof(*helper_names) ?
			    helper_names[h] : "?");
			bad++;
		}
	}
	return bad ? -EOPNOTSUPP : 0;
}

static void vm_env_of(const struct engine *e, struct vm_env *env, bool no_jit)
{
	memset(env, 0, sizeof(*env));
	env->helpers = (const vm_helper_fn *)rt_helpers;
	env->nhelpers = rt_nhelpers;
	env->maps = e->rt.map_addrs;
	env->nmaps = e->rt.nmaps;
	env->no_jit = no_jit;
}

/* Load every probe into the VM: sonde's own to run them, the agents' to
 * find a bad program now rather than in the target. The agents' are
 * compiled here too, so that -v says whether each probe runs as native
 * code or interpreted (and why): an agent compiles the same bytecode
 * with the same JIT, so only a target that refuses executable memory
 * decides otherwise. */
static int load_programs(struct engine *e)
{
	const char *nojit = getenv("SONDE_NO_JIT");   /* as control.c reads it */
	bool no_jit = nojit && strcmp(nojit, "0") != 0;
	for (uint32_t i = 0; i < e->nprobes; i++) {
		struct proc_probe *pp = &e->probes[i];
		const struct probe *p = pp->probe;
		bool here = pp->req.how != PROCESS_USDT &&
			    pp->req.how != PROCESS_FUNC;
		struct vm_env env;
		vm_env_of(e, &env, no_jit);
		char err[256] = "";
		struct vm_prog *vp = vm_prog_load(p->insns, p->ninsns, &env,
						  err, sizeof(err));
		if (!vp) {
			log_error("probe %s: the process engine cannot load its "
				  "program: %s", p->name, err[0] ? err :
				  strerror(errno));
			return -EINVAL;
		}
		const char *why = vm_prog_jit_error(vp);
		if (why)
			log_info("probe %s: loaded (%u instructions, interpreted: "
				 "%s)", p->name, p->ninsns, why);
		else
			log_info("probe %s: loaded (%u instructions, native code, "
				 "%zu bytes)", p->name, p->ninsns,
				 vm_prog_native_size(vp));
		if (here)
			pp->vm = vp;
		else
			vm_prog_free(vp);
	}
	return 0;
}

static void process_free(struct engine *e);

int proc_traced_pid(const struct engine *e)
{
	return e->opts.pid > 0 ? e->opts.pid : e->opts.cpid;
}

int proc_region_broken(struct engine *e, const char *fmt, ...)
{
	if (!e->broken) {
		char what[256];
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(what, sizeof(what), fmt, ap);
		va_end(ap);
		e->broken = true;
		log_error("process engine: process %d broke the memory it shares "
			  "with sonde (%s): its session ends", proc_traced_pid(e),
			  what);
	}
	return -ECANCELED;
}

/* The events the agents' probes may write: those of their blocks, and
 * those codegen adds to any probe (stacks, pids, helper errors). A
 * record of another event in the shared ring was not written by an
 * agent. */
static int agent_events_of(struct engine *e)
{
	const struct program *prog = e->prog;
	e->agent_events = calloc(prog->nevents ? prog->nevents : 1, 1);
	if (!e->agent_events)
		return -ENOMEM;
	for (uint32_t k = 0; k < prog->nevents; k++) {
		const struct event_spec *ev = &prog->events[k];
		bool ok = !ev->block_known;
		for (uint32_t i = 0; i < e->nprobes && !ok; i++) {
			const struct proc_probe *pp = &e->probes[i];
			ok = (pp->req.how == PROCESS_USDT ||
			      pp->req.how == PROCESS_FUNC) &&
			     pp->probe->block == ev->block;
		}
		e->agent_events[k] = ok;
	}
	return 0;
}

/* sonde's own probes write into a ring of their own (the shared one's
 * size), which the map reference of the bytecode sonde runs points to. */
static int own_ring_open(struct engine *e)
{
	int m = e->rt.hdr.ring_map;
	if (m < 0)
		return 0;
	int r = rt_ring_private(e->rt.ring.size, &e->own_ring);
	if (r < 0) {
		log_error("process engine: cannot make its event ring: %s",
			  strerror(-r));
		return r;
	}
	e->rt.maps[m].ring = &e->own_ring;
	return 0;
}

static int process_load(const struct program *prog,
			const struct engine_opts *opts, struct engine **out)
{
	*out = NULL;
	struct engine *e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->prog = prog;
	e->opts = *opts;
	e->memfd = e->listen_fd = e->wake_fd = -1;
	e->probes = calloc(prog->nprobes ? prog->nprobes : 1,
			   sizeof(*e->probes));
	int r = -ENOMEM;
	if (!e->probes)
		goto fail;
	e->nprobes = prog->nprobes;
	for (uint32_t i = 0; i < e->nprobes; i++) {
		struct proc_probe *pp = &e->probes[i];
		pp->probe = &prog->probes[i];
		pp->req = pp->probe->process;
		r = pp->probe->process_err;
		if (r < 0) {
			log_error("probe %s: the process engine cannot run it",
				  pp->probe->name);
			goto fail;
		}
		e->nsites += pp->req.how == PROCESS_USDT;
		e->nfuncs += pp->req.how == PROCESS_FUNC;
	}
	if ((r = proc_region_create(e)) < 0 || (r = own_ring_open(e)) < 0 ||
	    (r = agent_events_of(e)) < 0)
		goto fail;
	for (uint32_t i = 0; i < e->nprobes; i++)
		e->nstock += e->probes[i].stock_site;
	e->site_addr = calloc(e->nsites ? e->nsites : 1, sizeof(*e->site_addr));
	if (!e->site_addr) {
		r = -ENOMEM;
		goto fail;
	}
	/* sonde runs its own probes in slot 0, reading its own memory
	 * through process_vm_readv (it has no fault handler) */
	rt_process_init(false);
	rt_proc.ring = &e->own_ring;
	rt_proc.lock_yields = SONDE_LOCK_YIELDS;
	rt_self.slot = 0;
	rt_self.regs = NULL;
	if ((r = load_programs(e)) < 0)
		goto fail;
	if (proc_uses_agent(e) && (r = proc_control_open(e)) < 0)
		goto fail;
	proc_reader_init(e);
	*out = e;
	return 0;
fail:
	process_free(e);
	return r;
}

static const char *const *process_child_env(struct engine *e)
{
	return proc_uses_agent(e) ? (const char *const *)e->env : NULL;
}

static int process_attach(struct engine *e)
{
	/* the sites are patched by the agents as they come; a -c command's
	 * functions when its agent says hello (control.c) */
	e->attached = true;
	/* -p: the agent is loaded into the running process now (before the
	 * timers start, as the kernel engine's start once attached) */
	if (e->opts.pid > 0 && proc_uses_agent(e)) {
		int r = proc_fprobes_attach(e, e->opts.pid, true);
		if (r < 0)
			return r;
	} else if (e->opts.pid > 0) {
		/* nothing runs in it, but a killed run's patches may be
		 * there: a -p run puts them back whatever its probes */
		proc_fprobes_cleanup(e, e->opts.pid);
	}
	int n = 0;
	uint64_t now = now_ns();
	for (uint32_t i = 0; i < e->nprobes; i++) {
		struct proc_probe *pp = &e->probes[i];
		if (pp->req.how == PROCESS_TIMER) {
			pp->next_ns = now + pp->req.period_ns;
			n++;
		} else if (pp->req.how == PROCESS_USDT ||
			   pp->req.how == PROCESS_FUNC) {
			n++;
		}
	}
	return n;
}

/* Run one of sonde's own probes, args its first words (or none). */
static void run_here_with(struct engine *e, struct proc_probe *pp,
			  const uint64_t *args, unsigned nargs)
{
	/* room for any context the program may read: zero past args */
	uint64_t ctx[32] = { 0 };
	uint64_t ret;
	for (unsigned i = 0; i < nargs && i < 32; i++)
		ctx[i] = args[i];
	rt_self.regs = NULL;
	rt_self.slot = 0;
	if (vm_prog_run(pp->vm, ctx, &ret) == -E2BIG)
		log_warn("probe %s: stopped after too many instructions",
			 pp->probe->name);
}

static void run_here(struct engine *e, struct proc_probe *pp)
{
	run_here_with(e, pp, NULL, 0);
}

/* Every probe run by sonde itself as HOW (BEGIN, END, D's ERROR with
 * the fault's ARGS). */
static int run_once(struct engine *e, enum process_how how,
		    const uint64_t *args, unsigned nargs)
{
	for (uint32_t i = 0; i < e->nprobes; i++)
		if (e->probes[i].req.how == how && e->probes[i].vm)
			run_here_with(e, &e->probes[i], args, nargs);
	return 0;
}

static int process_run_fault(struct engine *e, const uint64_t args[6])
{
	return run_once(e, PROCESS_FAULT, args, 6);
}

static int process_run_begin(struct engine *e)
{
	return run_once(e, PROCESS_BEGIN, NULL, 0);
}

static int on_record(void *arg, void *data, uint32_t size)
{
	struct engine *e = arg;
	if (e->ignore_events || !e->opts.on_event)
		return 0;
	if (e->opts.on_event(e->opts.event_ctx, data, size) == 1) {
		e->stopped = true;
		e->ignore_events = true;
		return 1;
	}
	if (log_now_ms() >= e->poll_deadline_ms) {
		e->spent = true;
		return RT_RING_PAUSE;
	}
	return 0;
}

/* A record of the shared ring: an event the agents' probes write. */
static int on_shared_record(void *arg, void *data, uint32_t size)
{
	struct engine *e = arg;
	uint64_t id;
	if (size < sizeof(id)) {
		proc_region_broken(e, "a record of %u bytes in the event ring, "
				   "too short to name its event", size);
		return -1;
	}
	memcpy(&id, data, sizeof(id));
	/* D: a speculation's records carry it in the high half (bounded
	 * where it is held: output/dspec.c) */
	if (e->prog->dtrace.speculates)
		id &= 0xffffffff;
	if (id >= e->prog->nevents || !e->agent_events[id]) {
		proc_region_broken(e, "a record of event %llu in the event ring, "
				   "which none of its probes writes",
				   (unsigned long long)id);
		return -1;
	}
	return on_record(arg, data, size);
}

/* Consume the rings, the traced process's, then sonde's own (its timers
 * ran just before: what the process wrote until then comes first): 1
 * when a handler asked to stop, -ECANCELED once the shared one is found
 * broken (said), else 0. */
static int consume(struct engine *e)
{
	e->handled = 0;
	e->spent = false;
	e->poll_deadline_ms = log_now_ms() + POLL_BUDGET_MS;
	if (e->broken)
		return -ECANCELED;
	if (guard_tripped())
		return proc_region_broken(e, "it cut the shared memory short");
	int r = rt_ring_consume(&e->rt.ring, on_shared_record, e, POLL_BUDGET,
				&e->stalled);
	if (r == -EBADMSG)
		return proc_region_broken(e, "the event ring holds %s, at "
					  "position %llu (%llu)", e->rt.ring.bad,
					  (unsigned long long)e->rt.ring.bad_pos,
					  (unsigned long long)e->rt.ring.bad_value);
	if (e->broken)
		return -ECANCELED;
	if (!e->stopped && r >= 0) {
		e->handled = (unsigned)r;
		if (e->spent)   /* sonde's own ring waits for the next poll */
			goto out;
		r = rt_ring_consume(&e->own_ring, on_record, e, POLL_BUDGET,
				    &e->stalled);
		if (r > 0)
			e->handled += (unsigned)r;
	}
out:
	if (e->stopped) {
		e->stopped = false;
		return 1;
	}
	return 0;
}

static int process_drain(struct engine *e)
{
	if (!e)
		return 0;
	for (int round = 0; round < 64; round++) {
		int r = consume(e);
		if (r != 0 || !(e->handled >= POLL_BUDGET || e->spent))
			return r;
	}
	return 0;
}

/* -v: what the agents counted that the user may want to know. */
static void say_stats(struct engine *e)
{
	const struct rt_header *h = e->rt.shared;
	uint64_t nested = __atomic_load_n(&h->nested, __ATOMIC_RELAXED);
	uint64_t aborted = __atomic_load_n(&h->aborted, __ATOMIC_RELAXED);
	uint64_t waits = __atomic_load_n(&h->slot_waits, __ATOMIC_RELAXED);
	if (nested || aborted || waits || e->stalled)
		log_info("process engine: %llu hits skipped inside another "
			 "(signal handlers), %llu runs stopped by the VM's "
			 "instruction budget, %llu hits lost waiting for the "
			 "shared slot, %llu ring records of dead writers",
			 (unsigned long long)nested, (unsigned long long)aborted,
			 (unsigned long long)waits,
			 (unsigned long long)e->stalled);
}

static int process_run_end(struct engine *e)
{
	proc_fprobes_detach(e);
	proc_control_detach(e);
	say_stats(e);
	if (proc_uses_agent(e) && !e->traced && e->opts.cpid > 0)
		log_warn("process engine: the command never loaded the agent "
			 "library (a statically linked or set-user-ID program "
			 "ignores LD_PRELOAD): its probes did not run");
	for (uint32_t i = 0; i < e->nprobes; i++)
		e->probes[i].next_ns = 0;      /* timers stop */
	process_drain(e);
	if (e->broken)
		return -ECANCELED;   /* no END over a region it broke */
	e->ignore_events = false;
	e->stopped = false;
	return run_once(e, PROCESS_END, NULL, 0);
}

/* Run the timers that are due; returns ms until the next one (or -1). */
static int run_timers(struct engine *e)
{
	uint64_t now = now_ns(), next = 0;
	for (uint32_t i = 0; i < e->nprobes; i++) {
		struct proc_probe *pp = &e->probes[i];
		if (pp->req.how != PROCESS_TIMER || !pp->next_ns || !pp->vm)
			continue;
		if (pp->next_ns <= now && !e->ignore_events) {
			run_here(e, pp);
			pp->next_ns += pp->req.period_ns;
			if (pp->next_ns <= now)     /* fell behind: skip ticks */
				pp->next_ns = now + pp->req.period_ns;
		}
		if (!next || pp->next_ns < next)
			next = pp->next_ns;
	}
	if (!next)
		return -1;
	now = now_ns();
	return next <= now ? 0 : (int)((next - now + 999999) / 1000000);
}

static bool exit_lost(struct engine *e)
{
	return e->globals && !e->ignore_events && e->globals->exit_lost;
}

static int process_poll(struct engine *e, int timeout_ms)
{
	if (timeout_ms < 0 || timeout_ms > DRAIN_INTERVAL_MS)
		timeout_ms = DRAIN_INTERVAL_MS;
	int until_timer = run_timers(e);
	if (until_timer >= 0 && until_timer < timeout_ms)
		timeout_ms = until_timer;
	if (!e->backlog) {
		struct pollfd p[2 + PROC_CONNS_MAX];
		int fds[1 + PROC_CONNS_MAX];
		uint32_t n = proc_control_fds(e, fds, 1 + PROC_CONNS_MAX);
		p[0] = (struct pollfd){ e->wake_fd, POLLIN, 0 };
		for (uint32_t i = 0; i < n; i++)
			p[1 + i] = (struct pollfd){ fds[i], POLLIN, 0 };
		if (e->globals)
			__atomic_store_n(&e->globals->wake_armed, 1,
					 __ATOMIC_SEQ_CST);
		if (poll(p, 1 + n, timeout_ms) < 0 && errno == EINTR)
			return -EINTR;
		if (p[0].revents) {
			uint64_t v;
			if (read(e->wake_fd, &v, sizeof(v)) < 0)
				v = 0;
		}
		short rev[1 + PROC_CONNS_MAX];
		for (uint32_t i = 0; i < n; i++)
			rev[i] = p[1 + i].revents;
		if (n && proc_control_poll(e, rev, n) < 0)
			return -ECANCELED;
	}
	run_timers(e);
	int r = consume(e);
	if (r < 0)
		return r;
	e->backlog = e->handled >= POLL_BUDGET || e->spent;
	if (r == 0 && !e->backlog && exit_lost(e)) {
		e->ignore_events = true;
		return 1;
	}
	return r;
}

static const struct map_reader *process_map_reader(struct engine *e)
{
	return e ? &e->reader : NULL;
}

static unsigned long long process_lost_events(struct engine *e)
{
	if (!e)
		return 0;
	uint64_t n = e->stalled;
	if (e->globals)
		n += __atomic_load_n(&e->globals->lost_events, __ATOMIC_RELAXED);
	return n;
}

static void process_free(struct engine *e)
{
	if (!e)
		return;
	/* closing the channel detaches any agent still attached */
	proc_fprobes_detach(e);
	proc_control_close(e);
	for (uint32_t i = 0; i < e->nprobes; i++)
		vm_prog_free(e->probes[i].vm);
	free(e->probes);
	if (rt_proc.ring == &e->rt.ring)
		rt_proc.ring = NULL;
	if (e->rt.base)
		guard_remove(e->rt.base);
	if (e->rt.ring_area)
		guard_remove(e->rt.ring_area);
	rt_close(&e->rt);
	rt_ring_private_close(&e->own_ring);
	free(e->agent_events);
	free(e->site_addr);
	if (e->memfd >= 0)
		close(e->memfd);
	free(e);
}

/* -p: a process sonde may not trace (another user's, Yama, a zombie...)
 * is refused with the reason before anything is compiled: the script's
 * paths, resolved inside it, would otherwise fail first, for a reason
 * that hides this one. */
static int process_preflight_pid(int pid)
{
	char why[512];
	int r = tracee_precheck(pid, why, sizeof(why));
	if (r < 0)
		log_error("-p %d: %s", pid, why);
	return r;
}

const struct engine_ops engine_process = {
	.name = "process",
	.preflight_pid = process_preflight_pid,
	.check = process_check,
	.load = process_load,
	.child_env = process_child_env,
	.attach = process_attach,
	.run_begin = process_run_begin,
	.run_end = process_run_end,
	.run_fault = process_run_fault,
	.poll = process_poll,
	.drain = process_drain,
	.map_reader = process_map_reader,
	.lost_events = process_lost_events,
	.free = process_free,
};
