/* agent.h - the agent library (build/libsonde-agent.so), which runs the
 * compiled probes inside a traced process. This header is its inside
 * view, for its own files and for whoever adds a kind of site (function
 * entries and returns, -p injection): the entry point a trampoline or a
 * trap calls, the patches and their bookkeeping, the trampolines, and
 * the session with sonde (the channel itself is proto.h).
 *
 * How a hit runs. A patched site jumps (or traps, agent_trap.c) into
 * code that saves every general register as a struct agent_regs (the
 * kernel's x86-64 struct pt_regs: the context the bytecode reads USDT
 * arguments and registers from, in both engines) and calls
 * agent_hit(regs, patch). agent_hit finds the programs the current
 * session runs at that patch and runs them through src/vm/, with the
 * runtime's helpers (src/runtime/) on the shared region. It is the only
 * code that runs on a hit, and it keeps to these rules:
 *   - no allocation, no lock that can block for good, no vector register
 *     (the site's code may hold live values in them: the agent is built
 *     with -mgeneral-regs-only and calls nothing in the C library that
 *     could use them), no system call on the common path;
 *   - at most one hit per thread at a time: a hit reached from inside
 *     another (a signal handler that reaches a site) is skipped;
 *   - a thread marks itself busy while it runs a session's programs, so
 *     the session can end (detach, free its memory) only once no thread
 *     is inside it (agent_session_end waits for that).
 *
 * Lifetime. Trampolines and the patch table outlive sessions (a site
 * patched again later reuses its trampoline), and nothing of the agent is
 * ever unloaded: code a thread may still be returning through stays
 * mapped. A fork()ed child is not traced: its copy of the agent goes
 * inert and restores its copy of every patched byte (pthread_atfork, and
 * a MADV_WIPEONFORK page for children created without it).
 *
 * Everything is hidden (not exported) except the entry points
 * (sonde_agent_attach, and issue 12's sonde_fprobe_*) and the C library
 * functions the preloaded agent deliberately interposes: sigaction,
 * signal, sigprocmask, pthread_sigmask (agent_trap.c: its handlers stay
 * first, its signals unblocked) and dlopen, dlclose (agent_dl.c: sites
 * of libraries loaded later). */
#ifndef SONDE_AGENT_H
#define SONDE_AGENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The registers at a hit, in the order of the kernel's x86-64 struct
 * pt_regs (program.h's USTACK_REG_* and codegen's PT_* offsets). ip is
 * the address of the probed instruction, sp the stack pointer there. */
struct agent_regs {
	uint64_t r15, r14, r13, r12, bp, bx, r11, r10, r9, r8;
	uint64_t ax, cx, dx, si, di, orig_ax, ip, cs, flags, sp, ss;
};

/* ---- hits (agent_hit.c) ---- */

/* Run the programs of the current session at `patch`. Any thread, any
 * time, also from a signal handler; nothing happens without a session. */
void agent_hit(struct agent_regs *regs, uint32_t patch);

/* ---- patches (agent_patch.c) ----
 *
 * A patch is a few bytes of the target's code that the agent replaces
 * while traced and restores afterwards. Patches are numbered once for
 * the life of the process (the trampoline of a patch passes its number
 * to agent_hit), found again by address, and applied and restored with
 * a protocol that is safe while other threads run the code:
 *   - a replacement that fits in one 8-byte window inside one cache line
 *     is one locked compare-and-swap (x86 makes such a store atomic for
 *     instruction fetch too: a thread sees the old or the new bytes);
 *   - otherwise the kernel's protocol (text_poke_bp): an int3 on the
 *     first byte, the rest, then the first byte, with every thread's
 *     instruction stream serialized in between
 *     (membarrier SYNC_CORE); a thread reaching the int3 meanwhile traps
 *     into agent_trap.c, which runs the patch's probe and resumes after
 *     the replaced instruction. */

#define AGENT_PATCH_MAX 16384
#define AGENT_PATCH_BYTES 16

enum agent_patch_kind {
	PATCH_JMP,        /* a jmp rel32 to the patch's trampoline */
	PATCH_INT3,       /* a breakpoint: the hit runs in a SIGTRAP handler */
};

struct agent_patch {
	uint64_t addr;
	uint32_t len;                  /* bytes replaced */
	enum agent_patch_kind kind;
	uint8_t orig[AGENT_PATCH_BYTES];   /* the bytes that were there */
	uint8_t code[AGENT_PATCH_BYTES];   /* the bytes written */
	uint64_t resume;               /* where a thread trapping at addr goes
					* on after its hit (INT3, and any patch
					* during the int3 protocol): addr + len
					* past a nop */
	void *tramp;                   /* JMP: its trampoline */
	bool applied;
	bool gone;                     /* its code was unmapped while applied */
	/* agent_watch.c: another tracer's breakpoint over it, since when */
	uint8_t watch;
	uint64_t watch_since_ns;
};

/* Find or add the patch at addr. For a new one the caller gives the
 * bytes that are there (len of them) and the kind; a JMP patch of a
 * 5-byte nop gets its trampoline here (agent_tramp_nop). 0 and *id, or
 * -errno (-ENOSPC: the table is full, -ENOMEM: no trampoline memory
 * within reach). */
