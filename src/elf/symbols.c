/* symbols.c - an opened ELF file: its segments, function symbols, file
 * offsets and symbol-spec resolution (SYMBOL, SYMBOL+OFF, 0xADDR).
 *
 * At open we read both symbol tables once into one array sorted by name,
 * so lookups and wildcard listing are simple scans and the name order is
 * bpftrace's -l order. Names point into libelf's read-only mapping of the
 * file (elf_strptr checks that each lies inside its string table and is
 * terminated), so the Elf handle lives as long as the elf_file. C++ names
 * are demangled once at open (demangle.c: libstdc++'s __cxa_demangle). */
#include "elf.h"
#include "demangle.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../base/file.h"
#include "../base/glob.h"
#include "../base/vec.h"

struct elf_seg {
	uint64_t vaddr, filesz, memsz, offset;
	bool exec;                 /* PF_X: holds code */
};

struct elf_file {
	char *path;
	int fd;
	Elf *elf;
	GElf_Ehdr ehdr;
	struct elf_seg *segs;
	size_t nsegs;
	struct elf_sym *syms;     /* sorted by name */
	size_t nsyms;
	struct elf_sym **by_addr; /* the same, sorted by address */
	int dbg_fd;               /* the separate debug file, or -1 */
	Elf *dbg_elf;
	/* .eh_frame_hdr's table of function starts (elf_code_range), read
	 * once: link-time addresses, sorted; NULL if none */
	uint64_t *fde_starts;
	size_t nfde;
	bool fde_tried;
};

/* debugfile.c */
int elf__debug_open(Elf *e, const char *path, int *fd, Elf **out);

static int elf_lib_init(void)
{
	static int ok = -1; /* process-wide: libelf's version handshake */
	if (ok < 0)
		ok = elf_version(EV_CURRENT) != EV_NONE;
	return ok ? 0 : -ENOTSUP;
}

void elf_close(struct elf_file *ef)
{
	if (!ef)
		return;
	for (size_t i = 0; i < ef->nsyms; i++)
		free((char *)ef->syms[i].demangled);
	free(ef->syms);
	free(ef->by_addr);
	free(ef->segs);
	free(ef->fde_starts);
	if (ef->elf)
		elf_end(ef->elf);
	if (ef->fd >= 0)
		close(ef->fd);
	if (ef->dbg_elf)
		elf_end(ef->dbg_elf);
	if (ef->dbg_fd >= 0)
		close(ef->dbg_fd);
	free(ef->path);
	free(ef);
}

static int read_segments(struct elf_file *ef)
{
	size_t n;
	if (elf_getphdrnum(ef->elf, &n) != 0)
		return -EINVAL;
	ef->segs = calloc(n ? n : 1, sizeof(*ef->segs));
	if (!ef->segs)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(ef->elf, (int)i, &ph))
			return -EINVAL;
		if (ph.p_type != PT_LOAD)
			continue;
		/* Reject segments whose ranges wrap: later arithmetic
		 * relies on vaddr+size not overflowing. */
		if (ph.p_vaddr + ph.p_memsz < ph.p_vaddr ||
		    ph.p_offset + ph.p_filesz < ph.p_offset ||
		    ph.p_filesz > ph.p_memsz)
			continue;
		ef->segs[ef->nsegs++] = (struct elf_seg){
			.vaddr = ph.p_vaddr, .filesz = ph.p_filesz,
			.memsz = ph.p_memsz, .offset = ph.p_offset,
			.exec = (ph.p_flags & PF_X) != 0,
		};
	}
	return 0;
}

/* The segment whose file-backed part holds VADDR, or NULL. */
static const struct elf_seg *file_seg(const struct elf_file *ef, uint64_t vaddr)
{
	for (size_t i = 0; i < ef->nsegs; i++) {
		const struct elf_seg *s = &ef->segs[i];
		if (vaddr >= s->vaddr && vaddr - s->vaddr < s->filesz)
			return s;
	}
	return NULL;
}

int elf_vaddr_to_offset(const struct elf_file *ef, uint64_t vaddr, uint64_t *off)
{
	const struct elf_seg *s = file_seg(ef, vaddr);
	*off = s ? vaddr - s->vaddr + s->offset : 0;
	return s ? 0 : -ENOENT;
}

