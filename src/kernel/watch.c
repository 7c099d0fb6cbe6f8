/* watch.c - watchpoint:FUNCTION+argN at run time: the setup programs at
 * the functions' entries, and the breakpoints they ask for.
 *
 * A probe of that form (attach_req.on_request) is not attached when the
 * run starts. Its setup program (probe.setup_insns, codegen.c) is, as a
 * uprobe in the traced process; when the function is entered it stops
 * the task with SIGSTOP (unless asyncwatchpoint), and sends an EV_WATCH
 * record naming the probe and the address its argument holds. Reading
 * that record, the engine opens a hardware breakpoint there in the
 * traced process, runs the probe's program on it, and sends SIGCONT; as
 * bpftrace 0.17 does, an address a probe already watches is not set
 * again, and a full set of debug registers (ENOSPC) is said in its words
 * ("You are out of watchpoint registers"), the task let go all the same.
 * unwatch(addr) (EV_UNWATCH) closes every breakpoint at that address.
 * The breakpoints stop before END runs, with the other probes. */
#include <errno.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "../base/log.h"
#include "engine_int.h"

/* At most this many breakpoints at once (a CPU has 4 debug registers;
 * the kernel refuses more long before). */
#define WATCHES_MAX 64

static int traced_pid(const struct engine *e)
{
	return e->opts.pid > 0 ? e->opts.pid : e->opts.cpid;
}

