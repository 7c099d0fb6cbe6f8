/* symbolize.h - addresses to names: kernel (kallsyms), user (ELF symbol
 * tables, debug files, perf maps) and DWARF-CFI unwinding of copied user
 * stacks. */
#ifndef SONDE_ELF_SYMBOLIZE_H
#define SONDE_ELF_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* One resolved address. The strings belong to the table that produced
 * them and stay valid until that table is freed. */
struct sym {
	const char *name;       /* demangled when it was a C++ name */
	uint64_t start;         /* address of the symbol (run-time) */
	uint64_t offset;        /* addr - start */
	const char *module;     /* kernel: NULL or "[module]"; user: file path */
};

/* ---- kernel: /proc/kallsyms ---------------------------------------- */

struct ksyms;

/* PATH is a kallsyms-format file; NULL means /proc/kallsyms. Nothing is
 * read until the first lookup. */
struct ksyms *ksyms_new(const char *path);
void ksyms_free(struct ksyms *k);
/* The text symbol containing ADDR (the nearest one at or below it, as bcc
 * and so bpftrace resolve kernel addresses). 0, or -ENOENT when ADDR is
 * below every symbol or the table is empty (addresses hidden by
 * kptr_restrict read as 0), or -errno when the file cannot be read. */
int ksyms_lookup(struct ksyms *k, uint64_t addr, struct sym *out);
/* kaddr(NAME): the first symbol of that name in file order, of any type. */
int ksyms_addr(struct ksyms *k, const char *name, uint64_t *addr);
/* Number of symbols loaded (loads the table). */
size_t ksyms_count(struct ksyms *k);

/* ---- user: processes, their mappings and their files --------------- */

/*
 * A usyms table remembers processes. usym_process_remember(pid) takes a
 * snapshot of /proc/PID/maps and keeps every mapped executable file open
 * (deduplicated by device and inode across processes), so a process that
 * exits, or a file that is deleted or lives in another mount namespace,
 * is still symbolized afterwards. Lookups for a pid that was never
 * remembered remember it on the spot (which works while it runs).
 */
struct usyms;

struct usyms *usyms_new(void);
void usyms_free(struct usyms *u);
/* bpftrace's BPFTRACE_NO_CPP_DEMANGLE (demangle false: C++ names stay
 * mangled) and BPFTRACE_NO_USER_SYMBOLS (symbols false: no lookup finds
 * a symbol, so user addresses print as numbers). */
void usyms_set_options(struct usyms *u, bool demangle, bool symbols);
/* Snapshot PID's mappings (again, if they changed: a new snapshot is
 * taken when PID was remembered before but its maps text differs, e.g.
 * after dlopen or exec). 0 or -errno (-ESRCH when PID is gone). */
int usym_process_remember(struct usyms *u, pid_t pid);
/* Like usym_process_remember, from a maps text instead of /proc (a
 * capture file, a test). Files are opened by the paths in the text. */
int usym_process_remember_maps(struct usyms *u, pid_t pid,
			       const char *maps_text, size_t len);
/* Drop what is kept for PID (its files are closed unless other
 * remembered processes map them). */
void usym_process_forget(struct usyms *u, pid_t pid);
/* Keep PID's snapshot and files but drop what was read from them (its
 * Dwfl: symbol tables, CFI): an exited process is sampled no more, and
 * its stacks still print (the Dwfl is rebuilt if they are). */
void usym_process_unload(struct usyms *u, pid_t pid);
/* Name ADDRS[0..N) in PID once, as usyms_lookup, usyms_module and
 * usyms_mapping answer now, and keep only that: the names go to the
 * tables of the files they lie in (shared with every process mapping
 * the file), PID keeps the mappings they lie in, and its snapshot,
 * files, Dwfl and JIT names are let go. For a process that has exited
 * whose stacks are still printed: they cost a few bytes a mapping, not
 * the process, and their names cost their files. Lookups of other
 * addresses in PID find nothing afterwards (unless another process had
 * the same file offset named); freezing it again keeps only the
 * addresses given (those still referred to).
 * 1, 0 (frozen already with these addresses), -ESRCH (PID not
 * remembered) or -ENOMEM (nothing changed). */
