/* stacks.c - stack values and symbols as text: kstack/ustack ids read
 * from the .stacks maps, copied user stacks unwound with the CFI and
 * interned, ksym/usym names, and the processes to remember. */

/*
 * A KSTACK value is an id in the stack map of its frame limit; the
 * frames are read through the map reader when the value is printed.
 * A USTACK value is either such an id (--ustack=fp) or a sample id: the
 * probe copied the user registers and stack into an EV_USTACK record,
 * which reaches stacks_sample() before any record or map entry that
 * carries its id (the ring delivers records in the order they were
 * reserved, and the copy is reserved first). The sample is unwound at
 * once, while the process still runs, and its frames interned: equal
 * stacks of one process get one canonical index, and the sample id maps
 * to it. Map keys made of samples are merged into canonical keys by
 * stackmaps.c.
 *
 * Processes. A user address means something only with the mappings of
 * its process, which are gone once it exits. So a process is remembered
 * (usym_process_remember) on its first sample, on an EV_NEW_PID record
 * (a probe kept a usym or an fp ustack of it), or on the first lookup;
 * a sample whose pc lies outside every remembered mapping (dlopen, exec)
 * takes a new snapshot, at most once a second per process.
 *
 * Forgetting. A day-long run on a busy host sees processes come and go
 * by the thousand, and a long-lived one makes ever new stacks. So now
 * and then (stacks_gc, from output_sweep in stacks_gc.c) what nothing
 * refers to any more is let go: a canonical stack that no map key or
 * value and no sample still names (its index is reused), and a process
 * that has exited, was last seen more than a few seconds ago, and whose
 * stacks and symbols no map holds any longer (its mappings, files and
 * symbol tables are dropped from the usyms table).
 */
#include "output_int.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../base/log.h"
#include "../base/vec.h"
#include "../elf/symbolize.h"
#include "stackfmt.h"

#define MAX_FRAMES 1024
/* Under -v, a sweep says what the tables hold at most this often. */
#define STACKS_LOG_NS (10ull * 1000000000ull)
/* A process is kept at least this long after it was last seen: records
 * about it may still be in the ring or between the ring and a map. */
#define STACKS_GRACE_NS (5ull * 1000000000ull)

struct ustk {
	int32_t pid;
	uint32_t n;
	uint64_t hash;
	uint64_t *ips;          /* NULL: a free slot (see free_canon) */
};

struct sample {
	uint64_t id;            /* 0: empty slot */
	uint32_t canon;         /* index into canon, or UINT32_MAX: empty */
	uint32_t gen;
};

struct known_pid {
	int32_t pid;            /* 0: empty slot */
	uint64_t refreshed_ns;  /* last snapshot taken */
	uint64_t seen_ns;       /* last sample or lookup */
};

struct stacks {
	struct output *o;
	struct ksyms *ksyms;
	struct usyms *usyms;
	/* interned user stacks, with an open-addressing index */
	struct ustk *canon;
	size_t ncanon, cap_canon;
	VEC(uint32_t) free_canon;   /* slots freed by stacks_gc, to reuse */
	uint32_t *cindex;       /* canon index + 1, 0 empty */
	size_t cap_cindex;
	/* sample id -> canonical stack */
	struct sample *samples;
	size_t nsamples, cap_samples;
	struct known_pid *pids;
	size_t npids, cap_pids;
	uint32_t gen;
	uint32_t gen_samples;       /* samples that arrived in this gen */
	/* figures for -v: every unwind, and the first of each process
	 * (which also reads its mappings and files) apart */
	uint64_t unwound, frames, unwind_ns;
	uint64_t first_unwinds, first_ns;
	uint64_t gc_stacks, gc_pids;    /* let go by stacks_gc */
	uint64_t gc_frozen;             /* processes frozen (or shrunk) */
	uint64_t logged_ns;             /* the last sweep said under -v */
	uint64_t grace_ns;              /* STACKS_GRACE_NS; tests shorten it */
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdull;
}

