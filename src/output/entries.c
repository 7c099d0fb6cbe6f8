/* entries.c - user maps as exporters read them (the OpenMetrics endpoint,
 * pprof profiles): each entry's key fields as text, its stacks as frames
 * with their functions (and, on request, the mapped file and its build
 * ID), and its value merged over CPUs by the same rules print() uses.
 *
 * This is output's map reading, not a second one: a map is dumped through
 * the engine's map_reader, sample-keyed stacks are canonicalized
 * (stackmaps.c), keys are printed by value.c and stacks resolved by
 * stacks.c, all owned by the one thread that owns the output. An
 * exporter only sees the result, one entry at a time. */
#include "output_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../elf/elf.h"
#include "../elf/symbolize.h"
#include "../base/vec.h"

#define WALK_FRAMES_MAX 1024     /* frames of all stacks of one key */
#define KMODS_MAX 64             /* kernel modules whose build IDs a walk keeps */
#define LHIST_MAX_BUCKETS 1002   /* maps.c's: 1000 plus two outliers */

static bool is_stack(const struct type *t)
{
	return t->kind == TYPE_KSTACK || t->kind == TYPE_USTACK;
}

static enum output_value_kind kind_of(const struct type *t)
{
	switch (t->kind) {
	case TYPE_COUNT: return OUTV_COUNT;
	case TYPE_SUM: return OUTV_SUM;
	case TYPE_MIN: return OUTV_MIN;
	case TYPE_MAX: return OUTV_MAX;
	case TYPE_AVG: return OUTV_AVG;
	case TYPE_STATS: return OUTV_STATS;
	case TYPE_STDDEV: return OUTV_AVG;   /* e->avg holds it */
	case TYPE_HIST: return OUTV_HIST;
	case TYPE_LHIST: return OUTV_LHIST;
	case TYPE_INT: return t->is_bool ? OUTV_OTHER : OUTV_INT;
	default: return OUTV_OTHER;
	}
}

static uint32_t nfields_of(const struct map_spec *m)
{
	if (!m->key_type || !m->nkeys)
		return 0;
	return m->key_type->kind == TYPE_TUPLE ? m->key_type->nfields : 1;
}

static const struct type *field_type(const struct map_spec *m, uint32_t i,
				     uint32_t *off)
{
	const struct type *k = m->key_type;
	if (k->kind != TYPE_TUPLE) {
		*off = 0;
		return k;
	}
	*off = k->offsets[i];
	return k->fields[i];
}

static bool exportable(const struct map_spec *m)
{
	return m->name && m->name[0] == '@' && m->value_type &&
	       (m->kind == MAP_HASH || m->kind == MAP_PERCPU_HASH ||
		m->kind == MAP_ARRAY || m->kind == MAP_PERCPU_ARRAY);
}

int output_map_info(const struct program *prog, uint32_t map_id,
		    struct output_map_info *mi)
{
	memset(mi, 0, sizeof(*mi));
	if (!prog || map_id >= prog->nmaps || !exportable(&prog->maps[map_id]))
		return -ENOENT;
	const struct map_spec *m = &prog->maps[map_id];
	const struct type *vt = m->value_type;
	mi->name = m->name;
	mi->kind = kind_of(vt);
	mi->is_signed = vt->is_signed;
	mi->nfields = nfields_of(m);
	for (uint32_t i = 0; i < mi->nfields; i++) {
		uint32_t off;
		const struct type *ft = field_type(m, i, &off);
		if (is_stack(ft))
			mi->nstacks++;
	}
	if (vt->kind == TYPE_HIST) {
		mi->nbuckets = OUTPUT_HIST_BUCKETS;
	} else if (vt->kind == TYPE_LHIST) {
		mi->lhist_min = vt->lhist_min;
		mi->lhist_max = vt->lhist_max;
		mi->lhist_step = vt->lhist_step;
		int64_t b = 0;
		if (vt->lhist_step > 0 && vt->lhist_max > vt->lhist_min)
			b = (vt->lhist_max - vt->lhist_min) / vt->lhist_step;
		if (b > LHIST_MAX_BUCKETS - 2)
			b = LHIST_MAX_BUCKETS - 2;
		mi->nbuckets = (uint32_t)b + 2;
	}
	return 0;
}

enum output_field_kind output_map_field(const struct program *prog,
					uint32_t map_id, uint32_t i)
{
	const struct map_spec *m = &prog->maps[map_id];
	uint32_t off;
	if (i >= nfields_of(m))
		return OUTF_TEXT;
	const struct type *t = field_type(m, i, &off);
	switch (t->kind) {
	case TYPE_KSTACK: return OUTF_KSTACK;
	case TYPE_USTACK: return OUTF_USTACK;
	case TYPE_INT: return t->is_bool ? OUTF_TEXT : OUTF_INT;
	default: return OUTF_TEXT;
	}
}