/* Like elf_vaddr_to_offset but over the whole memory image of a segment:
 * a semaphore may sit in the zero-filled tail (.bss) of a data segment. */
int elf__vaddr_to_offset_mem(const struct elf_file *ef, uint64_t vaddr, uint64_t *off);
int elf__vaddr_to_offset_mem(const struct elf_file *ef, uint64_t vaddr, uint64_t *off)
{
	*off = 0;
	for (size_t i = 0; i < ef->nsegs; i++) {
		const struct elf_seg *s = &ef->segs[i];
		if (vaddr >= s->vaddr && vaddr - s->vaddr < s->memsz) {
			*off = vaddr - s->vaddr + s->offset;
			return 0;
		}
	}
	return -ENOENT;
}

int elf_offset_to_vaddr(const struct elf_file *ef, uint64_t off, uint64_t *vaddr)
{
	*vaddr = 0;
	for (size_t i = 0; i < ef->nsegs; i++) {
		const struct elf_seg *s = &ef->segs[i];
		if (off >= s->offset && off - s->offset < s->filesz) {
			*vaddr = off - s->offset + s->vaddr;
			return 0;
		}
	}
	return -ENOENT;
}

/* For files without program headers (relocatable objects) the offset of
 * a symbol comes from its section instead. */
static int sym_offset(struct elf_file *ef, const GElf_Sym *s, uint64_t *off)
{
	if (ef->nsegs)
		return elf_vaddr_to_offset(ef, s->st_value, off);
	Elf_Scn *scn = elf_getscn(ef->elf, s->st_shndx);
	GElf_Shdr sh;
	if (!scn || !gelf_getshdr(scn, &sh) || s->st_value < sh.sh_addr ||
	    s->st_value - sh.sh_addr >= sh.sh_size)
		return -ENOENT;
	*off = s->st_value - sh.sh_addr + sh.sh_offset;
	return 0;
}

static int cmp_name(const void *a, const void *b)
{
	const struct elf_sym *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	if (c)
		return c;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* .symtab before .dynsym so the merged entry keeps local info */
	return (int)(x->flags & ELF_SYM_DYNAMIC) - (int)(y->flags & ELF_SYM_DYNAMIC);
}

static int cmp_addr(const void *a, const void *b)
{
	const struct elf_sym *x = *(struct elf_sym *const *)a;
	const struct elf_sym *y = *(struct elf_sym *const *)b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* larger first, so the containing lookup prefers sized symbols */
	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Function symbols of one table of e (the file itself or its debug
 * file; offsets always come from the file's own segments). Undefined
 * functions with an address are PLT entries of a non-PIE program, which
 * bpftrace lists and probes too. */
static int read_symtab(struct elf_file *ef, Elf *e, Elf_Scn *scn,
		       const GElf_Shdr *sh, size_t *cap)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	if (!data || sh->sh_entsize == 0)
		return 0; /* nothing usable; not fatal */
	size_t count = data->d_size / sizeof(Elf64_Sym);
	if (ef->ehdr.e_ident[EI_CLASS] == ELFCLASS32)
		count = data->d_size / sizeof(Elf32_Sym);
	bool dynamic = sh->sh_type == SHT_DYNSYM;
	for (size_t i = 0; i < count; i++) {
		GElf_Sym s;
		if (!gelf_getsym(data, (int)i, &s))
			break;
		int type = GELF_ST_TYPE(s.st_info);
		int bind = GELF_ST_BIND(s.st_info);
		bool plt = s.st_shndx == SHN_UNDEF;
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) ||
		    (plt && !s.st_value) || s.st_name == 0)
			continue;
		const char *name = elf_strptr(e, sh->sh_link, s.st_name);
		if (!name || !*name)
			continue;
		uint64_t off = 0;
		if ((plt || e != ef->elf ? elf_vaddr_to_offset(ef, s.st_value, &off) :
		     sym_offset(ef, &s, &off)) < 0)
			continue; /* not in the file image: cannot be probed */
		if (vec_reserve_arr(ef->syms, *cap, ef->nsyms + 1))
			return -ENOMEM;
		ef->syms[ef->nsyms++] = (struct elf_sym){
			.name = name, .addr = s.st_value, .size = s.st_size,
			.offset = off,
			.flags = (dynamic ? ELF_SYM_DYNAMIC : 0) |
				 (bind == STB_WEAK ? ELF_SYM_WEAK : 0) |
				 (bind == STB_LOCAL ? ELF_SYM_LOCAL : 0) |
				 (type == STT_GNU_IFUNC ? ELF_SYM_IFUNC : 0) |
				 (plt ? ELF_SYM_PLT : 0),
		};
	}
	return 0;
}

