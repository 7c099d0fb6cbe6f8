/* usym_internal.h - the remembered-process table shared by usym.c and unwind.c (not a public seam). */
#ifndef SONDE_ELF_USYM_INTERNAL_H
#define SONDE_ELF_USYM_INTERNAL_H

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "symbolize.h"

#define USYM_BUILD_ID_MAX 64

/* One mapped file, shared by every process that maps it (by device and
 * inode), kept open so it can be read after the process is gone, and
 * closed when the last process mapping it is forgotten. */
struct ufile {
	uint64_t dev, ino;
	int fd;                 /* -1 when it could not be opened */
	char *path;             /* as the first process mapped it */
	unsigned refs;          /* mappings of remembered processes */
	/* its GNU build ID, read at the first usyms_mapping() */
	uint8_t build_id[USYM_BUILD_ID_MAX];
	uint8_t build_id_len;
	bool build_id_read;
	struct ufile *next;
};

/* One executable mapping of a remembered process. */
struct umap {
	uint64_t start, end, pgoff;
	struct ufile *file;     /* NULL for anonymous memory (JIT code) */
	const char *path;       /* interned; "[vdso]" for the vDSO */
};

/* An address of a process named once (usyms_lookup's answer), so that
 * the frames of every scrape are not named again by libdwfl's linear
 * scan, and so that a process that has exited can be frozen: named for
 * the addresses its kept stacks hold, then its mappings, files and
 * symbol tables let go (usym_process_freeze). */
struct uaddr {
	uint64_t addr;
	const char *name;       /* interned; NULL: no symbol */
	const char *module;     /* usyms_lookup's out->module */
	const char *mpath;      /* usyms_module's answer */
	uint64_t offset;
	int32_t fmap;           /* frozen: index into fmaps, or -1 */
	int16_t rc;             /* usyms_lookup's result */
	uint8_t used;
};

/* A mapping a frozen process's addresses lie in, as usyms_mapping
 * names it. */
struct ufmap {
	uint64_t start, end, pgoff;
	const char *path;       /* interned */
	uint8_t build_id[USYM_BUILD_ID_MAX];
	uint8_t build_id_len;
};

struct jitsym {
	uint64_t start, size;
	const char *name;       /* interned */
};

struct uproc {
	pid_t pid;
	char *maps_text;
	size_t maps_len;
	struct umap *maps;
	size_t nmaps;
	Dwfl *dwfl;             /* built at first use from the snapshot, */
	int dwfl_err;           /* <0 when it could not be built */
	/* ... and dropped again when it is the least recently used of more
	 * than USYM_DWFL_MAX (rebuilt from the snapshot when needed) */
	struct uproc *lru_prev, *lru_next;
	uint64_t used;          /* usyms' clock at the last use */
	/* unwinding: dwfl_attach_state is done once per Dwfl; the sample
	 * being unwound is handed to the callbacks through cur */
	int attached;
	const struct unwind_sample *cur;
	/* /tmp/perf-PID.map, re-read when it grows */
	struct jitsym *jit;
	size_t njit;
	long long jit_size;
	/* addresses named: open addressing, power-of-two size; once
	 * frozen, the only thing known of the process */
	struct uaddr *cache;
	size_t ncache, cap_cache;
	struct ufmap *fmaps;
	size_t nfmaps;
	bool frozen;
	struct uproc *next;
};

/* How many processes keep a built Dwfl at once. A Dwfl holds a copy of
 * every mapped file's descriptor and the symbol tables and CFI it has
 * read; past this many the least recently used is dropped. */
#define USYM_DWFL_MAX 16
/* Addresses a live process keeps named at most (the table is started
 * over past it): a full map of 4096 stacks holds some 60,000 frames. */
#define USYM_CACHE_MAX (1u << 17)

/* The process PID, remembering it now if it was not yet (NULL, errno
 * set, if that fails). */
struct uproc *usyms_proc(struct usyms *u, pid_t pid);
/* Its Dwfl with every mapped file reported (NULL if none could be). */
Dwfl *uproc_dwfl(struct usyms *u, struct uproc *p);
/* The executable mapping containing ADDR, or NULL. */
const struct umap *uproc_map(const struct uproc *p, uint64_t addr);
/* PID if it is remembered (NULL if not: nothing is read). */
struct uproc *usyms_find(struct usyms *u, pid_t pid);
/* Let go of what P was read from: its Dwfl, files, snapshot, JIT names
 * (its named addresses stay). */
void uproc_release(struct usyms *u, struct uproc *p);

/* usym_names.c: P's answer for ADDR (NULL: not asked yet); a new slot
 * for ADDR (NULL: no memory); the answer as usyms_lookup gives it; the
 * answers of OLD, P's previous snapshot, that still hold in P. */
struct uaddr *uaddr_find(const struct uproc *p, uint64_t addr);
struct uaddr *uaddr_add(struct uproc *p, uint64_t addr);
int uaddr_answer(const struct uaddr *a, struct sym *out);
void uproc_keep_names(struct uproc *p, const struct uproc *old);

#endif
