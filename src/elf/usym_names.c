/* usym_names.c - the names of a file's addresses, each looked up once and
 * shared by every process mapping the file, and exited processes frozen
 * to the mappings their stacks lie in. */

/*
 * libdw names an address by scanning the whole symbol table of its file
 * (dwfl_module_addrinfo is linear), tens of microseconds a frame: fine
 * once, not for every frame of every scrape. So what usyms_lookup
 * answered is kept, per file and by file offset (struct ufnames): the
 * answer is the file's, whichever process maps it where. A file is known
 * by its build ID and size when it has one, so that the thousands of
 * short processes a host starts from one binary (or from fresh copies
 * of it) share one table for it, for libc and for ld.so; else by device,
 * inode, size and modification time.
 *
 * A process that has exited while a map still holds its stacks is frozen
 * (usym_process_freeze): the answers for the addresses its stacks hold
 * are made sure of in the file tables, and the process keeps only the
 * mappings they lie in (a range, the file's path, a reference to its
 * table), plus the few answers no table holds (JIT code, addresses in
 * nothing mapped, a full table). Its snapshot, files, Dwfl and JIT names
 * are let go. A frozen process costs a few dozen bytes a mapping; the
 * names cost their files, however many processes map them.
 *
 * Bound: one table per distinct file that a remembered process (live or
 * frozen) maps, each of at most USYM_NAMES_MAX answers (32 bytes each,
 * at most half the slots used). Processes are kept while the maps refer
 * to them (stacks.c), and a table goes with the last mapping of its file.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "elf.h"
#include "usym_internal.h"

/* ---- the tables ------------------------------------------------------- */

/* A build ID is whatever the file says: anyone can write a file that
 * claims libc's. Its owner is part of the key, so that another user's
 * file cannot put its names on root's libc, or on another user's
 * programs; copies by one owner share. */
static bool same_file(const struct ufnames *t, const struct ufile *f,
		      uint64_t size, int64_t mtime_ns, uint32_t owner)
{
	if (t->build_id_len || f->build_id_len)
		return t->build_id_len == f->build_id_len &&
		       memcmp(t->build_id, f->build_id, t->build_id_len) == 0 &&
		       t->size == size && t->owner == owner;
	return t->dev == f->dev && t->ino == f->ino && t->size == size &&
	       t->mtime_ns == mtime_ns;
}

struct ufnames *ufnames_get(struct ufnames **list, const struct ufile *f,
			    uint64_t size, int64_t mtime_ns, uint32_t owner)
{
	struct ufnames *t;
	for (t = *list; t; t = t->next)
		if (same_file(t, f, size, mtime_ns, owner)) {
			t->refs++;
			return t;
		}
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	memcpy(t->build_id, f->build_id, f->build_id_len);
	t->build_id_len = f->build_id_len;
	t->owner = owner;
	if (!t->build_id_len) {
		t->dev = f->dev;
		t->ino = f->ino;
		t->mtime_ns = mtime_ns;
	}
	t->size = size;
	t->refs = 1;
	t->next = *list;
	if (*list)
		(*list)->prev = t;
	*list = t;
	return t;
}

void ufnames_put(struct ufnames **list, struct ufnames *t)
{
	if (!t || --t->refs > 0)
		return;
	if (t->prev)
		t->prev->next = t->next;
	else
		*list = t->next;
	if (t->next)
		t->next->prev = t->prev;
	free(t->v);
	free(t);
}

static size_t foff_hash(uint64_t foff, size_t cap)
{
	return (size_t)((foff * 0x9e3779b97f4a7c15ull) >> 32) & (cap - 1);
}

const struct uname *ufnames_find(const struct ufnames *t, uint64_t foff)
{
	if (!t || !t->cap)
		return NULL;
	for (size_t i = foff_hash(foff, t->cap); t->v[i].used;
	     i = (i + 1) & (t->cap - 1))
		if (t->v[i].foff == foff)
			return &t->v[i];
	return NULL;
}

