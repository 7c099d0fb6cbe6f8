/* attach.c - the kernel engine's attachments: perf events on every
 * online CPU (uprobes, USDT, tracepoints, timers, samplers, breakpoints),
 * BTF tracing links (fentry/fexit), raw tracepoints, iterators and the
 * multi-links (multi.c), in the order the kernel must run them; and
 * their release (engine_detach_all), the one way attachments go. */
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

/* Online CPUs from /sys (a list like "0-3,5"), malloc'd. */
static int online_cpus(int **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	FILE *f = fopen("/sys/devices/system/cpu/online", "re");
	if (!f)
		return -errno;
	VEC(int) cpus = { 0 };
	int r = 0;
	unsigned a, b;
	char sep;
	while (r == 0 && fscanf(f, "%u", &a) == 1) {
		b = a;
		sep = '\n';
		if (fscanf(f, "%c", &sep) == 1 && sep == '-') {
			if (fscanf(f, "%u", &b) != 1)
				break;
			if (fscanf(f, "%c", &sep) != 1)
				sep = '\n';
		}
		for (unsigned c = a; c <= b && r == 0; c++)
			r = vec_push(&cpus, (int)c);
		if (sep != ',')
			break;
	}
	fclose(f);
	if (r == 0 && cpus.n == 0)
		r = -EINVAL;
	if (r < 0) {
		vec_free(&cpus);
		return r;
	}
	*out = cpus.v;
	*n = cpus.n;
	return 0;
}