/* ---- processes ------------------------------------------------------ */

static struct known_pid *pid_slot(struct stacks *s, int32_t pid, bool add)
{
	if (add && 2 * (s->npids + 1) > s->cap_pids) {
		size_t cap = s->cap_pids ? s->cap_pids * 2 : 64;
		struct known_pid *v = calloc(cap, sizeof(*v));
		if (!v)
			return NULL;
		for (size_t i = 0; i < s->cap_pids; i++) {
			if (!s->pids[i].pid)
				continue;
			size_t j = (uint32_t)s->pids[i].pid * 2654435761u & (cap - 1);
			while (v[j].pid)
				j = (j + 1) & (cap - 1);
			v[j] = s->pids[i];
		}
		free(s->pids);
		s->pids = v;
		s->cap_pids = cap;
	}
	if (!s->cap_pids)
		return NULL;
	size_t j = (uint32_t)pid * 2654435761u & (s->cap_pids - 1);
	while (s->pids[j].pid && s->pids[j].pid != pid)
		j = (j + 1) & (s->cap_pids - 1);
	if (!s->pids[j].pid) {
		if (!add)
			return NULL;
		s->pids[j].pid = pid;
		s->npids++;
	}
	return &s->pids[j];
}

/* Remember PID's mappings unless that was done already (or, with
 * REFRESH, done more than a second ago). */
static void remember(struct stacks *s, int32_t pid, bool refresh)
{
	if (pid <= 0)
		return;
	struct known_pid *k = pid_slot(s, pid, false);
	uint64_t now = now_ns();
	if (k) {
		k->seen_ns = now;
		if (!refresh || now - k->refreshed_ns < 1000000000ull)
			return;
	}
	k = pid_slot(s, pid, true);
	if (!k)
		return;
	k->refreshed_ns = k->seen_ns = now;
	int r = usym_process_remember(s->usyms, pid);
	if (r < 0 && r != -ESRCH)
		log_info("stacks: cannot read the mappings of process %d: %s",
			 (int)pid, strerror(-r));
}

void stacks_new_pid(struct stacks *s, int64_t pid)
{
	if (s && pid > 0 && pid <= INT32_MAX)
		remember(s, (int32_t)pid, false);
}

/* ---- interned user stacks ------------------------------------------- */

static int cindex_rebuild(struct stacks *s, size_t cap)
{
	uint32_t *v = calloc(cap, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < s->ncanon; i++) {
		if (!s->canon[i].ips)
			continue;
		size_t j = s->canon[i].hash & (cap - 1);
		while (v[j])
			j = (j + 1) & (cap - 1);
		v[j] = (uint32_t)i + 1;
	}
	free(s->cindex);
	s->cindex = v;
	s->cap_cindex = cap;
	return 0;
}

static int cindex_grow(struct stacks *s)
{
	return cindex_rebuild(s, s->cap_cindex ? s->cap_cindex * 2 : 256);
}

/* The canonical index of (pid, ips[0..n)), added when new. */
static long intern(struct stacks *s, int32_t pid, const uint64_t *ips,
		   size_t n)
{
	uint64_t h = mix((uint64_t)(uint32_t)pid, n);
	for (size_t i = 0; i < n; i++)
		h = mix(h, ips[i]);
	if (2 * (s->ncanon + 1) > s->cap_cindex && cindex_grow(s) < 0)
		return -ENOMEM;
	size_t j = h & (s->cap_cindex - 1);
	for (; s->cindex[j]; j = (j + 1) & (s->cap_cindex - 1)) {
		const struct ustk *u = &s->canon[s->cindex[j] - 1];
		if (u->hash == h && u->pid == pid && u->n == n &&
		    (n == 0 || memcmp(u->ips, ips, n * sizeof(*ips)) == 0))
			return (long)s->cindex[j] - 1;
	}
	size_t at = s->ncanon;
	if (s->free_canon.n) {
		at = s->free_canon.v[--s->free_canon.n];
	} else if (vec_reserve_arr(s->canon, s->cap_canon, s->ncanon + 1)) {
		return -ENOMEM;
	}
	struct ustk *u = &s->canon[at];
	u->ips = malloc((n ? n : 1) * sizeof(*ips));
	if (!u->ips) {
		if (at != s->ncanon)
			s->free_canon.n++;      /* still free */
		return -ENOMEM;
	}
	if (n)
		memcpy(u->ips, ips, n * sizeof(*ips));
	u->pid = pid;
	u->n = (uint32_t)n;
	u->hash = h;
	s->cindex[j] = (uint32_t)at + 1;
	if (at == s->ncanon)
		s->ncanon++;
	return (long)at;
}