static int read_symbols(struct elf_file *ef, bool debug_file)
{
	size_t cap = 0;
	Elf_Scn *scn = NULL;
	bool symtab = false;
	while ((scn = elf_nextscn(ef->elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			return -EINVAL;
		if (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM)
			continue;
		symtab |= sh.sh_type == SHT_SYMTAB;
		int err = read_symtab(ef, ef->elf, scn, &sh, &cap);
		if (err)
			return err;
	}
	/* Stripped: the debug file's .symtab, when one is installed. */
	if (!symtab && debug_file && ef->nsegs &&
	    elf__debug_open(ef->elf, ef->path, &ef->dbg_fd, &ef->dbg_elf) == 0) {
		scn = NULL;
		while ((scn = elf_nextscn(ef->dbg_elf, scn))) {
			GElf_Shdr sh;
			if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
				continue;
			int err = read_symtab(ef, ef->dbg_elf, scn, &sh, &cap);
			if (err)
				return err;
		}
	}
	if (!ef->nsyms)
		return 0;
	qsort(ef->syms, ef->nsyms, sizeof(*ef->syms), cmp_name);
	/* Merge the same symbol seen in both tables. */
	size_t w = 0;
	for (size_t r = 0; r < ef->nsyms; r++) {
		if (w && strcmp(ef->syms[w - 1].name, ef->syms[r].name) == 0 &&
		    ef->syms[w - 1].addr == ef->syms[r].addr) {
			struct elf_sym *k = &ef->syms[w - 1];
			if (!k->size)
				k->size = ef->syms[r].size;
			/* exported, whichever table said so */
			k->flags |= ef->syms[r].flags & ELF_SYM_DYNAMIC;
			continue;
		}
		ef->syms[w++] = ef->syms[r];
	}
	ef->nsyms = w;
	for (size_t i = 0; i < ef->nsyms; i++)
		ef->syms[i].demangled = elf_demangle(ef->syms[i].name);
	ef->by_addr = malloc(ef->nsyms * sizeof(*ef->by_addr));
	if (!ef->by_addr)
		return -ENOMEM;
	for (size_t i = 0; i < ef->nsyms; i++)
		ef->by_addr[i] = &ef->syms[i];
	qsort(ef->by_addr, ef->nsyms, sizeof(*ef->by_addr), cmp_addr);
	return 0;
}

static int open_file(const char *path, bool debug_file, struct elf_file **out)
{
	*out = NULL;
	int err = elf_lib_init();
	if (err)
		return err;
	struct elf_file *ef = calloc(1, sizeof(*ef));
	if (!ef)
		return -ENOMEM;
	ef->fd = -1;
	ef->dbg_fd = -1;
	ef->path = strdup(path);
	if (!ef->path) {
		err = -ENOMEM;
		goto fail;
	}
	/* a traced process may have put anything at a path it maps */
	ef->fd = file_open_regular(path, false);
	if (ef->fd < 0) {
		err = -errno;
		goto fail;
	}
	ef->elf = elf_begin(ef->fd, ELF_C_READ_MMAP, NULL);
	if (!ef->elf || elf_kind(ef->elf) != ELF_K_ELF) {
		err = -ENOEXEC;
		goto fail;
	}
	if (!gelf_getehdr(ef->elf, &ef->ehdr)) {
		err = -ENOEXEC;
		goto fail;
	}
	/* x86-64 files are little-endian; the note parser assumes it. */
	if (ef->ehdr.e_ident[EI_DATA] != ELFDATA2LSB) {
		err = -ENOEXEC;
		goto fail;
	}
	if ((err = read_segments(ef)) || (err = read_symbols(ef, debug_file)))
		goto fail;
	*out = ef;
	return 0;
fail:
	elf_close(ef);
	return err;
}

int elf_open(const char *path, struct elf_file **out)
{
	return open_file(path, true, out);
}

int elf_open_own(const char *path, struct elf_file **out)
{
	return open_file(path, false, out);
}

const char *elf_path(const struct elf_file *ef) { return ef->path; }
bool elf_is_dyn(const struct elf_file *ef) { return ef->ehdr.e_type == ET_DYN; }
unsigned elf_machine(const struct elf_file *ef) { return ef->ehdr.e_machine; }

/* For usdt.c: the Elf handle and header, kept out of the public header
 * so no other part sees libelf types. */
Elf *elf__handle(const struct elf_file *ef);
Elf *elf__handle(const struct elf_file *ef) { return ef->elf; }

const struct elf_sym *elf_syms(const struct elf_file *ef, size_t *n)
{
	*n = ef->nsyms;
	return ef->syms;
}

const struct elf_sym *elf_find_sym(const struct elf_file *ef, const char *name)
{
	/* binary search on the sorted names; first of equal names wins */
	size_t lo = 0, hi = ef->nsyms;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(ef->syms[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < ef->nsyms && strcmp(ef->syms[lo].name, name) == 0)
		return &ef->syms[lo];
	for (size_t i = 0; i < ef->nsyms; i++)
		if (ef->syms[i].demangled && strcmp(ef->syms[i].demangled, name) == 0)
			return &ef->syms[i];
	return NULL;
}

const struct elf_sym *elf_sym_at(const struct elf_file *ef, uint64_t vaddr)
{
	/* last symbol starting at or before vaddr */
	size_t lo = 0, hi = ef->nsyms;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ef->by_addr[mid]->addr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* walk back over symbols starting at the same or earlier address
	 * until one contains vaddr (a zero-sized one only on exact hit) */
	for (size_t i = lo; i-- > 0;) {
		const struct elf_sym *s = ef->by_addr[i];
		if (vaddr == s->addr || vaddr - s->addr < s->size)
			return s;
		if (lo - i > 8)
			break;
	}
	return NULL;
}

static int32_t get_s32(const uint8_t *p)
{
	int32_t v;
	memcpy(&v, p, 4);
	return v;
}

/* The function starts .eh_frame_hdr lists (its binary search table,
 * in the encoding every x86-64 linker writes: 4-byte offsets from the
 * header). Every length is checked: the file is untrusted. */
static void read_fde_starts(struct elf_file *ef)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	if (elf_getshdrstrndx(ef->elf, &shstrndx) != 0)
		return;
	while ((scn = elf_nextscn(ef->elf, scn))) {
		GElf_Shdr sh;
		const char *name;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(name = elf_strptr(ef->elf, shstrndx, sh.sh_name)) ||
		    strcmp(name, ".eh_frame_hdr") != 0)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || d->d_size < 12)
			return;
		const uint8_t *h = d->d_buf;
		/* version 1; eh_frame_ptr pcrel|sdata4; count udata4; table
		 * datarel|sdata4 */
		if (h[0] != 1 || h[1] != 0x1b || h[2] != 0x03 || h[3] != 0x3b)
			return;
		uint32_t n;
		memcpy(&n, h + 8, 4);
		if (n == 0 || n > (d->d_size - 12) / 8)
			return;
		uint64_t *v = malloc(n * sizeof(*v));
		if (!v)
			return;
		for (uint32_t k = 0; k < n; k++)
			v[k] = sh.sh_addr + (uint64_t)(int64_t)get_s32(h + 12 + 8 * k);
		for (uint32_t k = 1; k < n; k++)
			if (v[k] <= v[k - 1]) {     /* not sorted: not usable */
				free(v);
				return;
			}
		ef->fde_starts = v;
		ef->nfde = n;
		return;
	}
}

