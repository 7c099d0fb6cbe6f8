/* dwarf_args.c - a function's parameters and their C types from DWARF
 * (libdw), for uprobe `args` and `-lv`: in the file itself or in its
 * separate debug file (build-id, .gnu_debuglink: debugfile.c).
 *
 * The function is found by name among the DW_TAG_subprogram DIEs of
 * every compilation unit (the one at the probed address when a name is
 * defined more than once). Its DW_TAG_formal_parameter children give the
 * names and types; each type DIE becomes a struct ctype (types.h): base
 * types, pointers, arrays (each subrange a dimension), structs and
 * unions with their members' offsets and bitfields as DWARF records
 * them, enums, function types; typedefs and qualifiers name the type
 * they stand for. Conversion is memoised by DIE offset, so recursive
 * structs end; the number of types made and the nesting are bounded
 * (DWARF is untrusted input): past them a pointer points at void.
 *
 * Before libdw sees a file, its DWARF is bounded as a whole (dwarf_bound):
 * the debug sections' sizes as they would be once decompressed, and the
 * unit headers of .debug_info walked and checked (a 4 GiB sparse section
 * of zeros once kept -lv and args busy for ever, growing 17 MB/s); the
 * index of every function stops after a time. A file past a limit is
 * named, with the limit, and its DWARF is not used. */
#include "elf.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../base/arena.h"
#include "../base/file.h"
#include "../base/log.h"
#include "../base/vec.h"
#include "../types.h"

#define DW_MAX_TYPES 20000   /* types made for one function's parameters */
#define DW_MAX_DEPTH 64      /* nested type DIEs followed at once */
#define DW_MAX_MEMBERS 4096  /* members of one struct */
/* One file's DWARF as a whole: its debug sections' bytes (decompressed:
 * libdw decompresses them all when it opens a file), its compilation
 * units, and the time spent indexing its functions. */
#define DW_MAX_BYTES (1ull << 30)
#define DW_MAX_UNITS (1u << 19)
#define DW_MAX_INDEX_SECONDS 10

int elf__debug_open(Elf *e, const char *path, int *fd, Elf **out);

struct memo {
	Dwarf_Off off;
	const struct ctype *t;
};

struct conv {
	struct arena *a;
	struct memo *memo;
	size_t nmemo, cap;
	size_t made;
};

static const struct ctype *conv_type(struct conv *cv, Dwarf_Die *die,
				     int depth);

static const struct ctype *memo_get(struct conv *cv, Dwarf_Off off)
{
	for (size_t i = 0; i < cv->nmemo; i++)
		if (cv->memo[i].off == off)
			return cv->memo[i].t;
	return NULL;
}

static void memo_put(struct conv *cv, Dwarf_Off off, const struct ctype *t)
{
	if (vec_reserve_arr(cv->memo, cv->cap, cv->nmemo + 1))
		return;
	cv->memo[cv->nmemo++] = (struct memo){ off, t };
}

static uint64_t udata(Dwarf_Die *die, unsigned name, uint64_t dflt)
{
	Dwarf_Attribute at;
	Dwarf_Word w;
	if (!dwarf_attr_integrate(die, name, &at) || dwarf_formudata(&at, &w))
		return dflt;
	return w;
}

/* The DIE a DW_AT_type names; false for void. */
static bool type_of(Dwarf_Die *die, Dwarf_Die *out)
{
	Dwarf_Attribute at;
	return dwarf_attr_integrate(die, DW_AT_type, &at) &&
	       dwarf_formref_die(&at, out);
}

static const struct ctype *sub_type(struct conv *cv, Dwarf_Die *die,
				    int depth)
{
	Dwarf_Die t;
	if (!type_of(die, &t))
		return ctype_void();
	return conv_type(cv, &t, depth + 1);
}