/* ---- samples -------------------------------------------------------- */

static struct sample *sample_slot(struct stacks *s, uint64_t id, bool add)
{
	if (add && 2 * (s->nsamples + 1) > s->cap_samples) {
		size_t cap = s->cap_samples ? s->cap_samples * 2 : 1024;
		struct sample *v = calloc(cap, sizeof(*v));
		if (!v)
			return NULL;
		for (size_t i = 0; i < s->cap_samples; i++) {
			if (!s->samples[i].id)
				continue;
			size_t j = mix(0, s->samples[i].id) & (cap - 1);
			while (v[j].id)
				j = (j + 1) & (cap - 1);
			v[j] = s->samples[i];
		}
		free(s->samples);
		s->samples = v;
		s->cap_samples = cap;
	}
	if (!s->cap_samples)
		return NULL;
	size_t j = mix(0, id) & (s->cap_samples - 1);
	while (s->samples[j].id && s->samples[j].id != id)
		j = (j + 1) & (s->cap_samples - 1);
	if (!s->samples[j].id) {
		if (!add)
			return NULL;
		s->samples[j].id = id;
		s->samples[j].canon = UINT32_MAX;
		s->nsamples++;
	}
	return &s->samples[j];
}

static void regs_of(const struct sonde_ustack_record *r,
		    struct unwind_regs *u)
{
	const uint64_t *g = r->regs;
	*u = (struct unwind_regs){
		.ip = g[USTACK_REG_IP], .sp = g[USTACK_REG_SP],
		.bp = g[USTACK_REG_BP], .ax = g[USTACK_REG_AX],
		.bx = g[USTACK_REG_BX], .cx = g[USTACK_REG_CX],
		.dx = g[USTACK_REG_DX], .si = g[USTACK_REG_SI],
		.di = g[USTACK_REG_DI], .r8 = g[USTACK_REG_R8],
		.r9 = g[USTACK_REG_R9], .r10 = g[USTACK_REG_R10],
		.r11 = g[USTACK_REG_R11], .r12 = g[USTACK_REG_R12],
		.r13 = g[USTACK_REG_R13], .r14 = g[USTACK_REG_R14],
		.r15 = g[USTACK_REG_R15],
	};
}

