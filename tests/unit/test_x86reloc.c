/* test_x86reloc.c - src/process/x86reloc.c: planning and relocating the
 * first instructions of functions written here in assembly (the shapes
 * compilers rarely produce on purpose): each is patched in this very
 * process to jump to a trampoline that counts the call, runs the moved
 * instructions and jumps back; the function must compute what it did
 * before, the count must be right, and the restored bytes must be the
 * original ones. Shapes: an ordinary prologue, rip-relative loads and
 * lea first, a conditional branch, a call, jrcxz, a short jmp first,
 * a loop whose head is the second instruction (patched by a short jump
 * into the padding before), calls through a register and through memory
 * (the callee sees the function's own return address), a function
 * shorter than the jump (padding
 * after it covered), a site inside a function (FUNC+OFFSET); and the
 * refusals, each with its reason: among them an offset inside an
 * instruction and a branch from before such a site into its bytes. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "process/x86reloc.h"
#include "unit.h"

long g_val = 1000;
long g_tab[4] = { 10, 20, 30, 40 };
long tramp_hits;

long helper_double(long x) { return 2 * x; }
long (*g_fnptr)(long) = helper_double;
void *g_seen_ra;

/* helper_double that notes where it will return to */
__attribute__((noinline)) long helper_ra(long x)
{
	g_seen_ra = __builtin_return_address(0);
	return 2 * x;
}

#define FN(name) ".globl " #name "\n.type " #name ",@function\n" #name ":\n"
#define END(name) #name "_end:\n.globl " #name "_end\n.size " #name ", .-" #name "\n"
__asm__(
	".text\n"
	".p2align 4, 0xcc\n"
	FN(f_plain)
	"  push %rbp\n  mov %rsp, %rbp\n  lea 1(%rdi), %rax\n  pop %rbp\n  ret\n"
	END(f_plain)
	".p2align 4, 0xcc\n"
	FN(f_riprel)
	"  mov g_val(%rip), %rax\n  add %rdi, %rax\n  ret\n"
	END(f_riprel)
	".p2align 4, 0xcc\n"
	FN(f_lea)
	"  lea g_tab(%rip), %rax\n  mov (%rax,%rdi,8), %rax\n  ret\n"
	END(f_lea)
	".p2align 4, 0xcc\n"
	FN(f_jcc)
	"  test %rdi, %rdi\n  je 1f\n  lea 1(%rdi), %rax\n  ret\n1: mov $-1, %rax\n  ret\n"
	END(f_jcc)
	".p2align 4, 0xcc\n"
	FN(f_call)
	"  call helper_double\n  add $1, %rax\n  ret\n"
	END(f_call)
	".p2align 4, 0xcc\n"
	FN(f_callra)
	"  call helper_ra\n  add $1, %rax\n  ret\n"
	END(f_callra)
	".p2align 4, 0xcc\n"
	FN(f_icall_reg)   /* the call through a register ends the moved bytes */
	"  mov %rsi, %rax\n  call *%rax\n  add $1, %rax\n  ret\n"
	END(f_icall_reg)
	".p2align 4, 0xcc\n"
	FN(f_icall_mem)
	"  call *g_fnptr(%rip)\n  add $1, %rax\n  ret\n"
	END(f_icall_mem)
	".p2align 4, 0xcc\n"
	FN(f_icall_sp)
	"  call *0x80(%rsp)\n  ret\n"
	END(f_icall_sp)
	".p2align 4, 0xcc\n"
	FN(f_jrcxz)
	"  mov %rdi, %rcx\n  jrcxz 1f\n  lea 1(%rdi), %rax\n  ret\n1: mov $77, %eax\n  ret\n"
	END(f_jrcxz)
	".p2align 4, 0xcc\n"
	FN(f_jmpfirst)
	"  jmp 1f\n  ud2\n  ud2\n  ud2\n1: lea 3(%rdi), %rax\n  ret\n"
	END(f_jmpfirst)
	/* the loop's head is at +2: a jump there would land inside jmp rel32
	 * (16 bytes of int3 before it, as alignment often leaves) */
	".p2align 4, 0xcc\n"
	".skip 16, 0xcc\n"
	FN(f_loop)
	"  xor %eax, %eax\n1: add %edi, %eax\n  dec %edi\n  jg 1b\n  ret\n"
	END(f_loop)
	/* shorter than the jump: 4 bytes, then padding */
	".p2align 4, 0xcc\n"
	FN(f_short)
	"  lea 2(%rdi), %eax\n  ret\n"
	END(f_short)
	".p2align 4, 0xcc\n"
	FN(f_tail)   /* the next function follows at once: no padding */
	"  mov %rdi, %rax\n  ret\n"
	END(f_tail)
	FN(f_loop_nopad)
	"  xor %eax, %eax\n1: add %edi, %eax\n  dec %edi\n  jg 1b\n  ret\n"
	END(f_loop_nopad)
	FN(f_tiny)   /* 1 byte, then the next function */
	"  ret\n"
	END(f_tiny)
	FN(f_int3)
	"  int3\n  nop\n  nop\n  nop\n  nop\n  ret\n"
	END(f_int3)
	FN(f_indcall)
	"  call *%rsi\n  add $1, %rax\n  ret\n"
	END(f_indcall)
	FN(f_xbegin)
	"  xbegin 1f\n1: ret\n"
	END(f_xbegin)
	/* sites inside: the mov at +1 and the lea at +4 start there, +2 and
	 * +3 are inside the mov */
	".p2align 4, 0xcc\n"
	FN(f_mid)
	"  push %rbp\n  mov %rsp, %rbp\n  lea 1(%rdi), %rax\n  add $2, %rax\n"
	"  pop %rbp\n  ret\n"
	END(f_mid)
	/* the je at +3 goes to +8, inside a patch at +5 */
	".p2align 4, 0xcc\n"
	FN(f_midjmp)
	"  test %rdi, %rdi\n  je 1f\n  mov %rdi, %rax\n1: add $1, %rax\n  ret\n"
	END(f_midjmp)
	/* glibc's shape: the function before jumps into f_xjmp's second
	 * instruction; the padding between ends in a 6-byte nop */
	".p2align 4, 0xcc\n"
	FN(f_xsrc)
	"  mov %rdi, %rax\n  jmp f_xjmp + 3\n"
	END(f_xsrc)
	"  .byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n"
	"  .byte 0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00\n"
	FN(f_xjmp)
	"  mov %rdi, %rax\n  add $1, %rax\n  ret\n"
	END(f_xjmp)
	".p2align 4, 0xcc\n"
	FN(f_after)
	"  ret\n"
	END(f_after)
	".p2align 4, 0xcc\n");

