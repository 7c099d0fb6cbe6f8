/* multi.c - many probes, one program, one link: kprobe_multi (6.0+) and
 * uprobe_multi (6.6+) links for the probes of a wildcard, and for a
 * uprobe alone.
 *
 * Why: each perf event a probe attaches through is torn down with its
 * own RCU grace periods, one after the other, so a wildcard over a
 * hundred functions took seconds to exit. A multi link attaches a whole
 * set at once and releases it with one grace period; for one uprobe
 * that is one instead of three.
 *
 * How: the providers mark what may share (attach_req.multi). Before
 * loading, probes whose requests agree (kind, return or entry, file,
 * process) become one group: the first probe (the leader) loads one
 * program, for the multi attach type, and attaches every member's target
 * with one link. When their programs differ (@[probe] under a wildcard,
 * USDT sites whose arguments live in different places), that program is
 * each distinct program once behind a jump on the link's per-target
 * cookie (syscalls.c builds it). Whether the kernel has such links is
 * asked of the kernel, once per kind, never read from a version number.
 * When it lacks them, probes of one block whose programs came out byte
 * for byte the same share one program, each on its own perf event: still
 * one load instead of many. A link the kernel refuses fails the run, as
 * one refused probe of the group would.
 *
 * Debian 12's libbpf (1.1.2) knows kprobe_multi but not uprobe_multi,
 * whose bpf(2) attributes are spelled out here. */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../base/log.h"
#include "engine_int.h"

/* linux/bpf.h of 6.6, which Debian 12's headers (6.1) lack */
#define SONDE_BPF_TRACE_UPROBE_MULTI 48
#define SONDE_BPF_F_UPROBE_MULTI_RETURN (1u << 0)

/* BPF_LINK_CREATE for uprobe_multi: the first fields of union bpf_attr's
 * link_create, then its uprobe_multi member (at the same offset as
 * kprobe_multi's). Zeroes beyond it are what the kernel expects. */
struct uprobe_multi_attr {
	uint32_t prog_fd;
	uint32_t target_fd;
	uint32_t attach_type;
	uint32_t flags;
	uint64_t path;
	uint64_t offsets;
	uint64_t ref_ctr_offsets;
	uint64_t cookies;
	uint32_t cnt;
	uint32_t um_flags;
	uint32_t pid;
	uint32_t pad;
};

static int uprobe_multi_link(int prog_fd, const char *path,
			     const uint64_t *offsets, const uint64_t *ref_ctrs,
			     const uint64_t *cookies, uint32_t cnt, bool ret,
			     int pid)
{
	struct uprobe_multi_attr a;
	memset(&a, 0, sizeof(a));
	a.prog_fd = (uint32_t)prog_fd;
	a.attach_type = SONDE_BPF_TRACE_UPROBE_MULTI;
	a.path = (uint64_t)(uintptr_t)path;
	a.offsets = (uint64_t)(uintptr_t)offsets;
	a.ref_ctr_offsets = (uint64_t)(uintptr_t)ref_ctrs;
	a.cookies = (uint64_t)(uintptr_t)cookies;
	a.cnt = cnt;
	a.um_flags = ret ? SONDE_BPF_F_UPROBE_MULTI_RETURN : 0;
	a.pid = pid > 0 ? (uint32_t)pid : 0;
	int fd = (int)syscall(__NR_bpf, BPF_LINK_CREATE, &a, sizeof(a));
	return fd < 0 ? -errno : fd;
}

static enum bpf_attach_type multi_attach_type(enum attach_multi kind)
{
	return kind == MULTI_KPROBE ? BPF_TRACE_KPROBE_MULTI :
		(enum bpf_attach_type)SONDE_BPF_TRACE_UPROBE_MULTI;
}

/* Does the kernel have this kind of multi link? Load a program that does
 * nothing for it and ask for a link the kernel must refuse, in the way
 * only a kernel that knows the link refuses it: an unknown symbol
 * (kprobe_multi: ENOENT/ESRCH from the symbol lookup) or a path that is
 * no file to probe (uprobe_multi: EBADF, as libbpf probes it). An older
 * kernel says EINVAL (an attach type it does not know). */
bool engine_probe_multi(enum attach_multi kind)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	struct engine_load_opts o = {
		.expected_attach_type = multi_attach_type(kind),
	};
	int prog = engine_prog_load(BPF_PROG_TYPE_KPROBE, "sonde_feature",
				    insns, 2, &o);
	bool has = false;
	if (prog >= 0) {
		int link, err;
		if (kind == MULTI_KPROBE) {
			const char *sym = "sonde_no_such_function__";
			LIBBPF_OPTS(bpf_link_create_opts, lo,
				    .kprobe_multi.syms = &sym,
				    .kprobe_multi.cnt = 1);
			link = bpf_link_create(prog, 0, BPF_TRACE_KPROBE_MULTI,
					       &lo);
			err = link;
			has = err == -ENOENT || err == -ESRCH;
		} else {
			uint64_t off = 0;
			link = uprobe_multi_link(prog, "/", &off, NULL, NULL, 1,
						 false, 0);
			err = link;
			has = err == -EBADF;
		}
		if (link >= 0) {        /* cannot be, but be tidy */
			close(link);
			has = true;
		}
		close(prog);
		log_info("kernel %s %s links (probe: %s)", has ? "has" : "lacks",
			 kind == MULTI_KPROBE ? "kprobe_multi" : "uprobe_multi",
			 link >= 0 ? "attached" : strerror(-err));
	}
	return has;
}

