/* attach.h - function probes in a running process, as the process engine
 * asks for them: hold the process, load the agent into it (or find it
 * loaded, by LD_PRELOAD or by an earlier sonde), patch functions to call
 * it, let the process go; later hold it again and put every byte back.
 *
 *   pattach_open      ptrace the process, dlopen the agent (unless it is
 *                     loaded), find its entry points, clean up after a
 *                     killed sonde
 *   pattach_call      call a function of the agent
 *   pattach_start     run one in a thread of its own (its session)
 *   pattach_add       a probe on a function entry or return
 *   pattach_commit    patch, and let the process run
 *   pattach_detach    hold it again, restore every byte, let it go
 *
 * Every failure returns -errno with a message for the user in why,
 * naming the process, the function and what to do where there is
 * something to do. */
#ifndef SONDE_PROCESS_ATTACH_H
#define SONDE_PROCESS_ATTACH_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pattach;

/* Hold process pid and load the agent (a path the process can open).
 * The process stays stopped until pattach_commit. */
int pattach_open(int pid, const char *agent_path, struct pattach **out,
		 char *why, size_t whylen);

/* Call the agent's exported function `sym`(args) in the held process
 * (data copied to its stack as in tracee_call: an argument equal to
 * TRACEE_ARG_DATA becomes its address). */
int pattach_call(struct pattach *pa, const char *sym, const uint64_t *args,
		 int nargs, const void *data, size_t datalen, uint64_t *ret,
		 char *why, size_t whylen);

/* Start sym(arg) in a new thread of the held process (pthread_create),
 * arg a string that stays in the process's memory: the agent's session
 * with sonde, which must answer it while the thread runs. */
int pattach_start(struct pattach *pa, const char *sym, const char *arg,
		  char *why, size_t whylen);

/* A probe at vaddr (link-time address, as uprobe_info has it) in file
 * `path` (as sonde opens it: /proc/PID/root/... is fine), run with
 * `probe` as its id at the function's entry (ret false) or its return.
 * name is how messages call the probe. -ENXIO when the process has not
 * loaded that file (a library it has not opened yet); an error that
 * pattach_unpatchable() knows when the function itself cannot be patched
 * (its shape, its place), why saying why. */
int pattach_add(struct pattach *pa, const char *path, uint64_t vaddr,
		const char *name, bool ret, uint32_t probe, char *why,
		size_t whylen);
/* A stock sys/sdt.h USDT site (a 1-byte nop at vaddr of path) with
 * probe `probe` run there: patched with a jump right after the nop
 * (livepatch.c says why there). As pattach_add's errors; an unpatchable
 * one leaves the site to the agent's breakpoint. */
int pattach_add_usdt(struct pattach *pa, const char *path, uint64_t vaddr,
		     const char *name, uint32_t probe, char *why, size_t whylen);
bool pattach_unpatchable(int err);
/* pattach_add's error for a function a kernel uprobe on it would break
 * once patched (livepatch.h's LP_EUPROBE). */
#define PATTACH_EUPROBE (-EXDEV)

/* FPROBE_F_* for the sites added from now on (FPROBE_F_STACKS: their
 * probes read user stacks). */
void pattach_set_flags(struct pattach *pa, uint32_t site_flags);

/* Make the probes live and let the process run. */
int pattach_commit(struct pattach *pa, char *why, size_t whylen);

/* ---- what the process maps after the commit (dlopen) ----
 *
 * The agent asks (proto.h's PROTO_MAPPED) after the program loaded a
 * library; it names nothing, so nothing it could say is trusted: sonde
 * reads the process's mappings itself and opens the probes' own files
 * (as it did at attach), and plans each site as it did then.
 *   pattach_late_begin   read the mappings once (no stop)
 *   pattach_late_wanted  is this probe's file mapped now, with no live
 *                        site of the probe there (never patched, or its
 *                        library unloaded and loaded again)?
 *   pattach_hold         stop the process again, forget the sites whose
 *                        code went, find the files' load biases again
 *   then pattach_add / pattach_add_usdt, and pattach_commit_more
 *   pattach_late_end     free what late_begin read */
int pattach_late_begin(struct pattach *pa);
bool pattach_late_wanted(struct pattach *pa, const char *path, uint64_t vaddr,
			 uint32_t probe);
void pattach_late_end(struct pattach *pa);
int pattach_hold(struct pattach *pa, char *why, size_t whylen);
/* Make the sites added since pattach_hold live and let the process run;
 * on failure those not written are dropped (the earlier ones stay). */
int pattach_commit_more(struct pattach *pa, char *why, size_t whylen);

/* Hold the process again, put back every byte sonde changed and let it
 * go (the agent stays loaded, inert). 0, or -errno with why; -ESRCH when
 * the process has exited (nothing to restore). */
int pattach_detach(struct pattach *pa, char *why, size_t whylen);

/* Free everything sonde keeps about the process. NULL is a no-op. A
 * process still held is let go first (with its patches restored if they
 * were made). */
void pattach_free(struct pattach *pa);
/* Free it, the process's image being gone (it exec'd or exited): nothing
 * is touched there. NULL is a no-op. */
void pattach_free_gone(struct pattach *pa);

/* Put back what a sonde killed earlier left patched in process pid
 * (inert function probes), if it loaded the agent: holds the process a
 * moment, as pattach_open does. *restored: how many sites. 0, or -errno
 * with why (-EBUSY: another sonde that is running owns them). */
int pattach_cleanup(int pid, const char *agent_path, size_t *restored,
		    char *why, size_t whylen);

/* The function patched at addr, as messages name it, or NULL. */
const char *pattach_site_name(const struct pattach *pa, uint64_t addr);

/* The process's pid; the number of patched sites. */
int pattach_pid(const struct pattach *pa);
size_t pattach_nsites(const struct pattach *pa);

/* The agent's address of an exported symbol (after open), or 0. */
uint64_t pattach_agent_sym(struct pattach *pa, const char *sym);

#endif
