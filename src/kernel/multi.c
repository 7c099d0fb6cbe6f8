/* multi.c - many probes, one program, one link: kprobe_multi (6.0+) and
 * uprobe_multi (6.6+) links for the probes of a wildcard.
 *
 * Why: each perf event a probe attaches through is torn down with its
 * own RCU grace period, one after the other, so a wildcard over a
 * hundred functions took seconds to exit. A multi link attaches a whole
 * set at once and releases it with one grace period.
 *
 * How: the providers mark what may share (attach_req.multi). Before
 * loading, probes of one block whose requests agree (kind, return or
 * entry, file, process) and whose programs came out byte for byte the
 * same become one group: the first probe (the leader) loads the program
 * once, for the multi attach type, and attaches every member's target
 * with one link. Whether the kernel has such links is asked of the
 * kernel, once per kind, never read from a version number. When it
 * lacks them, the leader's one program is attached to each member's own
 * perf event: still one program load instead of many. A link the kernel
 * refuses fails the run, as one refused probe of the group would.
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
			     uint32_t cnt, bool ret, int pid)
{
	struct uprobe_multi_attr a;
	memset(&a, 0, sizeof(a));
	a.prog_fd = (uint32_t)prog_fd;
	a.attach_type = SONDE_BPF_TRACE_UPROBE_MULTI;
	a.path = (uint64_t)(uintptr_t)path;
	a.offsets = (uint64_t)(uintptr_t)offsets;
	a.ref_ctr_offsets = (uint64_t)(uintptr_t)ref_ctrs;
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
	LIBBPF_OPTS(bpf_prog_load_opts, o,
		    .expected_attach_type = multi_attach_type(kind));
	int prog = bpf_prog_load(BPF_PROG_TYPE_KPROBE, "sonde_feature", "GPL",
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
			link = uprobe_multi_link(prog, "/", &off, NULL, 1,
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

/* Can probe b share probe a's program and link? */
static bool same_group(const struct engine_probe *a,
		       const struct engine_probe *b)
{
	const struct probe *pa = a->probe, *pb = b->probe;
	if (!b->has_req || b->req.multi != a->req.multi ||
	    b->req.retprobe != a->req.retprobe || pb->block != pa->block ||
	    pb->prog_type != pa->prog_type || b->req.pid != a->req.pid ||
	    pb->ninsns != pa->ninsns || !pa->insns || !pb->insns)
		return false;
	if (a->req.multi == MULTI_UPROBE &&
	    (!a->req.path || !b->req.path || strcmp(a->req.path, b->req.path) ||
	     b->req.child_only != a->req.child_only))
		return false;
	return memcmp(pa->insns, pb->insns,
		      pa->ninsns * sizeof(*pa->insns)) == 0;
}

int engine_multi_plan(struct engine *e)
{
	for (uint32_t i = 0; i < e->nprobes; i++) {
		struct engine_probe *ep = &e->probes[i];
		if (!ep->has_req || ep->req.multi == MULTI_NONE ||
		    ep->leader >= 0)
			continue;
		for (uint32_t j = i + 1; j < e->nprobes; j++) {
			struct engine_probe *o = &e->probes[j];
			if (o->leader >= 0 || !same_group(ep, o))
				continue;
			if (vec_push(&ep->members, j) < 0)
				return -ENOMEM;
			o->leader = (int32_t)i;
		}
		if (ep->members.n && kernel_has_multi(e, ep->req.multi)) {
			ep->attach_type = multi_attach_type(ep->req.multi);
			ep->multi_link = true;
		}
	}
	return 0;
}

/* One link for the leader and its members. */
static int multi_link(struct engine *e, struct engine_probe *ep)
{
	size_t n = ep->members.n + 1;
	const struct engine_probe **all = calloc(n, sizeof(*all));
	const char **syms = calloc(n, sizeof(*syms));
	uint64_t *offs = calloc(n, sizeof(*offs));
	uint64_t *refs = calloc(n, sizeof(*refs));
	int link = -ENOMEM;
	if (!all || !syms || !offs || !refs)
		goto out;
	bool any_ref = false;
	all[0] = ep;
	for (size_t k = 1; k < n; k++)
		all[k] = &e->probes[ep->members.v[k - 1]];
	for (size_t k = 0; k < n; k++) {
		syms[k] = all[k]->req.symbol;
		offs[k] = all[k]->req.offset;
		refs[k] = all[k]->req.ref_ctr_offset;
		any_ref |= refs[k] != 0;
	}
	if (ep->req.multi == MULTI_KPROBE) {
		LIBBPF_OPTS(bpf_link_create_opts, lo,
			    .kprobe_multi.syms = syms,
			    .kprobe_multi.cnt = (uint32_t)n,
			    .kprobe_multi.flags = ep->req.retprobe ?
				    BPF_F_KPROBE_MULTI_RETURN : 0);
		link = bpf_link_create(ep->prog_fd, 0, BPF_TRACE_KPROBE_MULTI,
				       &lo);
	} else {
		link = uprobe_multi_link(ep->prog_fd, ep->req.path, offs,
					 any_ref ? refs : NULL, (uint32_t)n,
					 ep->req.retprobe, ep->req.pid);
	}
out:
	free(all);
	free(syms);
	free(offs);
	free(refs);
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
	log_info("attached %s and %zu more with one %s link", ep->probe->name,
		 ep->members.n, what);
	return 0;
}