static bool kernel_has_multi(struct engine *e, enum attach_multi kind)
{
	int8_t *known = kind == MULTI_KPROBE ? &e->has_kprobe_multi :
		&e->has_uprobe_multi;
	if (*known < 0)
		*known = engine_probe_multi(kind);
	return *known;
}

unsigned engine_multi_questions(const struct engine *e)
{
	/* a uprobe alone goes on a link of its own; kprobes only share */
	unsigned uprobes = 0, kprobes = 0;
	for (uint32_t i = 0; i < e->nprobes; i++) {
		const struct engine_probe *ep = &e->probes[i];
		uprobes += ep->has_req && ep->req.multi == MULTI_UPROBE;
		kprobes += ep->has_req && ep->req.multi == MULTI_KPROBE;
	}
	return (uprobes ? 1u << MULTI_UPROBE : 0) |
		(kprobes > 1 ? 1u << MULTI_KPROBE : 0);
}

void engine_multi_ask(struct engine *e, unsigned questions)
{
	if (questions & (1u << MULTI_UPROBE))
		kernel_has_multi(e, MULTI_UPROBE);
	if (questions & (1u << MULTI_KPROBE))
		kernel_has_multi(e, MULTI_KPROBE);
}

/* Could probe b go on probe a's link: the same kind of link to the same
 * place (a uprobe_multi link has one file and one process)? */
static bool same_target(const struct engine_probe *a,
			const struct engine_probe *b)
{
	if (!b->has_req || b->req.multi != a->req.multi ||
	    b->req.retprobe != a->req.retprobe || b->req.pid != a->req.pid ||
	    b->probe->prog_type != a->probe->prog_type || !b->probe->insns ||
	    b->leader >= 0 || b->dispatch)
		return false;
	return a->req.multi != MULTI_UPROBE ||
		(a->req.path && b->req.path && !strcmp(a->req.path, b->req.path) &&
		 b->req.child_only == a->req.child_only);
}

/* ... and share its program: the same block, the same instructions. */
static bool same_program(const struct engine_probe *a,
			 const struct engine_probe *b)
{
	const struct probe *pa = a->probe, *pb = b->probe;
	return same_target(a, b) && pb->block == pa->block &&
		pb->ninsns == pa->ninsns && pa->insns &&
		memcmp(pa->insns, pb->insns, pa->ninsns * sizeof(*pa->insns)) == 0;
}

/* Where the kernel has the link: every probe of the same target, their
 * programs behind a dispatcher on the link's cookie when they differ,
 * in chunks the dispatcher's jumps can reach. */
static int plan_link(struct engine *e, uint32_t first, uint32_t *gv, size_t gn)
{
	bool differ = false, calls = false;
	for (size_t k = 0; k < gn; k++) {
		const struct engine_probe *o = &e->probes[gv[k]];
		differ |= !same_program(&e->probes[first], o) &&
			  gv[k] != first;
		calls |= engine_has_calls(o->probe);
	}
	if (differ && calls)
		return 1;            /* cannot dispatch: share what is equal */
	size_t start = 0;
	while (start < gn) {
		size_t end = start, size = 0;
		while (end < gn && (end == start || !differ ||
		       size + 1 + e->probes[gv[end]].probe->ninsns <=
		       DISPATCH_MAX_INSNS)) {
			size += 1 + e->probes[gv[end]].probe->ninsns;
			end++;
		}
		struct engine_probe *lead = &e->probes[gv[start]];
		for (size_t k = start + 1; k < end; k++) {
			if (vec_push(&lead->members, gv[k]) < 0)
				return -ENOMEM;
			e->probes[gv[k]].leader = (int32_t)gv[start];
		}
		if (differ && end - start > 1) {
			int r = engine_dispatch_build(e, &gv[start], end - start,
						      DISPATCH_COOKIE);
			if (r < 0)
				return r;
		}
		lead->attach_type = multi_attach_type(lead->req.multi);
		lead->multi_link = true;
		start = end;
	}
	return 0;
}

