/* x86reloc.c - relocating the first instructions of a function with Zydis.
 *
 * A jump (5 bytes, jmp rel32) replaces the instructions that start at the
 * patched address, as many whole ones as cover 5 bytes; they are copied to
 * the trampoline, made to work there, and followed by a jump back. Three
 * things can make that wrong, and x86_plan checks for each:
 *
 *  - Code that branches into the covered bytes (a loop whose head is the
 *    function's second instruction) would land inside the jump. The whole
 *    function is decoded (linear sweep over its symbol's size) and every
 *    direct branch target and rip-relative address collected; one inside
 *    the covered bytes rules the plain patch out.
 *  - A function shorter than 5 bytes: if it ends in a ret or jmp and only
 *    padding (nops, int3) follows up to 5 bytes, the padding is covered
 *    too (it never runs); else the plain patch is ruled out.
 *  - An address inside a function (FUNC+OFFSET) that is not where an
 *    instruction starts: the function is decoded from its start up to it.
 *  - An instruction that cannot run elsewhere: a breakpoint already there
 *    (a debugger's or a kernel uprobe's int3), a call in the middle of the
 *    covered bytes (it would return into them), a transaction (xbegin).
 *
 * When the plain patch is ruled out, a smaller one may do: 2 bytes at the
 * entry (jmp rel8) to a 5-byte jump placed in the padding before the
 * function, as Windows hot-patching does. Else the site is refused with
 * the reason.
 *
 * Relocation: rip-relative operands get a displacement that reaches the
 * same address from the copy; relative branches become rel32 (or
 * absolute jumps through memory when beyond 2 GiB); jrcxz and loop, which
 * only have rel8, jump over a rel32 jump to their target; branches to
 * another displaced instruction go to its copy. A call (the last
 * displaced instruction, or it is refused) pushes the address after it
 * in the function, not in the copy, and jumps: the callee returns
 * straight to the function, and its return address is one a C++ unwinder
 * or a stack walk can find unwind information for (the copy has none; a
 * call made from it would make an exception through it terminate the
 * program). An indirect call through the stack pointer is refused: the
 * push would move what it reads. */
#include "x86reloc.h"

#include <Zydis/Zydis.h>
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define TARGET_WINDOW 64     /* branch targets are collected below addr + this */

struct insn {
	ZydisDecodedInstruction d;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
};

enum kind {
	K_PLAIN,      /* copied as it is */
	K_RIPREL,     /* copied with its rip-relative displacement adjusted */
	K_JMP,        /* jmp rel8/rel32 */
	K_JCC,        /* jcc rel8/rel32 */
	K_CALL,       /* call rel32 */
	K_ICALL,      /* call through a register or memory (near) */
	K_REL8,       /* jrcxz, jecxz, loop, loope, loopne: rel8 only */
	K_BAD,        /* cannot be moved */
};

/* Zydis is opened at the first decode, not linked: only patching
 * functions in a process needs it, and loading and relocating it at every
 * start was a fifth of what `BEGIN { exit(); }` ran (issue 26). The
 * header still declares each function; each pointer takes its type. */
static const char *const zydis_sonames[] = {
	"libZydis.so.4.0", "libZydis.so.4", "libZydis.so",
};

static struct {
	__typeof__(ZydisDecoderInit) *decoder_init;
	__typeof__(ZydisDecoderDecodeFull) *decode_full;
	__typeof__(ZydisMnemonicGetString) *mnemonic_string;
	__typeof__(ZydisRegisterGetLargestEnclosing) *largest_enclosing;
	char error[256];            /* why it could not be loaded */
} zydis;    /* process-wide: filled once (zydis_once), read-only after */
static pthread_once_t zydis_once = PTHREAD_ONCE_INIT;

/* dlsym's void * into a function pointer (POSIX: the same size) */
static bool zydis_sym(void *h, void *field, const char *name)
{
	void *p = dlsym(h, name);
	memcpy(field, &p, sizeof(p));
	return p != NULL;
}

