/* usym_names.c - the names of a process's addresses, each looked up once,
 * and exited processes frozen to the names their stacks hold. */

/*
 * libdw names an address by scanning the whole symbol table of its file
 * (dwfl_module_addrinfo is linear), tens of microseconds a frame: fine
 * once, not for every frame of every scrape. So each remembered process
 * keeps what usyms_lookup answered for each address (struct uaddr), up
 * to USYM_CACHE_MAX, and keeps it across a new snapshot for the
 * addresses still in the same file at the same bias (uproc_keep_names).
 *
 * A process that has exited while a map still holds its stacks used to
 * keep everything: its snapshot (the whole maps text), its mappings, a
 * descriptor per file it mapped (a fresh, deleted copy of a binary is a
 * file of its own) and the Dwfl rebuilt to name its frames at every
 * scrape. Frozen (usym_process_freeze), it keeps the answers for the
 * addresses its stacks hold, and the mappings they lie in, and nothing
 * else: a kept stack costs its names, not its process.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "usym_internal.h"

/* ---- addresses named once ------------------------------------------------ */

static size_t uaddr_hash(uint64_t addr, size_t cap)
{
	return (size_t)((addr * 0x9e3779b97f4a7c15ull) >> 32) & (cap - 1);
}

struct uaddr *uaddr_find(const struct uproc *p, uint64_t addr)
{
	if (!p->cap_cache)
		return NULL;
	for (size_t i = uaddr_hash(addr, p->cap_cache); p->cache[i].used;
	     i = (i + 1) & (p->cap_cache - 1))
		if (p->cache[i].addr == addr)
			return &p->cache[i];
	return NULL;
}

/* A table of CAP slots holding the used entries of OLD (OLDCAP slots). */
static struct uaddr *uaddr_table(const struct uaddr *old, size_t oldcap,
				 size_t cap)
{
	struct uaddr *v = calloc(cap, sizeof(*v));
	if (!v)
		return NULL;
	for (size_t i = 0; i < oldcap; i++) {
		if (!old[i].used)
			continue;
		size_t j = uaddr_hash(old[i].addr, cap);
		while (v[j].used)
			j = (j + 1) & (cap - 1);
		v[j] = old[i];
	}
	return v;
}

/* A new slot for ADDR in a live process's table (NULL: no memory). Past
 * USYM_CACHE_MAX the table starts over: what it forgets is named again
 * when asked. */
struct uaddr *uaddr_add(struct uproc *p, uint64_t addr)
{
	if (2 * (p->ncache + 1) > p->cap_cache) {
		size_t cap = p->cap_cache ? p->cap_cache * 2 : 64;
		struct uaddr *v;
		if (cap > USYM_CACHE_MAX) {
			cap = p->cap_cache;
			v = calloc(cap, sizeof(*v));
			p->ncache = 0;
		} else {
			v = uaddr_table(p->cache, p->cap_cache, cap);
		}
		if (!v)
			return NULL;
		free(p->cache);
		p->cache = v;
		p->cap_cache = cap;
	}
	size_t i = uaddr_hash(addr, p->cap_cache);
	while (p->cache[i].used)
		i = (i + 1) & (p->cap_cache - 1);
	p->ncache++;
	p->cache[i] = (struct uaddr){ .addr = addr, .used = 1, .fmap = -1 };
	return &p->cache[i];
}

int uaddr_answer(const struct uaddr *a, struct sym *out)
{
	out->name = a->name;
	out->module = a->module;
	out->offset = a->offset;
	out->start = a->rc == 0 ? a->addr - a->offset : 0;
	return a->rc;
}

/* The names OLD knew that still hold in P: an address in the same file
 * mapped at the same bias (a process's maps text changes with every
 * mmap, and its names should not be looked up again for that). */
