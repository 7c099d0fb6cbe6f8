/* tramp.h - the entry trampoline of a patched site, as machine code: what
 * the patched jump leads to. It saves the registers as a struct pt_regs
 * (src/agent/fprobe.h) below the red zone, calls the agent's handler with
 * the site and the registers, restores them, runs the displaced
 * instructions (relocated by x86reloc) and jumps back. A jump, not a
 * call, leads there, and nothing touches the 128 bytes below the
 * interrupted stack pointer. */
#ifndef SONDE_PROCESS_TRAMP_H
#define SONDE_PROCESS_TRAMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "x86reloc.h"

/* Bytes an entry trampoline takes at most. */
#define TRAMP_MAX (512 + X86_RELOC_MAX)

struct tramp_params {
	uint64_t at;           /* where the trampoline will be in the process */
	uint64_t site;         /* its struct fprobe_site there */
	uint64_t handler;      /* sonde_fprobe_entry there */
	/* A site inside a function (not its entry): the flags and every
	 * vector register may be live there, and are kept; at an entry only
	 * the argument registers xmm0-7 are. */
	bool mid_function;
	/* The handler may use vector registers: keep xmm0-7 (every one
	 * mid-function) around it. The agent is built with
	 * -mgeneral-regs-only and calls nothing that uses them, so sonde's
	 * trampolines leave them out; a handler in plain C needs them. */
	bool keep_vectors;
	struct x86_plan *plan; /* the site, planned: its instructions follow */
	/* A site just after a function's first instruction that stands for
	 * its entry (x86_entry_skip): the registers the probes see are the
	 * entry's, ip the function's address and sp what the instruction
	 * took off it added back. 0 and 0: the planned address itself. */
	uint64_t entry_ip;
	int32_t entry_sp_delta;
};

/* Write the trampoline into out (TRAMP_MAX bytes); returns its length, or
 * -errno with why (the displaced instructions cannot reach from there). */
int tramp_emit_entry(const struct tramp_params *p, uint8_t *out,
		     char *why, size_t whylen);

#endif