int agent_patch_add(uint64_t addr, const uint8_t *orig, uint32_t len,
		    enum agent_patch_kind kind, uint32_t *id);
/* A patch whose trampoline the caller builds (a function entry: the hit,
 * then its relocated instructions, then a jump back): the id the next
 * patch gets, to emit into that trampoline (agent_tramp_emit_hit), then
 * the patch itself, a jmp rel32 to tramp over the first 5 of its len
 * bytes (the rest become int3s, never run: no instruction starts there
 * once patched, which the caller has made sure of). trap_resume is where
 * a thread that traps at addr during the int3 protocol goes on after its
 * hit: the relocated instructions in the trampoline. The patch lock is
 * held from agent_patch_next_id to agent_patch_add_tramp. */
uint32_t agent_patch_next_id(void);
int agent_patch_add_tramp(uint64_t addr, const uint8_t *orig, uint32_t len,
			  void *tramp, uint64_t trap_resume, uint32_t *id);
struct agent_patch *agent_patch_get(uint32_t id);
/* The patch whose address is addr, or NULL (async-signal-safe). */
struct agent_patch *agent_patch_find(uint64_t addr);
/* Write the patch's code (apply) or its original bytes (restore), with
 * the protocol above. 0 or -errno. */
int agent_patch_apply(struct agent_patch *p);
int agent_patch_restore(struct agent_patch *p);
/* Serialize every thread's instruction stream after code changes
 * (membarrier SYNC_CORE where the kernel has it). */
void agent_sync_core(void);
/* A full barrier on every running thread of the process, so a thread's
 * plain stores (its busy flag) are seen after this returns. */
void agent_barrier_all(void);
/* The lock every change of code and of the patch table takes. */
void agent_patch_lock(void);
void agent_patch_unlock(void);
/* Replace `from` with `to` at a (len bytes) with the protocol above, if
 * `from` is what is there: 0, or -EBUSY (someone else changed it), or
 * -errno. Under the patch lock. */
int agent_code_write(uint64_t a, const uint8_t *from, const uint8_t *to,
		     uint32_t len);
/* Write len bytes at a plainly: code no thread runs (behind another
 * tracer's int3). Under the patch lock. */
int agent_code_poke(uint64_t a, const uint8_t *bytes, uint32_t len);

/* ---- trampolines (agent_tramp.c) ----
 *
 * Executable memory within reach of a jmp rel32 (+-2 GiB) of a site.
 * Memory is handed out writable; agent_tramp_seal() makes everything
 * handed out since executable and read-only, so seal before applying the
 * patches that jump there. */
void *agent_tramp_alloc(uint64_t near, size_t size);
/* The same, at an address whose rest modulo 64 KiB is rem (a jump's
 * displacement chosen for what its bytes mean when they are not run as
 * a jump, agent_patch.c). */
void *agent_tramp_alloc_mod(uint64_t near, size_t size, uint32_t rem);
void agent_tramp_seal(void);
/* The code that saves the registers as struct agent_regs below the red
 * zone, calls agent_hit(regs, patch) with the stack aligned, and
 * restores every register but the flags (a USDT site's asm and a
 * function's entry may clobber them): written at `at` (which will run
 * at the same address), `ip` being the probed instruction's address
 * (regs->ip). Returns the bytes written (at most AGENT_TRAMP_HIT_MAX);
 * the caller appends what runs next (displaced instructions and a jump
 * back). */
#define AGENT_TRAMP_HIT_MAX 320
size_t agent_tramp_emit_hit(uint8_t *at, uint64_t ip, uint32_t patch);
/* jmp rel32 from `from` to `to` (5 bytes at out); -ERANGE if too far. */
int agent_emit_jmp(uint8_t *out, uint64_t from, uint64_t to);

/* ---- the session (agent.c) ---- */

/* Attach to the sonde listening on the abstract socket `name`: connect,
 * take the program, patch, report, and return once attached (or told to
 * stay inert, or failed: the process then runs untraced). A control
 * thread then waits for sonde's DETACH or its death, and detaches. The
 * -c constructor calls it with $SONDE_AGENT; a -p injector calls it from
 * inside the process. 0 when attached, else -errno. Exported. */
int sonde_agent_attach(const char *name);

/* ---- small things (agent_util.c) ---- */

/* Private memory (anonymous mappings, never the target's heap). */
void *agent_alloc(size_t size);
void agent_free(void *p, size_t size);

/* One line of /proc/self/maps. */
struct agent_map {
	uint64_t start, end, offset, inode;
	uint32_t dev_major, dev_minor;
	int prot;                      /* PROT_* */
	const char *path;              /* "" when anonymous */
};
struct agent_maps {
	struct agent_map *v;
	size_t n;
	char *text;                    /* what the paths point into */
	size_t v_bytes, text_bytes;
};
/* The process's mappings now, in address order (private memory). 0 or
 * -errno. */
int agent_maps_read(struct agent_maps *m);
void agent_maps_free(struct agent_maps *m);

#endif
