/* usdt_argspec.c - x86-64 USDT argument specs ("size@operand", AT&T
 * syntax as gcc and clang print an asm operand) parsed into a structured
 * description that code generation turns into loads from pt_regs and
 * user memory.
 *
 *   spec    := ['-'] SIZE ['f'] '@' operand | operand
 *   operand := '$' imm | '%' reg | [disp] '(' [%base] [',' %index [',' scale]] ')'
 *            | disp                                   (absolute memory)
 *   disp    := number | symbol [('+'|'-') number]
 *
 * A negative SIZE means signed. The register named may be narrower than
 * the value (gcc writes %edi for an int); SIZE governs the value, the
 * register's width and shift say where the bits are (%ah is bits 8..15 of
 * rax). Strings come from untrusted files: the parser never reads past
 * the terminating NUL and bounds every number and name. */
#include "elf.h"

#include <errno.h>
#include <string.h>

/* name, pt_regs offset, width in bytes, shift in bits */
#define X86_REGS(X) \
	X("rax", 80, 8, 0) X("eax", 80, 4, 0) X("ax", 80, 2, 0) X("al", 80, 1, 0) X("ah", 80, 1, 8) \
	X("rbx", 40, 8, 0) X("ebx", 40, 4, 0) X("bx", 40, 2, 0) X("bl", 40, 1, 0) X("bh", 40, 1, 8) \
	X("rcx", 88, 8, 0) X("ecx", 88, 4, 0) X("cx", 88, 2, 0) X("cl", 88, 1, 0) X("ch", 88, 1, 8) \
	X("rdx", 96, 8, 0) X("edx", 96, 4, 0) X("dx", 96, 2, 0) X("dl", 96, 1, 0) X("dh", 96, 1, 8) \
	X("rsi", 104, 8, 0) X("esi", 104, 4, 0) X("si", 104, 2, 0) X("sil", 104, 1, 0) \
	X("rdi", 112, 8, 0) X("edi", 112, 4, 0) X("di", 112, 2, 0) X("dil", 112, 1, 0) \
	X("rbp", 32, 8, 0) X("ebp", 32, 4, 0) X("bp", 32, 2, 0) X("bpl", 32, 1, 0) \
	X("rsp", 152, 8, 0) X("esp", 152, 4, 0) X("sp", 152, 2, 0) X("spl", 152, 1, 0) \
	X("r8", 72, 8, 0) X("r8d", 72, 4, 0) X("r8w", 72, 2, 0) X("r8b", 72, 1, 0) X("r8l", 72, 1, 0) \
	X("r9", 64, 8, 0) X("r9d", 64, 4, 0) X("r9w", 64, 2, 0) X("r9b", 64, 1, 0) X("r9l", 64, 1, 0) \
	X("r10", 56, 8, 0) X("r10d", 56, 4, 0) X("r10w", 56, 2, 0) X("r10b", 56, 1, 0) X("r10l", 56, 1, 0) \
	X("r11", 48, 8, 0) X("r11d", 48, 4, 0) X("r11w", 48, 2, 0) X("r11b", 48, 1, 0) X("r11l", 48, 1, 0) \
	X("r12", 24, 8, 0) X("r12d", 24, 4, 0) X("r12w", 24, 2, 0) X("r12b", 24, 1, 0) X("r12l", 24, 1, 0) \
	X("r13", 16, 8, 0) X("r13d", 16, 4, 0) X("r13w", 16, 2, 0) X("r13b", 16, 1, 0) X("r13l", 16, 1, 0) \
	X("r14", 8, 8, 0) X("r14d", 8, 4, 0) X("r14w", 8, 2, 0) X("r14b", 8, 1, 0) X("r14l", 8, 1, 0) \
	X("r15", 0, 8, 0) X("r15d", 0, 4, 0) X("r15w", 0, 2, 0) X("r15b", 0, 1, 0) X("r15l", 0, 1, 0) \
	X("rip", 128, 8, 0) X("eip", 128, 4, 0)

static const struct x86_reg {
	const char *name;
	short off, width, shift;
} x86_regs[] = {
#define REG_ENTRY(n, o, w, s) { n, o, w, s },
	X86_REGS(REG_ENTRY)
#undef REG_ENTRY
};