int usym_process_freeze(struct usyms *u, pid_t pid, const uint64_t *addrs,
			size_t n);
/* Processes frozen, and names interned (for tests and -v). */
size_t usyms_nfrozen(const struct usyms *u);
size_t usyms_nnames(const struct usyms *u);
/* What a usyms table holds, for -v: processes remembered (frozen of
 * them, with a built Dwfl), files open, the files' name tables and the
 * answers they hold, interned names, and the bytes all that takes in
 * sonde's own structures (what libdw has read into the Dwfls is not
 * counted: at most USYM_DWFL_MAX of them). */
struct usyms_stats {
	size_t procs, frozen, dwfls, files, tables, answers, names, bytes;
};
void usyms_stats(const struct usyms *u, struct usyms_stats *st);
/* Free the interned names no remembered process holds (symbol names of
 * processes forgotten, paths of files no longer mapped), once the table
 * has doubled since the last trim. Every name handed out before is
 * invalid afterwards: call it only where none is held (between event
 * batches). Returns how many were freed. */
size_t usyms_trim(struct usyms *u);
/* Processes remembered, and of them those with a built Dwfl (at most
 * USYM_DWFL_MAX): for tests and -v. */
size_t usyms_nprocs(const struct usyms *u);
unsigned usyms_ndwfl(const struct usyms *u);
/* Resolve ADDR in PID: ELF .symtab/.dynsym, debug files found by
 * build-id (/usr/lib/debug/.build-id/xx/yyyy.debug) or .gnu_debuglink,
 * the vDSO, and JIT symbols from /tmp/perf-PID.map. 0 or -ENOENT (no
 * symbol; out->module is still set when ADDR lies in a mapped file),
 * -ESRCH when PID is unknown and gone. */
int usyms_lookup(struct usyms *u, pid_t pid, uint64_t addr, struct sym *out);
/* VADDR, a link-time address in the ELF file PATH, named as
 * usyms_lookup names it in a process (out->start is link-time too): for
 * a probe's own address once its process has exited unread. */
int usyms_lookup_file(struct usyms *u, const char *path, uint64_t vaddr,
		      struct sym *out);
/* PATH of the file mapped at ADDR in PID, or NULL. */
const char *usyms_module(struct usyms *u, pid_t pid, uint64_t addr);

/* The executable mapping of PID that holds ADDR, as a profile names it:
 * its range, the file offset it starts at, the file and its GNU build ID
 * (build_id_len 0 when it has none). Strings stay valid as for sym. */
struct umapping {
	uint64_t start, end, pgoff;
	const char *path;
	const uint8_t *build_id;
	size_t build_id_len;
};
/* 0, or -ENOENT when ADDR is in no mapped file, -ESRCH (PID unknown and
 * gone). */
int usyms_mapping(struct usyms *u, pid_t pid, uint64_t addr,
		  struct umapping *out);

/* ---- user: unwinding a copied stack -------------------------------- */

/* x86-64 user registers as a probe copies them from pt_regs. */
struct unwind_regs {
	uint64_t ip, sp, bp;
	uint64_t ax, bx, cx, dx, si, di;
	uint64_t r8, r9, r10, r11, r12, r13, r14, r15;
};

/* What the probe copied: the registers and LEN bytes of the user stack
 * starting at regs.sp. */
struct unwind_sample {
	pid_t pid, tid;
	struct unwind_regs regs;
	const void *stack;
	size_t stack_len;
};

/* Unwind SAMPLE with the CFI (.eh_frame, .debug_frame) of the files PID
 * maps, falling back to frame pointers where a function has no CFI.
 * Writes up to MAX return addresses to IPS, innermost first, IPS[0]
 * being regs.ip; callers' entries are return addresses as the kernel's
 * stack maps report them (symbolize them as they are). Returns the
 * number of frames (>= 1 when regs.ip is non-zero) or -errno. The walk
 * stops where the copied stack ends, CFI says the outermost frame was
 * reached, or an address is not in any mapping. */
int unwind_user(struct usyms *u, const struct unwind_sample *sample,
		uint64_t *ips, size_t max);

#endif
