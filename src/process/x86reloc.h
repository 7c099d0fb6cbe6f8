/* x86reloc.h - moving the first instructions of an x86-64 function (or of
 * any instruction boundary) elsewhere, so a jump can take their place:
 * which bytes a patch may cover, whether it is safe, the relocated copy,
 * and the patch itself. Decoding is Zydis's (libzydis); this is the only
 * file that uses it. Pure functions on byte buffers: no process, no
 * memory is touched, so every case can be tested on its own. */
#ifndef SONDE_PROCESS_X86RELOC_H
#define SONDE_PROCESS_X86RELOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define X86_JMP_LEN 5          /* jmp rel32 */
#define X86_SHORT_JMP_LEN 2    /* jmp rel8 */
#define X86_MAX_PATCH 24       /* bytes a patch may displace, at most */
/* Bytes x86_relocate may write: every displaced instruction grown to its
 * longest form (a jrcxz or loop with 13 prefixes and its rel8: 15 bytes,
 * then 2 + 14: 31; at most one instruction per displaced byte) plus the
 * jump back. */
#define X86_RELOC_MAX (X86_MAX_PATCH * 31 + 14)

/* What is known about the place to patch. */
struct x86_site {
	const char *name;          /* "f" or "f+0x10", for messages */
	uint64_t addr;             /* run-time address of the first byte */
	const uint8_t *code;       /* the bytes from addr, as in the process */
	size_t len;                /* how many code holds */
	/* The function's size from addr (its symbol's size less the
	 * offset); 0 when unknown: then everything up to room is taken as
	 * the function. Branches in it are scanned for targets inside the
	 * bytes a patch would cover. */
	size_t func_len;
	/* Bytes from addr up to the next symbol or the end of the code:
	 * what a patch may cover (past func_len only padding may be). */
	size_t room;
	/* The padding just before addr, between the previous function's
	 * end and addr (NULL/0 if none or unknown): where a 5-byte jump can
	 * go when only 2 bytes can be patched at addr. */
	const uint8_t *before;
	size_t before_len;
	/* A site inside a function (FUNC+OFFSET): the function's bytes from
	 * its start up to addr lie just before code, lead_len of them (0 at
	 * an entry or when the start is unknown). They are decoded to check
	 * that addr is an instruction boundary, and their branches into the
	 * patched bytes count as the rest of the function's do. */
	size_t lead_len;
	/* Code around the function, which may branch into its first bytes
	 * from outside it (glibc's mempcpy jumps into memmove's second
	 * instruction): around_len bytes from around_addr (the function's
	 * own among them), swept for branches as the function is; NULL if
	 * none. */
	const uint8_t *around;
	size_t around_len;
	uint64_t around_addr;
	/* The site stands for the function's entry, just after its first
	 * instruction (the lead, x86_entry_skip): a branch to addr itself
	 * counts as one into the patched bytes (it would run the entry's
	 * probes again), and no short jump to padding is tried. */
	bool after_entry;
};

/* How a site is patched. Filled by x86_plan; x86_relocate adds where
 * the displaced instructions went. */
struct x86_plan {
	uint64_t addr;
	size_t patch_len;          /* bytes at addr the patch replaces */
	size_t displaced_len;      /* of which instructions (then padding) */
	bool via_pad;              /* jmp rel8 at addr to a jmp rel32 at pad_addr */
	uint64_t pad_addr;         /* addr - 5 when via_pad */
	uint8_t orig[X86_MAX_PATCH];       /* the bytes at addr, patch_len of them */
	uint8_t pad_orig[X86_JMP_LEN];     /* the bytes at pad_addr when via_pad */
	int ninsns;                        /* displaced instructions */
	uint8_t insn_off[X86_MAX_PATCH];   /* their offsets from addr */
	uint16_t new_off[X86_MAX_PATCH];   /* and in the relocated copy */
	uint64_t dest;                     /* where the copy is (x86_relocate) */
};

/* Decide how to patch a site, or refuse: returns 0, or -EINVAL /
 * -ENOTSUP with why saying what makes it unsafe (an address inside an
 * instruction, a branch into the bytes the patch needs, a function too
 * short and no padding to borrow, a breakpoint already there, an
 * instruction that cannot move). */
int x86_plan(const struct x86_site *site, struct x86_plan *plan,
	     char *why, size_t whylen);

/* The displaced instructions made to work at dest (rip-relative operands
 * and branches adjusted, short branches widened), followed by a jump back
 * to addr + patch_len. Writes at most X86_RELOC_MAX bytes to out; returns
 * how many, or -ERANGE with why when dest is too far from what an
 * instruction refers to. Records dest and the new offsets in plan. */
int x86_relocate(struct x86_plan *plan, uint64_t dest, uint8_t *out,
		 size_t cap, char *why, size_t whylen);

/* The bytes that go at addr (patch_len of them: a jump to `to`, int3
 * after it) and, via_pad, at pad_addr (5). -ERANGE when `to` is beyond
 * a rel32 jump. */
int x86_patch_bytes(const struct x86_plan *plan, uint64_t to,
		    uint8_t *at_addr, uint8_t *at_pad);

/* A thread stopped at rip inside the patched bytes (addr < rip <
 * addr + patch_len) continues at *out in the relocated copy. -EINVAL if
 * rip is not at an instruction boundary (then it cannot be moved). */
int x86_moved_rip(const struct x86_plan *plan, uint64_t rip, uint64_t *out);

/* A function's first instruction (at code), if a probe can run right
 * after it as if at the function's entry: it writes no argument, vector
 * or frame-pointer register and no memory but what it pushes, moves the
 * stack pointer by a known amount (push, sub, add or lea with an
 * immediate), and is no branch. Then its length goes in *ilen and what
 * it took off the stack pointer in *sp_delta (the entry's sp is sp +
 * sp_delta), whether it sets flags (the code after it may test them)
 * in *sets_flags, and 0 is returned; else -1. The process engine
 * patches after such an instruction, which a kernel uprobe on the
 * function then leaves whole (src/process/livepatch.c). */
int x86_entry_skip(const uint8_t *code, size_t len, size_t *ilen,
		   int32_t *sp_delta, bool *sets_flags);

/* One instruction's length at code (up to len bytes), 0 if undecodable;
 * *is_pad set when it is padding (nop, int3). For callers that check
 * what they read. */
size_t x86_insn_len(const uint8_t *code, size_t len, bool *is_pad);

#endif