int elf_code_range(struct elf_file *ef, uint64_t vaddr, uint64_t *start,
		   uint64_t *end)
{
	*start = *end = 0;
	const struct elf_sym *s = elf_sym_at(ef, vaddr);
	if (s && s->size) {
		*start = s->addr;
		*end = s->addr + s->size;
		return 0;
	}
	/* a stripped file (Debian's python3.11, postgres): the unwind
	 * table's function starts still bound it, from the start of its
	 * own to the next one's (padding between them is swept too) */
	if (!ef->fde_tried) {
		ef->fde_tried = true;
		read_fde_starts(ef);
	}
	size_t lo = 0, hi = ef->nfde;
	while (lo < hi) {          /* the first start above vaddr */
		size_t mid = lo + (hi - lo) / 2;
		if (ef->fde_starts[mid] <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || lo == ef->nfde)
		return -ENOENT;
	*start = ef->fde_starts[lo - 1];
	*end = ef->fde_starts[lo];
	return 0;
}

void elf_sym_neighbours(const struct elf_file *ef, uint64_t vaddr,
			uint64_t *prev_end, uint64_t *next_start)
{
	*prev_end = 0;
	*next_start = 0;
	/* the first symbol after vaddr */
	size_t lo = 0, hi = ef->nsyms;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ef->by_addr[mid]->addr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < ef->nsyms)
		*next_start = ef->by_addr[lo]->addr;
	/* the furthest end of the symbols just before (aliases, nested) */
	for (size_t i = lo, seen = 0; i-- > 0 && seen < 8;) {
		const struct elf_sym *s = ef->by_addr[i];
		if (s->addr >= vaddr)
			continue;
		seen++;
		if (s->addr + s->size > *prev_end)
			*prev_end = s->addr + s->size;
	}
}

