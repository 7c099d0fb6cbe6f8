/* usym.c - user-space symbolization: remembered process mappings, their ELF files through libdwfl (usym_dwfl.c), JIT perf maps (usym_jit.c). */

/*
 * How it works. usym_process_remember(pid) copies /proc/PID/maps and, for
 * every executable file mapping, makes sure the file is open in a table
 * keyed by (device, inode) that all processes share: /proc/PID/map_files
 * opens the very file the process mapped, even when it was deleted or
 * lives in another mount namespace. From then on the process may exit.
 *
 * At the first lookup a Dwfl is built from the snapshot: each mapped file
 * is reported with dwfl_report_elf at the load bias the mapping implies,
 * the vDSO from a copy of sonde's own (the kernel maps the same image
 * into every 64-bit process). libdwfl then does the rest: .symtab or
 * .dynsym, separate debug files (found by build-id under /usr/lib/debug
 * and by .gnu_debuglink, through debugfile.c, which opens nothing that
 * could block), and the CFI that unwind.c uses. Anonymous executable memory is looked up in
 * /tmp/perf-PID.map, the JIT symbol file perf defined (usym_jit.c).
 *
 * Names are interned in one table so each distinct string (demangled C++
 * names in particular) is stored once, however many frames use it.
 * What an address was named is kept per file, by file offset, and
 * shared by every process mapping the file; an exited process whose
 * stacks are still printed is frozen to the mappings they lie in
 * (usym_names.c).
 *
 * Bounded on long runs. A process is kept until its owner forgets it
 * (usym_process_forget: output forgets processes that have exited once
 * nothing it still prints refers to them); a file stays open while a
 * remembered process maps it (reference counts) and is closed with the
 * last, a file's name table with the last mapping, live or frozen, of
 * the file; and at most USYM_DWFL_MAX processes keep a built Dwfl (which
 * holds a descriptor per mapped file and what libdwfl has read of them),
 * the least recently used being dropped and rebuilt from its snapshot if
 * it is needed again.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../base/file.h"
#include "../base/vec.h"
#include "../base/proc.h"
#include "demangle.h"
#include "elf.h"
#include "usym_internal.h"

#define UPROC_BUCKETS 256
#define USYM_FILES_MAX 16

struct usyms {
	struct uproc *procs[UPROC_BUCKETS];
	size_t nprocs;
	/* processes with a built Dwfl, most recently used first */
	struct uproc *lru_head, *lru_tail;
	unsigned ndwfl;
	uint64_t clock;
	struct ufile *files;
	struct ufnames *names;  /* the files' name tables (usym_names.c) */
	struct ufile *vdso;     /* memfd holding a copy of our vDSO */
	int vdso_tried;
	/* files looked up by link-time address (usyms_lookup_file), each
	 * with its own Dwfl; the oldest let go past USYM_FILES_MAX */
	struct {
		char *path;
		Dwfl *dwfl;     /* NULL: it could not be read */
	} sfiles[USYM_FILES_MAX];
	unsigned nsfiles;
	/* interned strings: open addressing, power-of-two size */
	char **strs;
	size_t nstrs, cap_strs;
	size_t strs_kept;       /* after the last usyms_trim */
	bool no_demangle;       /* BPFTRACE_NO_CPP_DEMANGLE */
	bool no_symbols;        /* BPFTRACE_NO_USER_SYMBOLS */
};

/* ---- interned strings -------------------------------------------------- */

static uint64_t str_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

