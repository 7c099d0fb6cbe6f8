/* fprobe.h - function probes in the traced process: what sonde writes into
 * the process (sites, in trampoline memory it allocates there) and what
 * the agent's code does with them (src/agent/fprobe.c). Shared by both
 * sides, so it holds only fixed-size data and the names of the agent's
 * entry points.
 *
 * A patched function jumps to its entry trampoline (written by sonde,
 * src/process/tramp.c), which saves the registers as a struct pt_regs,
 * calls sonde_fprobe_entry(site, regs), puts the registers back and runs
 * the function's first instructions, moved. For return probes the entry
 * handler swaps the return address for sonde_fprobe_return_tramp and
 * keeps the real one on the thread's shadow stack; the function returns
 * there, sonde_fprobe_return runs the return probes and gives back the
 * real address. */
#ifndef SONDE_AGENT_FPROBE_H
#define SONDE_AGENT_FPROBE_H

#include <stdint.h>

#define FPROBE_SITE_MAGIC 0x65746973646e6f73ull   /* "sondsite" */
#define FPROBE_MAX_PROBES 32
#define FPROBE_MAX_PATCH 24          /* == X86_MAX_PATCH */
/* Frames whose return is hooked at once in a thread, at most (the
 * kernel's MAX_URETPROBE_DEPTH): deeper calls run their entry probes but
 * not their return probes. */
#define FPROBE_DEPTH 64

/* The registers as the kernel's struct pt_regs lays them out (x86-64),
 * which is what the compiled programs read (arg0 is di, retval ax). */
struct fprobe_regs {
	uint64_t r15, r14, r13, r12, bp, bx, r11, r10, r9, r8;
	uint64_t ax, cx, dx, si, di, orig_ax, ip, cs, flags, sp, ss;
};
#define FPROBE_REGS_SIZE (21 * 8)

enum fprobe_kind {
	FPROBE_PROBES = 1,   /* run the site's probes */
	FPROBE_UNWIND,       /* an unwinder starts (_Unwind_RaiseException...):
				put hooked return addresses back */
	FPROBE_CATCH,        /* a handler caught an exception
				(__cxa_begin_catch): hook them again */
};

/* The site's probes read the user stack (ustack): the hooked return
 * addresses of the thread are put back while they run, so a stack walk
 * sees the real callers, not the return trampoline. */
#define FPROBE_F_STACKS 1u
/* A probe site that is also an unwinder hook (the script probes
 * _Unwind_RaiseException or __cxa_begin_catch): does what an
 * FPROBE_UNWIND or FPROBE_CATCH site does, before its probes. */
#define FPROBE_F_UNWIND 2u
#define FPROBE_F_CATCH 4u

enum fprobe_state {
	FPROBE_WRITING = 1,  /* sonde is writing it */
	FPROBE_PATCHED,      /* the function jumps here */
	FPROBE_RESTORED,     /* the function's bytes are back */
	FPROBE_ADOPTED,      /* in a fork()ed child that goes on traced:
			      * patched, and the child's agent's to put
			      * back (an agent patch of its own) */
};

/* One patched address. Written by sonde while the process is stopped;
 * the agent only reads it (the probe lists change only while all threads
 * are stopped). The original bytes are kept here so that a later sonde
 * can undo a patch whose sonde died (SIGKILL). */
struct fprobe_site {
	uint64_t magic;
	uint32_t kind;               /* enum fprobe_kind */
	uint32_t state;              /* enum fprobe_state */
	uint64_t addr;               /* the patched address */
	uint64_t tramp;              /* its entry trampoline */
	uint32_t patch_len;
	uint32_t via_pad;            /* a short jump to a jump at pad_addr */
	uint64_t pad_addr;
	uint8_t orig[FPROBE_MAX_PATCH];
	uint8_t pad_orig[8];
	uint8_t patch[FPROBE_MAX_PATCH];  /* what was written at addr */
	uint64_t session;            /* the sonde run that patched it */
	uint32_t flags;              /* FPROBE_F_* */
	uint32_t pad2;
	uint32_t nentry, nret;       /* probes[0..nentry), then nret more */
	uint32_t probes[FPROBE_MAX_PROBES];
};