static void zydis_load(void)
{
	void *h = NULL;
	for (size_t i = 0; !h && i < sizeof(zydis_sonames) / sizeof(*zydis_sonames); i++)
		h = dlopen(zydis_sonames[i], RTLD_NOW | RTLD_LOCAL);
	if (h && zydis_sym(h, &zydis.decoder_init, "ZydisDecoderInit") &&
	    zydis_sym(h, &zydis.decode_full, "ZydisDecoderDecodeFull") &&
	    zydis_sym(h, &zydis.mnemonic_string, "ZydisMnemonicGetString") &&
	    zydis_sym(h, &zydis.largest_enclosing,
		      "ZydisRegisterGetLargestEnclosing"))
		return;
	snprintf(zydis.error, sizeof(zydis.error), "cannot load the x86 "
		 "decoder libZydis (Debian's libzydis4.0 package): %s",
		 dlerror());
	zydis.decoder_init = NULL;
}

static bool zydis_ready(void)
{
	pthread_once(&zydis_once, zydis_load);
	return zydis.decoder_init != NULL;
}

static bool decode(const uint8_t *code, size_t len, struct insn *in)
{
	ZydisDecoder dec;
	if (!zydis_ready() ||
	    !ZYAN_SUCCESS(zydis.decoder_init(&dec, ZYDIS_MACHINE_MODE_LONG_64,
					     ZYDIS_STACK_WIDTH_64)))
		return false;
	return len && ZYAN_SUCCESS(zydis.decode_full(&dec, code, len, &in->d,
						     in->ops));
}

static bool is_pad(const struct insn *in)
{
	return in->d.mnemonic == ZYDIS_MNEMONIC_NOP ||
	       in->d.mnemonic == ZYDIS_MNEMONIC_INT3;
}

size_t x86_insn_len(const uint8_t *code, size_t len, bool *pad)
{
	struct insn in;
	if (!decode(code, len, &in))
		return 0;
	if (pad)
		*pad = is_pad(&in);
	return in.d.length;
}

/* Does control never fall through to the next instruction? */
static bool is_terminator(const struct insn *in)
{
	switch (in->d.meta.category) {
	case ZYDIS_CATEGORY_RET:
	case ZYDIS_CATEGORY_UNCOND_BR:
		return true;
	default:
		return in->d.mnemonic == ZYDIS_MNEMONIC_UD2 ||
		       in->d.mnemonic == ZYDIS_MNEMONIC_HLT;
	}
}

static int rel_imm(const struct insn *in)
{
	for (int i = 0; i < 2; i++)
		if (in->d.raw.imm[i].is_relative)
			return i;
	return -1;
}

static bool has_riprel(const struct insn *in)
{
	for (int i = 0; i < in->d.operand_count; i++)
		if (in->ops[i].type == ZYDIS_OPERAND_TYPE_MEMORY &&
		    in->ops[i].mem.base == ZYDIS_REGISTER_RIP)
			return true;
	return false;
}

/* Does an operand read the stack pointer (the call's own push aside)? */
static bool reads_sp(const struct insn *in)
{
	for (int i = 0; i < in->d.operand_count_visible; i++) {
		const ZydisDecodedOperand *op = &in->ops[i];
		if (op->type == ZYDIS_OPERAND_TYPE_REGISTER &&
		    zydis.largest_enclosing(ZYDIS_MACHINE_MODE_LONG_64,
						     op->reg.value) == ZYDIS_REGISTER_RSP)
			return true;
		if (op->type == ZYDIS_OPERAND_TYPE_MEMORY &&
		    (op->mem.base == ZYDIS_REGISTER_RSP ||
		     op->mem.base == ZYDIS_REGISTER_ESP))
			return true;
	}
	return false;
}