int stacks_sample(struct stacks *s, const void *data, size_t size)
{
	struct sonde_ustack_record r;
	if (!s || size < sizeof(r))
		return -EINVAL;
	memcpy(&r, data, sizeof(r));
	if (!(r.id & USTACK_ID_SAMPLE))
		return -EINVAL;
	size_t room = size - sizeof(r);
	if (r.stack_len > room)
		r.stack_len = room;
	int32_t pid = (int32_t)(r.pid_tgid >> 32);
	struct unwind_sample us = {
		.pid = pid, .tid = (pid_t)(uint32_t)r.pid_tgid,
		.stack = (const uint8_t *)data + sizeof(r),
		.stack_len = (size_t)r.stack_len,
	};
	regs_of(&r, &us.regs);
	size_t limit = r.limit && r.limit < MAX_FRAMES ? r.limit : MAX_FRAMES;
	uint64_t ips[MAX_FRAMES];
	int n = 0;
	/* Only a task interrupted in user mode (cs with RPL 3) has a user
	 * stack; kernel threads have none, as with bpf_get_stackid. */
	if (pid > 0 && (r.regs[USTACK_REG_CS] & 3) == 3 && us.regs.ip) {
		uint64_t t0 = now_ns();
		bool first = !pid_slot(s, pid, false);
		remember(s, pid, false);
		if (!usyms_module(s->usyms, pid, us.regs.ip)) {
			remember(s, pid, true);     /* new mappings? */
		}
		n = unwind_user(s->usyms, &us, ips, limit);
		if (n < 0) {        /* the process is gone: its pc at least */
			ips[0] = us.regs.ip;
			n = 1;
		}
		uint64_t dt = now_ns() - t0;
		if (first) {
			s->first_unwinds++;
			s->first_ns += dt;
		} else {
			s->unwind_ns += dt;
			s->unwound++;
		}
		s->frames += (uint64_t)n;
	}
	long c = intern(s, pid, ips, (size_t)n);
	struct sample *e = sample_slot(s, r.id, true);
	if (c < 0 || !e)
		return -ENOMEM;
	e->canon = (uint32_t)c;
	e->gen = s->gen;
	s->gen_samples++;
	return 0;
}

int stacks_canon_of(struct stacks *s, uint64_t sample_id, uint64_t *canon_id,
		    uint32_t *gen)
{
	struct sample *e = s ? sample_slot(s, sample_id, false) : NULL;
	if (!e || e->canon == UINT32_MAX)
		return -ENOENT;
	*canon_id = USTACK_ID_CANON | e->canon;
	if (gen)
		*gen = e->gen;
	return 0;
}

void stacks_prune(struct stacks *s, uint32_t before)
{
	if (!s || !s->nsamples)
		return;
	size_t kept = 0;
	for (size_t i = 0; i < s->cap_samples; i++)
		if (s->samples[i].id && s->samples[i].gen >= before)
			kept++;
	if (kept == s->nsamples)
		return;
	size_t cap = 1024;
	while (cap < 2 * (kept + 1))
		cap *= 2;
	struct sample *v = calloc(cap, sizeof(*v));
	if (!v)
		return;     /* keep them all: correct, only bigger */
	for (size_t i = 0; i < s->cap_samples; i++) {
		const struct sample *e = &s->samples[i];
		if (!e->id || e->gen < before)
			continue;
		size_t j = mix(0, e->id) & (cap - 1);
		while (v[j].id)
			j = (j + 1) & (cap - 1);
		v[j] = *e;
	}
	free(s->samples);
	s->samples = v;
	s->cap_samples = cap;
	s->nsamples = kept;
}

uint32_t stacks_gen(struct stacks *s)
{
	return s ? s->gen : 0;
}

void stacks_next_gen(struct stacks *s)
{
	if (s) {
		s->gen++;
		s->gen_samples = 0;
	}
}

uint32_t stacks_gen_samples(const struct stacks *s)
{
	return s ? s->gen_samples : 0;
}

/* ---- letting go ------------------------------------------------------ */

static int cmp_i32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	return x < y ? -1 : x > y;
}

static bool process_gone(int32_t pid)
{
	return kill(pid, 0) < 0 && errno == ESRCH;
}

struct owned {
	int32_t pid;
	uint32_t canon;
};

static int cmp_owned(const void *a, const void *b)
{
	const struct owned *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->canon < y->canon ? -1 : x->canon > y->canon;
}

/* The first of V[0..n) (sorted by pid) with PID, or n. */
static size_t owned_from(const struct owned *v, size_t n, int32_t pid)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static size_t usym_refs_from(const struct usym_ref *v, size_t n, int32_t pid)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Freeze exited process PID, which only the stacks OWN[0..nown) and the
 * usyms REFS[0..nrefs) still refer to: the addresses they hold are named
 * once and the process is let go of. 1 if that changed anything, 0, or
 * -errno. */
