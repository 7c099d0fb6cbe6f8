/* elf.h - ELF files as the user-space probe providers need them: function
 * symbols and their file offsets, wildcard matching, C++ demangling,
 * library lookup, process mappings (containers included), USDT notes and
 * their argument specs. The only part of sonde that uses libelf/libdw.
 *
 * Every byte of an ELF file is untrusted input: symbol names, note
 * sections and argument strings are length-checked before use, and the
 * pure parsers (usdt_notes_parse, usdt_arg_parse) work on memory buffers
 * so they can be fuzzed without files.
 *
 * Addresses: "vaddr" is always the link-time virtual address found in the
 * file (st_value, note pc). The uprobe PMU wants a FILE OFFSET instead:
 * vaddr - p_vaddr + p_offset of the PT_LOAD segment that contains it. A
 * running process maps the file at some bias; elf_map_bias() recovers it
 * from one /proc/PID/maps line. */
#ifndef SONDE_ELF_H
#define SONDE_ELF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- symbols.c: one opened ELF file and its function symbols ---- */

struct elf_file;

enum elf_sym_flag {
	ELF_SYM_DYNAMIC = 1 << 0, /* from .dynsym (else .symtab) */
	ELF_SYM_WEAK    = 1 << 1, /* STB_WEAK */
	ELF_SYM_LOCAL   = 1 << 2, /* STB_LOCAL (static function) */
	ELF_SYM_IFUNC   = 1 << 3, /* STT_GNU_IFUNC: the address is the resolver */
	ELF_SYM_PLT     = 1 << 4, /* undefined, at its PLT entry (non-PIE) */
};

struct elf_sym {
	const char *name;       /* as in the file (mangled for C++) */
	const char *demangled;  /* C++ demangled name, or NULL */
	uint64_t addr;          /* link-time virtual address (st_value) */
	uint64_t size;          /* st_size, may be 0 */
	uint64_t offset;        /* file offset of addr (uprobe offset) */
	unsigned flags;         /* enum elf_sym_flag */
};

/* Open an ELF executable or shared library and read its defined function
 * symbols (FUNC and IFUNC, global, weak and local, from .symtab and
 * .dynsym, duplicates merged; a stripped file's separate debug file adds
 * its .symtab; undefined functions with a PLT address are included). Returns 0 or -ENOENT/-EACCES (open),
 * -ENOEXEC (not an ELF file), -EINVAL (malformed), -ENOMEM. */
/* --debuginfo DIR[:DIR...] (bpftrace 0.26): more directories where the
 * debug file of a stripped ELF file is looked for, after the standard
 * places: absolute, or relative to the file's own directory; a file
 * there counts when its build ID is the stripped file's (a leading '+'
 * is accepted and ignored). The strings must live as long as the run. */
void elf_debuginfo_dirs(const char *const *dirs, size_t n);

int elf_open(const char *path, struct elf_file **out);
void elf_close(struct elf_file *ef);
/* The same with the file's own symbol tables only (no separate debug
 * file): quicker, for the exported functions of a library. */
int elf_open_own(const char *path, struct elf_file **out);

const char *elf_path(const struct elf_file *ef);
/* ET_DYN (PIE executable or shared library) rather than ET_EXEC. */
bool elf_is_dyn(const struct elf_file *ef);
/* e_machine (EM_X86_64 = 62). */
unsigned elf_machine(const struct elf_file *ef);

/* All function symbols, sorted by name (strcmp order, as bpftrace -l). */
const struct elf_sym *elf_syms(const struct elf_file *ef, size_t *n);

/* Exact lookup by name as in the file, then by full demangled name.
 * NULL if absent. */
const struct elf_sym *elf_find_sym(const struct elf_file *ef, const char *name);
/* The function symbol containing vaddr (for usym()), or NULL. */
const struct elf_sym *elf_sym_at(const struct elf_file *ef, uint64_t vaddr);
/* The bounds [*start, *end) of the function holding vaddr: its symbol's,
 * or in a stripped file from the start of the unwind information's
 * (.eh_frame_hdr) function before it to the next one's. 0, or -ENOENT
 * when neither says (a function's split-off cold part counts as a
 * function of its own). Reads the table into ef once. */