#define DECL(n) extern uint8_t n[], n##_end[]
DECL(f_plain); DECL(f_riprel); DECL(f_lea); DECL(f_jcc); DECL(f_call);
DECL(f_callra); DECL(f_icall_reg); DECL(f_icall_mem); DECL(f_icall_sp);
DECL(f_jrcxz); DECL(f_jmpfirst); DECL(f_loop); DECL(f_short); DECL(f_tail);
DECL(f_loop_nopad); DECL(f_tiny); DECL(f_int3); DECL(f_indcall);
DECL(f_xbegin); DECL(f_mid); DECL(f_midjmp); DECL(f_xsrc); DECL(f_xjmp);
DECL(f_after);

/* The functions in address order, to find each one's neighbours. */
static uint8_t *const order[] = {
	f_plain, f_riprel, f_lea, f_jcc, f_call, f_callra, f_icall_reg,
	f_icall_mem, f_icall_sp, f_jrcxz, f_jmpfirst, f_loop,
	f_short, f_tail, f_loop_nopad, f_tiny, f_int3, f_indcall, f_xbegin,
	f_mid, f_midjmp, f_xsrc, f_xjmp, f_after,
};
static uint8_t *const ends[] = {
	f_plain_end, f_riprel_end, f_lea_end, f_jcc_end, f_call_end,
	f_callra_end, f_icall_reg_end, f_icall_mem_end, f_icall_sp_end,
	f_jrcxz_end, f_jmpfirst_end, f_loop_end, f_short_end, f_tail_end,
	f_loop_nopad_end, f_tiny_end, f_int3_end, f_indcall_end,
	f_xbegin_end, f_mid_end, f_midjmp_end, f_xsrc_end, f_xjmp_end,
	f_after_end,
};
#define NFUNCS (sizeof(order) / sizeof(order[0]))

/* The site at fn + off, as sonde describes it from the symbols: a
 * function's entry with the padding before it, or a place inside one
 * with the function's bytes before it (its lead). */