static int freeze(struct stacks *s, int32_t pid, const struct owned *own,
		  size_t nown, const struct usym_ref *refs, size_t nrefs)
{
	VEC(uint64_t) addrs = { 0 };
	for (size_t i = 0; i < nown; i++) {
		const struct ustk *u = &s->canon[own[i].canon];
		for (uint32_t j = 0; j < u->n; j++)
			if (vec_push(&addrs, u->ips[j]) < 0)
				goto nomem;
	}
	for (size_t i = 0; i < nrefs; i++)
		if (vec_push(&addrs, refs[i].addr) < 0)
			goto nomem;
	int r = usym_process_freeze(s->usyms, pid, addrs.v, addrs.n);
	vec_free(&addrs);
	return r;
nomem:
	vec_free(&addrs);
	return -ENOMEM;
}

/* Under -v: what the symbol tables hold, so a long run's growth shows. */
static void log_symbol_tables(const struct stacks *s, const char *when)
{
	struct usyms_stats st;
	usyms_stats(s->usyms, &st);
	log_info("stacks: %s: symbols of %zu processes (%zu frozen, %zu with "
		 "a Dwfl), %zu files open, %zu file name tables holding %zu "
		 "answers, %zu names interned: %zu KiB",
		 when, st.procs, st.frozen, st.dwfls, st.files, st.tables,
		 st.answers, st.names, (st.bytes + 1023) / 1024);
}