const char *usyms_intern(struct usyms *u, const char *s)
{
	size_t i;

	if (2 * (u->nstrs + 1) > u->cap_strs) {
		size_t cap = u->cap_strs ? u->cap_strs * 2 : 1024;
		char **strs = calloc(cap, sizeof(*strs));

		if (!strs)
			return NULL;
		for (i = 0; i < u->cap_strs; i++) {
			size_t j;

			if (!u->strs[i])
				continue;
			for (j = str_hash(u->strs[i]) & (cap - 1); strs[j];
			     j = (j + 1) & (cap - 1))
				;
			strs[j] = u->strs[i];
		}
		free(u->strs);
		u->strs = strs;
		u->cap_strs = cap;
	}
	for (i = str_hash(s) & (u->cap_strs - 1); u->strs[i];
	     i = (i + 1) & (u->cap_strs - 1))
		if (strcmp(u->strs[i], s) == 0)
			return u->strs[i];
	u->strs[i] = strdup(s);
	if (!u->strs[i])
		return NULL;
	u->nstrs++;
	return u->strs[i];
}

/* The name to show for a raw symbol name: without a symbol version
 * ("__libc_start_main@@GLIBC_2.34" in a debug file's .symtab is
 * "__libc_start_main", as bpftrace prints it), demangled when it is C++. */
const char *usyms_name(struct usyms *u, const char *raw)
{
	const char *at = strchr(raw, '@');
	char buf[512];
	if (at && at > raw && (size_t)(at - raw) < sizeof(buf)) {
		memcpy(buf, raw, (size_t)(at - raw));
		buf[at - raw] = '\0';
		raw = buf;
	}
	char *d = u->no_demangle ? NULL : elf_demangle(raw);
	const char *s;

	if (!d)
		return usyms_intern(u, raw);
	s = usyms_intern(u, d);
	free(d);
	return s;
}

/* ---- the table ---------------------------------------------------------- */

struct usyms *usyms_new(void)
{
	elf_version(EV_CURRENT);
	return calloc(1, sizeof(struct usyms));
}

void usyms_set_options(struct usyms *u, bool demangle, bool symbols)
{
	u->no_demangle = !demangle;
	u->no_symbols = !symbols;
}

/* ---- open files, shared and counted ----------------------------------- */

static void ufile_put(struct usyms *u, struct ufile *f)
{
	if (!f || f == u->vdso || --f->refs > 0)
		return;
	struct ufile **pp = &u->files;
	while (*pp && *pp != f)
		pp = &(*pp)->next;
	if (*pp)
		*pp = f->next;
	ufnames_put(&u->names, f->names);
	if (f->fd >= 0)
		close(f->fd);
	free(f->path);
	free(f);
}

struct ufnames **usyms_names(struct usyms *u)
{
	return &u->names;
}

struct ufnames *ufile_names(struct usyms *u, struct ufile *f)
{
	if (f->names || f->names_tried)
		return f->names;
	f->names_tried = true;
	ufile_read_build_id(f);
	struct stat st;
	uint64_t size = 0;
	int64_t mtime_ns = 0;
	uint32_t owner = UINT32_MAX;   /* not known: shared with none known */
	if (f->fd >= 0 && fstat(f->fd, &st) == 0) {
		owner = (uint32_t)st.st_uid;
		size = (uint64_t)st.st_size;
		mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 +
			   st.st_mtim.tv_nsec;
	}
	f->names = ufnames_get(&u->names, f, size, mtime_ns, owner);
	return f->names;
}

/* ---- built Dwfls, least recently used last ---------------------------- */

static void lru_unlink(struct usyms *u, struct uproc *p)
{
	if (p->lru_prev)
		p->lru_prev->lru_next = p->lru_next;
	else if (u->lru_head == p)
		u->lru_head = p->lru_next;
	if (p->lru_next)
		p->lru_next->lru_prev = p->lru_prev;
	else if (u->lru_tail == p)
		u->lru_tail = p->lru_prev;
	p->lru_prev = p->lru_next = NULL;
}

static void lru_push(struct usyms *u, struct uproc *p)
{
	p->lru_prev = NULL;
	p->lru_next = u->lru_head;
	if (u->lru_head)
		u->lru_head->lru_prev = p;
	u->lru_head = p;
	if (!u->lru_tail)
		u->lru_tail = p;
}