/* ---- frames ---------------------------------------------------------- */

struct kmod_ids {
	struct {
		const char *name;       /* NULL: the kernel itself */
		uint8_t id[64];
		int len;
	} v[KMODS_MAX];
	size_t n;
};

/* "[ext4]" -> build ID of module ext4; NULL -> the kernel's. */
static void kernel_file(struct kmod_ids *k, const char *module,
			struct output_frame *f)
{
	const char *name = module && module[0] == '[' ? module : NULL;
	for (size_t i = 0; i < k->n; i++)
		if ((!name && !k->v[i].name) ||
		    (name && k->v[i].name && strcmp(name, k->v[i].name) == 0)) {
			f->build_id = k->v[i].len > 0 ? k->v[i].id : NULL;
			f->build_id_len = k->v[i].len > 0 ? (size_t)k->v[i].len : 0;
			f->file = name ? name : "[kernel.kallsyms]";
			return;
		}
	f->file = name ? name : "[kernel.kallsyms]";
	if (k->n == KMODS_MAX)
		return;
	char mod[80] = "";
	if (name) {
		size_t len = strlen(name);
		if (len < 3 || len - 2 >= sizeof(mod))
			return;
		memcpy(mod, name + 1, len - 2);
		mod[len - 2] = '\0';
	}
	int r = kernel_build_id(name ? mod : NULL, k->v[k->n].id,
				sizeof(k->v[k->n].id));
	k->v[k->n].name = name;
	k->v[k->n].len = r;
	if (r > 0) {
		f->build_id = k->v[k->n].id;
		f->build_id_len = (size_t)r;
	}
	k->n++;
}

/* ---- names of user frames, remembered -------------------------------- */

/* The name of ADDR in PID (NULL: none), valid until the next sweep.
 * Named once per process and address (elf/usym.c keeps them: libdw's
 * own lookup scans a file's whole symbol table, too slow for every
 * frame of every scrape), and kept after the process exits for as long
 * as its stacks are. */
static const char *user_name(struct output *o, int32_t pid, uint64_t addr)
{
	struct sym s;
	return usyms_lookup(stacks_usyms(o->stacks), pid, addr, &s) == 0 &&
		s.name && *s.name ? s.name : NULL;
}

struct walk {
	struct output *o;
	unsigned flags;
	struct kmod_ids *kmods;
	struct output_frame frames[WALK_FRAMES_MAX];
	uint64_t ips[WALK_FRAMES_MAX];
	size_t n;
};

/* Append one stack value's frames, outermost first (reversed at the
 * end, so the entry's frames are leaf first). */
static void push_stack(struct walk *w, const struct type *t,
		       const uint8_t *data)
{
	size_t cap = WALK_FRAMES_MAX - w->n, n = 0;
	int64_t pid;
	if (!cap)
		return;
	stacks_resolve(w->o->stacks, t, data, w->ips, cap, &n, &pid);
	if (t->stack_limit && n > t->stack_limit)
		n = t->stack_limit;
	bool user = t->kind == TYPE_USTACK;
	for (size_t i = n; i-- > 0;) {
		struct output_frame *f = &w->frames[w->n++];
		struct sym s;
		memset(f, 0, sizeof(*f));
		f->addr = w->ips[i];
		f->kernel = !user;
		f->pid = user ? (int32_t)pid : -1;
		int r = 0;
		if (user) {
			f->name = user_name(w->o, (int32_t)pid, w->ips[i]);
		} else {
			r = ksyms_lookup(stacks_ksyms(w->o->stacks), w->ips[i], &s);
			f->name = r == 0 && s.name && *s.name ? s.name : NULL;
		}
		if (!(w->flags & OUTPUT_WALK_MAPPINGS))
			continue;
		if (!user) {
			kernel_file(w->kmods, r == 0 ? s.module : NULL, f);
			continue;
		}
		struct umapping um;
		if (usyms_mapping(stacks_usyms(w->o->stacks), (pid_t)pid,
				  w->ips[i], &um) == 0) {
			f->file = um.path;
			f->start = um.start;
			f->end = um.end;
			f->pgoff = um.pgoff;
			f->build_id = um.build_id;
			f->build_id_len = um.build_id_len;
		}
	}
}

/* The key's stacks in flame.c's order from the root: user stacks, then
 * kernel stacks on top; then reversed, leaf first. */