static int perf_event(struct perf_event_attr *attr, int pid)
{
	attr->size = sizeof(*attr);
	attr->sample_period = 1;
	attr->wakeup_events = 1;
	int fd = (int)syscall(__NR_perf_event_open, attr, pid, -1, -1,
			      PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int engine_watch_load(struct engine *e, struct engine_probe *ep)
{
	const struct probe *p = ep->probe;
	ep->setup_fd = -1;
	if (!p->setup_insns || !p->nsetup_insns)
		return 0;
	struct bpf_insn *insns = malloc(p->nsetup_insns * sizeof(*insns));
	if (!insns)
		return -ENOMEM;
	memcpy(insns, p->setup_insns, p->nsetup_insns * sizeof(*insns));
	int r = engine_patch_maps(e, p, insns, p->nsetup_insns);
	char log[4096] = "";
	if (r == 0) {
		r = bpf_prog_load(BPF_PROG_TYPE_KPROBE, "watch_setup", "GPL",
				  insns, p->nsetup_insns, NULL);
		if (r < 0) {   /* again, for the verifier's reason */
			LIBBPF_OPTS(bpf_prog_load_opts, o, .log_buf = log,
				    .log_size = sizeof(log), .log_level = 1);
			int r2 = bpf_prog_load(BPF_PROG_TYPE_KPROBE,
					       "watch_setup", "GPL", insns,
					       p->nsetup_insns, &o);
			if (r2 >= 0)
				r = r2;
		}
		if (r >= 0)
			ep->setup_fd = r;
	}
	free(insns);
	if (r < 0) {
		log_error("probe %s: cannot load its setup program: %s",
			  p->name, strerror(-r));
		if (log[0])
			log_info("the verifier said:\n%s", log);
	}
	return r < 0 ? r : 0;
}

int engine_watch_attach_setup(struct engine *e, struct engine_probe *ep)
{
	const struct attach_req *q = &ep->req;
	int pid = traced_pid(e);
	if (ep->setup_fd < 0 || pid <= 0) {
		log_error("probe %s: watching a function's argument needs the "
			  "traced process (-p or -c)", ep->probe->name);
		return -EINVAL;
	}
	struct perf_event_attr attr = {
		.type = q->setup_perf_type,
		.config1 = (uint64_t)(uintptr_t)q->setup_path,
		.config2 = q->setup_offset,
	};
	int pfd = perf_event(&attr, pid);
	if (pfd < 0) {
		log_error("probe %s: cannot attach its setup uprobe at "
			  "%s+0x%llx: %s", ep->probe->name, q->setup_path,
			  (unsigned long long)q->setup_offset, strerror(-pfd));
		return pfd;
	}
	return engine_keep_perf(ep, ep->setup_fd, pfd, "its setup program");
}

static void watch_close(struct engine_watch *w)
{
	if (w->link >= 0)
		close(w->link);
	else
		ioctl(w->pfd, PERF_EVENT_IOC_DISABLE, 0);
	close(w->pfd);
}

/* The breakpoint probe `index` asks for at addr. */
static void watch_set(struct engine *e, uint64_t index, uint64_t addr)
{
	if (index >= e->nprobes || !e->probes[index].req.on_request)
		return;       /* not a record this program can send */
	struct engine_probe *ep = &e->probes[index];
	int pid = traced_pid(e);
	bool stop = ep->req.stop;
	if (e->ignore_events)
		goto cont;    /* after exit(): nothing more is watched */
	for (size_t i = 0; i < e->watches.n; i++)
		if (e->watches.v[i].probe == index &&
		    e->watches.v[i].addr == addr)
			goto cont;    /* already watched by this probe */
	if (e->watches.n >= WATCHES_MAX) {
		log_warn("probe %s: more than %d watchpoints at once; 0x%llx "
			 "not watched", ep->probe->name, WATCHES_MAX,
			 (unsigned long long)addr);
		goto cont;
	}
	struct perf_event_attr attr = {
		.type = PERF_TYPE_BREAKPOINT,
		.bp_type = ep->req.bp_type,
		.bp_addr = addr,
		.bp_len = ep->req.perf_config2,
	};
	int pfd = perf_event(&attr, pid);
	if (pfd == -ENOSPC) {
		/* bpftrace 0.17's words */
		log_warn("Failed to attach watchpoint probe. You are out of "
			 "watchpoint registers.");
		goto cont;
	}
	if (pfd < 0) {
		log_warn("probe %s: cannot watch 0x%llx: %s", ep->probe->name,
			 (unsigned long long)addr, strerror(-pfd));
		goto cont;
	}
	int prog = ep->leader >= 0 ? e->probes[ep->leader].prog_fd :
		ep->prog_fd;
	int link = engine_perf_link(prog, pfd);
	if (link < -1) {
		log_warn("probe %s: cannot attach its program at 0x%llx: %s",
			 ep->probe->name, (unsigned long long)addr,
			 strerror(-link));
		close(pfd);
		goto cont;
	}
	struct engine_watch w = { (uint32_t)index, addr, pfd, link };
	if (vec_push(&e->watches, w) < 0)
		watch_close(&w);
	log_info("probe %s: watching 0x%llx", ep->probe->name,
		 (unsigned long long)addr);
cont:
	/* the setup program stopped the task: let it go on */
	if (stop && pid > 0 && kill(pid, SIGCONT) < 0)
		log_warn("probe %s: cannot continue process %d: %s",
			 ep->probe->name, pid, strerror(errno));
}

static void watch_remove(struct engine *e, uint64_t addr)
{
	size_t k = 0;
	for (size_t i = 0; i < e->watches.n; i++) {
		if (e->watches.v[i].addr == addr)
			watch_close(&e->watches.v[i]);
		else
			e->watches.v[k++] = e->watches.v[i];
	}
	e->watches.n = k;
}

bool engine_watch_record(struct engine *e, const void *data, size_t size)
{
	uint64_t id;
	if (size < 8)
		return false;
	memcpy(&id, data, 8);
	if (id >= e->prog->nevents)
		return false;
	enum event_kind kind = e->prog->events[id].kind;
	if (kind == EV_WATCH) {
		struct sonde_watch_record r;
		if (size >= sizeof(r)) {
			memcpy(&r, data, sizeof(r));
			watch_set(e, r.probe, r.addr);
		}
		return true;
	}
	if (kind == EV_UNWATCH) {
		uint64_t addr;
		if (size >= 16) {
			memcpy(&addr, (const char *)data + 8, 8);
			watch_remove(e, addr);
		}
		return true;
	}
	return false;
}

void engine_watch_stop(struct engine *e)
{
	for (size_t i = 0; i < e->watches.n; i++)
		watch_close(&e->watches.v[i]);
	vec_free(&e->watches);
	/* A task a setup program stopped, whose record was never read
	 * (the run ended first), must not stay stopped: the setup
	 * programs are detached by now, so one SIGCONT lets it go. */
	int pid = traced_pid(e);
	for (uint32_t i = 0; i < e->nprobes && pid > 0; i++)
		if (e->probes[i].req.on_request && e->probes[i].req.stop &&
		    e->probes[i].setup_fd >= 0) {
			kill(pid, SIGCONT);
			break;
		}
}