/* Drop P's Dwfl (its snapshot stays: the Dwfl is rebuilt when needed). */
static void uproc_drop_dwfl(struct usyms *u, struct uproc *p)
{
	if (!p->dwfl)
		return;
	lru_unlink(u, p);
	dwfl_end(p->dwfl);
	p->dwfl = NULL;
	p->attached = 0;
	u->ndwfl--;
}

static void uproc_free(struct usyms *u, struct uproc *p)
{
	if (!p)
		return;
	uproc_drop_dwfl(u, p);
	for (size_t i = 0; i < p->nmaps; i++)
		ufile_put(u, p->maps[i].file);
	uproc_unfreeze(u, p);
	free(p->maps_text);
	free(p->maps);
	free(p->jit);
	free(p);
}

void usyms_free(struct usyms *u)
{
	size_t i;

	if (!u)
		return;
	for (i = 0; i < UPROC_BUCKETS; i++) {
		struct uproc *p = u->procs[i], *next;

		for (; p; p = next) {
			next = p->next;
			uproc_free(u, p);
		}
	}
	while (u->files) {
		struct ufile *f = u->files;

		u->files = f->next;
		ufnames_put(&u->names, f->names);
		if (f->fd >= 0)
			close(f->fd);
		free(f->path);
		free(f);
	}
	if (u->vdso) {
		ufnames_put(&u->names, u->vdso->names);
		if (u->vdso->fd >= 0)
			close(u->vdso->fd);
		free(u->vdso->path);
		free(u->vdso);
	}
	for (i = 0; i < u->nsfiles; i++) {
		if (u->sfiles[i].dwfl)
			dwfl_end(u->sfiles[i].dwfl);
		free(u->sfiles[i].path);
	}
	while (u->names) {      /* none left, unless a count is wrong */
		struct ufnames *t = u->names;
		u->names = t->next;
		free(t->v);
		free(t);
	}
	for (i = 0; i < u->cap_strs; i++)
		free(u->strs[i]);
	free(u->strs);
	free(u);
}

static struct uproc **usyms_slot(struct usyms *u, pid_t pid)
{
	struct uproc **pp = &u->procs[(unsigned)pid % UPROC_BUCKETS];

	while (*pp && (*pp)->pid != pid)
		pp = &(*pp)->next;
	return pp;
}

void usym_process_forget(struct usyms *u, pid_t pid)
{
	struct uproc **pp, *p;

	if (!u)
		return;
	pp = usyms_slot(u, pid);
	p = *pp;
	if (!p)
		return;
	*pp = p->next;
	u->nprocs--;
	uproc_free(u, p);
}

void usym_process_unload(struct usyms *u, pid_t pid)
{
	struct uproc *p = u ? *usyms_slot(u, pid) : NULL;
	if (p)
		uproc_drop_dwfl(u, p);
}

struct uproc *usyms_find(struct usyms *u, pid_t pid)
{
	return *usyms_slot(u, pid);
}

void uproc_release(struct usyms *u, struct uproc *p)
{
	uproc_drop_dwfl(u, p);
	for (size_t i = 0; i < p->nmaps; i++)
		ufile_put(u, p->maps[i].file);
	free(p->maps);
	p->maps = NULL;
	p->nmaps = 0;
	free(p->maps_text);
	p->maps_text = NULL;
	p->maps_len = 0;
	free(p->jit);
	p->jit = NULL;
	p->njit = 0;
	p->dwfl_err = -ENOENT;  /* nothing to build one from */
}

/* ---- trimming the interned strings ------------------------------------ */

static int cmp_ptr(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)*(const char *const *)a;
	uintptr_t y = (uintptr_t)*(const char *const *)b;
	return x < y ? -1 : x > y;
}