static void key_frames(struct walk *w, const struct map_spec *m,
		       const uint8_t *key)
{
	uint32_t nf = nfields_of(m);
	w->n = 0;
	for (int pass = 0; pass < 2; pass++)
		for (uint32_t i = 0; i < nf; i++) {
			uint32_t off;
			const struct type *t = field_type(m, i, &off);
			if (t->kind == (pass ? TYPE_KSTACK : TYPE_USTACK))
				push_stack(w, t, key + off);
		}
	for (size_t i = 0, j = w->n; i + 1 < j; i++, j--) {
		struct output_frame f = w->frames[i];
		w->frames[i] = w->frames[j - 1];
		w->frames[j - 1] = f;
	}
}

/* ---- the walk --------------------------------------------------------- */

/* The pid of the first user stack in a key (0: none). */
static int64_t key_pid(const struct map_spec *m, const uint8_t *key)
{
	uint32_t nf = nfields_of(m);
	for (uint32_t i = 0; i < nf; i++) {
		uint32_t off;
		const struct type *t = field_type(m, i, &off);
		if (t->kind == TYPE_USTACK) {
			int64_t pid;
			memcpy(&pid, key + off + 8, 8);
			return pid;
		}
	}
	return 0;
}

struct order {
	int64_t pid;
	uint32_t i;
};