/* Each thread's shadow stack of hooked returns (src/agent/fprobe.c): the
 * agent pushes and pops; sonde, while the threads are stopped to detach,
 * gives every live hooked frame its return address back, so that no
 * frame returns through the trampoline, and no unwinder meets it, once
 * the unwinder's hooks are gone. */
struct shadow_frame {
	uint64_t stack;     /* sp at the entry: where the return address is */
	uint64_t ret;       /* the real return address */
	uint64_t site;      /* the struct fprobe_site that hooked it */
	uint64_t hooked;    /* [stack] holds the trampoline's address */
};

struct shadow {
	int32_t owner;      /* tid, 0 when free */
	uint32_t depth;
	struct shadow_frame f[FPROBE_DEPTH];
};

/* Shadow stacks come in chunks of anonymous memory, found through the
 * registry. */
#define FPROBE_SHADOW_CHUNK_BYTES (256 * 1024)
#define FPROBE_SHADOW_PER_CHUNK (FPROBE_SHADOW_CHUNK_BYTES / sizeof(struct shadow))
#define FPROBE_SHADOW_CHUNKS 64   /* 64 * 124 threads at once, at most */

/* Trampoline memory a sonde run allocated in the process: it stays there
 * (a thread may still be inside), and a later run finds the sites in it
 * through this table, which the agent exports as
 * `sonde_fprobe_registry`. */
#define FPROBE_REGISTRY_MAGIC 0x79727473676572ull
#define FPROBE_MAX_REGIONS 64
struct fprobe_registry {
	uint64_t magic;
	uint32_t nregions;
	uint32_t pad;
	/* The sonde run whose patches are in place: its pid and start time
	 * (/proc/PID/stat field 22), 0 when none. A run finding one that is
	 * still alive leaves the process alone; one that is gone (killed)
	 * has its patches undone by the next. */
	uint64_t owner_pid, owner_start;
	uint64_t region[FPROBE_MAX_REGIONS];
	uint64_t region_len[FPROBE_MAX_REGIONS];
	uint64_t region_used[FPROBE_MAX_REGIONS];
	/* Returns the agent could not match to a hooked frame: none, unless
	 * the program switched stacks in a way the shadow stack does not
	 * follow (the same limit as the kernel's uretprobes). */
	uint64_t lost_returns;
	/* Entries whose return was not hooked: FPROBE_DEPTH frames deep. */
	uint64_t missed_returns;
	/* The shadow stacks' chunks (the agent adds them; sonde reads). */
	uint64_t shadow_chunk[FPROBE_SHADOW_CHUNKS];
	uint32_t shadow_nchunks;
	uint32_t pad3;
};

/* Run the session's program `prog` (its index among the programs sonde
 * gave the agent) with these registers as its context; nothing without a
 * session. The agent's hit path provides it (agent_hit.c). */
void agent_fprobe_run(uint32_t prog, struct fprobe_regs *regs);

/* In a fork()ed child (one thread): put back every patched byte of its
 * copy of the code. The agent's fork handler calls it. */
void fprobe_restore_child(void);

/* Is a site sonde patched (its registry's, in place) at addr (1, or 0)? The agent
 * leaves a stock USDT site to sonde when sonde patched right after its
 * nop (src/process/livepatch.c). */
int fprobe_patched_at(uint64_t addr);

/* Names of the agent's symbols sonde looks up. */
#define FPROBE_SYM_ENTRY "sonde_fprobe_entry"
#define FPROBE_SYM_RETURN_TRAMP "sonde_fprobe_return_tramp"
#define FPROBE_SYM_REGISTRY "sonde_fprobe_registry"

#endif