size_t usyms_trim(struct usyms *u)
{
	/* Only once the table has doubled since it was last trimmed: the
	 * names of live processes come back at their next lookup. */
	if (!u || u->nstrs < 4096 || u->nstrs < 2 * u->strs_kept)
		return 0;
	VEC(const char *) keep = { 0 };
	for (size_t b = 0; b < UPROC_BUCKETS; b++)
		for (struct uproc *p = u->procs[b]; p; p = p->next) {
			for (size_t i = 0; i < p->nmaps; i++)
				if (p->maps[i].path &&
				    vec_push(&keep, p->maps[i].path) < 0)
					goto out;
			for (size_t i = 0; i < p->njit; i++)
				if (vec_push(&keep, p->jit[i].name) < 0)
					goto out;
			for (size_t i = 0; i < p->nextra; i++) {
				const struct uaddr *a = &p->extra[i];
				if ((a->name && vec_push(&keep, a->name) < 0) ||
				    (a->module && vec_push(&keep, a->module) < 0) ||
				    (a->mpath && vec_push(&keep, a->mpath) < 0))
					goto out;
			}
			for (size_t i = 0; i < p->nfmaps; i++)
				if (p->fmaps[i].path &&
				    vec_push(&keep, p->fmaps[i].path) < 0)
					goto out;
		}
	for (const struct ufnames *t = u->names; t; t = t->next)
		for (size_t i = 0; i < t->cap; i++)
			if (t->v[i].used && t->v[i].name &&
			    vec_push(&keep, t->v[i].name) < 0)
				goto out;
	if (keep.n)
		qsort(keep.v, keep.n, sizeof(*keep.v), cmp_ptr);
	size_t cap = 1024;
	while (cap < 2 * (keep.n + 1))
		cap *= 2;
	char **strs = calloc(cap, sizeof(*strs));
	if (!strs)
		goto out;
	size_t kept = 0, freed = 0;
	for (size_t i = 0; i < u->cap_strs; i++) {
		char *str = u->strs[i];
		if (!str)
			continue;
		if (!keep.n || !bsearch(&str, keep.v, keep.n, sizeof(*keep.v),
					cmp_ptr)) {
			free(str);
			freed++;
			continue;
		}
		size_t j = str_hash(str) & (cap - 1);
		while (strs[j])
			j = (j + 1) & (cap - 1);
		strs[j] = str;
		kept++;
	}
	free(u->strs);
	u->strs = strs;
	u->cap_strs = cap;
	u->nstrs = u->strs_kept = kept;
	vec_free(&keep);
	return freed;
out:
	vec_free(&keep);
	return 0;
}

size_t usyms_nprocs(const struct usyms *u)
{
	return u ? u->nprocs : 0;
}

unsigned usyms_ndwfl(const struct usyms *u)
{
	return u ? u->ndwfl : 0;
}

/* ---- mapped files -------------------------------------------------------- */

/* Open a mapped file without blocking on special files: only regular
 * files are opened, checked on the descriptor (a path checked first
 * could be swapped for a FIFO before the open). Returns an fd or -1. */
static int open_regular(const char *path)
{
	return file_open_regular(path, false);
}

static struct ufile *usyms_file(struct usyms *u, pid_t pid, uint64_t dev,
				uint64_t ino, uint64_t start, uint64_t end,
				const char *path)
{
	struct ufile *f;
	char buf[4096 + 64];

	for (f = u->files; f; f = f->next)
		if (f->dev == dev && f->ino == ino) {
			f->refs++;
			return f;
		}
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->dev = dev;
	f->ino = ino;
	f->fd = -1;
	f->refs = 1;
	f->path = strdup(path);
	if (!f->path) {
		free(f);
		return NULL;
	}
	if (pid > 0) {
		int tid = proc_live_tid((int)pid);
		snprintf(buf, sizeof(buf), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64,
			 tid, start, end);
		f->fd = open_regular(buf);
		if (f->fd < 0) {
			snprintf(buf, sizeof(buf), "/proc/%d/root%s", tid, path);
			f->fd = open_regular(buf);
		}
	}
	if (f->fd < 0)
		f->fd = open_regular(path);
	f->next = u->files;
	u->files = f;
	return f;
}