static enum kind classify(const struct insn *in)
{
	if (in->d.mnemonic == ZYDIS_MNEMONIC_XBEGIN)
		return K_BAD;
	if (rel_imm(in) >= 0) {
		switch (in->d.mnemonic) {
		case ZYDIS_MNEMONIC_JMP: return K_JMP;
		case ZYDIS_MNEMONIC_CALL: return K_CALL;
		case ZYDIS_MNEMONIC_JRCXZ: case ZYDIS_MNEMONIC_JECXZ:
		case ZYDIS_MNEMONIC_JCXZ: case ZYDIS_MNEMONIC_LOOP:
		case ZYDIS_MNEMONIC_LOOPE: case ZYDIS_MNEMONIC_LOOPNE:
			return K_REL8;
		default:
			return in->d.meta.category == ZYDIS_CATEGORY_COND_BR ? K_JCC : K_BAD;
		}
	}
	if (in->d.mnemonic == ZYDIS_MNEMONIC_CALL)
		return in->d.meta.branch_type == ZYDIS_BRANCH_TYPE_NEAR &&
		       in->d.raw.modrm.offset && !reads_sp(in) &&
		       (!has_riprel(in) || in->d.raw.disp.size == 32) ? K_ICALL
								   : K_BAD;
	if (has_riprel(in))
		return in->d.raw.disp.size == 32 ? K_RIPREL : K_BAD;
	if (in->d.attributes & ZYDIS_ATTRIB_IS_RELATIVE)
		return K_BAD;
	return K_PLAIN;
}

/* Registers a function's first instruction may write and still leave
 * the probe, run after it, what the entry had: not an argument register
 * (rdi, rsi, rdx, rcx, r8, r9), not the frame pointer (stack walks), not
 * the stack pointer (but by a known amount), no vector register (float
 * arguments). rax holds only the vector-argument count of a varargs
 * call, r10 and r11 nothing, and the callee-saved others the caller's
 * values, which no argument is. */
static bool free_to_write(ZydisRegister r)
{
	switch (r) {
	case ZYDIS_REGISTER_FLAGS: case ZYDIS_REGISTER_EFLAGS:
	case ZYDIS_REGISTER_RFLAGS:
		return true;
	default:
		break;
	}
	switch (zydis.largest_enclosing(ZYDIS_MACHINE_MODE_LONG_64, r)) {
	case ZYDIS_REGISTER_RAX: case ZYDIS_REGISTER_RBX:
	case ZYDIS_REGISTER_R10: case ZYDIS_REGISTER_R11:
	case ZYDIS_REGISTER_R12: case ZYDIS_REGISTER_R13:
	case ZYDIS_REGISTER_R14: case ZYDIS_REGISTER_R15:
	case ZYDIS_REGISTER_RFLAGS: case ZYDIS_REGISTER_RIP:
		return true;
	default:
		return false;
	}
}

int x86_entry_skip(const uint8_t *code, size_t len, size_t *ilen,
		   int32_t *sp_delta, bool *sets_flags)
{
	struct insn in;
	if (!decode(code, len, &in) || rel_imm(&in) >= 0)
		return -1;
	const ZydisAccessedFlags *f = in.d.cpu_flags;
	*sets_flags = f && (f->modified | f->set_0 | f->set_1 | f->undefined);
	switch (in.d.meta.category) {
	case ZYDIS_CATEGORY_COND_BR: case ZYDIS_CATEGORY_UNCOND_BR:
	case ZYDIS_CATEGORY_CALL: case ZYDIS_CATEGORY_RET:
	case ZYDIS_CATEGORY_INTERRUPT: case ZYDIS_CATEGORY_SYSCALL:
	case ZYDIS_CATEGORY_SYSTEM:
		return -1;
	default:
		break;
	}
	*ilen = in.d.length;
	*sp_delta = 0;
	const ZydisDecodedOperand *op = in.ops;
	bool op0_sp = in.d.operand_count_visible >= 1 &&
		      op[0].type == ZYDIS_OPERAND_TYPE_REGISTER &&
		      op[0].reg.value == ZYDIS_REGISTER_RSP;
	switch (in.d.mnemonic) {
	case ZYDIS_MNEMONIC_ENDBR64: case ZYDIS_MNEMONIC_NOP:
		return 0;
	case ZYDIS_MNEMONIC_PUSH:
		if (op[0].type == ZYDIS_OPERAND_TYPE_REGISTER &&
		    zydis.largest_enclosing(ZYDIS_MACHINE_MODE_LONG_64,
						     op[0].reg.value) == ZYDIS_REGISTER_RSP)
			return -1;
		*sp_delta = in.d.operand_width / 8;
		return 0;
	case ZYDIS_MNEMONIC_SUB: case ZYDIS_MNEMONIC_ADD:
		if (!op0_sp)
			break;
		if (in.d.operand_count_visible < 2 ||
		    op[1].type != ZYDIS_OPERAND_TYPE_IMMEDIATE)
			return -1;
		int64_t v = op[1].imm.value.s;
		if (in.d.mnemonic == ZYDIS_MNEMONIC_ADD)
			v = -v;
		if (v < 0 || v > (1 << 20))
			return -1;
		*sp_delta = (int32_t)v;
		return 0;
	case ZYDIS_MNEMONIC_LEA:
		if (!op0_sp)
			break;
		if (op[1].mem.base != ZYDIS_REGISTER_RSP ||
		    op[1].mem.index != ZYDIS_REGISTER_NONE ||
		    op[1].mem.disp.value > 0 || op[1].mem.disp.value < -(1 << 20))
			return -1;
		*sp_delta = (int32_t)-op[1].mem.disp.value;
		return 0;
	default:
		break;
	}
	for (int i = 0; i < in.d.operand_count; i++) {
		if (!(op[i].actions & ZYDIS_OPERAND_ACTION_MASK_WRITE))
			continue;
		if (op[i].type != ZYDIS_OPERAND_TYPE_REGISTER ||
		    !free_to_write(op[i].reg.value))
			return -1;
	}
	return 0;
}