struct uname *ufnames_add(struct ufnames *t, uint64_t foff)
{
	if (2 * (t->n + 1) > t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		if (cap > 2 * (size_t)USYM_NAMES_MAX) {
			if (t->frozen_refs)
				return NULL;    /* full: kept as it is */
			cap = t->cap;           /* start over */
			free(t->v);
			t->v = NULL;
			t->n = 0;
		}
		struct uname *v = calloc(cap, sizeof(*v));
		if (!v)
			return NULL;
		for (size_t i = 0; i < t->cap && t->v; i++) {
			if (!t->v[i].used)
				continue;
			size_t j = foff_hash(t->v[i].foff, cap);
			while (v[j].used)
				j = (j + 1) & (cap - 1);
			v[j] = t->v[i];
		}
		free(t->v);
		t->v = v;
		t->cap = cap;
	}
	size_t i = foff_hash(foff, t->cap);
	while (t->v[i].used)
		i = (i + 1) & (t->cap - 1);
	t->n++;
	t->v[i] = (struct uname){ .foff = foff, .used = 1 };
	return &t->v[i];
}

int uname_answer(const struct uname *n, uint64_t addr, struct sym *out)
{
	out->name = n->name;
	out->offset = n->offset;
	out->start = n->rc == 0 ? addr - n->offset : 0;
	return n->rc;
}

void ufile_read_build_id(struct ufile *f)
{
	if (f->build_id_read)
		return;
	int n = f->fd >= 0 ? elf_build_id_fd(f->fd, f->build_id,
					     sizeof(f->build_id)) : 0;
	f->build_id_len = n > 0 ? (uint8_t)n : 0;
	f->build_id_read = true;
}

/* ---- frozen processes ------------------------------------------------- */

