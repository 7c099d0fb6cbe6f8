/* agent_tramp.c - trampolines: executable memory within a jmp rel32 of a
 * site, and the code a patched site jumps to, which calls agent_hit with
 * the registers laid out as struct pt_regs.
 *
 * Memory comes in chunks mapped near the site (the free gap closest to
 * it in /proc/self/maps, taken with MAP_FIXED_NOREPLACE), writable until
 * agent_tramp_seal() makes them read-only and executable; a sealed chunk
 * takes nothing more (a later session opens new chunks), so no page is
 * ever writable and executable at once, and no live trampoline is ever
 * written. */
#include <errno.h>
#include <stddef.h>
#include <sys/mman.h>

#include "../runtime/rt.h"
#include "agent.h"

#define CHUNK (16u << 10)
#define CHUNKS_MAX 4096
#define REACH ((int64_t)0x7fff0000)     /* a little under 2 GiB */
#define ADDR_MIN (1ull << 20)
/* the top of user space with 4-level page tables: with ASLR the shared
 * libraries are often mapped above 0x7ff000000000, and their gaps count */
#define ADDR_MAX 0x7ffffffff000ull
#define TRIES 8                /* gaps tried, nearest first */

/* Chunks for trampolines whose address is constrained (agent_tramp_alloc
 * _mod): 128 KiB, 64 KiB-aligned, so that any residue modulo 64 KiB has
 * a place in each. */
#define CHUNK_MOD (128u << 10)
#define MOD_ALIGN (64u << 10)

struct chunk {
	uint8_t *base;
	uint32_t used, len;
	bool sealed;
};

/* Guarded by the patch lock (agent_patch_lock), as every code change. */
static struct chunk chunks[CHUNKS_MAX];
static uint32_t nchunks;

static bool reaches(uint64_t a, uint64_t b, uint64_t len)
{
	int64_t d1 = (int64_t)(a - b), d2 = (int64_t)(a - (b + len));
	return d1 > -REACH && d1 < REACH && d2 > -REACH && d2 < REACH;
}

/* The start of the free gap nearest `near` within reach, other than
 * those in `skip`; 0 if none. */
static uint64_t gap_nearest(const struct agent_maps *maps, uint64_t near,
			    uint64_t len, uint64_t align, const uint64_t *skip,
			    uint32_t nskip)
{
	uint64_t best = 0, best_dist = UINT64_MAX;
	uint64_t prev_end = ADDR_MIN;
	for (size_t i = 0; i <= maps->n; i++) {
		uint64_t g0 = prev_end, g1 = i < maps->n ? maps->v[i].start : ADDR_MAX;
		if (i < maps->n && maps->v[i].end > prev_end)
			prev_end = maps->v[i].end;
		if (g1 > ADDR_MAX)
			g1 = ADDR_MAX;
		g0 = (g0 + align - 1) & ~(align - 1);
		g1 &= ~(align - 1);
		if (g1 <= g0 || g1 - g0 < len)
			continue;
		uint64_t cand = near < g0 ? g0 : near + len > g1 ? g1 - len :
			near & ~(align - 1);
		uint64_t dist = cand > near ? cand - near : near - cand;
		bool skipped = false;
		for (uint32_t k = 0; k < nskip; k++)
			skipped |= skip[k] == cand;
		if (!skipped && dist < best_dist && reaches(near, cand, len)) {
			best = cand;
			best_dist = dist;
		}
	}
	return best;
}

/* A new chunk as near `near` as the free gaps allow. A gap the kernel
 * refuses (the guard gap below a stack, a mapping made since the maps
 * were read) is passed over for the next nearest. */