static const struct ctype *conv_struct(struct conv *cv, Dwarf_Die *die,
				       int tag, int depth)
{
	struct ctype *s = ctype_new(cv->a, tag == DW_TAG_union_type ?
				    CT_UNION : CT_STRUCT, dwarf_diename(die));
	memo_put(cv, dwarf_dieoffset(die), s);
	if (dwarf_hasattr(die, DW_AT_declaration))
		return s;           /* incomplete here */
	s->size = (uint32_t)udata(die, DW_AT_byte_size, 0);
	uint32_t align = 1;
	Dwarf_Die m;
	int n = 0;
	if (dwarf_child(die, &m) == 0) {
		do {
			if (dwarf_tag(&m) != DW_TAG_member)
				continue;
			if (++n > DW_MAX_MEMBERS)
				break;
			const struct ctype *mt = sub_type(cv, &m, depth);
			uint64_t off = udata(&m, DW_AT_data_member_location, 0);
			uint64_t bits = off * 8, bsize = 0;
			if (dwarf_hasattr(&m, DW_AT_bit_size)) {
				bsize = udata(&m, DW_AT_bit_size, 0);
				if (dwarf_hasattr(&m, DW_AT_data_bit_offset)) {
					bits = udata(&m, DW_AT_data_bit_offset, 0);
				} else {
					/* DWARF 2/3: from the storage unit's
					 * most significant bit */
					uint64_t unit = udata(&m, DW_AT_byte_size,
							      mt->size);
					uint64_t bo = udata(&m, DW_AT_bit_offset,
							    0);
					bits = off * 8 + unit * 8 - bo - bsize;
				}
			}
			if (bits > UINT32_MAX || bsize > 255)
				continue;
			ctype_add_field(cv->a, s, dwarf_diename(&m), mt,
					(uint32_t)bits, (uint8_t)bsize);
			if (mt->align > align)
				align = mt->align;
		} while (dwarf_siblingof(&m, &m) == 0);
	}
	s->align = (uint32_t)udata(die, DW_AT_alignment, align);
	s->complete = true;
	return s;
}

static const struct ctype *conv_array(struct conv *cv, Dwarf_Die *die,
				      int depth)
{
	const struct ctype *elem = sub_type(cv, die, depth);
	uint32_t dims[16];
	int nd = 0;
	Dwarf_Die c;
	if (dwarf_child(die, &c) == 0) {
		do {
			if (dwarf_tag(&c) != DW_TAG_subrange_type || nd >= 16)
				continue;
			uint64_t n = 0;
			if (dwarf_hasattr(&c, DW_AT_count))
				n = udata(&c, DW_AT_count, 0);
			else if (dwarf_hasattr(&c, DW_AT_upper_bound))
				n = udata(&c, DW_AT_upper_bound, 0) + 1;
			dims[nd++] = n > UINT32_MAX / 2 ? 0 : (uint32_t)n;
		} while (dwarf_siblingof(&c, &c) == 0);
	}
	if (!nd)
		dims[nd++] = 0;
	const struct ctype *t = elem;
	while (nd-- > 0)
		t = ctype_array(cv->a, t, dims[nd]);
	return t;
}

static const struct ctype *conv_enum(struct conv *cv, Dwarf_Die *die)
{
	struct ctype *e = ctype_new(cv->a, CT_ENUM, dwarf_diename(die));
	e->size = e->align = (uint32_t)udata(die, DW_AT_byte_size, 4);
	Dwarf_Die c;
	if (dwarf_child(die, &c) == 0) {
		do {
			Dwarf_Attribute at;
			Dwarf_Sword v;
			if (dwarf_tag(&c) != DW_TAG_enumerator ||
			    !dwarf_attr(&c, DW_AT_const_value, &at) ||
			    dwarf_formsdata(&at, &v))
				continue;
			if (v < 0)
				e->is_signed = true;
			if (e->nvalues < DW_MAX_MEMBERS)
				ctype_add_value(cv->a, e, dwarf_diename(&c), v);
		} while (dwarf_siblingof(&c, &c) == 0);
	}
	e->complete = true;
	return e;
}