static const struct uaddr *frozen_extra(const struct uproc *p, uint64_t addr)
{
	size_t lo = 0, hi = p->nextra;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p->extra[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < p->nextra && p->extra[lo].addr == addr ? &p->extra[lo] :
							     NULL;
}

/* The frozen mapping holding ADDR whose file table answers for it. */
static const struct ufmap *frozen_fmap(const struct uproc *p, uint64_t addr,
				       const struct uname **name)
{
	for (size_t i = 0; i < p->nfmaps; i++) {
		const struct ufmap *f = &p->fmaps[i];
		if (addr < f->start || addr >= f->end)
			continue;
		*name = ufnames_find(f->names, addr - f->start + f->pgoff);
		return *name ? f : NULL;
	}
	return NULL;
}

int uproc_frozen_lookup(const struct uproc *p, uint64_t addr,
			struct sym *out)
{
	const struct uaddr *a = frozen_extra(p, addr);
	if (a) {
		out->name = a->name;
		out->module = a->module;
		out->offset = a->offset;
		out->start = a->rc == 0 ? a->addr - a->offset : 0;
		return a->rc;
	}
	const struct uname *n;
	const struct ufmap *f = frozen_fmap(p, addr, &n);
	if (!f)
		return -ENOENT;         /* named nothing when it was frozen */
	out->module = f->path;
	return uname_answer(n, addr, out);
}

const char *uproc_frozen_module(const struct uproc *p, uint64_t addr)
{
	const struct uaddr *a = frozen_extra(p, addr);
	if (a)
		return a->mpath;
	const struct uname *n;
	const struct ufmap *f = frozen_fmap(p, addr, &n);
	return f ? f->path : NULL;
}

int uproc_frozen_mapping(const struct uproc *p, uint64_t addr,
			 struct umapping *out)
{
	const struct uaddr *a = frozen_extra(p, addr);
	const struct uname *n;
	const struct ufmap *f = NULL;
	if (a && a->fmap >= 0 && (size_t)a->fmap < p->nfmaps)
		f = &p->fmaps[a->fmap];
	else if (!a)
		f = frozen_fmap(p, addr, &n);
	if (!f)
		return -ENOENT;
	out->start = f->start;
	out->end = f->end;
	out->pgoff = f->pgoff;
	out->path = f->path;
	if (f->names && f->names->build_id_len) {
		out->build_id = f->names->build_id;
		out->build_id_len = f->names->build_id_len;
	}
	return 0;
}

static void fmaps_free(struct usyms *u, struct ufmap *fmaps, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (fmaps[i].names) {
			fmaps[i].names->frozen_refs--;
			ufnames_put(usyms_names(u), fmaps[i].names);
		}
	free(fmaps);
}

void uproc_unfreeze(struct usyms *u, struct uproc *p)
{
	fmaps_free(u, p->fmaps, p->nfmaps);
	p->fmaps = NULL;
	p->nfmaps = 0;
	free(p->extra);
	p->extra = NULL;
	p->nextra = 0;
	p->nfrozen_addrs = 0;
	p->frozen = false;
}

/* ---- freezing an exited process --------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The index in FMAPS[0..*N) of the mapping START-END, added as F with a
 * reference to its names when new. */
static int32_t fmap_of(struct ufmap *fmaps, size_t *n, const struct ufmap *f)
{
	for (size_t i = 0; i < *n; i++)
		if (fmaps[i].start == f->start && fmaps[i].end == f->end)
			return (int32_t)i;
	fmaps[*n] = *f;
	if (f->names) {
		f->names->refs++;
		f->names->frozen_refs++;
	}
	return (int32_t)(*n)++;
}

/* The answers of frozen P for V[0..k) (sorted), into FMAPS and EXTRA. */
static void refreeze(const struct uproc *p, const uint64_t *v, size_t k,
		     struct ufmap *fmaps, size_t *nf, struct uaddr *extra,
		     size_t *ne)
{
	for (size_t i = 0; i < k; i++) {
		const struct uaddr *a = frozen_extra(p, v[i]);
		const struct uname *n;
		if (a) {
			struct uaddr *e = &extra[(*ne)++];
			*e = *a;
			if (a->fmap >= 0 && (size_t)a->fmap < p->nfmaps)
				e->fmap = fmap_of(fmaps, nf, &p->fmaps[a->fmap]);
			else
				e->fmap = -1;
			continue;
		}
		const struct ufmap *f = frozen_fmap(p, v[i], &n);
		if (f)
			fmap_of(fmaps, nf, f);
	}
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
	if (p->frozen && k == p->nfrozen_addrs) {
		free(v);        /* nothing let go since it was frozen */
		return 0;
	}
	struct ufmap *fmaps = calloc(k ? k : 1, sizeof(*fmaps));
	struct uaddr *extra = calloc(k ? k : 1, sizeof(*extra));
	size_t nf = 0, ne = 0;
	int err = fmaps && extra ? 0 : -ENOMEM;
	if (!err && p->frozen)
		refreeze(p, v, k, fmaps, &nf, extra, &ne);
	for (size_t i = 0; i < k && !err && !p->frozen; i++) {
		const struct umap *m = uproc_map(p, v[i]);
		struct ufnames *t = m && m->file ? ufile_names(u, m->file) :
						   NULL;
		uint64_t foff = m ? v[i] - m->start + m->pgoff : 0;
		int32_t fi = -1;
		if (m && m->file) {
			struct ufmap f = { .start = m->start, .end = m->end,
					   .pgoff = m->pgoff, .path = m->path,
					   .names = t };
			fi = fmap_of(fmaps, &nf, &f);
			if (ufnames_find(t, foff))
				continue;
		}
		/* named now, into the file's table when it takes it */
		struct sym s;
		int r = usyms_lookup(u, pid, v[i], &s);
		if (r == -ENOMEM) {
			err = r;
			break;
		}
		if (fi >= 0 && ufnames_find(t, foff))
			continue;
		r = r == -ESRCH ? -ENOENT : r;
		const char *mpath = m ? m->path : NULL;
		if (fi < 0 && r == -ENOENT && !s.module && !mpath)
			continue;       /* as an unknown address answers */
		extra[ne++] = (struct uaddr){
			.addr = v[i], .name = s.name, .module = s.module,
			.mpath = mpath, .offset = s.offset, .fmap = fi,
			.rc = (int16_t)r,
		};
	}
	free(v);
	if (err) {
		fmaps_free(u, fmaps, nf);
		free(extra);
		return err;
	}
	/* what it was read from goes: the Dwfl, the files (closed with
	 * the last process mapping them), the snapshot and JIT names, and
	 * what it was frozen with before */
	uproc_release(u, p);
	uproc_unfreeze(u, p);
	if (nf < k) {
		struct ufmap *f = realloc(fmaps, (nf ? nf : 1) * sizeof(*f));
		if (f)
			fmaps = f;
	}
	if (ne < k) {
		struct uaddr *e = realloc(extra, (ne ? ne : 1) * sizeof(*e));
		if (e)
			extra = e;
	}
	p->fmaps = fmaps;
	p->nfmaps = nf;
	p->extra = extra;
	p->nextra = ne;
	p->nfrozen_addrs = k;
	p->frozen = true;
	return 1;
}