int stacks_gc(struct stacks *s, const uint64_t *canon_refs, size_t ncanon_refs,
	      int32_t *pid_refs, size_t npid_refs, struct usym_ref *usym_refs,
	      size_t nusym_refs)
{
	if (!s)
		return 0;
	uint8_t *mark = calloc(s->ncanon ? s->ncanon : 1, 1);
	if (!mark)
		return -ENOMEM;
	for (size_t i = 0; i < ncanon_refs; i++) {
		uint64_t c = canon_refs[i] & ~USTACK_ID_CANON;
		if (c < s->ncanon)
			mark[c] = 1;
	}
	for (size_t i = 0; i < s->cap_samples; i++)
		if (s->samples[i].id && s->samples[i].canon < s->ncanon)
			mark[s->samples[i].canon] = 1;
	/* Processes kept whole: those whose stacks are read from the
	 * kernel's stack maps when printed (their addresses are not known
	 * here). Those of the stacks kept, and of usyms, are known by the
	 * addresses they need. */
	VEC(int32_t) keep = { 0 };
	VEC(struct owned) own = { 0 };
	for (size_t i = 0; i < npid_refs; i++)
		vec_push(&keep, pid_refs[i]);
	size_t freed = 0;
	for (size_t i = 0; i < s->ncanon; i++) {
		struct ustk *u = &s->canon[i];
		if (!u->ips)
			continue;
		if (mark[i]) {
			struct owned o = { u->pid, (uint32_t)i };
			if (u->pid > 0 && vec_push(&own, o) < 0)
				vec_push(&keep, u->pid);   /* kept whole */
			continue;
		}
		free(u->ips);
		u->ips = NULL;
		u->n = 0;
		if (vec_push(&s->free_canon, (uint32_t)i) < 0) {
			/* cannot remember the slot: it stays unused */
		}
		freed++;
	}
	free(mark);
	if (freed && s->cap_cindex)
		cindex_rebuild(s, s->cap_cindex);
	s->gc_stacks += freed;
	if (keep.n)
		qsort(keep.v, keep.n, sizeof(*keep.v), cmp_i32);
	if (own.n)
		qsort(own.v, own.n, sizeof(*own.v), cmp_owned);

	/* Known processes that have exited and were not seen for a while
	 * (records about them may still be on their way): let go of those
	 * nothing kept refers to, and freeze those only kept stacks and
	 * usyms refer to. */
	uint64_t now = now_ns();
	size_t gone = 0, frozen = 0;
	for (size_t i = 0; i < s->cap_pids; i++) {
		struct known_pid *k = &s->pids[i];
		if (!k->pid || !process_gone(k->pid))
			continue;
		/* exited: sampled no more, so nothing to unwind with */
		usym_process_unload(s->usyms, k->pid);
		if (now - k->seen_ns < s->grace_ns)
			continue;
		if (keep.n && bsearch(&k->pid, keep.v, keep.n, sizeof(*keep.v),
				      cmp_i32))
			continue;
		size_t o0 = owned_from(own.v, own.n, k->pid), o1 = o0;
		while (o1 < own.n && own.v[o1].pid == k->pid)
			o1++;
		size_t u0 = usym_refs_from(usym_refs, nusym_refs, k->pid);
		size_t u1 = u0;
		while (u1 < nusym_refs && usym_refs[u1].pid == k->pid)
			u1++;
		if (o1 > o0 || u1 > u0) {
			int r = freeze(s, k->pid, own.v + o0, o1 - o0,
				       usym_refs + u0, u1 - u0);
			if (r > 0)
				frozen++;
			continue;
		}
		usym_process_forget(s->usyms, k->pid);
		k->pid = -k->pid;       /* dropped below */
		gone++;
	}
	vec_free(&keep);
	vec_free(&own);
	if (gone) {
		/* open addressing without tombstones: rebuild the table */
		struct known_pid *old = s->pids;
		size_t cap = s->cap_pids;
		s->pids = NULL;
		s->npids = s->cap_pids = 0;
		for (size_t i = 0; i < cap; i++) {
			if (old[i].pid <= 0)
				continue;
			struct known_pid *k = pid_slot(s, old[i].pid, true);
			if (k)
				*k = old[i];
		}
		free(old);
	}
	s->gc_pids += gone;
	s->gc_frozen += frozen;
	if (log_verbose && now - s->logged_ns >= STACKS_LOG_NS) {
		/* what the tables hold, for a long run's -v: each is bounded
		 * by what the maps refer to */
		s->logged_ns = now;
		log_info("stacks: sweep: %zu stacks kept (index of %zu), %zu "
			 "samples (of %zu slots), %zu processes known (%zu "
			 "frozen, %u with symbol tables), %zu names; let go of "
			 "%zu stacks and %zu processes, froze %zu",
			 stacks_ncanon(s), s->cap_cindex, s->nsamples,
			 s->cap_samples, s->npids, usyms_nfrozen(s->usyms),
			 usyms_ndwfl(s->usyms), usyms_nnames(s->usyms), freed,
			 gone, frozen);
		log_symbol_tables(s, "sweep");
	}
	/* no name is held between event batches: the unused ones can go */
	if (gone || frozen)
		usyms_trim(s->usyms);
	return (int)(freed + gone + frozen);
}

void stacks_set_grace(struct stacks *s, uint64_t ns)
{
	if (s)
		s->grace_ns = ns;
}

uint64_t stacks_grace(const struct stacks *s)
{
	return s ? s->grace_ns : 0;
}

size_t stacks_nprocs(const struct stacks *s)
{
	return s ? s->npids : 0;
}

size_t stacks_ncanon(const struct stacks *s)
{
	return s ? s->ncanon - s->free_canon.n : 0;
}

/* ---- resolving values ----------------------------------------------- */