static const struct ctype *conv_base(struct conv *cv, Dwarf_Die *die)
{
	uint32_t size = (uint32_t)udata(die, DW_AT_byte_size, 0);
	uint64_t enc = udata(die, DW_AT_encoding, DW_ATE_signed);
	const char *name = dwarf_diename(die);
	if (enc == DW_ATE_float || enc == DW_ATE_complex_float) {
		struct ctype *f = ctype_new(cv->a, CT_FLOAT, name);
		f->size = size;
		f->align = size > 16 ? 16 : size ? size : 1;
		f->complete = true;
		return f;
	}
	bool is_signed = enc == DW_ATE_signed || enc == DW_ATE_signed_char;
	struct ctype *t = (struct ctype *)ctype_int(cv->a, size, is_signed,
						    name);
	t->is_char = size == 1 && (enc == DW_ATE_signed_char ||
				   enc == DW_ATE_unsigned_char);
	t->is_bool = enc == DW_ATE_boolean;
	return t;
}

static const struct ctype *conv_type(struct conv *cv, Dwarf_Die *die,
				     int depth)
{
	Dwarf_Off off = dwarf_dieoffset(die);
	const struct ctype *t = memo_get(cv, off);
	if (t)
		return t;
	if (depth > DW_MAX_DEPTH || ++cv->made > DW_MAX_TYPES)
		return ctype_void();
	int tag = dwarf_tag(die);
	switch (tag) {
	case DW_TAG_base_type:
		t = conv_base(cv, die);
		break;
	case DW_TAG_pointer_type:
	case DW_TAG_reference_type:
	case DW_TAG_rvalue_reference_type: {
		struct ctype *p = (struct ctype *)ctype_ptr(cv->a, NULL);
		memo_put(cv, off, p);   /* before the pointee: cycles end */
		p->elem = sub_type(cv, die, depth);
		return p;
	}
	case DW_TAG_typedef:
	case DW_TAG_const_type:
	case DW_TAG_volatile_type:
	case DW_TAG_restrict_type:
	case DW_TAG_atomic_type:
		t = sub_type(cv, die, depth);
		break;
	case DW_TAG_structure_type:
	case DW_TAG_class_type:
	case DW_TAG_union_type:
		return conv_struct(cv, die, tag, depth);
	case DW_TAG_array_type:
		t = conv_array(cv, die, depth);
		break;
	case DW_TAG_enumeration_type:
		t = conv_enum(cv, die);
		break;
	case DW_TAG_subroutine_type: {
		struct ctype *f = ctype_new(cv->a, CT_FUNC, NULL);
		f->size = f->align = 1;
		t = f;
		break;
	}
	default:
		t = ctype_void();
	}
	memo_put(cv, off, t);
	return t;
}

/* The type as bpftrace 0.17 lists it: "const char*", "req_t*",
 * "long unsigned int", "struct inner", "int[4]". */
static void type_text(Dwarf_Die *die, char *buf, size_t len, int depth)
{
	Dwarf_Die t;
	const char *name = dwarf_diename(die);
	size_t n = strlen(buf);
	if (depth > 16 || n + 1 >= len)
		return;
	switch (dwarf_tag(die)) {
	case DW_TAG_pointer_type:
	case DW_TAG_reference_type:
		if (type_of(die, &t))
			type_text(&t, buf, len, depth + 1);
		else
			snprintf(buf + n, len - n, "void");
		n = strlen(buf);
		snprintf(buf + n, len - n, "*");
		return;
	case DW_TAG_const_type:
	case DW_TAG_volatile_type:
		snprintf(buf + n, len - n, "%s ", dwarf_tag(die) ==
			 DW_TAG_const_type ? "const" : "volatile");
		if (type_of(die, &t))
			type_text(&t, buf, len, depth + 1);
		else
			snprintf(buf + strlen(buf), len - strlen(buf), "void");
		return;
	case DW_TAG_restrict_type:
		if (type_of(die, &t))
			type_text(&t, buf, len, depth + 1);
		return;
	case DW_TAG_structure_type:
	case DW_TAG_class_type:
		snprintf(buf + n, len - n, "struct %s", name ? name : "");
		return;
	case DW_TAG_union_type:
		snprintf(buf + n, len - n, "union %s", name ? name : "");
		return;
	case DW_TAG_enumeration_type:
		snprintf(buf + n, len - n, "enum %s", name ? name : "");
		return;
	case DW_TAG_array_type: {
		if (type_of(die, &t))
			type_text(&t, buf, len, depth + 1);
		Dwarf_Die c;
		if (dwarf_child(die, &c) == 0) {
			do {
				if (dwarf_tag(&c) != DW_TAG_subrange_type)
					continue;
				n = strlen(buf);
				if (dwarf_hasattr(&c, DW_AT_upper_bound))
					snprintf(buf + n, len - n, "[%llu]",
						 (unsigned long long)
						 udata(&c, DW_AT_upper_bound, 0) + 1);
				else
					snprintf(buf + n, len - n, "[]");
			} while (dwarf_siblingof(&c, &c) == 0);
		}
		return;
	}
	case DW_TAG_subroutine_type:
		snprintf(buf + n, len - n, "function");
		return;
	default:
		snprintf(buf + n, len - n, "%s", name ? name : "void");
	}
}