void uproc_keep_names(struct uproc *p, const struct uproc *old)
{
	if (old->frozen)
		return;
	for (size_t i = 0; i < old->cap_cache; i++) {
		const struct uaddr *a = &old->cache[i];
		if (!a->used)
			continue;
		const struct umap *m0 = uproc_map(old, a->addr);
		const struct umap *m1 = uproc_map(p, a->addr);
		if (!m0 || !m1 || !m0->file || m0->file != m1->file ||
		    m0->start - m0->pgoff != m1->start - m1->pgoff)
			continue;
		struct uaddr *n = uaddr_add(p, a->addr);
		if (!n)
			return;
		*n = *a;
	}
}

/* ---- freezing an exited process ------------------------------------------------ */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The index in FMAPS[0..*N) of the mapping UM, added when new. */
static int32_t fmap_of(struct ufmap *fmaps, size_t *n,
		       const struct umapping *um)
{
	for (size_t i = 0; i < *n; i++)
		if (fmaps[i].start == um->start && fmaps[i].end == um->end)
			return (int32_t)i;
	struct ufmap *f = &fmaps[(*n)++];
	memset(f, 0, sizeof(*f));
	f->start = um->start;
	f->end = um->end;
	f->pgoff = um->pgoff;
	f->path = um->path;
	if (um->build_id && um->build_id_len <= sizeof(f->build_id)) {
		memcpy(f->build_id, um->build_id, um->build_id_len);
		f->build_id_len = (uint8_t)um->build_id_len;
	}
	return (int32_t)(*n - 1);
}

int usym_process_freeze(struct usyms *u, pid_t pid, const uint64_t *addrs,
			size_t n)
{
	struct uproc *p = u ? usyms_find(u, pid) : NULL;
	if (!p)
		return -ESRCH;
	uint64_t *v = malloc((n ? n : 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	if (n)
		memcpy(v, addrs, n * sizeof(*v));
	qsort(v, n, sizeof(*v), cmp_u64);
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (k == 0 || v[i] != v[k - 1])
			v[k++] = v[i];
	if (p->frozen && k == p->ncache) {
		free(v);        /* nothing let go since it was frozen */
		return 0;
	}
	size_t cap = 16;
	while (cap < 2 * (k + 1))
		cap *= 2;
	struct uaddr *cache = calloc(cap, sizeof(*cache));
	struct ufmap *fmaps = calloc(k ? k : 1, sizeof(*fmaps));
	size_t nf = 0;
	int err = cache && fmaps ? 0 : -ENOMEM;
	for (size_t i = 0; i < k && !err; i++) {
		struct sym s;
		struct umapping um;
		int r = usyms_lookup(u, pid, v[i], &s);
		if (r == -ENOMEM) {
			err = r;
			break;
		}
		size_t j = uaddr_hash(v[i], cap);
		while (cache[j].used)
			j = (j + 1) & (cap - 1);
		struct uaddr *a = &cache[j];
		*a = (struct uaddr){
			.addr = v[i], .used = 1, .fmap = -1,
			.name = s.name, .module = s.module,
			.mpath = usyms_module(u, pid, v[i]),
			.offset = s.offset,
			.rc = (int16_t)(r == -ESRCH ? -ENOENT : r),
		};
		if (usyms_mapping(u, pid, v[i], &um) == 0)
			a->fmap = fmap_of(fmaps, &nf, &um);
	}
	free(v);
	if (err) {
		free(cache);
		free(fmaps);
		return err;
	}
	/* what it was read from goes: the Dwfl, the files (closed with
	 * the last process mapping them), the snapshot and JIT names */
	uproc_release(u, p);
	if (nf < k) {
		struct ufmap *f = realloc(fmaps, (nf ? nf : 1) * sizeof(*f));
		if (f)
			fmaps = f;
	}
	free(p->cache);
	free(p->fmaps);
	p->cache = cache;
	p->cap_cache = cap;
	p->ncache = k;
	p->fmaps = fmaps;
	p->nfmaps = nf;
	p->frozen = true;
	return 1;
}