/* The ELF image of our own vDSO, in a memfd so libdwfl can read it like
 * any file. Every 64-bit process on this kernel maps the same image. */
static struct ufile *usyms_vdso(struct usyms *u)
{
	const unsigned char *base;
	const Elf64_Ehdr *eh;
	size_t size;
	int fd;

	if (u->vdso_tried)
		return u->vdso;
	u->vdso_tried = 1;
	base = (const void *)getauxval(AT_SYSINFO_EHDR);
	if (!base)
		return NULL;
	eh = (const void *)base;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64)
		return NULL;
	/* the image ends with its section headers */
	size = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	if (size < sizeof(*eh) || size > (1 << 20))
		return NULL;
	fd = memfd_create("sonde-vdso", MFD_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (write(fd, base, size) != (ssize_t)size) {
		close(fd);
		return NULL;
	}
	u->vdso = calloc(1, sizeof(*u->vdso));
	if (!u->vdso || !(u->vdso->path = strdup("[vdso]"))) {
		free(u->vdso);
		u->vdso = NULL;
		close(fd);
		return NULL;
	}
	u->vdso->fd = fd;
	return u->vdso;
}

/* ---- snapshots ----------------------------------------------------------- */


/* Parse the executable mappings of a maps text into P. */
static int uproc_parse_maps(struct usyms *u, struct uproc *p, pid_t live_pid)
{
	char *line = p->maps_text, *end = p->maps_text + p->maps_len;
	size_t cap = 0;

	while (line < end) {
		char *nl = memchr(line, '\n', (size_t)(end - line));
		char perms[8], path[4096];
		unsigned long long start, stop, pgoff, ino;
		unsigned int major, minor;
		int consumed = 0;
		struct umap *m;
		size_t plen;

		if (nl)
			*nl = '\0';
		path[0] = '\0';
		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &stop,
			   perms, &pgoff, &major, &minor, &ino, &consumed) >= 7 &&
		    strchr(perms, 'x')) {
			snprintf(path, sizeof(path), "%s", line + consumed);
			plen = strlen(path);
			while (plen && (path[plen - 1] == ' ' || path[plen - 1] == '\n'))
				path[--plen] = '\0';
			if (plen > 10 && strcmp(path + plen - 10, " (deleted)") == 0)
				path[plen -= 10] = '\0';
			if (vec_reserve_arr(p->maps, cap, p->nmaps + 1))
				return -ENOMEM;
			m = &p->maps[p->nmaps];
			memset(m, 0, sizeof(*m));
			m->start = start;
			m->end = stop;
			m->pgoff = pgoff;
			if (path[0] == '/' && ino != 0) {
				uint64_t dev = ((uint64_t)major << 32) | minor;

				m->file = usyms_file(u, live_pid, dev, ino, start, stop, path);
			} else if (strcmp(path, "[vdso]") == 0) {
				m->file = usyms_vdso(u);
			}
			m->path = path[0] ? usyms_intern(u, path) : NULL;
			if (path[0] && !m->path) {
				ufile_put(u, m->file);
				return -ENOMEM;
			}
			p->nmaps++;
		}
		if (nl)
			*nl = '\n';
		line = nl ? nl + 1 : end;
	}
	return 0;
}