int elf_symbol_addr(const struct elf_file *ef, const char *name, uint64_t *vaddr)
{
	uint64_t size;
	return elf_symbol_info(ef, name, vaddr, &size);
}

int elf_symbol_info(const struct elf_file *ef, const char *name,
		    uint64_t *vaddr, uint64_t *size)
{
	*vaddr = *size = 0;
	const struct elf_sym *fs = elf_find_sym(ef, name);
	if (fs) {
		*vaddr = fs->addr;
		*size = fs->size;
		return 0;
	}
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(ef->elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		Elf_Data *data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		GElf_Sym s;
		for (int i = 0; gelf_getsym(data, i, &s); i++) {
			if (s.st_shndx == SHN_UNDEF || !s.st_name)
				continue;
			const char *n = elf_strptr(ef->elf, sh.sh_link, s.st_name);
			if (n && strcmp(n, name) == 0) {
				*vaddr = s.st_value;
				*size = s.st_size;
				return 0;
			}
		}
	}
	return -ENOENT;
}

/* Parse an unsigned number, decimal or 0x hex, the whole string. */
static int parse_u64(const char *s, uint64_t *v)
{
	if (!*s || *s == '-' || *s == '+')
		return -EINVAL;
	char *end;
	errno = 0;
	unsigned long long x = strtoull(s, &end, 0);
	if (errno || *end)
		return -EINVAL;
	*v = x;
	return 0;
}

int elf_resolve(const struct elf_file *ef, const char *spec, struct elf_loc *out)
{
	memset(out, 0, sizeof(*out));
	if (spec[0] == '0' && (spec[1] == 'x' || spec[1] == 'X')) {
		uint64_t a;
		if (parse_u64(spec, &a))
			return -EINVAL;
		int err = elf_vaddr_to_offset(ef, a, &out->offset);
		if (err)
			return err;
		if (!file_seg(ef, a)->exec)
			return -ENOENT;    /* a uprobe there would never fire */
		out->addr = a;
		out->sym = elf_sym_at(ef, a);
		return 0;
	}
	/* SYMBOL+OFF: the last '+' followed only by a number. C++ names
	 * may contain '+' ("operator+"), so a '+' not followed by a valid
	 * number is part of the name. */
	const struct elf_sym *s = NULL;
	uint64_t add = 0;
	const char *plus = strrchr(spec, '+');
	if (plus && plus != spec && parse_u64(plus + 1, &add) == 0) {
		size_t len = (size_t)(plus - spec);
		char *name = strndup(spec, len);
		if (!name)
			return -ENOMEM;
		s = elf_find_sym(ef, name);
		free(name);
	} else {
		add = 0;
	}
	if (!s) {
		add = 0;
		s = elf_find_sym(ef, spec);
	}
	if (!s)
		return -ENOENT;
	if (add && s->size && add >= s->size)
		return -ERANGE;
	out->sym = s;
	out->addr = s->addr + add;
	return elf_vaddr_to_offset(ef, out->addr, &out->offset);
}