int elf_code_range(struct elf_file *ef, uint64_t vaddr, uint64_t *start,
		   uint64_t *end);
/* Around vaddr: the end of the function symbols that start before it
 * (0 if none) and the start of the first one after it (0 if none), for
 * the bytes a patch at vaddr may take and the padding before it. */
void elf_sym_neighbours(const struct elf_file *ef, uint64_t vaddr,
			uint64_t *prev_end, uint64_t *next_start);
/* The address of any defined symbol (objects too), e.g. for the symbol in
 * a USDT argument `8@foo(%rip)`. Returns 0 or -ENOENT. */
int elf_symbol_addr(const struct elf_file *ef, const char *name, uint64_t *vaddr);
/* The same, with the symbol's size (st_size, may be 0). */
int elf_symbol_info(const struct elf_file *ef, const char *name,
		    uint64_t *vaddr, uint64_t *size);

/* vaddr <-> file offset through the PT_LOAD segments (file-backed part).
 * Return 0 or -ENOENT when no segment contains the value. */
int elf_vaddr_to_offset(const struct elf_file *ef, uint64_t vaddr, uint64_t *off);
int elf_offset_to_vaddr(const struct elf_file *ef, uint64_t off, uint64_t *vaddr);

/* A resolved uprobe location. */
struct elf_loc {
	const struct elf_sym *sym; /* NULL for 0xADDR outside any function */
	uint64_t addr;             /* link-time vaddr */
	uint64_t offset;           /* file offset for the uprobe PMU */
};

/* Resolve "SYMBOL", "SYMBOL+OFF" (decimal or 0x hex) or "0xADDR" (a
 * link-time virtual address). SYMBOL may be a demangled C++ name.
 * Returns 0, -ENOENT (no such symbol; an address outside every segment
 * that holds code), -ERANGE (offset past the symbol's size), -EINVAL
 * (malformed spec). */
int elf_resolve(const struct elf_file *ef, const char *spec, struct elf_loc *out);

/* bpftrace 0.17's rule for uprobe symbol patterns: the pattern matches
 * the name as in the file exactly, or it matches a PREFIX of the demangled
 * name (so "ns::Class::method" and "ns::Class::method(int)" both find
 * _ZN2ns5Class6methodEi, and "*method" finds every method). */
bool elf_sym_match(const struct elf_sym *sym, const char *pattern);
/* Call fn for every symbol matching pattern, in name order; stop early if
 * fn returns non-zero (that value is returned). Returns the number of
 * matches, or what fn returned. */
int elf_match(const struct elf_file *ef, const char *pattern,
	      int (*fn)(void *arg, const struct elf_sym *sym), void *arg);

/* Itanium C++ demangling (demangle.c, also declared in demangle.h).
 * Returns a malloc'd string, or NULL if the name is not a mangled C++
 * name or no demangler is available. */
char *elf_demangle(const char *name);

/* Up to max names closest to `name` (edit distance), best first, for
 * "no such symbol, did you mean ...". Returns how many were stored. */
size_t elf_suggest(const struct elf_file *ef, const char *name,
		   const char **out, size_t max);
/* Levenshtein distance, capped: returns cap+1 when larger. */
unsigned elf_edit_distance(const char *a, const char *b, unsigned cap);

/* ---- libpath.c: where a binary is, and what a process maps ---- */

/* Find a shared library by name as the dynamic loader would: "libc",
 * "c", "libc.so" and "libc.so.6" all find the x86-64 libc through
 * /etc/ld.so.cache, then the default directories. Writes the path into
 * out. Returns 0, -ENOENT, or -ENAMETOOLONG. */
int elf_find_library(const char *name, char *out, size_t len);

/* Turn a probe target (PATH in uprobe:PATH:...) into a file to open:
 *  - a name with '/' is a path (relative to the current directory; with a
 *    pid, an absolute path is looked up under /proc/PID/root);
 *  - else, with a pid, a library that process maps ("libc" finds the
 *    mapped libc.so.6), returned under /proc/PID/root;
 *  - else a library through the loader's search order, or an executable
 *    through $PATH.
 * Returns 0 or -ENOENT/-ESRCH (no such process)/-ENAMETOOLONG. */
