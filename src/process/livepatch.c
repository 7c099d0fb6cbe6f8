/* livepatch.c - patching a running process's code over ptrace.
 *
 * Everything happens while the tracee holds every thread stopped, so no
 * instruction is ever half-written under a running thread: the bytes of
 * a site are replaced at once, then each thread whose instruction
 * pointer is inside the replaced bytes (it was stopped after the first
 * of them) is moved to the same instruction in the relocated copy. The
 * kernel's ptrace stop and resume are serializing, so the threads see the
 * new code when they run again.
 *
 * Memory for trampolines is mapped in the process (its own mmap, called
 * over ptrace) within 1 GiB of the sites, read+execute only: sonde
 * writes through /proc/PID/mem, which writes read-only mappings as a
 * debugger does, so the process never has memory that is both writable
 * and executable. A region is never unmapped: a thread may be inside a
 * trampoline when its site is restored (it then finishes there and jumps
 * back to code that is the original again). The agent's registry lists
 * the regions and who owns the patches, so a sonde killed with its
 * patches in place is cleaned up after by the next one. */
#include "livepatch.h"

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/user.h>
#include <unistd.h>

#include "../base/file.h"
#include "../base/vec.h"
#include "../elf/elf.h"
#include "inject.h"
#include "tracee.h"
#include "tramp.h"
#include "x86reloc.h"

#define REGION_LEN (1u << 20)
#define REGION_REACH (1ull << 30)     /* regions within 1 GiB of their sites */
#define SITE_ALIGN 64
#define MAX_SITES 20000
#define SCAN_MAX (1u << 20)           /* bytes of a function scanned for branches */
#define PAD_MAX 64
#define AROUND 4096                   /* bytes around a function swept for
					 branches into its first bytes */

struct lp_region {
	uint64_t addr, len, used;
	uint32_t index;                 /* in the registry */
};

struct lp_entry {
	uint64_t probed;                /* the address probed (lp_site.addr) */
	uint64_t site_at;               /* struct fprobe_site in the process */
	struct x86_plan plan;
	struct fprobe_site site;        /* what is written there */
	uint8_t pad_patch[X86_JMP_LEN];
	char name[96];                  /* for messages */
	/* the file and offset its code was mapped from (lp_refresh) */
	uint64_t map_ino, map_off;
	unsigned map_dev_major, map_dev_minor;
};

struct livepatch {
	int pid;
	struct lp_agent agent;
	struct fprobe_registry reg;
	struct inject_libc lc;
	bool have_lc;
	struct elf_map *maps;
	size_t nmaps;
	struct lp_region regions[FPROBE_MAX_REGIONS];
	size_t nregions;
	struct lp_entry *sites;
	size_t nsites, cap;
	uint64_t session;
	size_t stale_restored;          /* a killed run's sites lp_begin undid */
};

uint64_t lp_proc_start(int pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	char *s = file_read(path, NULL);
	if (!s)
		return 0;
	uint64_t v = 0;
	char *p = strrchr(s, ')');
	/* p: the blank before field 3 (state), then before each next one */
	for (int field = 3; p && *p; field++) {
		p = strchr(p + 1, ' ');
		if (p && field == 22) {
			v = strtoull(p + 1, NULL, 10);
			break;
		}
	}
	free(s);
	return v;
}

size_t lp_nsites(const struct livepatch *lp)
{
	return lp ? lp->nsites : 0;
}

const char *lp_site_name(const struct livepatch *lp, uint64_t addr)
{
	for (size_t i = 0; lp && i < lp->nsites; i++)
		if (lp->sites[i].plan.addr == addr)
			return lp->sites[i].name;
	return NULL;
}

size_t lp_stale_restored(const struct livepatch *lp)
{
	return lp ? lp->stale_restored : 0;
}

/* The registry's fields that sonde owns (the agent counts in the rest). */
static int write_registry(struct livepatch *lp, struct tracee *t)
{
	size_t from = offsetof(struct fprobe_registry, nregions);
	size_t to = offsetof(struct fprobe_registry, lost_returns);
	return tracee_write(t, lp->agent.registry + from,
			    (const uint8_t *)&lp->reg + from, to - from);
}

/* The threads are stopped and the sites restored: give every frame still
 * returning through the return trampoline its real return address back,
 * so that nothing returns through it and no C++ unwinder meets it after
 * the unwinder's hooks are gone. Frames below a thread's stack pointer
 * are gone (or returning through the trampoline right now, which works
 * without them). A thread stopped between its check of a site and its
 * hook undoes the hook itself when it sees the site restored
 * (src/agent/fprobe.c). */