/* The address a relative branch or rip-relative operand of the
 * instruction at `at` refers to. */
static uint64_t ref_target(const struct insn *in, uint64_t at)
{
	int k = rel_imm(in);
	uint64_t next = at + in->d.length;
	if (k >= 0)
		return next + (uint64_t)in->d.raw.imm[k].value.s;
	return next + (uint64_t)in->d.raw.disp.value;
}

static bool refers(const struct insn *in)
{
	return rel_imm(in) >= 0 || has_riprel(in);
}

/* Sweep len bytes of code at start, for instructions starting before
 * end, for a branch target (or rip-relative address) strictly inside
 * (addr, addr + TARGET_WINDOW) lower than *best; *from gets the offset
 * from addr of the instruction that refers to it. */
static void sweep_targets(const struct x86_site *s, const uint8_t *code,
			  size_t len, size_t end, uint64_t start, size_t *best,
			  long *from)
{
	for (size_t off = 0; off < end;) {
		struct insn in;
		if (!decode(code + off, len - off, &in)) {
			off++;   /* data or padding: resynchronize */
			continue;
		}
		if (refers(&in)) {
			uint64_t t = ref_target(&in, start + off);
			/* after an entry's first instruction, addr itself is
			 * inside: a branch there would run the entry's probes
			 * again (1 stands for it) */
			if (s->after_entry && t == s->addr &&
			    (!*best || *best > 1)) {
				*best = 1;
				*from = (long)(int64_t)(start + off - s->addr);
			}
			if (t > s->addr && t < s->addr + TARGET_WINDOW &&
			    (!*best || t - s->addr < *best)) {
				*best = t - s->addr;
				*from = (long)(int64_t)(start + off - s->addr);
			}
		}
		off += in.d.length;
	}
}

/* The lowest branch target (or rip-relative address) strictly inside
 * (addr, addr + TARGET_WINDOW) from anywhere in the function (its lead
 * included) or the code around it; 0 if none. *from gets the offset from
 * addr of the instruction that refers to it (negative before addr). */
static size_t first_inner_target(const struct x86_site *s, long *from)
{
	size_t scan = s->func_len ? s->func_len : s->room;
	if (scan > s->len)
		scan = s->len;
	size_t best = 0;
	sweep_targets(s, s->code - s->lead_len, s->lead_len + s->len,
		      s->lead_len + scan, s->addr - s->lead_len, &best, from);
	/* the code around it, swept from its start (decoding falls into
	 * step within a few instructions; a branch decoded from data can
	 * only make a patch be refused, never wrongly made) */
	if (s->around)
		sweep_targets(s, s->around, s->around_len, s->around_len,
			      s->around_addr, &best, from);
	return best;
}

/* Is addr where an instruction starts, decoding the lead from the
 * function's start? 0, or -EINVAL with why. */