struct find {
	const char *func;
	uint64_t vaddr;
	Dwarf_Die best;
	bool found, exact;
};

static int each_func(Dwarf_Die *f, void *arg)
{
	struct find *fd = arg;
	/* C names itself; C++ is probed by its mangled (linkage) name */
	const char *name = dwarf_diename(f);
	Dwarf_Attribute at;
	const char *link = dwarf_formstring(dwarf_attr_integrate(
		f, DW_AT_linkage_name, &at));
	if (!link)
		link = dwarf_formstring(dwarf_attr_integrate(
			f, DW_AT_MIPS_linkage_name, &at));
	if (dwarf_hasattr(f, DW_AT_declaration) ||
	    !((name && !strcmp(name, fd->func)) ||
	      (link && !strcmp(link, fd->func))))
		return DWARF_CB_OK;
	Dwarf_Addr lo;
	bool exact = fd->vaddr && dwarf_lowpc(f, &lo) == 0 && lo == fd->vaddr;
	if (!fd->found || (exact && !fd->exact)) {
		fd->best = *f;
		fd->found = true;
		fd->exact = exact;
	}
	return exact ? DWARF_CB_ABORT : DWARF_CB_OK;
}

/* The size a debug section will have once libdw has decompressed it
 * (SHF_COMPRESSED, or a GNU .zdebug_ section's "ZLIB" header). */
static uint64_t section_size(Elf_Scn *scn, const GElf_Shdr *sh,
			     const char *name)
{
	if (sh->sh_flags & SHF_COMPRESSED) {
		GElf_Chdr ch;
		return gelf_getchdr(scn, &ch) ? ch.ch_size : UINT64_MAX;
	}
	if (strncmp(name, ".zdebug_", 8) == 0) {
		Elf_Data *d = elf_rawdata(scn, NULL);
		if (!d || !d->d_buf || d->d_size < 12 ||
		    memcmp(d->d_buf, "ZLIB", 4) != 0)
			return sh->sh_size;
		const unsigned char *b = (const unsigned char *)d->d_buf + 4;
		uint64_t v = 0;
		for (int i = 0; i < 8; i++)
			v = v << 8 | b[i];
		return v;
	}
	return sh->sh_size;
}

/* Walk the unit headers of an uncompressed .debug_info: each unit's
 * length must hold at least its version (2..5) and stay inside the
 * section, and there are at most DW_MAX_UNITS. 0, -EINVAL or -E2BIG. */
static int check_units(const unsigned char *b, uint64_t len, bool le)
{
	uint64_t off = 0;
	unsigned n = 0;
	while (off < len) {
		if (++n > DW_MAX_UNITS)
			return -E2BIG;
		if (len - off < 4)
			return -EINVAL;
		const unsigned char *p = b + off;
		uint64_t ulen = 0;
		for (int i = 0; i < 4; i++)
			ulen = ulen << 8 | p[le ? 3 - i : i];
		unsigned hdr = 4;
		if (ulen == 0xffffffff) {      /* 64-bit DWARF */
			if (len - off < 12)
				return -EINVAL;
			ulen = 0;
			for (int i = 0; i < 8; i++)   /* most significant first */
				ulen = ulen << 8 | p[4 + (le ? 7 - i : i)];
			hdr = 12;
		} else if (ulen >= 0xfffffff0) {   /* reserved */
			return -EINVAL;
		}
		if (ulen < 2 || ulen > len - off - hdr)
			return -EINVAL;
		const unsigned char *v = p + hdr;
		unsigned version = le ? v[0] | v[1] << 8 : v[1] | v[0] << 8;
		if (version < 2 || version > 5)
			return -EINVAL;
		off += hdr + ulen;
	}
	return 0;
}