/* Frames of a stack map id, read through the map reader. */
static int stackmap_frames(struct stacks *s, uint32_t limit, int64_t id,
			   uint64_t *ips, size_t cap, size_t *n)
{
	struct output *o = s->o;
	char name[32];
	*n = 0;
	if (id < 0)
		return 0;
	if (!o->have_maps || !o->maps.lookup)
		return -ENOTSUP;
	program_stack_map_name(name, sizeof(name),
			       limit ? limit : SONDE_STACK_FRAMES);
	int map = -1;
	for (uint32_t i = 0; i < o->prog->nmaps; i++)
		if (strcmp(o->prog->maps[i].name, name) == 0)
			map = (int)i;
	if (map < 0)
		return -ENOENT;
	const struct map_spec *m = &o->prog->maps[map];
	size_t frames = m->value_size / 8;
	uint64_t *buf = calloc(frames ? frames : 1, 8);
	if (!buf)
		return -ENOMEM;
	uint32_t key = (uint32_t)id;
	int r = o->maps.lookup(o->maps.ctx, (uint32_t)map, &key, buf);
	if (r == 0) {
		size_t i = 0;
		while (i < frames && i < cap && buf[i])
			i++;
		memcpy(ips, buf, i * 8);
		*n = i;
	}
	free(buf);
	return r == -ENOENT ? 0 : r;
}

int stacks_resolve(struct stacks *s, const struct type *t,
		   const uint8_t *data, uint64_t *ips, size_t cap, size_t *n,
		   int64_t *pid)
{
	int64_t id;
	memcpy(&id, data, 8);
	*n = 0;
	*pid = -1;
	if (t->kind == TYPE_KSTACK)
		return stackmap_frames(s, t->stack_limit, id, ips, cap, n);
	if (t->kind != TYPE_USTACK || t->size < 16)
		return -EINVAL;
	memcpy(pid, data + 8, 8);
	if (id < 0)
		return 0;
	uint64_t u = (uint64_t)id;
	if (u & USTACK_ID_SAMPLE) {
		struct sample *e = sample_slot(s, u, false);
		if (!e || e->canon == UINT32_MAX)
			return 0;       /* its record was lost */
		u = USTACK_ID_CANON | e->canon;
	}
	if (u & USTACK_ID_CANON) {
		uint64_t c = u & ~USTACK_ID_CANON;
		if (c >= s->ncanon || !s->canon[c].ips)
			return 0;
		const struct ustk *k = &s->canon[c];
		size_t m = k->n < cap ? k->n : cap;
		memcpy(ips, k->ips, m * 8);
		*n = m;
		return 0;
	}
	remember(s, (int32_t)*pid, false);
	return stackmap_frames(s, t->stack_limit, id, ips, cap, n);
}

struct ksyms *stacks_ksyms(struct stacks *s)
{
	return s ? s->ksyms : NULL;
}

struct usyms *stacks_usyms(struct stacks *s)
{
	return s ? s->usyms : NULL;
}

/* ---- the output hooks ----------------------------------------------- */

int stacks_sym_of(struct stacks *s, uint64_t addr, int64_t pid, bool user,
		  uint64_t *start, const char **module)
{
	struct sym sym;
	int r;
	if (user) {
		pid_t p = (pid_t)(uint32_t)pid;
		remember(s, p, false);
		r = s->usyms ? usyms_lookup(s->usyms, p, addr, &sym) : -ENOENT;
	} else {
		r = s->ksyms ? ksyms_lookup(s->ksyms, addr, &sym) : -ENOENT;
	}
	if (r < 0 || !sym.name)
		return -ENOENT;
	*start = sym.start;
	*module = sym.module;
	return 0;
}