#define RIP_OFF 128

int usdt_reg_lookup(const char *name, size_t len, int *width, int *shift)
{
	for (size_t i = 0; i < sizeof(x86_regs) / sizeof(*x86_regs); i++) {
		const struct x86_reg *r = &x86_regs[i];
		if (strlen(r->name) == len && memcmp(r->name, name, len) == 0) {
			if (width)
				*width = r->width;
			if (shift)
				*shift = r->shift;
			return r->off;
		}
	}
	return -1;
}

const char *usdt_reg_name(int off)
{
	for (size_t i = 0; i < sizeof(x86_regs) / sizeof(*x86_regs); i++)
		if (x86_regs[i].off == off && x86_regs[i].width == 8)
			return x86_regs[i].name;
	return NULL;
}

static bool is_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_sym_start(char c)
{
	return is_alpha(c) || c == '_' || c == '.';
}

static bool is_sym_char(char c)
{
	return is_sym_start(c) || is_digit(c) || c == '$' || c == '@';
}

/* [-] (0x hex | decimal), no overflow. */
static int parse_num(const char **sp, int64_t *v)
{
	const char *s = *sp;
	bool neg = false;
	if (*s == '-') {
		neg = true;
		s++;
	}
	uint64_t x = 0;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		s += 2;
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f') ||
		      (*s >= 'A' && *s <= 'F')))
			return -EINVAL;
		for (int n = 0;; n++, s++) {
			int d;
			if (*s >= '0' && *s <= '9') d = *s - '0';
			else if (*s >= 'a' && *s <= 'f') d = *s - 'a' + 10;
			else if (*s >= 'A' && *s <= 'F') d = *s - 'A' + 10;
			else break;
			if (n >= 16)
				return -EINVAL;
			x = x << 4 | (uint64_t)d;
		}
	} else {
		if (!is_digit(*s))
			return -EINVAL;
		for (; is_digit(*s); s++) {
			uint64_t d = (uint64_t)(*s - '0');
			if (x > (UINT64_MAX - d) / 10)
				return -EINVAL;
			x = x * 10 + d;
		}
	}
	/* Displacements and immediates are at most 64-bit two's complement;
	 * gas accepts 0xffffffffffffffff for -1, so wrap rather than fail. */
	*v = neg ? (int64_t)(0 - x) : (int64_t)x;
	*sp = s;
	return 0;
}

/* %reg: returns pt_regs offset, sets width/shift; -ENOTSUP for registers
 * we cannot read from pt_regs (segments, vector, x87), -EINVAL if no name. */
static int parse_reg(const char **sp, int *width, int *shift)
{
	const char *s = *sp;
	if (*s != '%')
		return -EINVAL;
	s++;
	const char *start = s;
	while (is_alpha(*s) || is_digit(*s))
		s++;
	if (s == start)
		return -EINVAL;
	int off = usdt_reg_lookup(start, (size_t)(s - start), width, shift);
	if (off < 0)
		return -ENOTSUP;
	*sp = s;
	return off;
}

static bool at_end(char c)
{
	return c == '\0' || c == ' ' || c == '\t' || c == '\n';
}

/* disp := number | symbol [('+'|'-') number] */
static int parse_disp(const char **sp, struct usdt_arg *a)
{
	const char *s = *sp;
	if (is_sym_start(*s)) {
		size_t n = 0;
		while (is_sym_char(s[n]))
			n++;
		if (n >= sizeof(a->symbol))
			return -EINVAL;
		memcpy(a->symbol, s, n);
		a->symbol[n] = '\0';
		s += n;
		a->val = 0;
		if (*s == '+' || *s == '-') {
			bool neg = *s == '-';
			s++;
			if (*s == '-')
				return -EINVAL;
			int64_t v;
			if (parse_num(&s, &v))
				return -EINVAL;
			a->val = neg ? (int64_t)(0 - (uint64_t)v) : v;
		}
	} else {
		if (parse_num(&s, &a->val))
			return -EINVAL;
	}
	*sp = s;
	return 0;
}

