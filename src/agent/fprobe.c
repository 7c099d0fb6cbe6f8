/* fprobe.c - function entry and return probes in the traced process: the
 * handler the entry trampolines call, the return trampoline, and each
 * thread's shadow stack of hooked returns.
 *
 * Returns. When a site has return probes, its entry handler saves the
 * return address (at regs->sp) with that stack pointer on the thread's
 * shadow stack and writes sonde_fprobe_return_tramp in its place; the
 * function returns there, and sonde_fprobe_return pops the entry, runs
 * the return probes and hands the real address back for the trampoline
 * to jump to. A hooked function that tail-calls another (jmp) leaves it
 * the same return address, the trampoline's: the callee's entry goes on
 * top of the caller's with the same stack pointer and the real address,
 * and the one return pops both, running the callee's return probes,
 * then the caller's (the kernel's chained uretprobes).
 *
 * longjmp and exceptions leave hooked frames that never return. The
 * shadow stack is kept by stack pointer, with the kernel's rules for its
 * uretprobes: a call at sp S means every entry at S or below is dead (its
 * frame is gone), and a return to sp R means every entry below R - 8 is
 * dead; the entry at R - 8 is the one returning. A C++ exception is
 * different: the unwinder walks the stack by return addresses and finds
 * no unwind information for the trampoline, so before it starts
 * (_Unwind_RaiseException and friends, FPROBE_UNWIND sites) every hooked
 * frame gets its real return address back, and when a handler catches it
 * (__cxa_begin_catch, FPROBE_CATCH) the frames still alive, those above
 * the catcher's stack pointer, are hooked again.
 *
 * Stacks: a probe that walks the user stack would meet the trampoline's
 * address where a hooked frame's caller is; for sites whose probes read
 * stacks (FPROBE_F_STACKS) the thread's hooked frames get their return
 * addresses back while the probes run, the same unhook and rehook.
 *
 * Detach: sonde restores the unwinder's entry points with everything
 * else, so no frame may keep the trampoline's address once it is gone:
 * with the threads stopped, sonde gives every live hooked frame its
 * return address back (src/process/livepatch.c, through the chunks the
 * registry lists), and a thread that hooks a frame, or hooks frames
 * again, after finding its site patched checks once more and undoes
 * what it did if the site was restored in between.
 *
 * Signals: a handler may run probes between any two instructions here,
 * on the same shadow stack. A push reserves its slot (marked alive) before
 * filling it and a pop takes its entry off before running probes, so the
 * nested pushes and pops always see a consistent stack.
 *
 * Shadow stacks are blocks of a pool in anonymous memory (no malloc: the
 * probed function may be malloc), one per thread, found through an
 * initial-exec TLS pointer; a block whose thread has exited is taken by
 * the next new thread. No vector registers, no C library calls: this
 * runs in the middle of the target's functions. */
#include "fprobe.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#define HIDDEN __attribute__((visibility("hidden")))
#define EXPORT __attribute__((visibility("default")))
#define barrier() __asm__ volatile("" ::: "memory")


EXPORT struct fprobe_registry sonde_fprobe_registry = {
	.magic = FPROBE_REGISTRY_MAGIC,
};

EXPORT void sonde_fprobe_entry(const struct fprobe_site *site,
			       struct fprobe_regs *regs);
HIDDEN uint64_t sonde_fprobe_return(struct fprobe_regs *regs);
extern char sonde_fprobe_return_tramp[];

/* ---- system calls without the C library ---- */

static long sys6(long nr, long a, long b, long c, long d, long e, long f)
{
	long ret;
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}
#define sys(nr, a, b, c) sys6((nr), (long)(a), (long)(b), (long)(c), 0, 0, 0)

/* ---- the pool of shadow stacks ---- */

#define CHUNKS sonde_fprobe_registry.shadow_chunk
#define NCHUNKS sonde_fprobe_registry.shadow_nchunks
static uint32_t chunk_lock;

static __thread struct shadow *tls_shadow __attribute__((tls_model("initial-exec")));

static bool thread_alive(int32_t tid)
{
	long pid = sys(SYS_getpid, 0, 0, 0);
	return sys(SYS_tgkill, pid, tid, 0) != -ESRCH;
}

