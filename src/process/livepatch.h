/* livepatch.h - patching function entries (and other instruction
 * boundaries) of a running process that has the agent loaded: planning
 * each site from the code in the process (x86reloc), trampolines in
 * memory allocated near it, the jumps written while every thread is
 * stopped (threads inside the patched bytes moved to their copies), and
 * every byte put back at the end. Also undoes what a sonde run that was
 * killed left behind, so the next one starts clean. */
#ifndef SONDE_PROCESS_LIVEPATCH_H
#define SONDE_PROCESS_LIVEPATCH_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../agent/fprobe.h"

struct tracee;
struct livepatch;

/* Where the agent's function-probe code is in the process. */
struct lp_agent {
	uint64_t entry;          /* sonde_fprobe_entry */
	uint64_t registry;       /* sonde_fprobe_registry */
	uint64_t return_tramp;   /* sonde_fprobe_return_tramp */
};

/* One site to patch. */
struct lp_site {
	const char *name;        /* for messages: "f", "f+0x10" */
	uint64_t addr;           /* run-time address */
	/* From the ELF symbols: the function's size from addr (0 unknown),
	 * bytes up to the next symbol (0 unknown: the mapping's end), and
	 * the padding before the function (0 if none or unknown). */
	uint64_t func_len, room, pad_before;
	bool mid_function;       /* not a function's entry */
	/* A stock sys/sdt.h USDT site: the 1-byte nop at addr, which the
	 * jump goes right after (see lp_add), the probes seeing the
	 * registers as they are at the nop. Needs mid_function and lead. */
	bool usdt_nop;
	uint64_t next_site;      /* usdt_nop: the file's next USDT site after
				  * it (run-time address), 0 if none: the
				  * jump must not cover it */
	uint64_t lead;           /* inside a function: the offset from its
				  * start (0 if unknown), to check that an
				  * instruction starts at addr */
	uint32_t flags;          /* FPROBE_F_* */
	uint32_t kind;           /* enum fprobe_kind */
	uint32_t nentry, nret;   /* probe ids: entry ones, then return ones */
	const uint32_t *probes;
};

/* Begin patching a held process for this sonde run: take ownership of
 * the agent's registry, refusing (-EBUSY, why) if another sonde that is
 * still running holds it, and undo the patches of one that died.
 * Returns 0 or -errno with why. */
int lp_begin(struct tracee *t, const struct lp_agent *agent,
	     struct livepatch **out, char *why, size_t whylen);
/* Plan a site and write its trampoline (not yet reachable). A site at an
 * address already added gets the probes added to it. -errno with why
 * naming the site and the reason when it cannot be patched safely. */
int lp_add(struct livepatch *lp, struct tracee *t, const struct lp_site *s,
	   char *why, size_t whylen);
/* lp_add's error for a function whose patch a kernel uprobe placed on
 * it later would break (see livepatch.c): one of lp_unpatchable's. */
#define LP_EUPROBE (-EXDEV)

/* Was lp_add's error about the function (its shape, its place), not
 * about the process or the system? */
bool lp_unpatchable(int err);
/* Copy data into trampoline memory near `near` (read-only to the
 * process, never freed: for what must outlive a call). */
int lp_put_data(struct livepatch *lp, struct tracee *t, uint64_t near,
		const void *data, size_t len, uint64_t *at, char *why,
		size_t whylen);
/* Make every added site live: threads are stopped (they are: the tracee
 * holds them); those inside bytes about to change move to the copies. */
int lp_commit(struct livepatch *lp, struct tracee *t, char *why, size_t whylen);
/* Put every byte back (threads stopped by t), mark the sites restored
 * and give up ownership. The trampolines stay: a thread may be in one. */
int lp_restore(struct livepatch *lp, struct tracee *t, char *why, size_t whylen);
void lp_free(struct livepatch *lp);

/* A library the process mapped after the first commit (dlopen): read
 * its mappings again (lp_add plans only inside executable ones), and
 * forget the sites whose code is gone (dlclose: no executable mapping
 * there now, or the file's own bytes back, a library loaded again at
 * the same address), marking their records restored so the agent no
 * longer counts them patched. Threads stopped by t. How many were
 * forgotten, or -errno. */
int lp_refresh(struct livepatch *lp, struct tracee *t);
/* Is probe `probe` planned or patched at addr (lp_site.addr)? With
 * mem_fd (the process's /proc/PID/mem, >= 0), only if the code there is
 * not the file's own bytes again (a library loaded again at the same
 * address). */
bool lp_has_probe(const struct livepatch *lp, uint64_t addr, uint32_t probe,
		  int mem_fd);
/* After a failed lp_commit of sites added since the last one: those
 * not yet written are dropped (their code is the original). */
void lp_drop_unwritten(struct livepatch *lp, struct tracee *t);

/* How many sites are patched; the trampoline memory in use. */
size_t lp_nsites(const struct livepatch *lp);
/* The name of the site patched at addr ("f", "f+0x10"), or NULL. */
const char *lp_site_name(const struct livepatch *lp, uint64_t addr);
/* How many sites of a killed run lp_begin put back. */
size_t lp_stale_restored(const struct livepatch *lp);

/* The start time of a process (/proc/PID/stat field 22), 0 if gone. */
uint64_t lp_proc_start(int pid);

#endif