static int parse_operand(const char **sp, struct usdt_arg *a)
{
	const char *s = *sp;
	int err, w = 0, sh = 0;
	if (*s == '$') {
		s++;
		a->kind = USDT_ARG_CONST;
		if ((err = parse_disp(&s, a)))
			return err;
	} else if (*s == '%') {
		if ((err = parse_reg(&s, &w, &sh)) < 0)
			return err;
		if (*s == ':')
			return -ENOTSUP; /* %fs:... segment override */
		if (err == RIP_OFF)
			return -EINVAL; /* %rip is not a value register */
		a->kind = USDT_ARG_REG;
		a->reg = err;
		a->reg_size = w;
		a->reg_shift = sh;
	} else {
		a->kind = USDT_ARG_MEM;
		a->reg = USDT_REG_NONE;
		a->index = USDT_REG_NONE;
		a->scale = 1;
		if (*s != '(' && (err = parse_disp(&s, a)))
			return err;
		if (*s == '(') {
			s++;
			if (*s == '%') {
				if ((err = parse_reg(&s, &w, &sh)) < 0)
					return err;
				if (w < 4 || sh)
					return -EINVAL; /* bases are 32/64-bit */
				a->reg_size = w;
				if (err == RIP_OFF) {
					/* the assembler resolved foo(%rip) to
					 * foo's address; without a symbol the
					 * address depends on the instruction */
					if (!a->symbol[0])
						return -ENOTSUP;
					a->rip = true;
				} else {
					a->reg = err;
				}
			}
			if (*s == ',') {
				s++;
				if (a->rip)
					return -EINVAL;
				if ((err = parse_reg(&s, &w, &sh)) < 0)
					return err;
				if (w < 4 || sh || err == RIP_OFF || err == 152)
					return -EINVAL; /* %rsp cannot index */
				a->index = err;
				if (*s == ',') {
					s++;
					if (*s < '1' || *s > '8' || (*s - '0') & (*s - '0' - 1))
						return -EINVAL;
					a->scale = *s++ - '0';
				}
			}
			if (*s != ')')
				return -EINVAL;
			s++;
			if (a->reg == USDT_REG_NONE && a->index == USDT_REG_NONE && !a->rip)
				return -EINVAL; /* "()" */
		}
	}
	if (!at_end(*s))
		return -EINVAL;
	*sp = s;
	return 0;
}

int usdt_arg_parse(const char *s, struct usdt_arg *out, const char **end)
{
	memset(out, 0, sizeof(*out));
	out->reg = USDT_REG_NONE;
	out->index = USDT_REG_NONE;
	out->scale = 1;
	while (*s == ' ' || *s == '\t')
		s++;
	/* size prefix: [-]digits['f']'@' */
	const char *p = s;
	bool neg = false;
	if (*p == '-') {
		neg = true;
		p++;
	}
	int size = 0;
	const char *digits = p;
	while (is_digit(*p) && p - digits < 3)
		size = size * 10 + (*p++ - '0');
	if (p > digits && *p == 'f')
		p++;
	if (p > digits && *p == '@') {
		if (size != 1 && size != 2 && size != 4 && size != 8)
			return -EINVAL;
		out->size = size;
		out->is_signed = neg;
		s = p + 1;
	} else {
		/* no size: old notes; take the full register, unsigned */
		out->size = 8;
	}
	int err = parse_operand(&s, out);
	if (err)
		return err;
	if (out->kind == USDT_ARG_CONST && out->symbol[0] == '\0') {
		/* a constant is already its value; apply size and sign here
		 * so consumers need not */
		uint64_t v = (uint64_t)out->val;
		if (out->size < 8) {
			unsigned bits = (unsigned)out->size * 8;
			v &= (1ull << bits) - 1;
			if (out->is_signed && (v >> (bits - 1)) & 1)
				v |= ~0ull << bits;
		}
		out->val = (int64_t)v;
	}
	while (*s == ' ' || *s == '\t' || *s == '\n')
		s++;
	if (end)
		*end = s;
	return 0;
}

int usdt_args_parse(const char *s, struct usdt_arg *out, int max)
{
	int n = 0;
	while (*s == ' ' || *s == '\t')
		s++;
	while (*s) {
		if (n >= max || n >= USDT_MAX_ARGS)
			return -E2BIG;
		int err = usdt_arg_parse(s, &out[n], &s);
		if (err)
			return err;
		n++;
	}
	return n;
}