/* A free block of the chunks there are, or one whose thread is gone. */
static struct shadow *claim(int32_t tid)
{
	uint32_t n = __atomic_load_n(&NCHUNKS, __ATOMIC_ACQUIRE);
	for (int pass = 0; pass < 2; pass++)
		for (uint32_t c = 0; c < n; c++)
			for (size_t i = 0; i < FPROBE_SHADOW_PER_CHUNK; i++) {
				struct shadow *s = (struct shadow *)CHUNKS[c] + i;
				int32_t o = __atomic_load_n(&s->owner, __ATOMIC_RELAXED);
				if (o && (pass == 0 || thread_alive(o)))
					continue;
				if (__atomic_compare_exchange_n(&s->owner, &o, tid, false,
								__ATOMIC_ACQ_REL,
								__ATOMIC_RELAXED)) {
					s->depth = 0;
					return s;
				}
			}
	return NULL;
}

static struct shadow *shadow_get(void)
{
	struct shadow *s = tls_shadow;
	if (s)
		return s;
	int32_t tid = (int32_t)sys(SYS_gettid, 0, 0, 0);
	s = claim(tid);
	/* a new chunk, made by one thread at a time; the others wait for it
	 * (an mmap), boundedly: past the bound they go without hooking this
	 * return rather than hang */
	for (long spins = 0; !s && spins < (1L << 24); spins++) {
		if (__atomic_exchange_n(&chunk_lock, 1, __ATOMIC_ACQUIRE) == 0) {
			s = claim(tid);
			if (!s && NCHUNKS < FPROBE_SHADOW_CHUNKS) {
				long p = sys6(SYS_mmap, 0, FPROBE_SHADOW_CHUNK_BYTES,
					      PROT_READ | PROT_WRITE,
					      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
				if (p > 0 || p < -4095) {
					CHUNKS[NCHUNKS] = (uint64_t)p;
					__atomic_store_n(&NCHUNKS, NCHUNKS + 1,
							 __ATOMIC_RELEASE);
					s = claim(tid);
				}
			}
			__atomic_store_n(&chunk_lock, 0, __ATOMIC_RELEASE);
			break;
		}
		while (__atomic_load_n(&chunk_lock, __ATOMIC_RELAXED) &&
		       spins++ < (1L << 24))
			__builtin_ia32_pause();
		s = claim(tid);
	}
	tls_shadow = s;
	return s;
}

/* Is this the thread the shadow stack belongs to? A vfork()ed child
 * (posix_spawn's) runs with its parent thread's TLS, on a stack of its
 * own, while the parent waits: it must not take the parent's hooked
 * frames for gone. Asked (a system call) only before dropping entries. */
static bool own_shadow(const struct shadow *s)
{
	return __atomic_load_n(&s->owner, __ATOMIC_RELAXED) ==
	       (int32_t)sys(SYS_gettid, 0, 0, 0);
}

/* Has sonde restored the site since this thread found it patched (it
 * gave every hooked frame its address back meanwhile)? A full fence
 * first: the hook just written is seen by sonde, or this sees the
 * restore. */
static bool site_restored(const struct fprobe_site *site)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	uint32_t st = __atomic_load_n(&site->state, __ATOMIC_RELAXED);
	return st != FPROBE_PATCHED && st != FPROBE_ADOPTED;
}

/* ---- entries ---- */

static void hook_return(const struct fprobe_site *site, struct fprobe_regs *regs)
{
	struct shadow *s = shadow_get();
	uint64_t sp = regs->sp;
	if (!s) {
		__atomic_fetch_add(&sonde_fprobe_registry.missed_returns, 1,
				   __ATOMIC_RELAXED);
		return;
	}
	uint32_t d = s->depth;
	uint64_t ret = *(uint64_t *)sp;
	/* A tail call from a hooked frame: its return address is the
	 * trampoline's already, and both frames return at once, through it;
	 * the hooked frame's entry stays below this one's. */
	bool chained = ret == (uint64_t)sonde_fprobe_return_tramp;
	while (d && (s->f[d - 1].stack < sp ||   /* frames that are gone */
		     (s->f[d - 1].stack == sp && !chained)))
		d--;
	if (d < s->depth && !own_shadow(s)) {
		__atomic_fetch_add(&sonde_fprobe_registry.missed_returns, 1,
				   __ATOMIC_RELAXED);
		return;   /* a vfork child: its return is not probed */
	}
	s->depth = d;
	barrier();
	if (chained && d && s->f[d - 1].stack == sp)
		ret = s->f[d - 1].ret;
	else if (chained)
		d = FPROBE_DEPTH;   /* not ours: no real address to keep */
	if (d == FPROBE_DEPTH) {
		__atomic_fetch_add(&sonde_fprobe_registry.missed_returns, 1,
				   __ATOMIC_RELAXED);
		return;
	}
	struct shadow_frame *f = &s->f[d];
	f->stack = UINT64_MAX;   /* alive to a signal handler that nests */
	barrier();
	s->depth = d + 1;
	barrier();
	f->ret = ret;
	f->site = (uint64_t)site;
	f->hooked = 1;
	barrier();
	f->stack = sp;
	barrier();
	*(uint64_t *)sp = (uint64_t)sonde_fprobe_return_tramp;
	/* sonde may have detached while this thread was stopped above, after
	 * it gave the hooked frames their addresses back: undo this one */
	if (site_restored(site) &&
	    *(uint64_t *)sp == (uint64_t)sonde_fprobe_return_tramp) {
		*(uint64_t *)sp = f->ret;
		f->hooked = 0;
	}
}