static int check_boundary(const struct x86_site *s, char *why, size_t whylen)
{
	const uint8_t *code = s->code - s->lead_len;
	size_t len = s->lead_len + s->len;
	size_t off = 0;
	while (off < s->lead_len) {
		struct insn in;
		if (!decode(code + off, len - off, &in)) {
			snprintf(why, whylen, "%s: cannot decode the function's "
			    "instruction %zu bytes before it, so cannot tell "
			    "whether an instruction starts there",
			    s->name, s->lead_len - off);
			return -EINVAL;
		}
		if (off + in.d.length > s->lead_len) {
			snprintf(why, whylen, "%s is not where an instruction starts: "
			    "it is inside the %u-byte %s that starts %zu "
			    "byte%s before it", s->name, in.d.length,
			    zydis.mnemonic_string(in.d.mnemonic),
			    s->lead_len - off, s->lead_len - off == 1 ? "" : "s");
			return -EINVAL;
		}
		off += in.d.length;
	}
	return 0;
}

/* "at f+3", "8 bytes before f+0x10": where the instruction `from`
 * bytes from the site is. */
static const char *site_at(const struct x86_site *s, long from, char *buf,
			   size_t len)
{
	if (from < 0)
		snprintf(buf, len, "%ld byte%s before %s", -from,
			 from == -1 ? "" : "s", s->name);
	else if (s->func_len && (size_t)from >= s->func_len)
		snprintf(buf, len, "%ld bytes after the start of %s (outside "
			 "it)", from, s->name);
	else
		snprintf(buf, len, "at %s+%ld", s->name, from);
	return buf;
}

/* Are the bytes [from, to) of the site padding (nops, int3), within room? */
static bool padding_until(const struct x86_site *s, size_t from, size_t to)
{
	if (to > s->room || to > s->len)
		return false;
	for (size_t off = from; off < to;) {
		struct insn in;
		if (!decode(s->code + off, s->len - off, &in) || !is_pad(&in))
			return false;
		off += in.d.length;
	}
	return true;
}

/* Padding before the function that can take a 5-byte jump: its offset
 * in `before` (-1 if none). The jump starts where a padding instruction
 * does, so that code falling through the padding into the function (a
 * function that ends without a jump, as glibc's __memmove_chk does into
 * memmove) meets it whole; the bytes after it are never run. */
static long padding_before(const struct x86_site *s)
{
	if (!s->before || s->before_len < X86_JMP_LEN)
		return -1;
	long at = -1;
	for (size_t off = 0; off < s->before_len;) {
		struct insn in;
		if (!decode(s->before + off, s->before_len - off, &in) ||
		    !is_pad(&in) || off + in.d.length > s->before_len)
			return -1;
		if (off + X86_JMP_LEN <= s->before_len)
			at = (long)off;
		off += in.d.length;
	}
	return at;
}

/* Cover at least min_len bytes at the site with whole instructions. 0,
 * or -errno with the reason. */