int elf_resolve_target(const char *target, int pid, char *out, size_t len);

/* Prefix path with /proc/TID/root (base/proc.h's proc_live_tid) so it names the file in
 * the mount namespace of that process (a container). pid 0: copy
 * unchanged. */
int elf_proc_path(int pid, const char *path, char *out, size_t len);

/* One line of /proc/PID/maps. */
struct elf_map {
	uint64_t start, end;    /* runtime addresses */
	uint64_t offset;        /* file offset mapped at start */
	uint64_t inode;
	unsigned dev_major, dev_minor;
	char perms[5];          /* "r-xp" */
	char *path;             /* "" for anonymous; "[stack]"... */
};

/* Read /proc/PID/maps. Returns 0 (*out malloc'd, free with
 * elf_maps_free) or -ESRCH (no such process), -EACCES, -ENOMEM. */
int elf_proc_maps(int pid, struct elf_map **out, size_t *n);
void elf_maps_free(struct elf_map *maps, size_t n);
/* The distinct file paths a process maps executable (r-x), in map order.
 * *out is a malloc'd array of malloc'd strings; free with
 * elf_strings_free. Returns 0 or -errno. */
int elf_proc_objects(int pid, char ***out, size_t *n);
void elf_strings_free(char **v, size_t n);
/* The load bias of ef given one mapping of it: runtime = vaddr + bias. */
int elf_map_bias(const struct elf_file *ef, const struct elf_map *m, uint64_t *bias);

/* ---- usdt_note.c / usdt.c: .note.stapsdt probes ---- */

/* One raw note as stored in the file, pointing into the parsed buffer. */
struct usdt_note {
	uint64_t pc, base, sema;   /* as written by the assembler */
	const char *provider, *name, *args; /* NUL-terminated, inside buf */
};

/* Parse a .note.stapsdt section image (little-endian, as x86-64 files
 * are; addr_size 8 for ELF64, 4 for ELF32). Notes of other owners/types
 * are skipped. Calls fn per stapsdt note; fn returning non-zero stops.
 * Returns the number of notes, fn's value, or -EINVAL on a malformed
 * section (truncated header, sizes past the end, unterminated strings). */
int usdt_notes_parse(const void *buf, size_t len, unsigned addr_size,
		     int (*fn)(void *arg, const struct usdt_note *note), void *arg);

/* One probe site, ready for the uprobe PMU. */
struct usdt_probe {
	char *provider, *name, *args;
	uint64_t pc;          /* link-time vaddr of the site (.stapsdt.base adjusted) */
	uint64_t pc_offset;   /* its file offset: the uprobe offset */
	uint64_t sema;        /* link-time vaddr of the semaphore, 0 if none */
	uint64_t sema_offset; /* its file offset: perf ref_ctr_offset, 0 if none */
};

/* The .note.stapsdt sections of one file read at most (in all): a few
 * thousand sites take kilobytes, and a hostile 4 GiB section must not
 * be read page by page. */
#define USDT_NOTES_MAX_MIB 64
/* Every USDT site of an opened file, in note order. Returns 0 (*out
 * malloc'd, free with usdt_probes_free; n may be 0), -EFBIG when its
 * notes are larger than USDT_NOTES_MAX_MIB, or -EINVAL/-ENOMEM. */
int usdt_probes(const struct elf_file *ef, struct usdt_probe **out, size_t *n);
void usdt_probes_free(struct usdt_probe *p, size_t n);
/* provider and name patterns with '*' and '?'; NULL provider matches any. */
bool usdt_probe_match(const struct usdt_probe *p, const char *provider_pat,
		      const char *name_pat);

/* ---- usdt_argspec.c: "size@operand" argument specs (x86-64) ---- */

enum usdt_arg_kind {
	USDT_ARG_CONST, /* 4@$42: the value is val */
	USDT_ARG_REG,   /* -4@%edi: the register's value */
	USDT_ARG_MEM,   /* 8@16(%rsp): load size bytes at an address */
};

#define USDT_MAX_ARGS 12
#define USDT_REG_NONE (-1)