/* Drop the entries of frames gone below sp (inclusive: a frame at sp
 * itself is the caller of whatever runs now, or gone). */
static struct shadow *live_entries(uint64_t sp, uint32_t *depth)
{
	struct shadow *s = tls_shadow;
	if (!s)
		return NULL;
	uint32_t d = s->depth;
	while (d && s->f[d - 1].stack <= sp)
		d--;
	if (d < s->depth && !own_shadow(s))
		return NULL;
	s->depth = d;
	*depth = d;
	return s;
}

/* An unwinder is about to walk this thread's stack: give every hooked
 * frame its return address back. */
static void unhook_all(uint64_t sp)
{
	uint32_t d;
	struct shadow *s = live_entries(sp, &d);
	for (uint32_t i = 0; s && i < d; i++) {
		struct shadow_frame *f = &s->f[i];
		uint64_t *slot = (uint64_t *)f->stack;
		if (f->hooked && *slot == (uint64_t)sonde_fprobe_return_tramp) {
			*slot = f->ret;
			f->hooked = 0;
		}
	}
}

/* An exception was caught by a frame below sp's caller: the frames above
 * are alive, and get their returns hooked again, unless sonde has
 * detached meanwhile (the site that called is no longer patched). */
static void rehook(const struct fprobe_site *site, uint64_t sp)
{
	uint32_t d;
	struct shadow *s = live_entries(sp, &d);
	for (uint32_t i = 0; s && i < d; i++) {
		struct shadow_frame *f = &s->f[i];
		uint64_t *slot = (uint64_t *)f->stack;
		if (!f->hooked && *slot == f->ret) {
			*slot = (uint64_t)sonde_fprobe_return_tramp;
			f->hooked = 1;
		}
	}
	if (site_restored(site))
		unhook_all(sp);
}

void sonde_fprobe_entry(const struct fprobe_site *site, struct fprobe_regs *regs)
{
	switch (site->kind) {
	case FPROBE_UNWIND:
		unhook_all(regs->sp);
		return;
	case FPROBE_CATCH:
		rehook(site, regs->sp);
		return;
	case FPROBE_PROBES:
		break;
	default:
		return;
	}
	/* an unwinder hook too: its work first; and an unwinder about to
	 * walk the stack gets no frame hooked again (no return probe is
	 * put on its entry points: sonde refuses them) */
	bool unwinding = site->flags & FPROBE_F_UNWIND;
	if (unwinding)
		unhook_all(regs->sp);
	else if (site->flags & FPROBE_F_CATCH)
		rehook(site, regs->sp);
	uint32_t ne = __atomic_load_n(&site->nentry, __ATOMIC_RELAXED);
	uint32_t nr = __atomic_load_n(&site->nret, __ATOMIC_RELAXED);
	if (ne > FPROBE_MAX_PROBES || nr > FPROBE_MAX_PROBES - ne)
		return;
	bool stacks = ne && (site->flags & FPROBE_F_STACKS) && !unwinding;
	if (stacks)
		unhook_all(regs->sp);
	for (uint32_t i = 0; i < ne; i++)
		agent_fprobe_run(site->probes[i], regs);
	if (stacks)
		rehook(site, regs->sp);
	if (nr)
		hook_return(site, regs);
}