static int cmp_order(const void *a, const void *b)
{
	const struct order *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* A walk in progress: the snapshot, its order, and where it stands. */
struct output_walk {
	struct output *o;
	struct output_walk *next;       /* o->walks */
	uint32_t map_id;
	struct output_map_info mi;
	struct map_snapshot s;
	struct order *ord;
	uint32_t next_entry;    /* ord index of the next entry */
	char **texts;
	struct sbuf b;
	struct walk w;
	struct kmod_ids kmods;
};

struct output_walk *output_walk_begin(struct output *o, uint32_t map_id,
				      unsigned flags)
{
	struct output_map_info mi;
	if (!o || output_map_info(o->prog, map_id, &mi) < 0 ||
	    !o->have_maps || !o->maps.dump) {
		errno = ENOENT;
		return NULL;
	}
	struct output_walk *wk = calloc(1, sizeof(*wk));
	if (!wk) {
		errno = ENOMEM;
		return NULL;
	}
	wk->o = o;
	wk->map_id = map_id;
	wk->mi = mi;
	wk->w.o = o;
	wk->w.flags = flags;
	wk->w.kmods = &wk->kmods;
	const struct map_spec *m = &o->prog->maps[map_id];
	bool hist = mi.kind == OUTV_HIST || mi.kind == OUTV_LHIST;
	struct map_snapshot *s = &wk->s;
	int r = o->maps.dump(o->maps.ctx, map_id, s);
	if (r == 0)
		r = stackmaps_canonicalize(o, m, s);
	/* the snapshot must be what the spec says before a byte is read */
	uint32_t ks = s->key_size, uks = hist ? ks - 8 : ks;
	if (r == 0 && s->n &&
	    ((hist && ks < 8) ||
	     (m->key_type && m->nkeys && m->key_type->size > uks) ||
	     s->value_size < type_map_value_size(m->value_type) ||
	     s->value_stride < s->value_size || !s->nvalues))
		r = -EINVAL;
	if (r == 0 && (!(wk->texts = calloc(mi.nfields ? mi.nfields : 1,
					    sizeof(*wk->texts))) ||
		       !(wk->ord = calloc(s->n ? s->n : 1, sizeof(*wk->ord)))))
		r = -ENOMEM;
	if (r < 0) {
		wk->o = NULL;      /* the walk never held the stacks */
		output_walk_end(wk);
		errno = -r;
		return NULL;
	}
	/* Entries of one process together: naming a process's frames
	 * needs its symbol tables loaded, and only the most recently used
	 * few processes keep theirs (elf/usym.c). */
	for (uint32_t i = 0; i < s->n; i++) {
		wk->ord[i].i = i;
		wk->ord[i].pid = mi.nstacks ? key_pid(m, s->keys + (size_t)i * ks) : 0;
	}
	if (mi.nstacks)
		qsort(wk->ord, s->n, sizeof(*wk->ord), cmp_order);
	/* The canonical stacks the snapshot names must stay what they are
	 * until the walk has read them: a sweep meanwhile keeps them
	 * (output_walks_keys). */
	wk->next = o->walks;
	o->walks = wk;
	return wk;
}

static int walk_one(struct output_walk *wk, uint32_t i,
		    int (*fn)(void *ctx, const struct output_entry *e),
		    void *ctx)
{
	struct output *o = wk->o;
	const struct map_spec *m = &o->prog->maps[wk->map_id];
	const struct output_map_info *mi = &wk->mi;
	const struct map_snapshot *s = &wk->s;
	bool hist = mi->kind == OUTV_HIST || mi->kind == OUTV_LHIST;
	uint32_t ks = s->key_size, uks = hist ? ks - 8 : ks;
	const uint8_t *key = s->keys + (size_t)i * ks;
	struct output_entry e = { .pid = -1 };
	uint64_t a = 0, bb = 0;
	maps_merge_values(m->value_type, s, i, &a, &bb);
	e.value = a;
	if (hist) {
		uint64_t idx;
		memcpy(&idx, key + uks, 8);
		if (idx == SONDE_HIST_SUM_BUCKET)
			e.bucket = OUTPUT_BUCKET_SUM;
		else if (idx < mi->nbuckets)
			e.bucket = (uint32_t)idx;
		else
			return 0;
	} else if (mi->kind == OUTV_AVG || mi->kind == OUTV_STATS) {
		e.total = (int64_t)bb;
	} else if (mi->kind == OUTV_MIN || mi->kind == OUTV_MAX) {
		e.set = bb != 0;
	}
	/* key fields as text, as print() shows them in a key */
	struct sbuf *b = &wk->b;
	sbuf_truncate(b, 0);
	for (uint32_t f = 0; f < mi->nfields; f++) {
		uint32_t off;
		const struct type *t = field_type(m, f, &off);
		if (!is_stack(t))
			value_text(o, b, t, key + off, VCTX_KEY);
		sbuf_putc(b, '\0');
	}
	if (b->oom)
		return -ENOMEM;
	size_t pos = 0;
	for (uint32_t f = 0; f < mi->nfields; f++) {
		uint32_t off;
		const struct type *t = field_type(m, f, &off);
		wk->texts[f] = is_stack(t) ? NULL : b->s + pos;
		pos += strlen(b->s + pos) + 1;
	}
	e.fields = (const char *const *)wk->texts;
	if (mi->nstacks) {
		key_frames(&wk->w, m, key);
		e.frames = wk->w.frames;
		e.nframes = wk->w.n;
		for (size_t k = wk->w.n; k-- > 0;)
			if (!wk->w.frames[k].kernel)
				e.pid = wk->w.frames[k].pid;
	}
	return fn(ctx, &e);
}

static uint64_t now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

int output_walk_next(struct output_walk *wk, uint64_t budget_us,
		     int (*fn)(void *ctx, const struct output_entry *e),
		     void *ctx)
{
	uint64_t t0 = budget_us ? now_us() : 0;
	while (wk->next_entry < wk->s.n) {
		int r = walk_one(wk, wk->ord[wk->next_entry++].i, fn, ctx);
		if (r < 0)
			return r;
		if (budget_us && wk->next_entry < wk->s.n &&
		    now_us() - t0 >= budget_us)
			return 0;
	}
	return 1;
}

void output_walk_end(struct output_walk *wk)
{
	if (!wk)
		return;
	if (wk->o) {
		struct output_walk **pp = &wk->o->walks;
		while (*pp && *pp != wk)
			pp = &(*pp)->next;
		if (*pp)
			*pp = wk->next;
	}
	sbuf_free(&wk->b);
	free(wk->ord);
	free(wk->texts);
	map_snapshot_free(&wk->s);
	free(wk);
}

void output_walks_keys(struct output *o,
		       void (*fn)(void *ctx, struct output *o,
				  const struct map_spec *m, const uint8_t *key,
				  uint32_t size),
		       void *ctx)
{
	for (struct output_walk *wk = o->walks; wk; wk = wk->next) {
		const struct map_spec *m = &o->prog->maps[wk->map_id];
		for (uint32_t k = wk->next_entry; k < wk->s.n; k++)
			fn(ctx, o, m, wk->s.keys + (size_t)wk->ord[k].i *
			   wk->s.key_size, wk->s.key_size);
	}
}

int output_map_walk(struct output *o, uint32_t map_id, unsigned flags,
		    int (*fn)(void *ctx, const struct output_entry *e),
		    void *ctx)
{
	struct output_walk *wk = output_walk_begin(o, map_id, flags);
	if (!wk)
		return -errno;
	int r = output_walk_next(wk, 0, fn, ctx);
	output_walk_end(wk);
	return r < 0 ? r : 0;
}

uint64_t output_map_failures(struct output *o, uint32_t map_id)
{
	if (!o || !o->have_maps || !o->maps.failures ||
	    map_id >= o->prog->nmaps)
		return 0;
	return o->maps.failures(o->maps.ctx, map_id);
}

const struct program *output_program(const struct output *o)
{
	return o ? o->prog : NULL;
}