static int usyms_remember_text(struct usyms *u, pid_t pid, char *text,
			       size_t len, pid_t live_pid)
{
	struct uproc **pp = usyms_slot(u, pid), *old = *pp, *p;
	int err;

	if (old && old->maps_text && old->maps_len == len &&
	    memcmp(old->maps_text, text, len) == 0) {
		free(text);
		return 0;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		free(text);
		return -ENOMEM;
	}
	p->pid = pid;
	p->maps_text = text;
	p->maps_len = len;
	p->jit_size = -1;
	/* the new snapshot first: the files both map stay open */
	if ((err = uproc_parse_maps(u, p, live_pid)) < 0) {
		uproc_free(u, p);
		return err;
	}
	if (old) {        /* mappings changed (mmap, dlopen, exec) */
		*usyms_slot(u, pid) = old->next;
		u->nprocs--;
		uproc_free(u, old);
	}
	pp = usyms_slot(u, pid);
	p->next = *pp;
	*pp = p;
	u->nprocs++;
	return 0;
}

int usym_process_remember(struct usyms *u, pid_t pid)
{
	char path[64];
	size_t len;
	char *text;

	snprintf(path, sizeof(path), "/proc/%d/maps", proc_live_tid((int)pid));
	text = file_read(path, &len);
	if (!text)
		return errno == ENOENT ? -ESRCH : -errno;
	if (len == 0) {         /* a kernel thread, or a zombie */
		free(text);
		return -ESRCH;
	}
	return usyms_remember_text(u, pid, text, len, pid);
}

int usym_process_remember_maps(struct usyms *u, pid_t pid,
			       const char *maps_text, size_t len)
{
	char *text = malloc(len + 1);

	if (!text)
		return -ENOMEM;
	memcpy(text, maps_text, len);
	text[len] = '\0';
	return usyms_remember_text(u, pid, text, len, 0);
}

struct uproc *usyms_proc(struct usyms *u, pid_t pid)
{
	struct uproc *p = *usyms_slot(u, pid);
	int err;

	if (p)
		return p;
	if ((err = usym_process_remember(u, pid)) < 0) {
		errno = -err;
		return NULL;
	}
	return *usyms_slot(u, pid);
}

const struct umap *uproc_map(const struct uproc *p, uint64_t addr)
{
	size_t i;

	for (i = 0; i < p->nmaps; i++)
		if (addr >= p->maps[i].start && addr < p->maps[i].end)
			return &p->maps[i];
	return NULL;
}

/* ---- the Dwfl of a snapshot ------------------------------------------------ */

Dwfl *uproc_dwfl(struct usyms *u, struct uproc *p)
{
	Dwfl *dwfl;
	size_t i, j, reported = 0;

	p->used = ++u->clock;
	if (p->dwfl) {
		lru_unlink(u, p);       /* most recently used again */
		lru_push(u, p);
		return p->dwfl;
	}
	if (p->dwfl_err)
		return NULL;
	if (u->ndwfl >= USYM_DWFL_MAX && u->lru_tail)
		uproc_drop_dwfl(u, u->lru_tail);
	dwfl = dwfl_begin(&usym_callbacks);
	if (!dwfl) {
		p->dwfl_err = -ENOMEM;
		return NULL;
	}
	dwfl_report_begin(dwfl);
	for (i = 0; i < p->nmaps; i++) {
		const struct umap *m = &p->maps[i];
		uint64_t bias;
		int fd;

		if (!m->file || m->file->fd < 0)
			continue;
		for (j = 0; j < i; j++)         /* one module per file */
			if (p->maps[j].file == m->file)
				break;
		if (j < i)
			continue;
		if (umap_bias(m->file->fd, m, &bias) < 0)
			continue;
		fd = dup(m->file->fd);
		if (fd < 0)
			continue;
		/* on success libdwfl owns (and will close) the dup */
		if (!dwfl_report_elf(dwfl, m->path, m->file->path, fd, bias, true))
			close(fd);
		else
			reported++;
	}
	dwfl_report_end(dwfl, NULL, NULL);
	if (!reported) {
		dwfl_end(dwfl);
		p->dwfl_err = -ENOENT;
		return NULL;
	}
	p->dwfl = dwfl;
	lru_push(u, p);
	u->ndwfl++;
	return dwfl;
}

