/* test_fprobe.c - entry trampolines (src/process/tramp.c) and the agent's
 * function probes (src/agent/fprobe.c, compiled in here) in this very
 * process: functions in assembly are patched to jump to trampolines
 * built as sonde builds them, and called. Checked: the registers the
 * handler sees (arguments, ip, sp, retval), that arguments in xmm0-7,
 * the red zone and live flags survive a handler that clobbers them,
 * return probes (values, recursion beyond the hooked depth, longjmp out
 * of hooked frames, the unhook/rehook an exception needs), and that the
 * functions compute what they did before. */
#include <errno.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../../src/agent/fprobe.c"
#include "process/tramp.h"
#include "process/x86reloc.h"
#include "unit.h"

/* ---- the probe runner the agent core would be: records what it saw ---- */

#define NPROBES 8
static long hits[NPROBES];
static struct fprobe_regs seen[NPROBES];
static int clobber;   /* scribble over vector registers and flags */
static int runs, run_no[NPROBES];   /* the order probes ran in */

void agent_fprobe_run(uint32_t id, struct fprobe_regs *regs)
{
	if (id < NPROBES) {
		hits[id]++;
		seen[id] = *regs;
		run_no[id] = ++runs;
	}
	if (clobber)
		__asm__ volatile("pxor %%xmm0, %%xmm0\n pxor %%xmm1, %%xmm1\n"
				 "pxor %%xmm2, %%xmm2\n pxor %%xmm7, %%xmm7\n"
				 "pxor %%xmm9, %%xmm9\n"
				 "xor %%eax, %%eax\n cmp $1, %%eax\n"
				 ::: "xmm0", "xmm1", "xmm2", "xmm7", "xmm9", "rax",
				 "cc");
}

/* ---- functions to probe ---- */

#define FN(name) ".globl " #name "\n.type " #name ",@function\n" #name ":\n"
#define END(name) #name "_end:\n.globl " #name "_end\n.size " #name ", .-" #name "\n"
__asm__(
	".text\n"
	".p2align 4, 0xcc\n"
	FN(t_add)        /* a + b, with a frame */
	"  push %rbp\n  mov %rsp, %rbp\n  lea (%rdi,%rsi), %rax\n  pop %rbp\n  ret\n"
	END(t_add)
	".p2align 4, 0xcc\n"
	FN(t_scale)      /* x * y + z (doubles in xmm0-2) */
	"  push %rbp\n  mov %rsp, %rbp\n  mulsd %xmm1, %xmm0\n  addsd %xmm2, %xmm0\n"
	"  pop %rbp\n  ret\n"
	END(t_scale)
	".p2align 4, 0xcc\n"
	FN(t_redzone)    /* a leaf keeping a and b in its red zone across the site */
	"  mov %rdi, -8(%rsp)\n  mov %rsi, -16(%rsp)\n"
	".globl t_redzone_site\n"
	"t_redzone_site:\n"
	"  mov -8(%rsp), %rax\n  add -16(%rsp), %rax\n  ret\n"
	END(t_redzone)
	".p2align 4, 0xcc\n"
	FN(t_flags)      /* a < b ? 1 : 2, the comparison's flags live across the site */
	"  cmp %rsi, %rdi\n"
	".globl t_flags_site\n"
	"t_flags_site:\n"
	"  mov $1, %eax\n  jl 1f\n  mov $2, %eax\n1: ret\n"
	END(t_flags)
	".p2align 4, 0xcc\n"
	FN(t_rec)        /* n + (n - 1) + ... + 0, recursively */
	"  push %rbx\n  mov %rdi, %rbx\n  test %rdi, %rdi\n  je 1f\n"
	"  lea -1(%rdi), %rdi\n  call t_rec\n  add %rbx, %rax\n  pop %rbx\n  ret\n"
	"1: xor %eax, %eax\n  pop %rbx\n  ret\n"
	END(t_rec)
	".p2align 4, 0xcc\n"
	FN(t_call)       /* fn(arg): calls through, 1 + its result */
	"  push %rbp\n  mov %rsp, %rbp\n  mov %rdi, %rax\n  mov %rsi, %rdi\n"
	"  call *%rax\n  add $1, %rax\n  pop %rbp\n  ret\n"
	END(t_call)
	".p2align 4, 0xcc\n"
	FN(t_tail)       /* t_add(a, b), by a tail call */
	"  mov %rdi, %rdi\n  mov %rsi, %rsi\n  jmp t_add\n"
	END(t_tail)
	".p2align 4, 0xcc\n"
	FN(t_sp)         /* call fn(a, b) and record the sp it was called with */
	"  sub $8, %rsp\n  mov %rdi, %rax\n  mov %rsi, %rdi\n  mov %rdx, %rsi\n"
	"  lea -8(%rsp), %rcx\n  mov %rcx, t_sp_seen(%rip)\n"
	"  call *%rax\n  add $8, %rsp\n  ret\n"
	END(t_sp)
	".p2align 4, 0xcc\n");