static int perf_open(const struct attach_req *req, int cpu)
{
	if (req->inherit && req->path)
		return tracefs_uprobe_open(req);   /* --follow-forks */
	struct perf_event_attr attr = {
		.type = req->perf_type,
		.size = sizeof(attr),
		.config = req->perf_config,
		.config1 = req->perf_config1,
		.config2 = req->perf_config2,
	};
	if (req->sample_freq) {
		attr.freq = 1;
		attr.sample_freq = req->sample_freq;
	} else {
		attr.sample_period = req->sample_period;
	}
	attr.wakeup_events = 1;
	attr.bp_type = req->bp_type;
	attr.inherit = req->inherit;
	int fd = (int)syscall(__NR_perf_event_open, &attr, req->pid, cpu, -1,
			      PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* Attach the program to one perf event: a BPF link when the kernel has
 * them (5.15+), else the older ioctl. Returns the link fd or -1 for the
 * ioctl path, or -errno. */
int engine_perf_link(int prog_fd, int pfd)
{
	int link = bpf_link_create(prog_fd, pfd, BPF_PERF_EVENT, NULL);
	if (link < 0) {
		if (link != -EINVAL && link != -EOPNOTSUPP)
			return link;
		if (ioctl(pfd, PERF_EVENT_IOC_SET_BPF, prog_fd) < 0)
			return -errno;
		link = -1;
	}
	if (ioctl(pfd, PERF_EVENT_IOC_ENABLE, 0) < 0) {
		int err = -errno;
		if (link >= 0)
			close(link);
		return err;
	}
	return link;
}

int engine_keep_perf(struct engine_probe *ep, int prog_fd, int pfd,
		     const char *what)
{
	if (vec_push(&ep->perf_fds, pfd) < 0) {
		close(pfd);
		return -ENOMEM;
	}
	int link = engine_perf_link(prog_fd, pfd);
	if (link < -1) {
		log_error("probe %s: cannot attach %s: %s", ep->probe->name,
			  what, strerror(-link));
		return link;
	}
	if (vec_push(&ep->link_fds, link) < 0) {
		if (link >= 0)
			close(link);
		return -ENOMEM;
	}
	return 0;
}

/* Stop a probe's program from running: closing its BPF links detaches
 * the program. */
void engine_stop_probe(struct engine_probe *ep)
{
	for (size_t i = 0; i < ep->link_fds.n; i++) {
		if (ep->link_fds.v[i] >= 0)
			close(ep->link_fds.v[i]);
		else   /* attached by ioctl: disabling is all there is */
			ioctl(ep->perf_fds.v[i], PERF_EVENT_IOC_DISABLE, 0);
	}
	vec_free(&ep->link_fds);
}

void engine_close_probe(struct engine_probe *ep)
{
	engine_stop_probe(ep);
	for (size_t i = 0; i < ep->perf_fds.n; i++)
		close(ep->perf_fds.v[i]);
	vec_free(&ep->perf_fds);
}

/* Releasing a tracepoint attachment waits for an RCU grace period inside
 * the kernel (about 30 ms here; syscall tracepoints are faultable since
 * 6.14), one after the other: 361 syscall probes took 10 s to stop and
 * another 9 s to close. The waits of different threads overlap, so the
 * releases are spread over a few threads (0.7 s for the same 361). */
#define RELEASE_THREADS 16
#define RELEASE_PER_THREAD_MIN 8

struct release_work {
	struct engine *e;
	void (*fn)(struct engine_probe *ep);
};

static int release_one(void *ctx, unsigned i)
{
	struct release_work *w = ctx;
	w->fn(&w->e->probes[i]);
	return 0;
}

void engine_release_each(struct engine *e, void (*fn)(struct engine_probe *))
{
	struct release_work w = { e, fn };
	unsigned threads = e->nprobes / RELEASE_PER_THREAD_MIN;
	if (threads > RELEASE_THREADS)
		threads = RELEASE_THREADS;
	parallel_for(e->nprobes, threads ? threads : 1, release_one, &w);
}

void engine_detach_all(struct engine *e)
{
	/* Every program stops first, so none runs during the slow part. */
	double t0 = log_now_ms();
	engine_release_each(e, engine_stop_probe);
	double t1 = log_now_ms();
	engine_release_each(e, engine_close_probe);
	tracefs_uprobe_remove_all();
	if (e->nprobes)
		log_info("detached %u probes: stopped in %.1f ms, released in "
			 "%.1f ms", e->nprobes, t1 - t0, log_now_ms() - t1);
}

/* fentry/fexit: a BPF link to the function's trampoline (the program
 * was loaded for that function); raw_tracepoint_open on kernels whose
 * link_create does not take tracing programs. */
static int attach_tracing(struct engine_probe *ep, struct log_repeat *skips)
{
	int link = bpf_link_create(ep->prog_fd, 0,
				   ep->probe->expected_attach_type, NULL);
	if (link == -EINVAL || link == -EOPNOTSUPP)
		link = bpf_raw_tracepoint_open(NULL, ep->prog_fd);
	if (link < 0) {
		if (ep->req.optional)
			log_repeat_warn(skips, "probe %s: the kernel refuses to "
					"trace this function (%s); skipped",
					ep->probe->name, strerror(-link));
		else
			log_error("probe %s: cannot attach: %s%s",
				  ep->probe->name, strerror(-link),
				  link == -EINVAL || link == -EBUSY ?
				  " (the function may not be traceable: notrace, "
				  "or another tracer holds it)" : "");
		return link;
	}
	if (vec_push(&ep->link_fds, link) < 0) {
		close(link);
		return -ENOMEM;
	}
	return 0;
}

/* iter: a link now; the iterator is made from it and read in
 * engine_run_iterators, after BEGIN */
static int attach_iter(struct engine_probe *ep)
{
	int link = bpf_link_create(ep->prog_fd, 0, BPF_TRACE_ITER, NULL);
	if (link < 0) {
		log_error("probe %s: cannot attach the iterator: %s",
			  ep->probe->name, strerror(-link));
		return link;
	}
	if (vec_push(&ep->link_fds, link) < 0) {
		close(link);
		return -ENOMEM;
	}
	return 0;
}

/* rawtracepoint: the program on the tracepoint's raw hook, by name */
static int attach_raw_tracepoint(struct engine_probe *ep)
{
	int fd = bpf_raw_tracepoint_open(ep->req.symbol, ep->prog_fd);
	if (fd < 0) {
		log_error("probe %s: cannot attach: %s%s", ep->probe->name,
			  strerror(-fd), fd == -ENOENT ? " (no tracepoint of "
			  "that name)" : fd == -EINVAL || fd == -EACCES ?
			  " (the program reads more arguments than the "
			  "tracepoint has?)" : "");
		return fd;
	}
	if (vec_push(&ep->link_fds, fd) < 0) {
		close(fd);
		return -ENOMEM;
	}
	return 0;
}

static int attach_perf(struct engine_probe *ep, int prog_fd, const int *cpus,
		       size_t ncpus)
{
	for (size_t i = 0; i < ncpus; i++) {
		if (cancel_requested())
			return -ECANCELED;
		int pfd = perf_open(&ep->req, cpus[i]);
		if (pfd < 0 && ep->req.path) {
			log_error("probe %s: cannot attach a %s at %s+0x%llx%s: %s",
				  ep->probe->name,
				  ep->probe->kind,
				  ep->req.path,
				  (unsigned long long)ep->req.offset,
				  ep->req.ref_ctr_offset ? " (with a semaphore)" : "",
				  strerror(-pfd));
			return pfd;
		}
		if (pfd < 0 && ep->req.symbol) {
			const char *hint = pfd == -EILSEQ ? " (the offset is "
				"not at an instruction boundary)" :
				pfd == -ENOENT ? " (the kernel has no function of "
				"that name)" : pfd == -EINVAL ? " (the kernel "
				"refuses to probe it: blacklisted, or inside an "
				"instruction)" : "";
			log_error("probe %s: cannot attach a %s at %s+%llu: %s%s",
				  ep->probe->name, ep->probe->kind,
				  ep->req.symbol,
				  (unsigned long long)ep->req.perf_config2,
				  strerror(-pfd), hint);
			return pfd;
		}
		if (pfd < 0) {
			bool no_pmu = ep->req.perf_type == PERF_TYPE_HARDWARE &&
				      (pfd == -ENOENT || pfd == -EOPNOTSUPP);
			log_error("probe %s: cannot attach: perf_event_open "
				  "(cpu %d): %s%s", ep->probe->name, cpus[i],
				  strerror(-pfd), no_pmu ? " (this machine has "
				  "no such hardware counter, virtual machines "
				  "often have none; profile:hz:N or "
				  "software:cpu-clock:N sample on the CPU clock "
				  "instead)" : "");
			return pfd;
		}
		int r = engine_keep_perf(ep, prog_fd, pfd, "the program");
		if (r < 0)
			return r;
	}
	return 0;
}

int engine_attach(struct engine *e)
{
	int *cpus = NULL;
	size_t ncpus = 0;
	int attached = 0, r = 0;
	int cpu0 = 0, prog_fd;
	struct log_repeat skips = { 0 };

	/* As bpftrace 0.17 attaches: in script order, then, backwards, the
	 * probes whose event runs its newest program first, so the blocks
	 * on one event run in the order they are written. */
	uint32_t *order = malloc((e->nprobes ? e->nprobes : 1) * sizeof(*order));
	if (!order)
		return -ENOMEM;
	uint32_t n = 0;
	for (uint32_t i = 0; i < e->nprobes; i++)
		if (!e->probes[i].probe->fires_newest_first)
			order[n++] = i;
	for (uint32_t i = e->nprobes; i-- > 0;)
		if (e->probes[i].probe->fires_newest_first)
			order[n++] = i;
	for (uint32_t k = 0; k < e->nprobes && r == 0; k++) {
		struct engine_probe *ep = &e->probes[order[k]];
		if (cancel_requested()) {       /* a stop signal: undo, go */
			r = -ECANCELED;
			break;
		}
		if (!ep->has_req) {
			log_error("probe %s: this probe type cannot be attached "
				  "by the kernel engine", ep->probe->name);
			r = -EOPNOTSUPP;
			break;
		}
		if (ep->skipped)
			continue;
		switch (ep->req.how) {
		case ATTACH_TEST_RUN:
			continue;
		case ATTACH_TRACING:
			r = attach_tracing(ep, &skips);
			if (r < 0 && ep->req.optional) {
				ep->skipped = true;
				r = 0;
				continue;
			}
			break;
		case ATTACH_RAW_TRACEPOINT:
			r = attach_raw_tracepoint(ep);
			break;
		case ATTACH_ITER:
			r = attach_iter(ep);
			break;
		case ATTACH_PERF_EVENT:
			if (ep->req.on_request) {
				/* its setup program now, the breakpoint
				 * when that asks (watch.c) */
				r = engine_watch_attach_setup(e, ep);
				break;
			}
			if (ep->leader >= 0 &&
			    (e->probes[ep->leader].multi_link ||
			     e->probes[ep->leader].dispatch))
				continue;      /* its leader's link has it */
			if (ep->multi_link) {
				r = engine_multi_attach(e, ep);
				break;
			}
			prog_fd = ep->leader >= 0 ?
				e->probes[ep->leader].prog_fd : ep->prog_fd;
			if (ep->req.all_cpus && !cpus &&
			    (r = online_cpus(&cpus, &ncpus)) < 0) {
				log_error("cannot read the online CPUs: %s",
					  strerror(-r));
				break;
			}
			/* An event bound to a process counts on any CPU. */
			cpu0 = ep->req.pid > 0 ? -1 : 0;
			r = ep->req.all_cpus ?
				attach_perf(ep, prog_fd, cpus, ncpus) :
				attach_perf(ep, prog_fd, &cpu0, 1);
			break;
		default:
			log_error("probe %s: this attachment is not supported "
				  "yet", ep->probe->name);
			r = -EOPNOTSUPP;
			break;
		}
		/* bpftrace 0.24's words after sonde's reason (its tests
		 * expect them of a kprobe --unsafe tried) */
		if (r < 0 && r != -ECANCELED &&
		    e->prog->dialect >= DIALECT_024)
			log_error("Unable to attach probe: %s", ep->probe->name);
		if (r == 0 && ep->multi_link) {
			attached += 1 + (int)ep->members.n;
		} else if (r == 0 && ep->dispatch) {
			attached += 1 + (int)ep->dispatch_members;
			log_info("attached %s and the others of its syscall "
				 "dispatcher (raw_syscalls, %u instructions)",
				 ep->probe->name, ep->dispatch_ninsns);
		} else if (r == 0) {
			attached++;
			log_info("attached %s (%zu perf event%s)",
				 ep->probe->name, ep->perf_fds.n,
				 ep->perf_fds.n == 1 ? "" : "s");
		}
	}
	free(cpus);
	free(order);
	log_repeat_end(&skips, "functions skipped");
	if (r == 0)
		r = engine_some_probe_left(e);
	/* The reader maps the ring's pages (twice the data, 8 MiB for the
	 * usual 4 MiB ring) only now: records wait in the ring meanwhile,
	 * and the probes are armed that much sooner (issue 26). */
	if (r == 0 && e->prog->ringbuf_map >= 0 && !e->rb) {
		double t0 = log_now_ms();
		r = engine_ring_open(e);
		if (r == 0)
			log_info("opened the event ring's reader in %.1f ms",
				 log_now_ms() - t0);
	}
	e->armed_ms = log_now_ms();
	/* iterators run once everything is attached (and BEGIN has run),
	 * as bpftrace 0.17 reads them */
	if (r == 0)
		r = engine_run_iterators(e);
	if (r < 0) {
		engine_detach_all(e);
		return r;
	}
	return attached;
}
