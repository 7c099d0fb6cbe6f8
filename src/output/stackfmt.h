/* stackfmt.h - kstack/ustack/ksym/usym text exactly as bpftrace 0.17 prints it. */
#ifndef SONDE_OUTPUT_STACKFMT_H
#define SONDE_OUTPUT_STACKFMT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "../elf/symbolize.h"

/* Same numbering as type.stack_mode in types.h. */
enum stack_mode {
	STACK_MODE_BPFTRACE = 0,        /* "    name+off" */
	STACK_MODE_PERF = 1,            /* "\t7f12ab name+off (module)" */
	STACK_MODE_RAW = 2,             /* "7f12ab" (bpftrace 0.18's raw; 0.17 has none) */
	STACK_MODE_BUILD_ID = 3,        /* "<build id> 0x<file offset>" (0.25;
					 * user stacks) */
};

/* bpftrace indents a stack by 4 spaces inside a map key, by 8 everywhere
 * else (map values, printf, print). */
#define STACKFMT_INDENT_KEY 4
#define STACKFMT_INDENT_VALUE 8

struct stackfmt {
	struct ksyms *ksyms;    /* kernel stacks resolve here */
	struct usyms *usyms;    /* user stacks resolve here, in pid */
	bool user;
	pid_t pid;
	enum stack_mode mode;
	unsigned indent;        /* spaces before each frame in bpftrace mode */
	unsigned limit;         /* frames shown at most; 0 = all */
	/* usym of a probe's own address (site_addr): the file and link-time
	 * address that name it when the process cannot be read any more */
	const char *site_path;
	uint64_t site_vaddr, site_addr;
	/* stackfmt_sym: D's mod()/umod(): the module alone (the kernel's
	 * "vmlinux" or its module, a file's base name), "0x..." when the
	 * address is in none */
	bool module_only;
};

/* A stack of N addresses, innermost first: "" when N is 0 (bpftrace's
 * output for a stack it could not read), else "\n" and one line per
 * frame, up to the first zero address or LIMIT frames.
 * Returns 0 or -errno (of the stream). */
int stackfmt_write(FILE *out, const uint64_t *ips, size_t n,
		   const struct stackfmt *f);
/* The same as a malloc'd string (NULL on allocation failure). */
char *stackfmt_string(const uint64_t *ips, size_t n, const struct stackfmt *f);

/* One frame as bpftrace names it: "name+off", or "0x7f..." when unknown
 * (with " (module)" / " ([unknown])" appended when SHOW_MODULE). */
int stackfmt_frame(FILE *out, const struct stackfmt *f, uint64_t addr,
		   bool show_offset, bool show_module);

/* ksym(addr) / usym(addr): the name alone, or the address as C++ prints
 * a pointer ("0x7f12ab", "0" for null) when it resolves to nothing. */
int stackfmt_sym(FILE *out, const struct stackfmt *f, uint64_t addr);
char *stackfmt_sym_string(const struct stackfmt *f, uint64_t addr);

#endif