static struct chunk *chunk_new(uint64_t near, uint32_t len, uint64_t align)
{
	if (nchunks == CHUNKS_MAX)
		return NULL;
	struct agent_maps maps;
	if (agent_maps_read(&maps) < 0)
		return NULL;
	uint64_t tried[TRIES];
	void *p = MAP_FAILED;
	for (uint32_t t = 0; t < TRIES && p == MAP_FAILED; t++) {
		uint64_t at = gap_nearest(&maps, near, len, align, tried, t);
		if (!at)
			break;
		tried[t] = at;
		p = mmap((void *)at, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		if (p != MAP_FAILED && p != (void *)at) {
			munmap(p, len);      /* a kernel without FIXED_NOREPLACE */
			p = MAP_FAILED;
			break;
		}
	}
	agent_maps_free(&maps);
	if (p == MAP_FAILED)
		return NULL;
	struct chunk *c = &chunks[nchunks++];
	c->base = p;
	c->used = 0;
	c->len = len;
	c->sealed = false;
	return c;
}

void *agent_tramp_alloc(uint64_t near, size_t size)
{
	size = (size + 15) & ~(size_t)15;
	if (size > CHUNK)
		return NULL;
	for (uint32_t i = 0; i < nchunks; i++) {
		struct chunk *c = &chunks[i];
		if (!c->sealed && c->len - c->used >= size &&
		    reaches(near, (uint64_t)(uintptr_t)c->base, c->len)) {
			void *p = c->base + c->used;
			c->used += (uint32_t)size;
			return p;
		}
	}
	struct chunk *c = chunk_new(near, CHUNK, 4096);
	if (!c)
		return NULL;
	c->used = (uint32_t)size;
	return c->base;
}

void *agent_tramp_alloc_mod(uint64_t near, size_t size, uint32_t rem)
{
	size = (size + 15) & ~(size_t)15;
	rem &= MOD_ALIGN - 1;
	for (int fresh = 0; fresh < 2; fresh++) {
		for (uint32_t i = 0; i < nchunks; i++) {
			struct chunk *c = &chunks[i];
			uint64_t b = (uint64_t)(uintptr_t)c->base;
			if (c->sealed || !reaches(near, b, c->len))
				continue;
			/* the first address past what is used with that rest */
			uint64_t at = b + c->used;
			at += (rem - at) & (MOD_ALIGN - 1);
			if (at + size <= b + c->len) {
				c->used = (uint32_t)(at + size - b);
				return (void *)(uintptr_t)at;
			}
		}
		if (fresh || !chunk_new(near, CHUNK_MOD, MOD_ALIGN))
			break;
	}
	return NULL;
}

void agent_tramp_seal(void)
{
	for (uint32_t i = 0; i < nchunks; i++) {
		struct chunk *c = &chunks[i];
		if (c->sealed || !c->used)
			continue;
		mprotect(c->base, c->len, PROT_READ | PROT_EXEC);
		c->sealed = true;
	}
}

int agent_emit_jmp(uint8_t *out, uint64_t from, uint64_t to)
{
	int64_t rel = (int64_t)(to - (from + 5));
	if (rel >= INT32_MAX || rel <= INT32_MIN)
		return -ERANGE;
	int32_t r32 = (int32_t)rel;
	out[0] = 0xe9;
	rt_memcpy(out + 1, &r32, 4);
	return 0;
}

/* x86 register numbers, and each one's offset in struct agent_regs. */
enum { RAX, RCX, RDX, RBX, RSP, RBP, RSI, RDI, R8, R9, R10, R11, R12, R13,
       R14, R15 };
static const struct { uint8_t reg; uint8_t off; } saved[] = {
	{ R15, offsetof(struct agent_regs, r15) },
	{ R14, offsetof(struct agent_regs, r14) },
	{ R13, offsetof(struct agent_regs, r13) },
	{ R12, offsetof(struct agent_regs, r12) },
	{ RBP, offsetof(struct agent_regs, bp) },
	{ RBX, offsetof(struct agent_regs, bx) },
	{ R11, offsetof(struct agent_regs, r11) },
	{ R10, offsetof(struct agent_regs, r10) },
	{ R9, offsetof(struct agent_regs, r9) },
	{ R8, offsetof(struct agent_regs, r8) },
	{ RAX, offsetof(struct agent_regs, ax) },
	{ RCX, offsetof(struct agent_regs, cx) },
	{ RDX, offsetof(struct agent_regs, dx) },
	{ RSI, offsetof(struct agent_regs, si) },
	{ RDI, offsetof(struct agent_regs, di) },
};

static bool callee_saved(int reg)
{
	return reg == RBX || reg == RBP || reg == R12 || reg == R13 ||
	       reg == R14 || reg == R15;
}

/* The frame: the red zone skipped, then the registers (8 spare bytes
 * keep it a multiple of 16). */
#define FRAME (128 + (int32_t)sizeof(struct agent_regs) + 8)

struct emit {
	uint8_t *p;
};

static void byte(struct emit *e, uint8_t b)
{
	*e->p++ = b;
}

static void u32le(struct emit *e, uint32_t v)
{
	rt_memcpy(e->p, &v, 4);
	e->p += 4;
}

/* mov %reg, off(%rsp) (op 0x89) or mov off(%rsp), %reg (op 0x8b) */
static void mov_rsp(struct emit *e, uint8_t op, int reg, int32_t off)
{
	byte(e, 0x48 | (reg >= 8 ? 4 : 0));
	byte(e, op);
	bool small = off >= -128 && off < 128;
	byte(e, (uint8_t)((small ? 0x40 : 0x80) | ((reg & 7) << 3) | 4));
	byte(e, 0x24);
	if (small)
		byte(e, (uint8_t)(int8_t)off);
	else
		u32le(e, (uint32_t)off);
}

/* movq $imm32 (sign-extended), off(%rsp) */
static void movq_imm_rsp(struct emit *e, int32_t imm, int32_t off)
{
	byte(e, 0x48);
	byte(e, 0xc7);
	byte(e, 0x84);
	byte(e, 0x24);
	u32le(e, (uint32_t)off);
	u32le(e, (uint32_t)imm);
}

/* lea off(%rsp), %reg */
static void lea_rsp(struct emit *e, int reg, int32_t off)
{
	byte(e, 0x48 | (reg >= 8 ? 4 : 0));
	byte(e, 0x8d);
	byte(e, (uint8_t)(0x84 | ((reg & 7) << 3)));
	byte(e, 0x24);
	u32le(e, (uint32_t)off);
}

size_t agent_tramp_emit_hit(uint8_t *at, uint64_t ip, uint32_t patch)
{
	struct emit e = { at };
	lea_rsp(&e, RSP, -FRAME);
	for (size_t i = 0; i < sizeof(saved) / sizeof(*saved); i++)
		mov_rsp(&e, 0x89, saved[i].reg, saved[i].off);
	movq_imm_rsp(&e, -1, offsetof(struct agent_regs, orig_ax));
	/* lea ip(%rip), %rax: relative to the end of this 7-byte insn */
	uint64_t next = (uint64_t)(uintptr_t)e.p + 7;
	byte(&e, 0x48);
	byte(&e, 0x8d);
	byte(&e, 0x05);
	u32le(&e, (uint32_t)(int32_t)(int64_t)(ip - next));
	mov_rsp(&e, 0x89, RAX, offsetof(struct agent_regs, ip));
	movq_imm_rsp(&e, 0x33, offsetof(struct agent_regs, cs));
	/* flags: pushfq is microcoded (a tenth of a hit's time here), so
	 * the status flags come from lahf and seto (nothing before them
	 * changed the flags), with IF and the always-one bit 1 as user
	 * mode has them: 0x202 | SF ZF AF PF CF | OF << 11. rcx is saved
	 * already. */
	byte(&e, 0xb8); u32le(&e, 0);                     /* mov $0, %eax */
	byte(&e, 0x9f);                                   /* lahf */
	byte(&e, 0x0f); byte(&e, 0x90); byte(&e, 0xc0);   /* seto %al */
	byte(&e, 0x0f); byte(&e, 0xb6); byte(&e, 0xc8);   /* movzbl %al, %ecx */
	byte(&e, 0xc1); byte(&e, 0xe1); byte(&e, 0x0b);   /* shl $11, %ecx */
	byte(&e, 0xc1); byte(&e, 0xe8); byte(&e, 0x08);   /* shr $8, %eax */
	byte(&e, 0x09); byte(&e, 0xc8);                   /* or %ecx, %eax */
	byte(&e, 0x0d); u32le(&e, 0x202);                 /* or $0x202, %eax */
	mov_rsp(&e, 0x89, RAX, offsetof(struct agent_regs, flags));
	lea_rsp(&e, RAX, FRAME);
	mov_rsp(&e, 0x89, RAX, offsetof(struct agent_regs, sp));
	movq_imm_rsp(&e, 0x2b, offsetof(struct agent_regs, ss));
	byte(&e, 0x48); byte(&e, 0x89); byte(&e, 0xe7);   /* mov %rsp, %rdi */
	byte(&e, 0xbe);                                   /* mov $patch, %esi */
	u32le(&e, patch);
	byte(&e, 0x48); byte(&e, 0x89); byte(&e, 0xe3);   /* mov %rsp, %rbx */
	byte(&e, 0x48); byte(&e, 0x83); byte(&e, 0xe4); byte(&e, 0xf0); /* and $-16,%rsp */
	byte(&e, 0x48); byte(&e, 0xb8);                   /* movabs $agent_hit, %rax */
	uint64_t fn = (uint64_t)(uintptr_t)agent_hit;
	rt_memcpy(e.p, &fn, 8);
	e.p += 8;
	byte(&e, 0xff); byte(&e, 0xd0);                   /* call *%rax */
	byte(&e, 0x48); byte(&e, 0x89); byte(&e, 0xdc);   /* mov %rbx, %rsp */
	/* agent_hit keeps the callee-saved registers (the C ABI) but for
	 * rbx, used here: the rest come back from the frame */
	for (size_t i = 0; i < sizeof(saved) / sizeof(*saved); i++)
		if (!callee_saved(saved[i].reg) || saved[i].reg == RBX)
			mov_rsp(&e, 0x8b, saved[i].reg, saved[i].off);
	lea_rsp(&e, RSP, FRAME);
	return (size_t)(e.p - at);
}