static void unhook_returns(struct livepatch *lp, struct tracee *t)
{
	struct fprobe_registry reg;
	if (!lp->agent.return_tramp ||
	    tracee_read(t, lp->agent.registry, &reg, sizeof(reg)) < 0 ||
	    reg.magic != FPROBE_REGISTRY_MAGIC)
		return;
	uint32_t nchunks = reg.shadow_nchunks < FPROBE_SHADOW_CHUNKS ?
			   reg.shadow_nchunks : FPROBE_SHADOW_CHUNKS;
	struct shadow *chunk = malloc(FPROBE_SHADOW_CHUNK_BYTES);
	for (uint32_t c = 0; chunk && c < nchunks; c++) {
		uint64_t base = reg.shadow_chunk[c];
		if (tracee_read(t, base, chunk, FPROBE_SHADOW_CHUNK_BYTES) < 0)
			continue;
		for (size_t i = 0; i < FPROBE_SHADOW_PER_CHUNK; i++) {
			const struct shadow *sh = &chunk[i];
			size_t k;
			for (k = 0; sh->owner && k < t->nthreads; k++)
				if (t->threads[k].tid == sh->owner)
					break;
			const struct user_regs_struct *regs =
				sh->owner && k < t->nthreads ? tracee_regs(t, k) : NULL;
			if (!regs)
				continue;   /* free, or its thread is gone */
			uint64_t sp = regs->rsp;
			uint32_t d = sh->depth < FPROBE_DEPTH ? sh->depth : FPROBE_DEPTH;
			for (uint32_t j = 0; j < d; j++) {
				const struct shadow_frame *f = &sh->f[j];
				uint64_t slot;
				if (!f->hooked || f->stack < sp || f->stack % 8 ||
				    tracee_read(t, f->stack, &slot, 8) < 0 ||
				    slot != lp->agent.return_tramp ||
				    tracee_write(t, f->stack, &f->ret, 8) < 0)
					continue;
				uint64_t zero = 0;
				tracee_write(t, base + (uint64_t)((const uint8_t *)&f->hooked -
								   (const uint8_t *)chunk),
					     &zero, 8);
			}
		}
	}
	free(chunk);
}

/* Undo one site a dead run left patched, if its bytes are still ours. */
static bool restore_stale(struct tracee *t, uint64_t at, struct fprobe_site *s)
{
	uint8_t cur[FPROBE_MAX_PATCH];
	if (s->patch_len > FPROBE_MAX_PATCH ||
	    tracee_read(t, s->addr, cur, s->patch_len) < 0 ||
	    memcmp(cur, s->patch, s->patch_len) != 0)
		return false;
	tracee_write(t, s->addr, s->orig, s->patch_len);
	if (s->via_pad)
		tracee_write(t, s->pad_addr, s->pad_orig, X86_JMP_LEN);
	s->state = FPROBE_RESTORED;
	s->nentry = s->nret = 0;
	tracee_write(t, at, s, sizeof(*s));
	return true;
}

/* Walk every region of the registry for sites still patched. */
static size_t restore_all_stale(struct livepatch *lp, struct tracee *t)
{
	size_t restored = 0;
	uint32_t n = lp->reg.nregions < FPROBE_MAX_REGIONS ? lp->reg.nregions
							   : FPROBE_MAX_REGIONS;
	for (uint32_t r = 0; r < n; r++) {
		uint64_t base = lp->reg.region[r];
		uint64_t used = lp->reg.region_used[r];
		if (used > lp->reg.region_len[r] || used > REGION_LEN)
			continue;
		uint8_t *buf = malloc(used ? used : 1);
		if (!buf || tracee_read(t, base, buf, used) < 0) {
			free(buf);
			continue;
		}
		for (uint64_t off = 0; off + sizeof(struct fprobe_site) <= used;
		     off += SITE_ALIGN) {
			struct fprobe_site s;
			memcpy(&s, buf + off, sizeof(s));
			if (s.magic == FPROBE_SITE_MAGIC && s.state == FPROBE_PATCHED)
				restored += restore_stale(t, base + off, &s);
		}
		free(buf);
	}
	if (restored)
		unhook_returns(lp, t);
	return restored;
}