/* Whether libdw may open E (the file PATH, or its debug file): 0, or
 * -EFBIG / -E2BIG / -EINVAL with a warning naming the file and the limit. */
static int dwarf_bound(Elf *e, const char *path)
{
	size_t shstrndx;
	GElf_Ehdr eh;
	if (elf_getshdrstrndx(e, &shstrndx) != 0 || !gelf_getehdr(e, &eh))
		return 0;      /* libdw will find nothing either */
	uint64_t total = 0;
	Elf_Scn *scn = NULL, *info = NULL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		const char *name = elf_strptr(e, shstrndx, sh.sh_name);
		if (!name || (strncmp(name, ".debug_", 7) != 0 &&
			      strncmp(name, ".zdebug_", 8) != 0))
			continue;
		uint64_t size = section_size(scn, &sh, name);
		if (size > DW_MAX_BYTES - total) {
			log_warn("'%s': its DWARF is larger than sonde reads "
				 "(%s alone is %llu MiB; at most %llu MiB in "
				 "all): it is not used", path, name,
				 (unsigned long long)(size >> 20),
				 DW_MAX_BYTES >> 20);
			return -EFBIG;
		}
		total += size;
		if (strcmp(name, ".debug_info") == 0 &&
		    !(sh.sh_flags & SHF_COMPRESSED))
			info = scn;
	}
	Elf_Data *d = info ? elf_rawdata(info, NULL) : NULL;
	if (!d || !d->d_buf)
		return 0;
	int r = check_units(d->d_buf, d->d_size,
			    eh.e_ident[EI_DATA] != ELFDATA2MSB);
	if (r == -E2BIG)
		log_warn("'%s': .debug_info has more than %u compilation "
			 "units, more than sonde reads: its DWARF is not used",
			 path, DW_MAX_UNITS);
	else if (r < 0)
		log_warn("'%s': .debug_info is malformed (a unit header that "
			 "does not fit): its DWARF is not used", path);
	return r;
}

/* The file's own DWARF, or its separate debug file's, if within bounds. */
static Dwarf *open_dwarf(const char *path, int *fds, Elf **elfs)
{
	fds[0] = fds[1] = -1;
	elfs[0] = elfs[1] = NULL;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return NULL;
	fds[0] = file_open_regular(path, false);
	if (fds[0] < 0)
		return NULL;
	elfs[0] = elf_begin(fds[0], ELF_C_READ_MMAP, NULL);
	if (!elfs[0] || dwarf_bound(elfs[0], path) < 0)
		return NULL;
	Dwarf *dw = dwarf_begin_elf(elfs[0], DWARF_C_READ, NULL);
	Dwarf_Off off;
	size_t hsize;
	if (dw && dwarf_nextcu(dw, 0, &off, &hsize, NULL, NULL, NULL) == 0)
		return dw;
	if (dw)
		dwarf_end(dw);
	if (elf__debug_open(elfs[0], path, &fds[1], &elfs[1]) < 0 ||
	    dwarf_bound(elfs[1], path) < 0)
		return NULL;
	return dwarf_begin_elf(elfs[1], DWARF_C_READ, NULL);
}

static void close_dwarf(Dwarf *dw, int *fds, Elf **elfs)
{
	if (dw)
		dwarf_end(dw);
	for (int i = 1; i >= 0; i--) {
		if (elfs[i])
			elf_end(elfs[i]);
		if (fds[i] >= 0)
			close(fds[i]);
	}
}

/* A function DIE by name, for lookups that the unit at the probed
 * address does not answer (aliases, IFUNCs, -lv of a whole library). */
struct func_ent {
	const char *name;       /* DW_AT_name or linkage name (libdw's) */
	Dwarf_Off die;
};

/* The last file asked about, open (or known to have no DWARF), with its
 * index of every function, built on the first lookup that needs it. */