/* ---- lookups ------------------------------------------------------------------- */

/* Whether P's Dwfl reports M's file at the bias M maps it at (the Dwfl
 * holds a file once, at its first mapping's): only then is what it
 * answers for an address in M the file's answer. */
static bool map_reported(const struct uproc *p, const struct umap *m)
{
	for (size_t i = 0; i < p->nmaps; i++)
		if (p->maps[i].file == m->file)
			return p->maps[i].start - p->maps[i].pgoff ==
			       m->start - m->pgoff;
	return false;
}

/* The symbol at addr in what dwfl reports: its name (interned), the
 * offset into it and its start. 0, -ENOENT or -ENOMEM. */
static int dwfl_symbol(struct usyms *u, Dwfl *dwfl, uint64_t addr,
		       struct sym *out)
{
	GElf_Off off = 0;
	GElf_Sym s;
	Dwfl_Module *mod = dwfl_addrmodule(dwfl, addr);
	if (!mod)
		return -ENOENT;
	const char *raw = dwfl_module_addrinfo(mod, addr, &off, &s, NULL,
					       NULL, NULL);
	if (!raw || !*raw)
		return -ENOENT;
	out->name = usyms_name(u, raw);
	if (!out->name)
		return -ENOMEM;
	out->offset = off;
	out->start = addr - off;
	return 0;
}

int usyms_lookup(struct usyms *u, pid_t pid, uint64_t addr, struct sym *out)
{
	struct uproc *p;
	const struct umap *m;
	Dwfl *dwfl;

	memset(out, 0, sizeof(*out));
	if (u->no_symbols)
		return -ENOENT;
	p = usyms_proc(u, pid);
	if (!p)
		return errno == ENOMEM ? -ENOMEM : -ESRCH;
	if (p->frozen)
		return uproc_frozen_lookup(p, addr, out);
	m = uproc_map(p, addr);
	/* JIT code is not kept: its perf map may name it anew */
	if (!m || !m->file)
		return uproc_jit_lookup(u, p, addr, out);
	out->module = m->path;
	struct ufnames *t = ufile_names(u, m->file);
	uint64_t foff = addr - m->start + m->pgoff;
	const struct uname *known = ufnames_find(t, foff);
	if (known)
		return uname_answer(known, addr, out);
	dwfl = uproc_dwfl(u, p);
	int r = dwfl ? dwfl_symbol(u, dwfl, addr, out) : -ENOENT;
	/* the file's answer, when the Dwfl has the file where M maps it */
	struct uname *n = r == -ENOMEM || !dwfl || !t ||
			  !map_reported(p, m) ? NULL : ufnames_add(t, foff);
	if (n) {
		n->name = out->name;
		n->offset = out->offset;
		n->rc = (int16_t)r;
	}
	return r;
}

const char *usyms_module(struct usyms *u, pid_t pid, uint64_t addr)
{
	struct uproc *p = usyms_proc(u, pid);
	if (p && p->frozen)
		return uproc_frozen_module(p, addr);
	const struct umap *m = p ? uproc_map(p, addr) : NULL;

	return m ? m->path : NULL;
}

int usyms_mapping(struct usyms *u, pid_t pid, uint64_t addr,
		  struct umapping *out)
{
	struct uproc *p = usyms_proc(u, pid);
	const struct umap *m = p ? uproc_map(p, addr) : NULL;

	memset(out, 0, sizeof(*out));
	if (!p)
		return -ESRCH;
	if (p->frozen)
		return uproc_frozen_mapping(p, addr, out);
	if (!m || !m->file)
		return -ENOENT;
	out->start = m->start;
	out->end = m->end;
	out->pgoff = m->pgoff;
	out->path = m->path;
	ufile_read_build_id(m->file);
	out->build_id = m->file->build_id_len ? m->file->build_id : NULL;
	out->build_id_len = m->file->build_id_len;
	return 0;
}