/* Does pattern match a prefix of s? Same as glob(pattern "*", s). */
static bool glob_prefix(const char *p, const char *s)
{
	size_t n = strlen(p);
	char stack[256];
	char *q = n + 2 <= sizeof(stack) ? stack : malloc(n + 2);
	if (!q)
		return false;
	memcpy(q, p, n);
	q[n] = '*';
	q[n + 1] = '\0';
	bool r = glob_match(q, s);
	if (q != stack)
		free(q);
	return r;
}

bool elf_sym_match(const struct elf_sym *sym, const char *pattern)
{
	if (glob_match(pattern, sym->name))
		return true;
	return sym->demangled && glob_prefix(pattern, sym->demangled);
}

int elf_match(const struct elf_file *ef, const char *pattern,
	      int (*fn)(void *arg, const struct elf_sym *sym), void *arg)
{
	int n = 0;
	for (size_t i = 0; i < ef->nsyms; i++) {
		if (!elf_sym_match(&ef->syms[i], pattern))
			continue;
		n++;
		if (fn) {
			int r = fn(arg, &ef->syms[i]);
			if (r)
				return r;
		}
	}
	return n;
}

unsigned elf_edit_distance(const char *a, const char *b, unsigned cap)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 255 || lb > 255)
		return cap + 1;
	if ((la > lb ? la - lb : lb - la) > cap)
		return cap + 1;
	unsigned row[256];
	for (size_t j = 0; j <= lb; j++)
		row[j] = (unsigned)j;
	for (size_t i = 1; i <= la; i++) {
		unsigned diag = row[0], best;
		row[0] = (unsigned)i;
		best = row[0];
		for (size_t j = 1; j <= lb; j++) {
			unsigned up = row[j];
			unsigned v = diag + (a[i - 1] != b[j - 1]);
			if (row[j - 1] + 1 < v)
				v = row[j - 1] + 1;
			if (up + 1 < v)
				v = up + 1;
			row[j] = v;
			diag = up;
			if (v < best)
				best = v;
		}
		if (best > cap)
			return cap + 1;
	}
	return row[lb] > cap ? cap + 1 : row[lb];
}

size_t elf_suggest(const struct elf_file *ef, const char *name,
		   const char **out, size_t max)
{
	if (!max)
		return 0;
	size_t len = strlen(name);
	unsigned cap = len < 6 ? 2 : (unsigned)(len / 3);
	unsigned dist[16];
	if (max > 16)
		max = 16;
	size_t n = 0;
	for (size_t i = 0; i < ef->nsyms; i++) {
		const struct elf_sym *s = &ef->syms[i];
		const char *cand = s->name;
		unsigned d = elf_edit_distance(name, cand, cap);
		if (s->demangled) {
			unsigned dd = elf_edit_distance(name, s->demangled, cap);
			if (dd < d) {
				d = dd;
				cand = s->demangled;
			}
		}
		if (d > cap)
			continue;
		bool dup = false;
		for (size_t k = 0; k < n; k++)
			dup |= strcmp(out[k], cand) == 0;
		if (dup)
			continue;
		/* insert sorted by distance, keeping at most max */
		size_t at = n;
		while (at > 0 && dist[at - 1] > d)
			at--;
		if (at >= max)
			continue;
		size_t last = n < max ? n : max - 1;
		for (size_t k = last; k > at; k--) {
			out[k] = out[k - 1];
			dist[k] = dist[k - 1];
		}
		out[at] = cand;
		dist[at] = d;
		if (n < max)
			n++;
	}
	return n;
}

int elf_map_bias(const struct elf_file *ef, const struct elf_map *m, uint64_t *bias)
{
	/* The loader maps each PT_LOAD from its page-aligned file offset;
	 * the mapping that starts at that offset gives the bias. */
	const uint64_t page = 4096;
	*bias = 0;
	for (size_t i = 0; i < ef->nsegs; i++) {
		const struct elf_seg *s = &ef->segs[i];
		uint64_t aligned = s->offset & ~(page - 1);
		if (aligned != m->offset)
			continue;
		uint64_t vstart = s->vaddr - (s->offset - aligned);
		*bias = m->start - vstart;
		return 0;
	}
	return -ENOENT;
}