static struct {
	char *path;
	Dwarf *dw;
	int fds[2];
	Elf *elfs[2];
	struct func_ent *funcs;
	size_t nfuncs, cap;
	bool indexed;
} cache = { .fds = { -1, -1 } };

static unsigned files_read;

unsigned elf_func_params_files(void)
{
	return files_read;
}

void elf_func_params_release(void)
{
	close_dwarf(cache.dw, cache.fds, cache.elfs);
	free(cache.path);
	free(cache.funcs);
	memset(&cache, 0, sizeof(cache));
	cache.fds[0] = cache.fds[1] = -1;
}

#define DW_MAX_FUNCS (1u << 22)  /* function names indexed in one file */

static void index_add(const char *name, Dwarf_Off die)
{
	if (!name || cache.nfuncs >= DW_MAX_FUNCS)
		return;
	if (vec_reserve_arr(cache.funcs, cache.cap, cache.nfuncs + 1))
		return;
	cache.funcs[cache.nfuncs++] = (struct func_ent){ name, die };
}

static int index_func(Dwarf_Die *f, void *arg)
{
	(void)arg;
	if (dwarf_hasattr(f, DW_AT_declaration))
		return DWARF_CB_OK;
	Dwarf_Attribute at;
	const char *name = dwarf_diename(f);
	const char *link = dwarf_formstring(dwarf_attr_integrate(
		f, DW_AT_linkage_name, &at));
	index_add(name, dwarf_dieoffset(f));
	if (link && (!name || strcmp(link, name) != 0))
		index_add(link, dwarf_dieoffset(f));
	return DWARF_CB_OK;
}

static int ent_cmp(const void *a, const void *b)
{
	const struct func_ent *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	return c ? c : (x->die > y->die) - (x->die < y->die);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void index_build(Dwarf *dw)
{
	cache.indexed = true;
	Dwarf_Off off = 0, next;
	size_t hsize;
	double t0 = now_s();
	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;
		if (dwarf_offdie(dw, off + hsize, &cu))
			dwarf_getfuncs(&cu, index_func, NULL, 0);
		off = next;
		if (now_s() - t0 > DW_MAX_INDEX_SECONDS) {
			log_warn("'%s': indexing the functions of its DWARF "
				 "took more than %d s: the rest is not read",
				 cache.path, DW_MAX_INDEX_SECONDS);
			break;
		}
	}
	if (cache.nfuncs)
		qsort(cache.funcs, cache.nfuncs, sizeof(*cache.funcs), ent_cmp);
}

static Dwarf *cached_dwarf(const char *path)
{
	if (cache.path && strcmp(cache.path, path) == 0)
		return cache.dw;
	elf_func_params_release();
	cache.path = strdup(path);
	if (!cache.path)
		return NULL;
	cache.dw = open_dwarf(path, cache.fds, cache.elfs);
	if (cache.dw)
		files_read++;
	return cache.dw;
}

/* FUNC's DIE: first in the compilation unit that covers vaddr (only that
 * unit is read), else among every unit's functions. */
static bool find_func(Dwarf *dw, const char *func, uint64_t vaddr,
		      Dwarf_Die *out)
{
	struct find fd = { .func = func, .vaddr = vaddr };
	Dwarf_Die cu;
	if (vaddr && dwarf_addrdie(dw, vaddr, &cu))
		dwarf_getfuncs(&cu, each_func, &fd, 0);
	if (fd.exact) {
		*out = fd.best;
		return true;
	}
	if (!cache.indexed)
		index_build(dw);
	/* the first entry of this name, then each of them */
	size_t lo = 0, hi = cache.nfuncs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(cache.funcs[mid].name, func) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < cache.nfuncs && !fd.exact &&
	       strcmp(cache.funcs[lo].name, func) == 0; lo++) {
		Dwarf_Die f;
		if (dwarf_offdie(dw, cache.funcs[lo].die, &f))
			each_func(&f, &fd);
	}
	*out = fd.best;
	return fd.found;
}