size_t usyms_nnames(const struct usyms *u)
{
	return u ? u->nstrs : 0;
}

void usyms_stats(const struct usyms *u, struct usyms_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (!u)
		return;
	size_t b = sizeof(*u) + u->cap_strs * sizeof(*u->strs);
	for (size_t i = 0; i < u->cap_strs; i++)
		if (u->strs[i])
			b += strlen(u->strs[i]) + 1;
	for (size_t i = 0; i < UPROC_BUCKETS; i++)
		for (const struct uproc *p = u->procs[i]; p; p = p->next) {
			st->procs++;
			st->frozen += p->frozen;
			b += sizeof(*p) + (p->maps_text ? p->maps_len + 1 : 0) +
			     p->nmaps * sizeof(*p->maps) +
			     p->njit * sizeof(*p->jit) +
			     p->nfmaps * sizeof(*p->fmaps) +
			     p->nextra * sizeof(*p->extra);
		}
	for (const struct ufile *f = u->files; f; f = f->next) {
		st->files++;
		b += sizeof(*f) + strlen(f->path) + 1;
	}
	for (const struct ufnames *t = u->names; t; t = t->next) {
		st->tables++;
		st->answers += t->n;
		b += sizeof(*t) + t->cap * sizeof(*t->v);
	}
	st->dwfls = u->ndwfl;
	st->names = u->nstrs;
	st->bytes = b;
}

size_t usyms_nfrozen(const struct usyms *u)
{
	size_t n = 0;
	if (!u)
		return 0;
	for (size_t b = 0; b < UPROC_BUCKETS; b++)
		for (const struct uproc *p = u->procs[b]; p; p = p->next)
			n += p->frozen;
	return n;
}

/* PATH's Dwfl with the file reported at its link-time addresses. */
static Dwfl *usyms_file_dwfl(struct usyms *u, const char *path)
{
	unsigned i;
	Dwfl *dwfl;
	int fd;

	for (i = 0; i < u->nsfiles; i++)
		if (strcmp(u->sfiles[i].path, path) == 0)
			return u->sfiles[i].dwfl;
	if (u->nsfiles == USYM_FILES_MAX) {     /* let the oldest go */
		if (u->sfiles[0].dwfl)
			dwfl_end(u->sfiles[0].dwfl);
		free(u->sfiles[0].path);
		memmove(&u->sfiles[0], &u->sfiles[1],
			(USYM_FILES_MAX - 1) * sizeof(u->sfiles[0]));
		u->nsfiles--;
	}
	char *copy = strdup(path);
	if (!copy)
		return NULL;
	dwfl = dwfl_begin(&usym_callbacks);
	fd = open_regular(path);
	if (dwfl && fd >= 0) {
		dwfl_report_begin(dwfl);
		/* on success libdwfl owns (and will close) fd */
		if (!dwfl_report_elf(dwfl, path, path, fd, 0, true)) {
			close(fd);
			dwfl_end(dwfl);
			dwfl = NULL;
		} else {
			dwfl_report_end(dwfl, NULL, NULL);
		}
	} else {
		if (fd >= 0)
			close(fd);
		if (dwfl)
			dwfl_end(dwfl);
		dwfl = NULL;
	}
	u->sfiles[u->nsfiles].path = copy;
	u->sfiles[u->nsfiles].dwfl = dwfl;
	u->nsfiles++;
	return dwfl;
}

int usyms_lookup_file(struct usyms *u, const char *path, uint64_t vaddr,
		      struct sym *out)
{
	Dwfl *dwfl;

	memset(out, 0, sizeof(*out));
	dwfl = usyms_file_dwfl(u, path);
	if (!dwfl)
		return -ENOENT;
	int r = dwfl_symbol(u, dwfl, vaddr, out);
	if (r == 0)
		out->module = usyms_intern(u, path);
	return r;
}