int fprobe_patched_at(uint64_t addr)
{
	const struct fprobe_registry *reg = &sonde_fprobe_registry;
	uint32_t n = __atomic_load_n(&reg->nregions, __ATOMIC_ACQUIRE);
	if (n > FPROBE_MAX_REGIONS)
		n = FPROBE_MAX_REGIONS;
	for (uint32_t r = 0; r < n; r++) {
		uint64_t base = reg->region[r], used = reg->region_used[r];
		if (used > reg->region_len[r])
			continue;
		for (uint64_t off = 0; off + sizeof(struct fprobe_site) <= used;
		     off += 64) {
			const struct fprobe_site *site =
				(const struct fprobe_site *)(base + off);
			uint32_t st = __atomic_load_n(&site->state, __ATOMIC_ACQUIRE);
			if (site->magic == FPROBE_SITE_MAGIC && site->addr == addr &&
			    (st == FPROBE_PATCHED || st == FPROBE_ADOPTED))
				return 1;
		}
	}
	return 0;
}

/* ---- a fork()ed child ---- */

/* The child of a fork is not traced, and has one thread (the one in the
 * fork handler, outside any patched code): put back the bytes of every
 * patched site in its copy of the code, through /proc/self/mem, which
 * writes read-only code as a debugger does. Async-signal-safe. */
void fprobe_restore_child(void)
{
	/* its thread has a new id: its shadow stack (a copy) is its own,
	 * not that of a thread of the parent which a new thread here could
	 * take for gone */
	if (tls_shadow)
		__atomic_store_n(&tls_shadow->owner,
				 (int32_t)sys(SYS_gettid, 0, 0, 0), __ATOMIC_RELEASE);
	/* the unwinder's hooks are undone below with the rest: no frame may
	 * keep the return trampoline as its return address */
	unhook_all((uint64_t)__builtin_frame_address(0));
	static const char path[] = "/proc/self/mem";
	long fd = sys(SYS_open, path, 02000002 /* O_RDWR | O_CLOEXEC */, 0);
	if (fd < 0)
		return;
	const struct fprobe_registry *reg = &sonde_fprobe_registry;
	uint32_t n = reg->nregions < FPROBE_MAX_REGIONS ? reg->nregions
							: FPROBE_MAX_REGIONS;
	for (uint32_t r = 0; r < n; r++) {
		uint64_t base = reg->region[r], used = reg->region_used[r];
		if (used > reg->region_len[r])
			continue;
		for (uint64_t off = 0; off + sizeof(struct fprobe_site) <= used;
		     off += 64) {
			struct fprobe_site *site = (struct fprobe_site *)(base + off);
			if (site->magic != FPROBE_SITE_MAGIC ||
			    site->state != FPROBE_PATCHED ||
			    site->patch_len > FPROBE_MAX_PATCH)
				continue;
			sys6(SYS_pwrite64, fd, (long)site->orig, site->patch_len,
			     (long)site->addr, 0, 0);
			if (site->via_pad)
				sys6(SYS_pwrite64, fd, (long)site->pad_orig, 5,
				     (long)site->pad_addr, 0, 0);
			uint32_t restored = FPROBE_RESTORED;
			sys6(SYS_pwrite64, fd, (long)&restored, sizeof(restored),
			     (long)&site->state, 0, 0);
		}
	}
	sys(SYS_close, fd, 0, 0);
}

/* ---- returns ---- */

static void lost_return(void)
{
	static const char msg[] = "sonde agent: a function returned to sonde's "
		"return trampoline from a frame it did not hook (the program "
		"switched stacks); the process cannot go on\n";
	__atomic_fetch_add(&sonde_fprobe_registry.lost_returns, 1, __ATOMIC_RELAXED);
	sys(SYS_write, 2, msg, sizeof(msg) - 1);
	long pid = sys(SYS_getpid, 0, 0, 0);
	sys(SYS_tgkill, pid, sys(SYS_gettid, 0, 0, 0), SIGSEGV);
	for (;;)
		sys(SYS_pause, 0, 0, 0);
}