int elf_func_params(const char *path, const char *func, uint64_t vaddr,
		    struct arena *a, struct elf_param **out, uint32_t *nout)
{
	*out = NULL;
	*nout = 0;
	Dwarf *dw = cached_dwarf(path);
	if (!dw)
		return -ENODATA;
	Dwarf_Die best;
	if (!find_func(dw, func, vaddr, &best))
		return -ENOENT;
	struct conv cv = { .a = a };
	uint32_t n = 0, cap = 0;
	struct elf_param *p = NULL;
	Dwarf_Die c;
	if (dwarf_child(&best, &c) == 0) {
		do {
			if (dwarf_tag(&c) != DW_TAG_formal_parameter)
				continue;
			if (n == cap) {
				cap = cap ? cap * 2 : 8;
				struct elf_param *np = arena_array(a,
						struct elf_param, cap);
				if (n)
					memcpy(np, p, n * sizeof(*p));
				p = np;
			}
			char text[256] = "";
			Dwarf_Die t;
			if (type_of(&c, &t))
				type_text(&t, text, sizeof(text), 0);
			else
				snprintf(text, sizeof(text), "void");
			const char *name = dwarf_diename(&c);
			p[n++] = (struct elf_param){
				.name = arena_strdup(a, name ? name : ""),
				.type = sub_type(&cv, &c, 0),
				.decl = arena_strdup(a, text),
			};
		} while (dwarf_siblingof(&c, &c) == 0 && n < 64);
	}
	free(cv.memo);
	*out = p;
	*nout = n;
	return 0;
}

/* ---- named types, for casts in user-space probes ------------------------ */

#define DW_MAX_SCANNED (1u << 22)  /* top-level DIEs looked at per lookup */

/* The complete struct, union or enum TAG of one of the file's units, or
 * NULL: only the units' top-level DIEs are looked at (C's scope), at most
 * DW_MAX_SCANNED of them. */
static const struct ctype *find_tag_in(Dwarf *dw, int tag, const char *name,
				       struct arena *a)
{
	Dwarf_Off off = 0, next;
	size_t hsize;
	unsigned scanned = 0;
	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu, c;
		if (dwarf_offdie(dw, off + hsize, &cu) &&
		    dwarf_child(&cu, &c) == 0) {
			do {
				if (++scanned > DW_MAX_SCANNED)
					return NULL;
				int t = dwarf_tag(&c);
				if (t != tag && !(tag == DW_TAG_structure_type &&
						  t == DW_TAG_class_type))
					continue;
				const char *n = dwarf_diename(&c);
				if (!n || strcmp(n, name) != 0 ||
				    dwarf_hasattr(&c, DW_AT_declaration))
					continue;
				struct conv cv = { .a = a };
				const struct ctype *r = conv_type(&cv, &c, 0);
				free(cv.memo);
				return r;
			} while (dwarf_siblingof(&c, &c) == 0);
		}
		off = next;
	}
	return NULL;
}

#define DW_RESOLVER_FILES 8

struct dwarf_resolver {
	struct ctype_resolver res;
	struct arena *a;
	const char *paths[DW_RESOLVER_FILES];
	size_t n;
};

static const struct ctype *dw_find_tag(void *ctx, struct ctypes *reg,
				       enum ctype_kind kind, const char *name)
{
	struct dwarf_resolver *r = ctx;
	int tag = kind == CT_UNION ? DW_TAG_union_type :
		kind == CT_ENUM ? DW_TAG_enumeration_type :
		DW_TAG_structure_type;
	for (size_t i = 0; i < r->n; i++) {
		Dwarf *dw = cached_dwarf(r->paths[i]);
		const struct ctype *t = dw ? find_tag_in(dw, tag, name, r->a) :
			NULL;
		if (t)
			return t;
	}
	return NULL;
}

const struct ctype_resolver *elf_dwarf_resolver(struct arena *a,
						const char *const *paths,
						size_t n)
{
	struct dwarf_resolver *r = arena_new(a, struct dwarf_resolver);
	r->a = a;
	for (size_t i = 0; i < n && r->n < DW_RESOLVER_FILES; i++)
		r->paths[r->n++] = arena_strdup(a, paths[i]);
	r->res = (struct ctype_resolver){
		.ctx = r,
		.what = "the probed files' DWARF",
		.find_tag = dw_find_tag,
	};
	return &r->res;
}