#define DECL(n) extern uint8_t n[], n##_end[]
DECL(t_add); DECL(t_scale); DECL(t_redzone); DECL(t_flags); DECL(t_rec);
DECL(t_call); DECL(t_tail);
extern uint8_t t_sp_end[];
extern uint8_t t_redzone_site[], t_flags_site[];
uint64_t t_sp_seen;
long t_sp(void *fn, long a, long b);

/* ---- patching in this process ---- */

static uint8_t *pool;
static size_t pool_used;

struct patched {
	struct x86_plan plan;
	struct fprobe_site *site;
};

static uint8_t *near_pool(void)
{
	uintptr_t base = ((uintptr_t)t_add & ~(uintptr_t)0xffff) + (64 << 20);
	for (int i = 0; i < 256; i++, base += 1 << 20) {
		void *p = mmap((void *)base, 1 << 16, PROT_READ | PROT_WRITE | PROT_EXEC,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		if (p != MAP_FAILED)
			return p;
	}
	return NULL;
}

static void set_text(uint8_t *at, const uint8_t *bytes, size_t n)
{
	uintptr_t page = (uintptr_t)at & ~(uintptr_t)4095;
	mprotect((void *)page, 8192, PROT_READ | PROT_WRITE | PROT_EXEC);
	memcpy(at, bytes, n);
	mprotect((void *)page, 8192, PROT_READ | PROT_EXEC);
}

/* Patch `at` (inside fn..end) with probes: entry ids, then return ids. */
static int patch(const char *name, uint8_t *fn, uint8_t *end, uint8_t *at,
		 const uint32_t *entry, uint32_t ne, const uint32_t *ret,
		 uint32_t nr, struct patched *pt)
{
	char why[256];
	struct x86_site s = {
		.name = name, .addr = (uint64_t)(uintptr_t)at, .code = at,
		.len = (size_t)(end - at), .func_len = (size_t)(end - at),
		.room = (size_t)(end - at),
	};
	if (x86_plan(&s, &pt->plan, why, sizeof(why)) < 0) {
		printf("# %s: %s\n", name, why);
		return -1;
	}
	pool_used = (pool_used + 63) & ~(size_t)63;
	pt->site = (struct fprobe_site *)(pool + pool_used);
	memset(pt->site, 0, sizeof(*pt->site));
	pt->site->magic = FPROBE_SITE_MAGIC;
	pt->site->kind = FPROBE_PROBES;
	pt->site->state = FPROBE_PATCHED;
	pt->site->nentry = ne;
	pt->site->nret = nr;
	for (uint32_t i = 0; i < ne; i++)
		pt->site->probes[i] = entry[i];
	for (uint32_t i = 0; i < nr; i++)
		pt->site->probes[ne + i] = ret[i];
	pool_used += sizeof(*pt->site);
	pool_used = (pool_used + 15) & ~(size_t)15;
	uint8_t *code = pool + pool_used;
	struct tramp_params tp = {
		.at = (uint64_t)(uintptr_t)code,
		.site = (uint64_t)(uintptr_t)pt->site,
		.handler = (uint64_t)(uintptr_t)sonde_fprobe_entry,
		.mid_function = at != fn,
		.keep_vectors = true,   /* this file's handler is plain C */
		.plan = &pt->plan,
	};
	int n = tramp_emit_entry(&tp, code, why, sizeof(why));
	if (n < 0) {
		printf("# %s: %s\n", name, why);
		return -1;
	}
	pool_used += (size_t)n;
	uint8_t bytes[X86_MAX_PATCH], pad[X86_JMP_LEN];
	if (x86_patch_bytes(&pt->plan, tp.at, bytes, pad) < 0)
		return -1;
	set_text(at, bytes, pt->plan.patch_len);
	return 0;
}

static void unpatch(struct patched *pt)
{
	set_text((uint8_t *)(uintptr_t)pt->plan.addr, pt->plan.orig, pt->plan.patch_len);
}

typedef long (*fn2)(long, long);
typedef double (*fnd)(double, double, double);

static void test_entry(void)
{
	struct patched pt;
	uint32_t e0 = 0;
	CHECK(patch("t_add", t_add, t_add_end, t_add, &e0, 1, NULL, 0, &pt) == 0,
	      "t_add patched");
	memset(hits, 0, sizeof(hits));
	long r = t_sp(t_add, 30, 12);
	CHECK(r == 42, "t_add still adds through its trampoline");
	CHECK(hits[0] == 1, "the entry probe ran once");
	CHECK(seen[0].di == 30 && seen[0].si == 12, "the probe saw the arguments (di, si)");
	CHECK(seen[0].ip == (uint64_t)(uintptr_t)t_add, "the probe saw ip = the function");
	CHECK(seen[0].sp == t_sp_seen, "the probe saw sp as the function got it");
	CHECK(seen[0].orig_ax == UINT64_MAX && seen[0].cs == 0x33 && seen[0].ss == 0x2b,
	      "orig_ax, cs and ss as the kernel reports them");
	clobber = 1;
	r = ((fn2)(void *)t_add)(-5, 2);
	clobber = 0;
	CHECK(r == -3 && hits[0] == 2, "a handler that clobbers registers changes nothing");
	unpatch(&pt);
	r = ((fn2)(void *)t_add)(1, 2);
	CHECK(r == 3 && hits[0] == 2, "unpatched: no probe runs");
}

static void test_vectors_redzone_flags(void)
{
	struct patched pt;
	uint32_t e1 = 1;
	clobber = 1;
	if (patch("t_scale", t_scale, t_scale_end, t_scale, &e1, 1, NULL, 0, &pt) == 0) {
		double d = ((fnd)(void *)t_scale)(1.5, 4.0, 0.25);
		CHECK(d == 6.25 && hits[1] == 1,
		      "xmm0-7 (double arguments) survive a handler that clobbers them");
		unpatch(&pt);
	}
	if (patch("t_redzone", t_redzone, t_redzone_end, t_redzone_site, &e1, 1,
		  NULL, 0, &pt) == 0) {
		long r = ((fn2)(void *)t_redzone)(1000, 337);
		CHECK(r == 1337 && hits[1] == 2,
		      "a site in a leaf function: its red zone is left alone");
		CHECK(seen[1].ip == (uint64_t)(uintptr_t)t_redzone_site,
		      "a site inside a function: ip is the site");
		unpatch(&pt);
	}
	if (patch("t_flags", t_flags, t_flags_end, t_flags_site, &e1, 1, NULL, 0,
		  &pt) == 0) {
		long a = ((fn2)(void *)t_flags)(1, 2), b = ((fn2)(void *)t_flags)(3, 2);
		CHECK(a == 1 && b == 2 && hits[1] == 4,
		      "a site where the flags are live: they survive the handler");
		unpatch(&pt);
	}
	clobber = 0;
}

static void test_returns(void)
{
	struct patched pt;
	uint32_t e2 = 2, r3 = 3;
	memset(hits, 0, sizeof(hits));
	if (patch("t_add", t_add, t_add_end, t_add, &e2, 1, &r3, 1, &pt) < 0)
		return;
	clobber = 1;
	long r = t_sp(t_add, 40, 2);
	clobber = 0;
	CHECK(r == 42, "with a return probe, t_add still returns its value");
	CHECK(hits[2] == 1 && hits[3] == 1, "the entry and the return probe ran once each");
	CHECK(seen[3].ax == 42, "the return probe saw retval in ax");
	CHECK(seen[3].ip > (uint64_t)(uintptr_t)t_sp &&
	      seen[3].ip < (uint64_t)(uintptr_t)t_sp_end,
	      "the return probe's ip is the caller's return address");
	CHECK(seen[3].sp == seen[2].sp + 8, "and sp just above the return address");
	CHECK(tls_shadow && tls_shadow->depth == 0, "the shadow stack is empty again");
	unpatch(&pt);
}

static void test_recursion(void)
{
	struct patched pt;
	uint32_t e0 = 0, r1 = 1;
	memset(hits, 0, sizeof(hits));
	uint64_t missed = sonde_fprobe_registry.missed_returns;
	if (patch("t_rec", t_rec, t_rec_end, t_rec, &e0, 1, &r1, 1, &pt) < 0)
		return;
	long r = ((fn2)(void *)t_rec)(100, 0);
	CHECK(r == 5050, "a recursion 101 frames deep computes its sum");
	CHECK(hits[0] == 101, "every entry probed");
	CHECK(hits[1] == FPROBE_DEPTH, "the 64 outermost returns probed, as the kernel does");
	CHECK(sonde_fprobe_registry.missed_returns - missed == 101 - FPROBE_DEPTH,
	      "the deeper ones counted as missed");
	CHECK(tls_shadow->depth == 0, "the shadow stack is empty again");
	unpatch(&pt);
}

/* longjmp out of a hooked frame, many times: the stale entries are
 * dropped by the next call at the same depth, nothing overflows, and
 * later returns are right. */
static jmp_buf jb;
static long jumper(long x)
{
	if (x >= 0)
		longjmp(jb, 1);
	return x;
}

static void test_longjmp(void)
{
	struct patched pt;
	uint32_t e0 = 0, r1 = 1;
	memset(hits, 0, sizeof(hits));
	if (patch("t_call", t_call, t_call_end, t_call, &e0, 1, &r1, 1, &pt) < 0)
		return;
	int jumps = 0;
	uint32_t maxdepth = 0;
	for (volatile int i = 0; i < 1000; i++) {
		if (setjmp(jb) == 0)
			((fn2)(void *)t_call)((long)(uintptr_t)jumper, i);
		else
			jumps++;
		if (tls_shadow && tls_shadow->depth > maxdepth)
			maxdepth = tls_shadow->depth;
	}
	CHECK(jumps == 1000 && hits[0] == 1000 && hits[1] == 0,
	      "1000 longjmps out of a hooked frame: no return probe ran");
	CHECK(maxdepth <= 1, "the shadow stack never grew (stale entries dropped at the next call)");
	long r = ((fn2)(void *)t_call)((long)(uintptr_t)jumper, -7);
	CHECK(r == -6 && hits[1] == 1 && seen[1].ax == (uint64_t)-6,
	      "a normal return after them is probed right");
	unpatch(&pt);
}

/* A function with a return probe tail-calls another with one: the callee
 * finds the trampoline's address as its return address already; the one
 * return runs both return probes, the callee's first, and goes back to
 * the real caller (the kernel's chained uretprobes do the same). */
static void test_tail_call(void)
{
	struct patched pa, pt;
	uint32_t e2 = 2, r3 = 3, e4 = 4, r5 = 5;
	memset(hits, 0, sizeof(hits));
	if (patch("t_add", t_add, t_add_end, t_add, &e2, 1, &r3, 1, &pa) < 0)
		return;
	if (patch("t_tail", t_tail, t_tail_end, t_tail, &e4, 1, &r5, 1, &pt) < 0) {
		unpatch(&pa);
		return;
	}
	long r = t_sp(t_tail, 40, 2);
	CHECK(r == 42, "a tail call between two return-probed functions returns right");
	CHECK(hits[2] == 1 && hits[3] == 1 && hits[4] == 1 && hits[5] == 1,
	      "both entries and both returns probed once");
	CHECK(run_no[3] < run_no[5] && seen[3].ax == 42 && seen[5].ax == 42,
	      "the callee's return probe first, then the caller's, both seeing retval");
	CHECK(seen[5].ip > (uint64_t)(uintptr_t)t_sp &&
	      seen[5].ip < (uint64_t)(uintptr_t)t_sp_end,
	      "and both return to the real caller");
	CHECK(tls_shadow && tls_shadow->depth == 0, "the shadow stack is empty again");
	unpatch(&pt);
	unpatch(&pa);
}

/* What the FPROBE_UNWIND and FPROBE_CATCH sites do, called by hand from
 * inside a hooked frame: the return address goes back to the real one
 * (an unwinder can read it) and is hooked again afterwards. */
static struct fprobe_site unwind_site = { .magic = FPROBE_SITE_MAGIC,
	.kind = FPROBE_UNWIND, .state = FPROBE_PATCHED };
static struct fprobe_site catch_site = { .magic = FPROBE_SITE_MAGIC,
	.kind = FPROBE_CATCH, .state = FPROBE_PATCHED };
static int unhooked_ok, rehooked_ok;

static long inner(long x)
{
	struct fprobe_regs regs = { .sp = (uint64_t)(uintptr_t)__builtin_frame_address(0) };
	struct shadow_frame *f = &tls_shadow->f[tls_shadow->depth - 1];
	uint64_t *slot = (uint64_t *)f->stack;
	bool hooked = *slot == (uint64_t)sonde_fprobe_return_tramp;
	sonde_fprobe_entry(&unwind_site, &regs);
	unhooked_ok = hooked && *slot == f->ret && !f->hooked;
	sonde_fprobe_entry(&catch_site, &regs);
	rehooked_ok = *slot == (uint64_t)sonde_fprobe_return_tramp && f->hooked;
	return x;
}

static void test_unwind_hooks(void)
{
	struct patched pt;
	uint32_t e0 = 0, r1 = 1;
	memset(hits, 0, sizeof(hits));
	if (patch("t_call", t_call, t_call_end, t_call, &e0, 1, &r1, 1, &pt) < 0)
		return;
	long r = ((fn2)(void *)t_call)((long)(uintptr_t)inner, 9);
	CHECK(unhooked_ok, "an unwinder starting: the hooked frame has its return address back");
	CHECK(rehooked_ok, "an exception caught below it: the frame is hooked again");
	CHECK(r == 10 && hits[1] == 1, "and its return is probed");
	unpatch(&pt);
}

/* sonde detached while the exception was on its way (the threads were
 * stopped, the sites restored): the catch hook must not hook the frame
 * again, the unwinder's hooks being gone. */
static int detached_ok;

static long inner_detached(long x)
{
	struct fprobe_regs regs = { .sp = (uint64_t)(uintptr_t)__builtin_frame_address(0) };
	struct shadow_frame *f = &tls_shadow->f[tls_shadow->depth - 1];
	uint64_t *slot = (uint64_t *)f->stack;
	sonde_fprobe_entry(&unwind_site, &regs);
	catch_site.state = FPROBE_RESTORED;
	sonde_fprobe_entry(&catch_site, &regs);
	catch_site.state = FPROBE_PATCHED;
	detached_ok = *slot == f->ret && !f->hooked;
	return x;
}

/* A thread that found its site patched, was stopped, and hooked its
 * return after sonde had restored the site and unhooked every frame:
 * it undoes the hook, and the function returns straight to its caller. */
static void test_hooks_after_detach(void)
{
	struct patched pt;
	uint32_t e2 = 2, r3 = 3;
	memset(hits, 0, sizeof(hits));
	if (patch("t_add", t_add, t_add_end, t_add, &e2, 1, &r3, 1, &pt) < 0)
		return;
	pt.site->state = FPROBE_RESTORED;
	long r = t_sp(t_add, 40, 2);
	CHECK(r == 42 && hits[2] == 1 && hits[3] == 0,
	      "a return hooked after the site was restored is undone: no return "
	      "probe, the right value");
	unpatch(&pt);
	tls_shadow->depth = 0;
	uint32_t e0 = 0, r1 = 1;
	memset(hits, 0, sizeof(hits));
	if (patch("t_call", t_call, t_call_end, t_call, &e0, 1, &r1, 1, &pt) < 0)
		return;
	r = ((fn2)(void *)t_call)((long)(uintptr_t)inner_detached, 9);
	CHECK(detached_ok, "an exception caught after the detach: the frame is "
	      "not hooked again");
	CHECK(r == 10 && hits[1] == 0, "and it returns straight to its caller");
	unpatch(&pt);
	tls_shadow->depth = 0;
}

int main(void)
{
	pool = near_pool();
	if (!pool) {
		printf("not ok - no memory near the code for trampolines\n");
		return 1;
	}
	test_entry();
	test_vectors_redzone_flags();
	test_returns();
	test_recursion();
	test_tail_call();
	test_longjmp();
	test_unwind_hooks();
	test_hooks_after_detach();
	return UNIT_DONE();
}