static int cover(const struct x86_site *s, size_t min_len, struct x86_plan *p,
		 char *why, size_t whylen)
{
	size_t off = 0;
	p->ninsns = 0;
	p->displaced_len = 0;
	while (off < min_len) {
		struct insn in;
		size_t avail = s->room < s->len ? s->room : s->len;
		if (off >= avail) {
			snprintf(why, whylen, "%s is %zu bytes long (to the next symbol): "
			    "too short for a %zu-byte jump", s->name, avail, min_len);
			return -EINVAL;
		}
		if (!decode(s->code + off, avail - off, &in)) {
			snprintf(why, whylen, "%s+%zu: cannot decode the instruction "
			    "(%02x %02x %02x)", s->name, off, s->code[off],
			    off + 1 < avail ? s->code[off + 1] : 0,
			    off + 2 < avail ? s->code[off + 2] : 0);
			return -EINVAL;
		}
		if (in.d.mnemonic == ZYDIS_MNEMONIC_INT3) {
			snprintf(why, whylen, "%s+%zu holds a breakpoint (int3): a "
			    "debugger or a kernel uprobe (another tracer) is "
			    "probing it", s->name, off);
			return -EBUSY;
		}
		if (classify(&in) == K_BAD) {
			snprintf(why, whylen, "%s+%zu: the instruction cannot be moved "
			    "(%s%s)", s->name, off,
			    zydis.mnemonic_string(in.d.mnemonic),
			    in.d.mnemonic == ZYDIS_MNEMONIC_CALL ?
			    " through the stack pointer, or far" : "");
			return -ENOTSUP;
		}
		if (p->ninsns == X86_MAX_PATCH)
			return -EINVAL;
		p->insn_off[p->ninsns++] = (uint8_t)off;
		bool call = in.d.meta.category == ZYDIS_CATEGORY_CALL;
		off += in.d.length;
		if (call && off < min_len) {
			snprintf(why, whylen, "%s+%zu: a call inside the patched bytes "
			    "would return into them", s->name,
			    off - in.d.length);
			return -ENOTSUP;
		}
		if (off < min_len && is_terminator(&in) &&
		    (!s->func_len || off >= s->func_len) &&
		    padding_until(s, off, min_len)) {
			p->displaced_len = off;
			p->patch_len = min_len;
			return 0;
		}
	}
	if (off > X86_MAX_PATCH) {
		snprintf(why, whylen, "%s: the instructions to move are too long", s->name);
		return -EINVAL;
	}
	if (off > s->room) {
		snprintf(why, whylen, "%s is %zu bytes long (to the next symbol): too "
		    "short for a %zu-byte jump", s->name, s->room, min_len);
		return -EINVAL;
	}
	p->displaced_len = off;
	p->patch_len = off;
	return 0;
}

int x86_plan(const struct x86_site *s, struct x86_plan *p, char *why, size_t whylen)
{
	memset(p, 0, sizeof(*p));
	p->addr = s->addr;
	if (!zydis_ready()) {
		snprintf(why, whylen, "%s", zydis.error);
		return -ENOENT;
	}
	int r = check_boundary(s, why, whylen);
	if (r < 0)
		return r;
	long from = 0;
	size_t target = first_inner_target(s, &from);
	char why_plain[256], at[160];
	r = cover(s, X86_JMP_LEN, p, why_plain, sizeof(why_plain));
	if (r == 0 && target && target < p->patch_len) {
		snprintf(why_plain, sizeof(why_plain), "a branch %s goes to "
		    "%s+%zu, inside the %zu bytes a jump needs",
		    site_at(s, from, at, sizeof(at)), s->name, target,
		    p->patch_len);
		r = -EINVAL;
	}
	if (r == -EINVAL && s->after_entry) {
		snprintf(why, whylen, "%s", why_plain);
		return r;        /* the entry itself is planned instead */
	}
	if (r == -EINVAL) {
		/* 2 bytes here, 5 in the padding before */
		char why_short[256];
		struct x86_plan q = *p;
		int r2 = cover(s, X86_SHORT_JMP_LEN, &q, why_short, sizeof(why_short));
		if (r2 == 0 && target && target < q.patch_len)
			r2 = -EINVAL;
		long pad = r2 == 0 ? padding_before(s) : -1;
		if (pad >= 0) {
			*p = q;
			p->via_pad = true;
			p->pad_addr = s->addr - (s->before_len - (size_t)pad);
			memcpy(p->pad_orig, s->before + pad, X86_JMP_LEN);
			r = 0;
		} else if (r2 == -EBUSY || r2 == -ENOTSUP) {
			snprintf(why, whylen, "%s", why_short);
			return r2;
		} else {
			snprintf(why, whylen, "%s, and %s", why_plain,
			    r2 == 0 ? "there is no padding before it for a short jump"
				    : "no short jump fits either");
			return -EINVAL;
		}
	} else if (r < 0) {
		snprintf(why, whylen, "%s", why_plain);
		return r;
	}
	memcpy(p->orig, s->code, p->patch_len);
	return 0;
}

static bool fits32(int64_t v)
{
	return v >= INT32_MIN && v <= INT32_MAX;
}

/* Room below 2 GiB kept for the copy's own length. */
static bool near(uint64_t a, uint64_t b)
{
	int64_t d = (int64_t)(a - b);
	return d > INT32_MIN + 4096 && d < INT32_MAX - 4096;
}

static void put32(uint8_t *p, int32_t v) { memcpy(p, &v, 4); }
static void put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }

/* jmp to target from `at`: rel32 (5 bytes) or jmp *0(%rip) + address (14). */
static size_t emit_jmp(uint8_t *o, uint64_t at, uint64_t target, bool emit)
{
	if (near(target, at)) {
		if (emit) {
			o[0] = 0xe9;
			put32(o + 1, (int32_t)(target - (at + 5)));
		}
		return 5;
	}
	if (emit) {
		o[0] = 0xff; o[1] = 0x25;
		put32(o + 2, 0);
		put64(o + 6, target);
	}
	return 14;
}

/* What a call pushes, pushed by hand: lea -8(%rsp),%rsp (flags kept, as
 * a call keeps them), then the return address's two halves. */
static size_t emit_push_return(uint8_t *o, uint64_t ret, bool emit)
{
	if (emit) {
		static const uint8_t lea[] = { 0x48, 0x8d, 0x64, 0x24, 0xf8 };
		memcpy(o, lea, sizeof(lea));
		o[5] = 0xc7; o[6] = 0x04; o[7] = 0x24;          /* movl $lo, (%rsp) */
		put32(o + 8, (int32_t)(uint32_t)ret);
		o[12] = 0xc7; o[13] = 0x44; o[14] = 0x24; o[15] = 0x04;   /* 4(%rsp) */
		put32(o + 16, (int32_t)(uint32_t)(ret >> 32));
	}
	return 20;
}

/* Where a displaced instruction's target is in the copy, if it is one of
 * the displaced instructions; else the target itself. */
static uint64_t map_target(const struct x86_plan *p, uint64_t target, uint64_t dest)
{
	if (target > p->addr && target < p->addr + p->displaced_len)
		for (int i = 0; i < p->ninsns; i++)
			if (p->addr + p->insn_off[i] == target)
				return dest + p->new_off[i];
	return target;
}

/* One displaced instruction at `at` in the copy; returns its size (emit
 * false: only the size), or -ERANGE. */
static int emit_insn(const struct x86_plan *p, const struct insn *in,
		     const uint8_t *src, uint64_t orig_at, uint64_t at,
		     uint64_t dest, uint8_t *o, bool emit, char *why, size_t whylen)
{
	size_t len = in->d.length;
	enum kind k = classify(in);
	uint64_t target = k == K_PLAIN ? 0 : ref_target(in, orig_at);
	if (k != K_PLAIN && k != K_RIPREL && k != K_ICALL)
		target = map_target(p, target, dest);
	switch (k) {
	case K_PLAIN:
		if (emit)
			memcpy(o, src, len);
		return (int)len;
	case K_RIPREL: {
		int64_t disp = (int64_t)(target - (at + len));
		if (!fits32(disp)) {
			snprintf(why, whylen, "the instruction at 0x%" PRIx64 " refers to "
			    "0x%" PRIx64 ", beyond 2 GiB from its copy at 0x%" PRIx64,
			    orig_at, target, at);
			return -ERANGE;
		}
		if (emit) {
			memcpy(o, src, len);
			put32(o + in->d.raw.disp.offset, (int32_t)disp);
		}
		return (int)len;
	}
	case K_JMP:
		return (int)emit_jmp(o, at, target, emit);
	case K_CALL: {
		size_t n = emit_push_return(o, orig_at + len, emit);
		return (int)(n + emit_jmp(o + n, at + n, target, emit));
	}
	case K_ICALL: {
		/* the same operand, as a jmp (ff /2 becomes ff /4) */
		size_t n = emit_push_return(o, orig_at + len, emit);
		int64_t disp = (int64_t)(target - (at + n + len));
		if (has_riprel(in) && !fits32(disp)) {
			snprintf(why, whylen, "the call at 0x%" PRIx64 " reads 0x%" PRIx64
			    ", beyond 2 GiB from its copy at 0x%" PRIx64, orig_at,
			    target, at + n);
			return -ERANGE;
		}
		if (emit) {
			uint8_t *insn = o + n;
			memcpy(insn, src, len);
			if (has_riprel(in))
				put32(insn + in->d.raw.disp.offset, (int32_t)disp);
			uint8_t *modrm = insn + in->d.raw.modrm.offset;
			*modrm = (uint8_t)((*modrm & ~0x38) | (4 << 3));
		}
		return (int)(n + len);
	}
	case K_JCC: {
		/* the condition: the low nibble of 0x7X (rel8) or 0x0f 0x8X */
		const uint8_t *op = src + in->d.raw.prefix_count;
		uint8_t cc = (op[0] == 0x0f ? op[1] : op[0]) & 0x0f;
		if (near(target, at)) {
			if (emit) {
				o[0] = 0x0f; o[1] = (uint8_t)(0x80 | cc);
				put32(o + 2, (int32_t)(target - (at + 6)));
			}
			return 6;
		}
		if (emit) {   /* j!cc over an absolute jump */
			o[0] = (uint8_t)(0x70 | (cc ^ 1)); o[1] = 14;
			emit_jmp(o + 2, at + 2, target, true);
		}
		return 2 + 14;
	}
	case K_REL8: {
		/* op +2 (taken: to the jump below); jmp over it; jmp target */
		size_t n = len + 2;
		size_t j = emit_jmp(o + n, at + n, target, false);
		if (emit) {
			memcpy(o, src, len);
			o[len - 1] = 2;
			o[len] = 0xeb;
			o[len + 1] = (uint8_t)j;
			emit_jmp(o + n, at + n, target, true);
		}
		return (int)(n + j);
	}
	case K_BAD:
		break;
	}
	snprintf(why, whylen, "the instruction at 0x%" PRIx64 " cannot be moved", orig_at);
	return -ENOTSUP;
}

