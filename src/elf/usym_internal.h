/* usym_internal.h - the remembered-process table shared by usym.c and unwind.c (not a public seam). */
#ifndef SONDE_ELF_USYM_INTERNAL_H
#define SONDE_ELF_USYM_INTERNAL_H

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "symbolize.h"

#define USYM_BUILD_ID_MAX 64

/*
 * The names of one file's addresses (usym_names.c), shared by every
 * process, live or frozen, that maps the file: keyed by the file's
 * identity (its GNU build ID and size when it has a build ID, so that
 * every fresh copy of one binary shares one table; else device, inode,
 * size and modification time) and, within it, by file offset. An answer
 * is the file's: the same for every process mapping it. Released with
 * the last mapping, live or frozen, that refers to it.
 */
struct uname {
	uint64_t foff;          /* the address's offset in the file */
	const char *name;       /* interned; NULL: no symbol */
	uint64_t offset;        /* into the symbol */
	int16_t rc;             /* usyms_lookup's result: 0 or -ENOENT */
	uint8_t used;
};

struct ufnames {
	uint8_t build_id[USYM_BUILD_ID_MAX];
	uint8_t build_id_len;
	uint64_t dev, ino, size;
	int64_t mtime_ns;
	uint32_t owner;         /* with a build ID: the file's owner (below) */
	unsigned refs;          /* open files and frozen mappings */
	unsigned frozen_refs;   /* of them, frozen mappings */
	struct uname *v;        /* open addressing, power-of-two size */
	size_t n, cap;
	struct ufnames *prev, *next;
};

/* One mapped file, shared by every process that maps it (by device and
 * inode), kept open so it can be read after the process is gone, and
 * closed when the last process mapping it is forgotten. */
struct ufile {
	uint64_t dev, ino;
	int fd;                 /* -1 when it could not be opened */
	char *path;             /* as the first process mapped it */
	unsigned refs;          /* mappings of remembered processes */
	/* its GNU build ID, read at first need */
	uint8_t build_id[USYM_BUILD_ID_MAX];
	uint8_t build_id_len;
	bool build_id_read;
	/* the names of its addresses (a reference), found at first need */
	struct ufnames *names;
	bool names_tried;
	struct ufile *next;
};

/* One executable mapping of a remembered process. */
struct umap {
	uint64_t start, end, pgoff;
	struct ufile *file;     /* NULL for anonymous memory (JIT code) */
	const char *path;       /* interned; "[vdso]" for the vDSO */
};

/* What a frozen process answers for an address outside the file name
 * tables: in no file (JIT code, nothing mapped), or one a full table
 * could not take. */
struct uaddr {
	uint64_t addr;
	const char *name;       /* interned; NULL: no symbol */
	const char *module;     /* usyms_lookup's out->module */
	const char *mpath;      /* usyms_module's answer */
	uint64_t offset;
	int32_t fmap;           /* index into fmaps, or -1 */
	int16_t rc;             /* usyms_lookup's result */
};

/* A mapping a frozen process's addresses lie in, as usyms_mapping
 * names it, and the names of its file (a reference; NULL when the table
 * could not be made). */
struct ufmap {
	uint64_t start, end, pgoff;
	const char *path;       /* interned */
	struct ufnames *names;
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
	/* frozen (usym_process_freeze): the mappings its addresses lie in,
	 * the answers no file table holds (sorted by address), and how
	 * many addresses it was frozen with */
	struct ufmap *fmaps;
	size_t nfmaps;
	struct uaddr *extra;
	size_t nextra;
	size_t nfrozen_addrs;
	bool frozen;
	struct uproc *next;
};

/* How many processes keep a built Dwfl at once. A Dwfl holds a copy of
 * every mapped file's descriptor and the symbol tables and CFI it has
 * read; past this many the least recently used is dropped. */
#define USYM_DWFL_MAX 16
/* Addresses a file's name table holds at most: past it, a table no
 * frozen process refers to starts over (what it forgets is named again
 * when asked), and one that a frozen process refers to takes no more
 * (lookups in live processes go to libdw each time; a freeze keeps the
 * answer with the process). A full map of 4096 stacks holds some 60,000
 * frames. */
#define USYM_NAMES_MAX (1u << 17)

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

/* usym_names.c. The table for file F's identity, its reference taken
 * (found or made; NULL: no memory); a reference let go (the table is
 * freed with the last); the answer for file offset FOFF (NULL: not
 * asked yet); a new slot for it (NULL: full or no memory); an answer as
 * usyms_lookup gives it for ADDR. */
struct ufnames *ufnames_get(struct ufnames **list, const struct ufile *f,
			    uint64_t size, int64_t mtime_ns, uint32_t owner);
void ufnames_put(struct ufnames **list, struct ufnames *t);
const struct uname *ufnames_find(const struct ufnames *t, uint64_t foff);
struct uname *ufnames_add(struct ufnames *t, uint64_t foff);
int uname_answer(const struct uname *n, uint64_t addr, struct sym *out);
/* F's GNU build ID, read once. */
void ufile_read_build_id(struct ufile *f);
/* usym.c: F's name table (NULL: none could be made), and the list of
 * them all. */
struct ufnames *ufile_names(struct usyms *u, struct ufile *f);
struct ufnames **usyms_names(struct usyms *u);
/* A frozen process's answers (usyms_lookup, usyms_module,
 * usyms_mapping), and what it holds let go. */
int uproc_frozen_lookup(const struct uproc *p, uint64_t addr,
			struct sym *out);
const char *uproc_frozen_module(const struct uproc *p, uint64_t addr);
int uproc_frozen_mapping(const struct uproc *p, uint64_t addr,
			 struct umapping *out);
void uproc_unfreeze(struct usyms *u, struct uproc *p);

/* usym.c: strings interned once per table; a raw symbol name demangled
 * (unless BPFTRACE_NO_CPP_DEMANGLE) and interned */
const char *usyms_intern(struct usyms *u, const char *s);
const char *usyms_name(struct usyms *u, const char *raw);

/* usym_dwfl.c: libdwfl's callbacks for modules reported with their
 * descriptors, and the load bias of FD mapped at M */
extern const Dwfl_Callbacks usym_callbacks;
int umap_bias(int fd, const struct umap *m, uint64_t *bias);

/* usym_jit.c: ADDR in P's JIT code, named by /tmp/perf-PID.map */
int uproc_jit_lookup(struct usyms *u, struct uproc *p, uint64_t addr,
		     struct sym *out);

#endif