struct usdt_arg {
	enum usdt_arg_kind kind;
	int size;          /* 1, 2, 4 or 8 bytes */
	bool is_signed;    /* sign-extend from size bytes, else zero-extend */
	int64_t val;       /* CONST: the value; MEM: the displacement */
	/* REG: the register; MEM: base register (USDT_REG_NONE if none).
	 * Expressed as the byte offset in x86-64 struct pt_regs. */
	int reg;
	int reg_shift;     /* REG: 8 for %ah/%bh/%ch/%dh, else 0 */
	int reg_size;      /* REG/MEM base: width of the register named */
	int index;         /* MEM: index register pt_regs offset, or NONE */
	int scale;         /* MEM: 1, 2, 4 or 8 (1 without index) */
	/* MEM with a symbol in the displacement (`foo(%rip)`, `foo+8(%rip)`,
	 * `arr(,%rax,4)`): the address also adds the symbol's link-time vaddr
	 * (elf_symbol_addr) plus the load bias; rip is true when the base was
	 * %rip, whose value then must NOT be added (the assembler already
	 * folded it into the symbol reference). */
	bool rip;
	char symbol[64];
};

/* Parse one spec at s ("-4@%edi"); *end is set past it (and past
 * following blanks). Returns 0, -EINVAL (malformed) or -ENOTSUP
 * (segment registers, vector registers, unknown registers). */
int usdt_arg_parse(const char *s, struct usdt_arg *out, const char **end);
/* Parse a whole blank-separated argument string. Returns the number of
 * arguments (0..USDT_MAX_ARGS) or a negative errno. */
int usdt_args_parse(const char *s, struct usdt_arg *out, int max);
/* pt_regs offset of a register name without '%' ("eax", "r8d", "sil"),
 * its width in bytes and bit shift; -1 if unknown. */
int usdt_reg_lookup(const char *name, size_t len, int *width, int *shift);
/* Name of the 64-bit register at a pt_regs offset ("rax"), or NULL. */
const char *usdt_reg_name(int pt_regs_off);

/* ---- dwarf_args.c: a function's parameters from DWARF ---- */

struct arena;
struct ctype;

struct elf_param {
	const char *name;
	const struct ctype *type;   /* types.h, allocated in the arena */
	const char *decl;           /* its type as bpftrace -lv shows it */
};

/* The parameters of FUNC in the ELF file PATH, from its DWARF or its
 * separate debug file's; when FUNC is defined more than once, the one
 * at link-time address vaddr (0: the first). 0 with *out and *n in
 * `a`; -ENODATA when there is no DWARF, -ENOENT when it does not
 * describe FUNC. */
int elf_func_params(const char *path, const char *func, uint64_t vaddr,
		    struct arena *a, struct elf_param **out, uint32_t *n);
/* elf_func_params keeps the last file's DWARF open (decompressing it is
 * most of the cost, and a wildcard asks for many functions of one
 * file); this closes it. */
void elf_func_params_release(void);
/* How many files' DWARF elf_func_params has read so far (for -v). */
unsigned elf_func_params_files(void);
/* A resolver of struct, union and enum tags from the DWARF of these
 * files (the probed binaries: a cast in a uprobe names the program's own
 * types, as bpftrace 0.17 looks them up there first); the first file
 * that defines the tag answers. At most 8 files are kept. */
struct ctype_resolver;
const struct ctype_resolver *elf_dwarf_resolver(struct arena *a,
						const char *const *paths,
						size_t n);

/* ---- buildid.c: GNU build IDs ---- */

/* The NT_GNU_BUILD_ID note among the notes in BUF[0..LEN) (an SHT_NOTE
 * section's or PT_NOTE segment's bytes, or a sysfs notes file): its
 * length, copied to OUT, or -ENOENT (none), -EINVAL (a note runs past the
 * buffer before one was found), -ENOSPC (longer than CAP). */
int elf_notes_build_id(const void *buf, size_t len, uint8_t *out, size_t cap);
/* The build ID of the ELF file open at FD (note sections, else PT_NOTE
 * segments): its length or -errno. */
int elf_build_id_fd(int fd, uint8_t *out, size_t cap);
/* The running kernel's (MODULE NULL) or a loaded module's build ID. */
int kernel_build_id(const char *module, uint8_t *out, size_t cap);

#endif