int x86_relocate(struct x86_plan *p, uint64_t dest, uint8_t *out, size_t cap,
		 char *why, size_t whylen)
{
	struct insn ins[X86_MAX_PATCH];
	for (int i = 0; i < p->ninsns; i++) {
		size_t off = p->insn_off[i];
		if (!decode(p->orig + off, p->displaced_len - off, &ins[i]))
			return -EINVAL;
	}
	p->dest = dest;
	/* sizes first: branches between displaced instructions need the
	 * offsets of the later ones */
	for (int pass = 0; pass < 2; pass++) {
		size_t at = 0;
		for (int i = 0; i < p->ninsns; i++) {
			if (pass == 0)
				p->new_off[i] = (uint16_t)at;
			/* its size first: nothing is written past cap */
			int n = emit_insn(p, &ins[i], p->orig + p->insn_off[i],
					  p->addr + p->insn_off[i], dest + at, dest,
					  out + at, false, why, whylen);
			if (n < 0)
				return n;
			if (at + (size_t)n + 14 > cap)
				return -ENOSPC;
			if (pass == 1)
				emit_insn(p, &ins[i], p->orig + p->insn_off[i],
					  p->addr + p->insn_off[i], dest + at, dest,
					  out + at, true, why, whylen);
			at += (size_t)n;
		}
		if (pass == 1) {
			if (at + 14 > cap)
				return -ENOSPC;
			at += emit_jmp(out + at, dest + at, p->addr + p->patch_len, true);
			return (int)at;
		}
	}
	return -EINVAL;
}

int x86_patch_bytes(const struct x86_plan *p, uint64_t to, uint8_t *at_addr,
		    uint8_t *at_pad)
{
	uint64_t from = p->via_pad ? p->pad_addr : p->addr;
	if (!fits32((int64_t)(to - (from + 5))))
		return -ERANGE;
	memset(at_addr, 0xcc, p->patch_len);
	if (p->via_pad) {
		at_addr[0] = 0xeb;
		at_addr[1] = (uint8_t)(int8_t)(p->pad_addr - (p->addr + 2));
		at_pad[0] = 0xe9;
		put32(at_pad + 1, (int32_t)(to - (p->pad_addr + 5)));
	} else {
		at_addr[0] = 0xe9;
		put32(at_addr + 1, (int32_t)(to - (p->addr + 5)));
	}
	return 0;
}

int x86_moved_rip(const struct x86_plan *p, uint64_t rip, uint64_t *out)
{
	for (int i = 0; i < p->ninsns; i++)
		if (p->addr + p->insn_off[i] == rip) {
			*out = p->dest + p->new_off[i];
			return 0;
		}
	return -EINVAL;
}