uint64_t sonde_fprobe_return(struct fprobe_regs *regs)
{
	struct shadow *s = tls_shadow;
	uint64_t at = regs->sp - 8;   /* where the return address was */
	uint32_t d = s ? s->depth : 0;
	while (d && s->f[d - 1].stack < at)   /* left by longjmp */
		d--;
	if (!d || s->f[d - 1].stack != at) {
		lost_return();
		return 0;
	}
	/* the frame, and those it tail-called, innermost first: they all
	 * return now (taken off before their probes run, see Signals) */
	const struct fprobe_site *sites[FPROBE_DEPTH];
	uint32_t n = 0;
	uint64_t ret = 0;
	while (d && s->f[d - 1].stack == at) {
		sites[n++] = (const struct fprobe_site *)s->f[d - 1].site;
		ret = s->f[--d].ret;
	}
	barrier();
	s->depth = d;
	barrier();
	regs->ip = ret;
	for (uint32_t k = 0; k < n; k++) {
		const struct fprobe_site *site = sites[k];
		uint32_t ne = __atomic_load_n(&site->nentry, __ATOMIC_RELAXED);
		uint32_t nr = __atomic_load_n(&site->nret, __ATOMIC_RELAXED);
		if (ne > FPROBE_MAX_PROBES || nr > FPROBE_MAX_PROBES - ne || !nr)
			continue;
		bool stacks = site->flags & FPROBE_F_STACKS;
		if (stacks)
			unhook_all(at);
		for (uint32_t i = 0; i < nr; i++)
			agent_fprobe_run(site->probes[ne + i], regs);
		if (stacks)
			rehook(site, at);
	}
	return ret;
}

/* The return trampoline: a hooked function returns here (sp just above
 * where its return address was). The registers are saved as pt_regs
 * (retval is ax; the flags, which no caller expects kept across a call,
 * as 0) with xmm0 and xmm1 (floating-point return values),
 * sonde_fprobe_return gives the real return address, and everything is
 * put back but r11, which a return leaves free, to jump there. 128 bytes
 * below sp are left alone, as everywhere in sonde's trampolines. */
#define RT_FRAME (FPROBE_REGS_SIZE + 40)   /* pt_regs, xmm0-1, keep 16n+8 */
#define STR_(x) #x
#define STR(x) STR_(x)
__asm__(
	".text\n"
	".globl sonde_fprobe_return_tramp\n"
	".hidden sonde_fprobe_return_tramp\n"
	".type sonde_fprobe_return_tramp,@function\n"
	"sonde_fprobe_return_tramp:\n"
	"  lea -(128 + " STR(RT_FRAME) ")(%rsp), %rsp\n"
	"  mov %r15, 0(%rsp)\n  mov %r14, 8(%rsp)\n  mov %r13, 16(%rsp)\n"
	"  mov %r12, 24(%rsp)\n  mov %rbp, 32(%rsp)\n  mov %rbx, 40(%rsp)\n"
	"  mov %r11, 48(%rsp)\n  mov %r10, 56(%rsp)\n  mov %r9, 64(%rsp)\n"
	"  mov %r8, 72(%rsp)\n  mov %rax, 80(%rsp)\n  mov %rcx, 88(%rsp)\n"
	"  mov %rdx, 96(%rsp)\n  mov %rsi, 104(%rsp)\n  mov %rdi, 112(%rsp)\n"
	"  movq $-1, 120(%rsp)\n"
	"  movq $0, 128(%rsp)\n"
	"  movq $0x33, 136(%rsp)\n"
	"  movq $0, 144(%rsp)\n"   /* flags: dead at a return (ABI) */
	"  lea (128 + " STR(RT_FRAME) ")(%rsp), %rax\n  mov %rax, 152(%rsp)\n"
	"  movq $0x2b, 160(%rsp)\n"
	"  movdqu %xmm0, 168(%rsp)\n  movdqu %xmm1, 184(%rsp)\n"
	"  mov %rsp, %rdi\n"
	"  mov %rsp, %rbx\n"
	"  and $-16, %rsp\n"
	"  call sonde_fprobe_return\n"
	"  mov %rbx, %rsp\n"
	"  mov %rax, %r11\n"
	"  movdqu 168(%rsp), %xmm0\n  movdqu 184(%rsp), %xmm1\n"
	"  mov 40(%rsp), %rbx\n  mov 56(%rsp), %r10\n  mov 64(%rsp), %r9\n"
	"  mov 72(%rsp), %r8\n  mov 80(%rsp), %rax\n  mov 88(%rsp), %rcx\n"
	"  mov 96(%rsp), %rdx\n  mov 104(%rsp), %rsi\n  mov 112(%rsp), %rdi\n"
	"  lea (128 + " STR(RT_FRAME) ")(%rsp), %rsp\n"
	"  jmp *%r11\n"
	".size sonde_fprobe_return_tramp, .-sonde_fprobe_return_tramp\n");