static void site_at(const char *name, uint8_t *fn, size_t off, struct x86_site *s)
{
	memset(s, 0, sizeof(*s));
	s->name = name;
	s->addr = (uint64_t)(uintptr_t)(fn + off);
	s->code = fn + off;
	s->lead_len = off;
	for (size_t i = 0; i < NFUNCS; i++) {
		if (order[i] != fn)
			continue;
		s->func_len = (size_t)(ends[i] - fn) - off;
		s->room = (i + 1 < NFUNCS ? (size_t)(order[i + 1] - fn)
					  : (size_t)(ends[i] - fn)) - off;
		s->len = s->room;
		if (!off && i > 0 && ends[i - 1] < fn) {
			s->before = ends[i - 1];
			s->before_len = (size_t)(fn - ends[i - 1]);
		}
	}
	/* the code around it: all of this file's functions */
	s->around = order[0];
	s->around_len = (size_t)(ends[NFUNCS - 1] - order[0]);
	s->around_addr = (uint64_t)(uintptr_t)order[0];
}

static void site_of(const char *name, uint8_t *fn, struct x86_site *s)
{
	site_at(name, fn, 0, s);
}

/* A page within 2 GiB of the code, for trampolines. */
static uint8_t *near_page(void)
{
	uintptr_t base = ((uintptr_t)f_plain & ~(uintptr_t)0xffff) + (64 << 20);
	for (int i = 0; i < 256; i++, base += 1 << 20) {
		void *p = mmap((void *)base, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		if (p != MAP_FAILED)
			return p;
	}
	return NULL;
}

static void text_writable(uint8_t *fn, int on)
{
	uintptr_t page = (uintptr_t)fn & ~(uintptr_t)4095;
	mprotect((void *)(page - 4096), 3 * 4096,
		 PROT_READ | PROT_EXEC | (on ? PROT_WRITE : 0));
}

typedef long (*fn1)(long, long);

/* Patch fn to count calls through a trampoline at tramp, call it with
 * each argument, compare with the unpatched results, restore. */
static void run_patched_at(const char *name, uint8_t *fn, size_t off,
			   const long *args, int nargs, uint8_t *tramp,
			   int want_via_pad)
{
	char label[160], why[256] = "";
	long want[8];
	fn1 f = (fn1)(void *)fn;
	for (int i = 0; i < nargs; i++)
		want[i] = f(args[i], (long)(uintptr_t)helper_double);
	struct x86_site s;
	site_at(name, fn, off, &s);
	struct x86_plan p;
	int r = x86_plan(&s, &p, why, sizeof(why));
	snprintf(label, sizeof(label), "%s: planned (%s)", name,
		 want_via_pad ? "short jump into the padding before" : "jmp rel32");
	CHECK(r == 0 && p.via_pad == (want_via_pad != 0), label);
	if (r < 0) {
		printf("#   %s\n", why);
		return;
	}
	/* trampoline: lock incq tramp_hits(%rip); the moved instructions */
	uint8_t *t = tramp;
	t[0] = 0xf0; t[1] = 0x48; t[2] = 0xff; t[3] = 0x05;
	int32_t d = (int32_t)((intptr_t)&tramp_hits - (intptr_t)(t + 8));
	memcpy(t + 4, &d, 4);
	int n = x86_relocate(&p, (uint64_t)(uintptr_t)(t + 8), t + 8, 4096 - 8,
			     why, sizeof(why));
	snprintf(label, sizeof(label), "%s: relocated", name);
	CHECK(n > 0, label);
	if (n <= 0) {
		printf("#   %s\n", why);
		return;
	}
	uint8_t at_addr[X86_MAX_PATCH], at_pad[X86_JMP_LEN], saved_pad[X86_JMP_LEN];
	CHECK(x86_patch_bytes(&p, (uint64_t)(uintptr_t)t, at_addr, at_pad) == 0,
	      "patch bytes reach the trampoline");
	text_writable(fn, 1);
	if (p.via_pad) {
		memcpy(saved_pad, (void *)(uintptr_t)p.pad_addr, X86_JMP_LEN);
		memcpy((void *)(uintptr_t)p.pad_addr, at_pad, X86_JMP_LEN);
	}
	uint8_t *at = fn + off;
	memcpy(at, at_addr, p.patch_len);
	__builtin___clear_cache((char *)fn - 8, (char *)at + 32);
	long hits0 = tramp_hits;
	int same = 1;
	for (int i = 0; i < nargs; i++) {
		long got = f(args[i], (long)(uintptr_t)helper_double);
		if (got != want[i]) {
			printf("#   %s(%ld) = %ld, want %ld\n", name, args[i], got, want[i]);
			same = 0;
		}
	}
	snprintf(label, sizeof(label), "%s: patched, computes what it did", name);
	CHECK(same, label);
	snprintf(label, sizeof(label), "%s: every call went through the trampoline", name);
	CHECK(tramp_hits - hits0 == nargs, label);
	memcpy(at, p.orig, p.patch_len);
	if (p.via_pad)
		memcpy((void *)(uintptr_t)p.pad_addr, p.pad_orig, X86_JMP_LEN);
	text_writable(fn, 0);
	snprintf(label, sizeof(label), "%s: restored byte for byte", name);
	CHECK(!p.via_pad || memcmp(saved_pad, p.pad_orig, X86_JMP_LEN) == 0, label);
	hits0 = tramp_hits;
	f(args[0], 0 + (long)(uintptr_t)helper_double);
	CHECK(tramp_hits == hits0, "restored: the trampoline is no longer used");
}

static void run_patched(const char *name, uint8_t *fn, const long *args,
			int nargs, uint8_t *tramp, int want_via_pad)
{
	run_patched_at(name, fn, 0, args, nargs, tramp, want_via_pad);
}

static void refused_at(const char *name, uint8_t *fn, size_t off,
		       const char *reason)
{
	char label[160], why[256] = "";
	struct x86_site s;
	site_at(name, fn, off, &s);
	struct x86_plan p;
	int r = x86_plan(&s, &p, why, sizeof(why));
	snprintf(label, sizeof(label), "%s: refused, saying '%s'", name, reason);
	CHECK(r < 0 && strstr(why, reason) && strstr(why, name), label);
	if (r == 0 || !strstr(why, reason))
		printf("#   r=%d why=%s\n", r, why);
}

static void refused(const char *name, uint8_t *fn, const char *reason)
{
	refused_at(name, fn, 0, reason);
}

/* Relocated more than 2 GiB away: branches become absolute jumps and the
 * copy, called directly, still computes the function; a rip-relative
 * operand cannot follow and is refused. */
static void far_copy(void)
{
	char why[256];
	uint8_t *far = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int64_t dist = (int64_t)((uintptr_t)far - (uintptr_t)f_plain);
	if (far == MAP_FAILED || (dist < ((int64_t)1 << 32) && dist > -((int64_t)1 << 32))) {
		printf("ok - far relocation # SKIP no memory far from the code\n");
		return;
	}
	struct { const char *name; uint8_t *fn; long arg, want; } cases[] = {
		{ "f_jcc", f_jcc, 0, -1 }, { "f_jcc", f_jcc, 5, 6 },
		{ "f_call", f_call, 21, 43 }, { "f_jrcxz", f_jrcxz, 0, 77 },
		{ "f_jrcxz", f_jrcxz, 4, 5 }, { "f_jmpfirst", f_jmpfirst, 1, 4 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct x86_site s;
		struct x86_plan p;
		site_of(cases[i].name, cases[i].fn, &s);
		int n = -1;
		if (x86_plan(&s, &p, why, sizeof(why)) == 0)
			n = x86_relocate(&p, (uint64_t)(uintptr_t)far, far, 4096, why,
					 sizeof(why));
		long got = n > 0 ? ((fn1)(void *)far)(cases[i].arg, 0) : -999;
		char label[128];
		snprintf(label, sizeof(label), "%s(%ld) from a copy beyond 2 GiB",
			 cases[i].name, cases[i].arg);
		CHECK(got == cases[i].want, label);
	}
	struct x86_site s;
	struct x86_plan p;
	site_of("f_riprel", f_riprel, &s);
	int r = x86_plan(&s, &p, why, sizeof(why));
	r = r ? r : x86_relocate(&p, (uint64_t)(uintptr_t)far, far, 4096, why, sizeof(why));
	CHECK(r == -ERANGE && strstr(why, "beyond 2 GiB"),
	      "a rip-relative operand out of reach of the copy is refused");
	munmap(far, 4096);
}

/* A moved call returns into the function, not into the copy: the callee
 * sees the same return address patched as unpatched (a C++ unwinder and
 * a stack walk need one with unwind information). */
static void return_address(uint8_t *tramp)
{
	char why[256];
	struct x86_site s;
	struct x86_plan p;
	site_of("f_callra", f_callra, &s);
	g_seen_ra = NULL;
	((fn1)(void *)f_callra)(4, 0);
	void *unpatched = g_seen_ra;
	int n = -1;
	if (x86_plan(&s, &p, why, sizeof(why)) == 0)
		n = x86_relocate(&p, (uint64_t)(uintptr_t)tramp, tramp, 4096, why,
				 sizeof(why));
	g_seen_ra = NULL;
	long got = n > 0 ? ((fn1)(void *)tramp)(4, 0) : -1;
	CHECK(unpatched == f_callra + 5 && got == 9 && g_seen_ra == unpatched,
	      "a moved call: the callee returns to the function itself");
}

/* A thread stopped inside the patched bytes moves to the same
 * instruction in the copy. */
static void moved_rip(uint8_t *tramp)
{
	char why[256];
	struct x86_site s;
	struct x86_plan p;
	site_of("f_plain", f_plain, &s);
	x86_plan(&s, &p, why, sizeof(why));
	x86_relocate(&p, (uint64_t)(uintptr_t)tramp, tramp, 4096, why, sizeof(why));
	uint64_t out = 0, a = (uint64_t)(uintptr_t)f_plain;
	CHECK(p.patch_len == 8 && p.ninsns == 3, "f_plain: push, mov, lea are moved (8 bytes)");
	CHECK(x86_moved_rip(&p, a + 1, &out) == 0 && out == (uint64_t)(uintptr_t)tramp + 1,
	      "a thread at the second instruction moves to its copy");
	CHECK(x86_moved_rip(&p, a + 4, &out) == 0 && out == (uint64_t)(uintptr_t)tramp + 4,
	      "a thread at the third instruction moves to its copy");
	CHECK(x86_moved_rip(&p, a + 2, &out) == -EINVAL,
	      "a thread inside an instruction cannot be moved");
}

/* A function's first instruction, and whether a probe can run after it
 * as at the entry (the process engine patches there then). */
static void entry_skip(void)
{
	static const struct {
		const char *what;
		uint8_t code[8];
		int ok;
		size_t len;
		int32_t delta;
		bool flags;
	} c[] = {
		{ "push %rbp", { 0x55 }, 0, 1, 8, false },
		{ "push %r12", { 0x41, 0x54 }, 0, 2, 8, false },
		{ "sub $0x28,%rsp", { 0x48, 0x83, 0xec, 0x28 }, 0, 4, 40, true },
		{ "sub $0xd8,%rsp", { 0x48, 0x81, 0xec, 0xd8, 0, 0, 0 }, 0, 7, 216, true },
		{ "endbr64", { 0xf3, 0x0f, 0x1e, 0xfa }, 0, 4, 0, false },
		{ "test %rdi,%rdi", { 0x48, 0x85, 0xff }, 0, 3, 0, true },
		{ "cmpb $0,x(%rip)", { 0x80, 0x3d, 1, 2, 3, 4, 0 }, 0, 7, 0, true },
		{ "mov $0x27,%eax", { 0xb8, 0x27, 0, 0, 0 }, 0, 5, 0, false },
		{ "mov 0x10(%rdi),%eax", { 0x8b, 0x47, 0x10 }, 0, 3, 0, false },
		{ "mov %rdi,%rbx", { 0x48, 0x89, 0xfb }, 0, 3, 0, false },
		{ "mov $1,%edx (an argument)", { 0xba, 1, 0, 0, 0 }, -1, 0, 0, false },
		{ "mov %rdi,%rsi (an argument)", { 0x48, 0x89, 0xfe }, -1, 0, 0, false },
		{ "mov %rsp,%rbp (the frame pointer)", { 0x48, 0x89, 0xe5 }, -1, 0, 0, false },
		{ "pxor %xmm0,%xmm0 (a float argument)", { 0x66, 0x0f, 0xef, 0xc0 }, -1, 0, 0, false },
		{ "mov %rdi,(%rax) (memory)", { 0x48, 0x89, 0x38 }, -1, 0, 0, false },
		{ "lock incq x(%rip) (memory)", { 0xf0, 0x48, 0xff, 0x05, 1, 2, 3, 4 }, -1, 0, 0, false },
		{ "and $-16,%rsp (unknown amount)", { 0x48, 0x83, 0xe4, 0xf0 }, -1, 0, 0, false },
		{ "jmp (a branch)", { 0xeb, 0x00 }, -1, 0, 0, false },
		{ "call (a branch)", { 0xe8, 0, 0, 0, 0 }, -1, 0, 0, false },
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		size_t len = 0;
		int32_t delta = 0;
		bool flags = false;
		int r = x86_entry_skip(c[i].code, sizeof(c[i].code), &len, &delta, &flags);
		char name[128];
		snprintf(name, sizeof(name), "entry skip: %s: %s", c[i].what,
			 c[i].ok == 0 ? "the probe runs after it" : "not skipped");
		CHECK(r == c[i].ok && (r < 0 || (len == c[i].len && delta == c[i].delta &&
						 flags == c[i].flags)), name);
	}
}

int main(void)
{
	entry_skip();
	uint8_t *tramp = near_page();
	if (!tramp) {
		printf("not ok - no memory near the code for a trampoline\n");
		return 1;
	}
	long a4[] = { 0, 1, 2, 3 }, a3[] = { 0, 5, -7 };
	run_patched("f_plain", f_plain, a3, 3, tramp, 0);
	run_patched("f_riprel", f_riprel, a3, 3, tramp, 0);
	run_patched("f_lea", f_lea, a4, 4, tramp, 0);
	run_patched("f_jcc", f_jcc, a3, 3, tramp, 0);
	run_patched("f_call", f_call, a3, 3, tramp, 0);
	run_patched("f_icall_reg", f_icall_reg, a3, 3, tramp, 0);
	run_patched("f_icall_mem", f_icall_mem, a3, 3, tramp, 0);
	run_patched("f_callra", f_callra, a3, 3, tramp, 0);
	return_address(tramp);
	refused("f_icall_sp", f_icall_sp, "call through the stack pointer");
	run_patched("f_jrcxz", f_jrcxz, a3, 3, tramp, 0);
	run_patched("f_jmpfirst", f_jmpfirst, a3, 3, tramp, 0);
	long loops[] = { 1, 4, 10 };
	run_patched("f_loop", f_loop, loops, 3, tramp, 1);
	run_patched("f_short", f_short, a3, 3, tramp, 0);
	/* the jump covers f_short's ret and 1 byte of padding */
	{
		char why[256];
		struct x86_site s;
		struct x86_plan p;
		site_of("f_short", f_short, &s);
		x86_plan(&s, &p, why, sizeof(why));
		CHECK(p.patch_len == 5 && p.displaced_len == 4,
		      "f_short: 4 bytes moved, 1 byte of padding covered");
	}
	refused("f_loop_nopad", f_loop_nopad, "goes to f_loop_nopad+2");
	refused("f_tiny", f_tiny, "too short");
	refused("f_int3", f_int3, "breakpoint");
	refused("f_indcall", f_indcall, "call inside the patched bytes");
	refused("f_xbegin", f_xbegin, "cannot be moved");
	run_patched_at("f_mid+0x1", f_mid, 1, a3, 3, tramp, 0);
	run_patched_at("f_mid+0x4", f_mid, 4, a3, 3, tramp, 0);
	refused_at("f_mid+0x2", f_mid, 2, "not where an instruction starts: "
		   "it is inside the 3-byte mov that starts 1 byte before it");
	refused_at("f_mid+0x3", f_mid, 3, "inside the 3-byte mov that starts "
		   "2 bytes before it");
	refused_at("f_midjmp+0x5", f_midjmp, 5, "a branch 2 bytes before "
		   "f_midjmp+0x5 goes to f_midjmp+0x5+3");
	far_copy();
	{
		/* another function's branch into f_xjmp+3: the plain jump
		 * would cover it; a short one covers only the mov, and its
		 * 5-byte jump starts where the 6-byte nop before does */
		char why[256] = "";
		struct x86_site s;
		struct x86_plan p;
		site_of("f_xjmp", f_xjmp, &s);
		int r = x86_plan(&s, &p, why, sizeof(why));
		CHECK(r == 0 && p.via_pad && p.patch_len == 3,
		      "a branch from another function into the first bytes: the "
		      "short jump, before it");
		CHECK(r == 0 && p.pad_addr == (uint64_t)(uintptr_t)f_xjmp - 6,
		      "the jump in the padding starts where a padding instruction does");
		if (r < 0)
			printf("#   %s\n", why);
		run_patched("f_xjmp", f_xjmp, a3, 3, tramp, 1);
	}
	moved_rip(tramp);
	bool pad;
	CHECK(x86_insn_len((const uint8_t *)"\x0f\x1f\x44\x00\x00", 5, &pad) == 5 && pad,
	      "a 5-byte nop is padding");
	return UNIT_DONE();
}