int lp_begin(struct tracee *t, const struct lp_agent *agent,
	     struct livepatch **out, char *why, size_t whylen)
{
	*out = NULL;
	struct livepatch *lp = calloc(1, sizeof(*lp));
	if (!lp)
		return -ENOMEM;
	lp->pid = t->pid;
	lp->agent = *agent;
	int r = tracee_read(t, agent->registry, &lp->reg, sizeof(lp->reg));
	if (r < 0 || lp->reg.magic != FPROBE_REGISTRY_MAGIC ||
	    lp->reg.nregions > FPROBE_MAX_REGIONS) {
		snprintf(why, whylen, "process %d: the agent's registry at 0x%" PRIx64
		    " is unreadable or damaged", t->pid, agent->registry);
		lp_free(lp);
		return r < 0 ? r : -EINVAL;
	}
	int owner = (int)lp->reg.owner_pid;
	if (owner && owner != getpid() && lp->reg.owner_start &&
	    lp_proc_start(owner) == lp->reg.owner_start) {
		snprintf(why, whylen, "process %d is traced by another sonde (pid %d) "
		    "with the process engine: one at a time", t->pid, owner);
		lp_free(lp);
		return -EBUSY;
	}
	lp->stale_restored = restore_all_stale(lp, t);
	lp->session = ((uint64_t)getpid() << 32) ^ lp_proc_start(getpid());
	lp->reg.owner_pid = (uint64_t)getpid();
	lp->reg.owner_start = lp_proc_start(getpid());
	for (uint32_t i = 0; i < lp->reg.nregions; i++) {
		/* earlier runs' regions: their free space is used again */
		struct lp_region *g = &lp->regions[lp->nregions++];
		g->addr = lp->reg.region[i];
		g->len = lp->reg.region_len[i];
		g->used = lp->reg.region_used[i];
		g->index = i;
	}
	if ((r = write_registry(lp, t)) < 0 ||
	    (r = elf_proc_maps(t->pid, &lp->maps, &lp->nmaps)) < 0) {
		if (!why[0])
			snprintf(why, whylen, "process %d: %s", t->pid, strerror(-r));
		lp_free(lp);
		return r;
	}
	*out = lp;
	return 0;
}

void lp_free(struct livepatch *lp)
{
	if (!lp)
		return;
	elf_maps_free(lp->maps, lp->nmaps);
	free(lp->sites);
	free(lp);
}

static const struct elf_map *map_at(const struct livepatch *lp, uint64_t addr)
{
	for (size_t i = 0; i < lp->nmaps; i++)
		if (addr >= lp->maps[i].start && addr < lp->maps[i].end)
			return &lp->maps[i];
	return NULL;
}

/* Is the code a site patched still there: the same file at the same
 * offset, executable, with sonde's bytes or another tracer's breakpoint
 * over them (agent_watch.c copes with that) rather than the file's own
 * bytes? */
static bool site_still_there(const struct livepatch *lp, struct tracee *t,
			     const struct lp_entry *e)
{
	const struct fprobe_site *fs = &e->site;
	const struct elf_map *m = map_at(lp, fs->addr);
	if (!m || m->perms[2] != 'x' || m->inode != e->map_ino ||
	    m->dev_major != e->map_dev_major || m->dev_minor != e->map_dev_minor ||
	    m->offset + (fs->addr - m->start) != e->map_off)
		return false;
	uint8_t cur[X86_MAX_PATCH];
	if (fs->patch_len > sizeof(cur) ||
	    tracee_read(t, fs->addr, cur, fs->patch_len) < 0)
		return false;
	return memcmp(cur, fs->orig, fs->patch_len) != 0;
}

int lp_refresh(struct livepatch *lp, struct tracee *t)
{
	struct elf_map *maps;
	size_t n;
	int r = elf_proc_maps(t->pid, &maps, &n);
	if (r < 0)
		return r;
	elf_maps_free(lp->maps, lp->nmaps);
	lp->maps = maps;
	lp->nmaps = n;
	int gone = 0;
	for (size_t i = 0; i < lp->nsites;) {
		struct lp_entry *e = &lp->sites[i];
		if (e->site.state != FPROBE_PATCHED || site_still_there(lp, t, e)) {
			i++;
			continue;
		}
		/* its trampoline stays (a region is never unmapped); its
		 * record says restored, so the agent does not count the
		 * address patched, and nothing is written there at the end */
		e->site.state = FPROBE_RESTORED;
		e->site.nentry = e->site.nret = 0;
		tracee_write(t, e->site_at, &e->site, sizeof(e->site));
		lp->sites[i] = lp->sites[--lp->nsites];
		gone++;
	}
	return gone;
}

bool lp_has_probe(const struct livepatch *lp, uint64_t addr, uint32_t probe,
		  int mem_fd)
{
	for (size_t i = 0; lp && i < lp->nsites; i++) {
		const struct fprobe_site *fs = &lp->sites[i].site;
		if (lp->sites[i].probed != addr || fs->state == FPROBE_RESTORED)
			continue;
		bool has = false;
		for (uint32_t k = 0; k < fs->nentry + fs->nret &&
				     k < FPROBE_MAX_PROBES; k++)
			has |= fs->probes[k] == probe;
		if (!has)
			continue;
		uint8_t cur[X86_MAX_PATCH];
		if (mem_fd < 0 || fs->state != FPROBE_PATCHED)
			return true;
		return fs->patch_len <= sizeof(cur) &&
		       pread(mem_fd, cur, fs->patch_len, (off_t)fs->addr) ==
			       (ssize_t)fs->patch_len &&
		       memcmp(cur, fs->orig, fs->patch_len) != 0;
	}
	return false;
}