int engine_multi_plan(struct engine *e)
{
	VEC(uint32_t) g = { 0 };
	int r = 0;
	for (uint32_t i = 0; i < e->nprobes && r >= 0; i++) {
		struct engine_probe *ep = &e->probes[i];
		if (!ep->has_req || ep->req.multi == MULTI_NONE ||
		    ep->req.multi == MULTI_SYSCALL || ep->leader >= 0 ||
		    ep->dispatch || !ep->probe->insns)
			continue;
		g.n = 0;
		if ((r = vec_push(&g, i)) < 0)
			break;
		for (uint32_t j = i + 1; j < e->nprobes && r >= 0; j++)
			if (same_target(ep, &e->probes[j]))
				r = vec_push(&g, j);
		if (r < 0)
			continue;
		/* A uprobe_multi link binds to a thread-group leader: one
		 * that exited (pthread_exit) while its process runs on takes
		 * the link but never fires. Such a process is followed
		 * through a thread that lives (proc_live_tid), on perf
		 * events. */
		bool leader_gone = ep->req.multi == MULTI_UPROBE &&
				   ep->req.pid > 0 && e->opts.pid > 0 &&
				   ep->req.pid != e->opts.pid;
		/* A uprobe alone goes on a link of its own too: its perf
		 * event took three RCU grace periods to release (the
		 * program's detach, the uprobe's and the trace event's:
		 * 40 ms of exit() to gone, issue 26), the link one. */
		if (g.n == 1 && ep->req.multi == MULTI_UPROBE && !leader_gone &&
		    kernel_has_multi(e, MULTI_UPROBE)) {
			r = plan_link(e, i, g.v, 1);
			continue;
		}
		if (g.n < 2)
			continue;
		if (!leader_gone && kernel_has_multi(e, ep->req.multi) &&
		    (r = plan_link(e, i, g.v, g.n)) <= 0)
			continue;
		/* no such link here: the probes of equal programs share one,
		 * each on its own perf event */
		r = 0;
		for (size_t k = 1; k < g.n && r >= 0; k++) {
			struct engine_probe *o = &e->probes[g.v[k]];
			if (!same_program(ep, o))
				continue;
			r = vec_push(&ep->members, g.v[k]);
			o->leader = (int32_t)i;
		}
	}
	vec_free(&g);
	return r < 0 ? r : 0;
}

/* One link for the leader and its members. */
static int multi_link(struct engine *e, struct engine_probe *ep)
{
	size_t n = ep->members.n + 1;
	const struct engine_probe **all = calloc(n, sizeof(*all));
	const char **syms = calloc(n, sizeof(*syms));
	uint64_t *offs = calloc(n, sizeof(*offs));
	uint64_t *refs = calloc(n, sizeof(*refs));
	uint64_t *cookies = calloc(n, sizeof(*cookies));
	int link = -ENOMEM;
	if (!all || !syms || !offs || !refs || !cookies)
		goto out;
	bool any_ref = false;
	all[0] = ep;
	for (size_t k = 1; k < n; k++)
		all[k] = &e->probes[ep->members.v[k - 1]];
	/* The kernel runs the targets of one place newest first: listed
	 * backwards, the probes of blocks on one function run in script
	 * order (engine_attach orders separate attachments the same way) */
	if (ep->probe->fires_newest_first)
		for (size_t k = 0; k < n / 2; k++) {
			const struct engine_probe *t = all[k];
			all[k] = all[n - 1 - k];
			all[n - 1 - k] = t;
		}
	for (size_t k = 0; k < n; k++) {
		syms[k] = all[k]->req.symbol;
		offs[k] = all[k]->req.offset;
		refs[k] = all[k]->req.ref_ctr_offset;
		cookies[k] = all[k]->cookie;
		any_ref |= refs[k] != 0;
	}
	if (ep->req.multi == MULTI_KPROBE) {
		LIBBPF_OPTS(bpf_link_create_opts, lo,
			    .kprobe_multi.syms = syms,
			    .kprobe_multi.cnt = (uint32_t)n,
			    .kprobe_multi.cookies = ep->dispatch ?
				    (const __u64 *)cookies : NULL,
			    .kprobe_multi.flags = ep->req.retprobe ?
				    BPF_F_KPROBE_MULTI_RETURN : 0);
		link = bpf_link_create(ep->prog_fd, 0, BPF_TRACE_KPROBE_MULTI,
				       &lo);
	} else {
		link = uprobe_multi_link(ep->prog_fd, ep->req.path, offs,
					 any_ref ? refs : NULL,
					 ep->dispatch ? cookies : NULL, (uint32_t)n,
					 ep->req.retprobe, ep->req.pid);
	}
out:
	free(all);
	free(syms);
	free(offs);
	free(refs);
	free(cookies);
	return link;
}

int engine_multi_attach(struct engine *e, struct engine_probe *ep)
{
	int link = multi_link(e, ep);
	const char *what = ep->req.multi == MULTI_KPROBE ? "kprobe_multi" :
		"uprobe_multi";
	if (link < 0) {
		log_error("probe %s: cannot attach it and %zu more with one %s "
			  "link: %s", ep->probe->name, ep->members.n, what,
			  strerror(-link));
		return link;
	}
	if (vec_push(&ep->link_fds, link) < 0) {
		close(link);
		return -ENOMEM;
	}
	if (ep->members.n)
		log_info("attached %s and %zu more with one %s link",
			 ep->probe->name, ep->members.n, what);
	else
		log_info("attached %s with a %s link", ep->probe->name, what);
	return 0;
}