static void hook_sym(void *ctx, struct sbuf *out, uint64_t addr, int64_t pid,
		     bool user, bool module)
{
	struct stacks *s = ctx;
	struct stackfmt f = { .ksyms = s->ksyms, .usyms = s->usyms,
			      .user = user, .pid = (pid_t)pid,
			      .module_only = module };
	if (user) {
		/* a probe's func: the pid, and above it the probe site
		 * (codegen's usym_site) to name it by when the process is
		 * gone */
		uint32_t site = (uint32_t)((uint64_t)pid >> 32);
		const struct program *prog = s->o->prog;
		f.pid = (pid_t)(uint32_t)pid;
		if (site && prog && site <= prog->nprobes &&
		    prog->probes[site - 1].uprobe) {
			f.site_path = prog->probes[site - 1].uprobe->path;
			f.site_vaddr = prog->probes[site - 1].uprobe->vaddr;
			f.site_addr = addr;
		}
		remember(s, f.pid, false);
	}
	char *text = stackfmt_sym_string(&f, addr);
	if (text)
		sbuf_puts(out, text);
	else
		out->oom = true;
	free(text);
}

static void hook_stack(void *ctx, struct sbuf *out, const struct type *t,
		       const uint8_t *data, unsigned indent)
{
	struct stacks *s = ctx;
	uint64_t *ips = malloc(MAX_FRAMES * sizeof(*ips));
	size_t n = 0;
	int64_t pid;
	if (!ips) {
		out->oom = true;
		return;
	}
	stacks_resolve(s, t, data, ips, MAX_FRAMES, &n, &pid);
	struct stackfmt f = {
		.ksyms = s->ksyms, .usyms = s->usyms,
		.user = t->kind == TYPE_USTACK, .pid = (pid_t)pid,
		.mode = (enum stack_mode)t->stack_mode, .indent = indent,
		.limit = t->stack_limit,
	};
	char *text = stackfmt_string(ips, n, &f);
	if (text)
		sbuf_puts(out, text);
	else
		out->oom = true;
	free(text);
	free(ips);
}

int output_stacks_init(struct output *o)
{
	if (!o)
		return -EINVAL;
	if (o->stacks)
		return 0;
	struct stacks *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->o = o;
	s->grace_ns = STACKS_GRACE_NS;
	s->ksyms = ksyms_new(NULL);
	s->usyms = usyms_new();
	if (!s->ksyms || !s->usyms) {
		stacks_free(s);
		return -ENOMEM;
	}
	usyms_set_options(s->usyms, !o->opts.no_cpp_demangle,
			  !o->opts.no_user_symbols);
	o->stacks = s;
	struct output_hooks h = { .ctx = s, .sym = hook_sym,
				  .stack = hook_stack };
	output_set_hooks(o, &h);
	return 0;
}

void stacks_free(struct stacks *s)
{
	if (!s)
		return;
	uint64_t all = s->unwound + s->first_unwinds;
	if (all)
		log_info("stacks: %llu user stacks unwound, %.1f frames and "
			 "%.1f us each on average (the first of each of %llu "
			 "processes, which reads its files: %.1f ms)",
			 (unsigned long long)all,
			 (double)s->frames / (double)all,
			 s->unwound ? (double)s->unwind_ns / 1000.0 /
				      (double)s->unwound : 0.0,
			 (unsigned long long)s->first_unwinds,
			 s->first_unwinds ? (double)s->first_ns / 1e6 /
				 (double)s->first_unwinds : 0.0);
	if (s->gc_stacks || s->gc_pids || s->gc_frozen)
		log_info("stacks: let go of %llu stacks and %llu processes no "
			 "longer referred to, froze %llu exited processes to the "
			 "names their stacks hold; %zu processes remembered at "
			 "the end (%zu of them frozen)",
			 (unsigned long long)s->gc_stacks,
			 (unsigned long long)s->gc_pids,
			 (unsigned long long)s->gc_frozen, s->npids,
			 usyms_nfrozen(s->usyms));
	if (log_verbose && (all || s->npids))
		log_symbol_tables(s, "at exit");
	for (size_t i = 0; i < s->ncanon; i++)
		free(s->canon[i].ips);
	free(s->canon);
	vec_free(&s->free_canon);
	free(s->cindex);
	free(s->samples);
	free(s->pids);
	ksyms_free(s->ksyms);
	usyms_free(s->usyms);
	free(s);
}