void lp_drop_unwritten(struct livepatch *lp, struct tracee *t)
{
	for (size_t i = 0; i < lp->nsites;) {
		struct lp_entry *e = &lp->sites[i];
		if (e->site.state != FPROBE_WRITING) {
			i++;
			continue;
		}
		e->site.state = FPROBE_RESTORED;
		e->site.nentry = e->site.nret = 0;
		tracee_write(t, e->site_at, &e->site, sizeof(e->site));
		lp->sites[i] = lp->sites[--lp->nsites];
	}
}

static uint64_t dist(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

/* A new region within reach of addr: the free gaps between the
 * mappings, nearest first, each tried with mmap(MAP_FIXED_NOREPLACE). */
static int region_new(struct livepatch *lp, struct tracee *t, uint64_t addr,
		      struct lp_region **out, char *why, size_t whylen)
{
	if (lp->reg.nregions >= FPROBE_MAX_REGIONS) {
		snprintf(why, whylen, "too many trampolines in process %d (%u regions "
		    "of %u KiB)", t->pid, FPROBE_MAX_REGIONS, REGION_LEN >> 10);
		return -ENOSPC;
	}
	const uint64_t len = REGION_LEN;
	if (!lp->have_lc) {   /* its mmap: found when first needed */
		int r = inject_find_libc(t->pid, &lp->lc, why, whylen);
		if (r < 0)
			return r;
		lp->have_lc = true;
	}
	for (int tries = 0; tries < 16; tries++) {
		uint64_t best = 0;
		for (size_t i = 0; i + 1 < lp->nmaps; i++) {
			uint64_t lo = lp->maps[i].end, hi = lp->maps[i + 1].start;
			if (hi - lo < len + 2 * 4096)
				continue;
			/* the end of the gap nearest to addr */
			uint64_t c = addr < lo ? lo + 4096 : hi - len - 4096;
			if (dist(c, addr) < REGION_REACH &&
			    (!best || dist(c, addr) < dist(best, addr)))
				best = c;
		}
		if (!best) {
			snprintf(why, whylen, "process %d has no free address space "
			    "within 1 GiB of 0x%" PRIx64 " for a trampoline",
			    t->pid, addr);
			return -ENOMEM;
		}
		uint64_t args[6] = { best, len, PROT_READ | PROT_EXEC,
				     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
				     (uint64_t)-1, 0 };
		uint64_t got = 0;
		char cwhy[256];
		int r = inject_call(t, &lp->lc, lp->lc.mmap, args, 6, NULL, 0, 2000,
				    &got, cwhy, sizeof(cwhy));
		if (r < 0) {
			snprintf(why, whylen, "mmap in process %d: %s", t->pid, cwhy);
			return r;
		}
		/* the process's maps may have changed while it ran */
		elf_maps_free(lp->maps, lp->nmaps);
		lp->maps = NULL;
		lp->nmaps = 0;
		if ((r = elf_proc_maps(t->pid, &lp->maps, &lp->nmaps)) < 0)
			return r;
		if (got == best) {
			struct lp_region *g = &lp->regions[lp->nregions++];
			g->addr = got;
			g->len = len;
			g->used = 0;
			g->index = lp->reg.nregions++;
			lp->reg.region[g->index] = got;
			lp->reg.region_len[g->index] = len;
			lp->reg.region_used[g->index] = 0;
			if ((r = write_registry(lp, t)) < 0)
				return r;
			*out = g;
			return 0;
		}
		if (got != (uint64_t)-1 && got) {   /* elsewhere: give it back */
			uint64_t margs[2] = { got, len };
			inject_call(t, &lp->lc, lp->lc.munmap, margs, 2, NULL, 0,
				    2000, &got, cwhy, sizeof(cwhy));
		}
	}
	snprintf(why, whylen, "process %d: could not map trampoline memory near "
	    "0x%" PRIx64, t->pid, addr);
	return -ENOMEM;
}

/* Room for `need` bytes within reach of addr. */
static int region_take(struct livepatch *lp, struct tracee *t, uint64_t addr,
		       uint64_t need, uint64_t *at, char *why, size_t whylen)
{
	struct lp_region *g = NULL;
	for (size_t i = 0; i < lp->nregions && !g; i++) {
		struct lp_region *c = &lp->regions[i];
		uint64_t next = (c->used + SITE_ALIGN - 1) & ~(uint64_t)(SITE_ALIGN - 1);
		if (next + need <= c->len && dist(c->addr, addr) < REGION_REACH &&
		    dist(c->addr + c->len, addr) < REGION_REACH)
			g = c;
	}
	if (!g) {
		int r = region_new(lp, t, addr, &g, why, whylen);
		if (r < 0)
			return r;
	}
	g->used = (g->used + SITE_ALIGN - 1) & ~(uint64_t)(SITE_ALIGN - 1);
	*at = g->addr + g->used;
	g->used += need;
	lp->reg.region_used[g->index] = g->used;
	return write_registry(lp, t);
}

int lp_put_data(struct livepatch *lp, struct tracee *t, uint64_t near,
		const void *data, size_t len, uint64_t *at, char *why,
		size_t whylen)
{
	if (len > 4096)
		return -E2BIG;
	int r = region_take(lp, t, near, len, at, why, whylen);
	return r < 0 ? r : tracee_write(t, *at, data, len);
}

static struct lp_entry *find_site(struct livepatch *lp, uint64_t addr)
{
	for (size_t i = 0; i < lp->nsites; i++)
		if (lp->sites[i].probed == addr)
			return &lp->sites[i];
	return NULL;
}

/* Does a planned site change bytes another one changes? (Two sites in
 * one function, f and f+4, when f's jump covers f+4: each jump would
 * overwrite the other's, and f+4's copy would never run.) */
static const struct lp_entry *overlapping(const struct livepatch *lp,
					  const struct x86_plan *p)
{
	uint64_t lo = p->via_pad ? p->pad_addr : p->addr, hi = p->addr + p->patch_len;
	for (size_t i = 0; i < lp->nsites; i++) {
		const struct x86_plan *q = &lp->sites[i].plan;
		uint64_t qlo = q->via_pad ? q->pad_addr : q->addr;
		if (lo < q->addr + q->patch_len && qlo < hi)
			return &lp->sites[i];
	}
	return NULL;
}

/* Another probe (or kind) at an address already planned. */
static int merge_site(struct lp_entry *e, const struct lp_site *s,
		      char *why, size_t whylen)
{
	struct fprobe_site *fs = &e->site;
	fs->flags |= s->flags;
	/* probes and an unwinder hook on one function: a probe site that
	 * does the hook's work first */
	if (fs->kind != s->kind) {
		uint32_t hook = fs->kind == FPROBE_PROBES ? s->kind : fs->kind;
		fs->flags |= hook == FPROBE_UNWIND ? FPROBE_F_UNWIND : FPROBE_F_CATCH;
		fs->kind = FPROBE_PROBES;
	}
	if (fs->nentry + fs->nret + s->nentry + s->nret > FPROBE_MAX_PROBES) {
		snprintf(why, whylen, "%s: more than %d probes on one function",
		    s->name, FPROBE_MAX_PROBES);
		return -E2BIG;
	}
	uint32_t probes[FPROBE_MAX_PROBES], n = 0;
	for (uint32_t i = 0; i < fs->nentry; i++)
		probes[n++] = fs->probes[i];
	for (uint32_t i = 0; i < s->nentry; i++)
		probes[n++] = s->probes[i];
	for (uint32_t i = 0; i < fs->nret; i++)
		probes[n++] = fs->probes[fs->nentry + i];
	for (uint32_t i = 0; i < s->nret; i++)
		probes[n++] = s->probes[s->nentry + i];
	memcpy(fs->probes, probes, n * sizeof(*probes));
	fs->nentry += s->nentry;
	fs->nret += s->nret;
	return 0;
}

bool lp_unpatchable(int err)
{
	return err == -EINVAL || err == -ENOTSUP || err == -EBUSY ||
	       err == LP_EUPROBE ||
	       err == -ERANGE || err == -EFAULT || err == -E2BIG;
}

/* A stock sys/sdt.h site is a 1-byte nop. The jump goes right after it,
 * over the instructions that follow (as many as cover 5 bytes, moved to
 * the trampoline), and the probes run there with the registers of the
 * nop, which changes none: ip is the nop's address. The nop itself is
 * never written, so a kernel uprobe on the same site (bpftrace, sonde's
 * kernel engine, perf) takes its int3 over the file's nop, steps or
 * emulates that nop, resumes on the jump, and both count every hit; its
 * removal leaves the nop whole. Safe only if nothing branches into the
 * bytes after the nop (or to right after it: that would run the probes
 * without the nop): the containing function (its symbol, or in a
 * stripped file its unwind range) and the code around it are swept for
 * direct branches and rip-relative references there (x86reloc.c). */
static int plan_after_nop(const struct lp_site *s, const struct x86_site *xs,
			  struct x86_plan *plan, char *why, size_t whylen)
{
	if (!xs->len || xs->code[0] != 0x90) {
		snprintf(why, whylen, "%s: the code there is %02x, not the nop the "
		    "file has (a debugger's or a kernel uprobe's breakpoint?)",
		    s->name, xs->len ? xs->code[0] : 0);
		return -EBUSY;
	}
	if (!s->func_len) {
		snprintf(why, whylen, "%s: no symbol or unwind information bounds the "
		    "function it is in, so branches into the bytes after the nop "
		    "cannot be ruled out", s->name);
		return -ENOTSUP;
	}
	struct x86_site after = *xs;
	after.addr = s->addr + 1;
	after.code = xs->code + 1;
	after.len = xs->len - 1;
	after.func_len = xs->func_len > 1 ? xs->func_len - 1 : 0;
	after.room = xs->room > 1 ? xs->room - 1 : 0;
	after.before = NULL;
	after.before_len = 0;
	after.lead_len = xs->lead_len + 1;
	after.after_entry = true;
	/* messages count from the nop: its next instruction is +1 */
	char reason[400];
	int r = x86_plan(&after, plan, reason, sizeof(reason));
	if (r < 0) {
		snprintf(why, whylen, "no jump fits right after its nop: %s", reason);
		return r;
	}
	/* another site in the bytes the jump takes: its probes (another
	 * tracer's uprobe on it, this run's) would land inside the jump */
	if (s->next_site && s->next_site < plan->addr + plan->patch_len) {
		snprintf(why, whylen, "%s: the %zu bytes a jump after its nop needs "
		    "hold another USDT site (at 0x%" PRIx64 "), which a kernel "
		    "uprobe may take", s->name, plan->patch_len, s->next_site);
		return -EINVAL;
	}
	return 0;
}

int lp_add(struct livepatch *lp, struct tracee *t, const struct lp_site *s,
	   char *why, size_t whylen)
{
	if (s->nentry + s->nret > FPROBE_MAX_PROBES) {
		snprintf(why, whylen, "%s: more than %d probes on one function",
		    s->name, FPROBE_MAX_PROBES);
		return -E2BIG;
	}
	struct lp_entry *e = find_site(lp, s->addr);
	if (e) {
		int r = merge_site(e, s, why, whylen);
		return r < 0 ? r : tracee_write(t, e->site_at, &e->site, sizeof(e->site));
	}
	if (lp->nsites >= MAX_SITES) {
		snprintf(why, whylen, "more than %d functions to patch", MAX_SITES);
		return -E2BIG;
	}
	const struct elf_map *m = map_at(lp, s->addr);
	if (!m || m->perms[2] != 'x') {
		snprintf(why, whylen, "%s: 0x%" PRIx64 " is not in executable memory of "
		    "process %d", s->name, s->addr, t->pid);
		return -EFAULT;
	}
	/* the code: the function (bounded), within its mapping */
	uint64_t room = m->end - s->addr;
	if (s->room && s->room < room)
		room = s->room;
	uint64_t len = s->func_len ? s->func_len : room;
	if (len < X86_MAX_PATCH + 16)
		len = X86_MAX_PATCH + 16;
	if (len > SCAN_MAX)
		len = SCAN_MAX;
	if (len > m->end - s->addr)
		len = m->end - s->addr;
	uint64_t pad = s->pad_before <= PAD_MAX ? s->pad_before : 0;
	if (pad > s->addr - m->start)
		pad = 0;
	/* inside a function: its bytes from its start, decoded to check
	 * that an instruction starts at addr (none can be checked past a
	 * bound, nor across mappings) */
	uint64_t lead = s->mid_function ? s->lead : 0;
	if (lead > SCAN_MAX || lead > s->addr - m->start) {
		snprintf(why, whylen, "%s: %" PRIu64 " bytes into its function, too "
		    "far to check that an instruction starts there", s->name,
		    lead);
		return -E2BIG;
	}
	if (lead)
		pad = 0;
	/* and the code around it, within the mapping: other functions may
	 * branch into its first bytes */
	uint64_t back = s->addr - m->start < AROUND ? s->addr - m->start : AROUND;
	if (back < lead + pad)
		back = lead + pad;
	uint64_t fwd = m->end - (s->addr + len) < AROUND ? m->end - (s->addr + len)
							  : AROUND;
	uint8_t *buf = malloc(back + len + fwd);
	if (!buf)
		return -ENOMEM;
	uint8_t *code = buf + back - lead - pad;
	int r = tracee_read(t, s->addr - back, buf, back + len + fwd);
	if (r < 0) {
		snprintf(why, whylen, "%s: cannot read the code of process %d at "
		    "0x%" PRIx64 ": %s", s->name, t->pid, s->addr, strerror(-r));
		free(buf);
		return r;
	}
	struct x86_site xs = {
		.name = s->name, .addr = s->addr, .code = code + lead + pad,
		.len = len, .func_len = s->func_len > len ? len : s->func_len,
		.room = room, .before = pad ? code : NULL, .before_len = pad,
		.lead_len = lead, .around = buf, .around_len = back + len + fwd,
		.around_addr = s->addr - back,
	};
	/* A function's entry is patched after its first instruction when
	 * the probes can run there as at the entry (x86_entry_skip): the
	 * instruction a kernel uprobe on the function displaces is then
	 * never one sonde changed, so such a uprobe coming and going leaves
	 * the patch, and the program, whole (the kernel writes the first
	 * byte, steps the file's first instruction out of line, resumes
	 * after it, and at the end writes the first byte back). Else the
	 * entry itself. */
	struct x86_plan plan;
	size_t skip = 0;
	int32_t sp_delta = 0;
	bool flags_live = false;
	r = -1;
	if (s->usdt_nop) {
		r = plan_after_nop(s, &xs, &plan, why, whylen);
		free(buf);
		if (r < 0)
			return r;
		skip = 1;
		goto planned;
	}
	if (!s->mid_function &&
	    x86_entry_skip(xs.code, xs.len, &skip, &sp_delta, &flags_live) == 0 &&
	    skip < xs.len) {
		struct x86_site after = xs;
		char why_after[256];
		after.addr = s->addr + skip;
		after.code = xs.code + skip;
		after.len = xs.len - skip;
		after.func_len = xs.func_len > skip ? xs.func_len - skip : 0;
		after.room = xs.room > skip ? xs.room - skip : 0;
		after.before = NULL;
		after.before_len = 0;
		after.lead_len = skip;
		after.after_entry = true;
		r = x86_plan(&after, &plan, why_after, sizeof(why_after));
	}
	if (r < 0) {
		skip = 0;
		sp_delta = 0;
		flags_live = false;
		r = x86_plan(&xs, &plan, why, whylen);
		/* A kernel uprobe placed on the function later would write
		 * int3 over the jump's first byte, step the file's instruction
		 * out of line and resume after it: inside the jump when the
		 * patch covers more than that one instruction, whose bytes are
		 * then no code. Only a patch of exactly one instruction
		 * survives it (the agent puts the original bytes under the
		 * uprobe's int3, so that its removal leaves the instruction
		 * whole). Inside a function (FUNC+OFFSET) only a kernel uprobe
		 * at that very offset would: not refused, said in the README. */
		if (r == 0 && plan.ninsns > 1 && !s->mid_function) {
			snprintf(why, whylen, "%s: the %zu bytes its jump needs hold %d "
			    "instructions, the first not one a probe can run "
			    "after: a kernel uprobe placed on it would resume "
			    "the program inside the jump (the kernel steps the "
			    "first instruction, then goes on after it)", s->name,
			    plan.patch_len, plan.ninsns);
			r = LP_EUPROBE;
		}
	}
	free(buf);
	if (r < 0)
		return r;
planned:;
	const struct lp_entry *other = overlapping(lp, &plan);
	if (other) {
		snprintf(why, whylen, "%s: the %zu bytes its jump needs overlap those "
		    "of %s's (each would overwrite the other)", s->name,
		    plan.patch_len, other->name);
		return -EINVAL;
	}
	if (vec_reserve_arr(lp->sites, lp->cap, lp->nsites + 1))
		return -ENOMEM;
	e = &lp->sites[lp->nsites];
	memset(e, 0, sizeof(*e));
	e->probed = s->addr;
	e->plan = plan;
	e->map_ino = m->inode;
	e->map_off = m->offset + (plan.addr - m->start);
	e->map_dev_major = m->dev_major;
	e->map_dev_minor = m->dev_minor;
	snprintf(e->name, sizeof(e->name), "%s", s->name);
	uint64_t at;
	const uint64_t site_len = (sizeof(struct fprobe_site) + 15) & ~15ull;
	if ((r = region_take(lp, t, s->addr, site_len + TRAMP_MAX, &at, why,
			     whylen)) < 0)
		return r;
	e->site_at = at;
	struct fprobe_site *fs = &e->site;
	fs->magic = FPROBE_SITE_MAGIC;
	fs->kind = s->kind;
	fs->state = FPROBE_WRITING;
	fs->addr = plan.addr;          /* after the first instruction, maybe */
	fs->tramp = at + site_len;
	fs->session = lp->session;
	fs->flags = s->flags;
	fs->patch_len = (uint32_t)plan.patch_len;
	fs->via_pad = plan.via_pad;
	fs->pad_addr = plan.pad_addr;
	memcpy(fs->orig, plan.orig, plan.patch_len);
	memcpy(fs->pad_orig, plan.pad_orig, X86_JMP_LEN);
	fs->nentry = s->nentry;
	fs->nret = s->nret;
	for (uint32_t i = 0; i < s->nentry + s->nret; i++)
		fs->probes[i] = s->probes[i];
	uint8_t tramp[TRAMP_MAX];
	struct tramp_params tp = {
		.at = fs->tramp, .site = at, .handler = lp->agent.entry,
		/* after a first instruction that set the flags, the code may
		 * test them: kept, as inside a function */
		.mid_function = s->mid_function || flags_live, .plan = &e->plan,
		.entry_ip = skip ? s->addr : 0, .entry_sp_delta = sp_delta,
	};
	int n = tramp_emit_entry(&tp, tramp, why, whylen);
	if (n < 0)
		return n;
	if (x86_patch_bytes(&e->plan, fs->tramp, fs->patch, e->pad_patch) < 0) {
		snprintf(why, whylen, "%s: its trampoline is out of a jump's reach", s->name);
		return -ERANGE;
	}
	if ((r = tracee_write(t, fs->tramp, tramp, (size_t)n)) < 0 ||
	    (r = tracee_write(t, at, fs, sizeof(*fs))) < 0) {
		snprintf(why, whylen, "%s: cannot write its trampoline into process %d: "
		    "%s", s->name, t->pid, strerror(-r));
		return r;
	}
	lp->nsites++;
	return 0;
}

/* Move threads stopped inside the bytes a site replaces. */
static int move_threads(struct tracee *t, const struct lp_entry *e,
			char *why, size_t whylen)
{
	const struct x86_plan *p = &e->plan;
	for (size_t i = 0; i < t->nthreads; i++) {
		struct user_regs_struct *regs = tracee_regs(t, i);
		if (!regs) {
			snprintf(why, whylen, "cannot read the registers of thread %d",
			    t->threads[i].tid);
			return -ESRCH;
		}
		uint64_t rip = regs->rip;
		if (rip <= p->addr || rip >= p->addr + p->patch_len)
			continue;
		uint64_t to;
		if (x86_moved_rip(p, rip, &to) < 0) {
			snprintf(why, whylen, "thread %d is stopped inside an instruction "
			    "at 0x%" PRIx64, t->threads[i].tid, rip);
			return -EAGAIN;
		}
		regs->rip = to;
		tracee_regs_changed(t, i);
		/* written now, before the code changes: a thread let go at
		 * any moment (sonde killed) runs either the original bytes or
		 * their copy, never a jump's middle */
		int r = tracee_regs_flush(t, i);
		if (r < 0) {
			snprintf(why, whylen, "%s", t->why);
			return r;
		}
	}
	return 0;
}

int lp_commit(struct livepatch *lp, struct tracee *t, char *why, size_t whylen)
{
	for (size_t i = 0; i < lp->nsites; i++) {
		struct lp_entry *e = &lp->sites[i];
		struct fprobe_site *fs = &e->site;
		if (fs->state != FPROBE_WRITING)
			continue;
		uint8_t cur[X86_MAX_PATCH];
		int r = tracee_read(t, fs->addr, cur, fs->patch_len);
		if (r < 0 || memcmp(cur, fs->orig, fs->patch_len) != 0) {
			snprintf(why, whylen, "the code at 0x%" PRIx64 " changed while "
			    "sonde prepared its patch", fs->addr);
			return r < 0 ? r : -EAGAIN;
		}
		if ((r = move_threads(t, e, why, whylen)) < 0)
			return r;
		/* marked patched before it is: a sonde killed in between
		 * leaves a record that the next one checks against the code
		 * (restore_stale), never code that no record names */
		fs->state = FPROBE_PATCHED;
		if ((r = tracee_write(t, e->site_at, fs, sizeof(*fs))) < 0)
			goto fail;
		if (fs->via_pad &&
		    (r = tracee_write(t, fs->pad_addr, e->pad_patch, X86_JMP_LEN)) < 0)
			goto fail;
		if ((r = tracee_write(t, fs->addr, fs->patch, fs->patch_len)) < 0)
			goto fail;
		continue;
fail:
		snprintf(why, whylen, "cannot write the code of process %d at "
		    "0x%" PRIx64 ": %s", t->pid, fs->addr, strerror(-r));
		return r;
	}
	return 0;
}

int lp_restore(struct livepatch *lp, struct tracee *t, char *why, size_t whylen)
{
	int ret = 0;
	for (size_t i = 0; i < lp->nsites; i++) {
		struct lp_entry *e = &lp->sites[i];
		struct fprobe_site *fs = &e->site;
		if (fs->state == FPROBE_PATCHED) {
			uint8_t cur[X86_MAX_PATCH];
			int r = tracee_read(t, fs->addr, cur, fs->patch_len);
			if (r == 0 && memcmp(cur, fs->patch, fs->patch_len) == 0) {
				r = tracee_write(t, fs->addr, fs->orig, fs->patch_len);
				if (r == 0 && fs->via_pad)
					r = tracee_write(t, fs->pad_addr, fs->pad_orig,
							 X86_JMP_LEN);
			} else if (r == 0) {
				snprintf(why, whylen, "the code at 0x%" PRIx64 " was changed "
				    "by someone else since sonde patched it: left "
				    "alone", fs->addr);
				r = -EBUSY;
			}
			if (r < 0 && !ret) {
				if (r != -EBUSY)
					snprintf(why, whylen, "cannot restore the code at "
					    "0x%" PRIx64 ": %s", fs->addr, strerror(-r));
				ret = r;
			}
		}
		fs->state = FPROBE_RESTORED;
		fs->nentry = fs->nret = 0;
		tracee_write(t, e->site_at, fs, sizeof(*fs));
	}
	unhook_returns(lp, t);
	lp->reg.owner_pid = 0;
	lp->reg.owner_start = 0;
	int r = write_registry(lp, t);
	return ret ? ret : r;
}
