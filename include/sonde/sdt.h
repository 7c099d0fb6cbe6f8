/* sonde/sdt.h - static probes (USDT) for C and C++ programs on x86-64.
 *
 *   #include <sonde/sdt.h>
 *
 *   SONDE_PROBE(myapp, request__start, id, path);          0..12 arguments
 *   if (SONDE_PROBE_ENABLED(myapp, request__done))          is anyone tracing?
 *           SONDE_PROBE(myapp, request__done, id, expensive_summary());
 *   SONDE_PROBE_JSON(myapp, order, "{\"id\":%d,\"qty\":%d}", id, qty);
 *
 * and then, for example:
 *   sonde    -e 'usdt:./myapp:myapp:request__start { printf("%d %s\n", arg0, str(arg1)); }'
 *   bpftrace -e 'usdt:./myapp:myapp:request__start { ... }'
 *   sonde    -e 'usdt:./myapp:myapp:order { printf("%s\n", json(str(arg0), "qty")); }'
 *
 * What a probe leaves in the program
 * ----------------------------------
 * Each SONDE_PROBE site emits the same records as SystemTap's <sys/sdt.h>,
 * so every tool that reads those reads these (readelf -n, gdb's
 * `info probes`, perf, bpftrace, BCC, libbpf, sonde):
 *
 *  - a `.note.stapsdt` ELF note (owner "stapsdt", type 3) whose
 *    descriptor is: the address of the site, the link-time address of
 *    `_.stapsdt.base` (so tools can undo prelink), the address of the
 *    probe's semaphore, then the strings provider, name, and the argument
 *    specs `size@operand ...` where size is the byte size, negative for a
 *    signed type, and operand is what the compiler chose for the value
 *    under the "nor" constraint (immediate `$42`, register `%edi`, or
 *    memory `-4(%rbp)`), printed in AT&T syntax;
 *  - the one-byte `.stapsdt.base` section, shared through a COMDAT group;
 *  - a 2-byte semaphore per (provider, name) in section `.probes`, as
 *    <sys/sdt.h> does under _SDT_HAS_SEMAPHORES. It is defined by the
 *    header itself (in a COMDAT group named after the symbol, hidden, so
 *    every translation unit of one executable or library shares one) and
 *    EVERY probe gets one, so the program needs no generated definitions.
 *    A tracer raises it while attached (the kernel does it through the
 *    uprobe PMU's ref_ctr_offset) and SONDE_PROBE_ENABLED reads it.
 *
 * The instruction at the site: a 5-byte nop
 * -----------------------------------------
 * <sys/sdt.h> leaves a 1-byte `nop` (0x90). sonde leaves the 5-byte
 * `nopl 0x0(%rax,%rax,1)` (0f 1f 44 00 00) instead, for two reasons:
 *
 *  1. Linux (6.16 and later, x86-64) optimizes a uprobe placed on exactly
 *     this 5-byte nop: instead of an int3 trap and single-step, the site is
 *     rewritten into a call to a per-process trampoline that enters the
 *     kernel with the `uprobe` syscall. Measured on this project's test
 *     VM (kernel 6.18, 2 vCPUs; a loop of 1-2 million hits of a probe with
 *     one argument, bpftrace 0.17 attached with `{ @c = count(); }`):
 *     1.3 to 2.8 us per hit on the 5-byte nop against 6.8 to 10 us on
 *     sys/sdt.h's 1-byte nop, the same tracer program on both.
 *  2. sonde's later in-process engine patches a site with a 5-byte
 *     `jmp rel32` to a trampoline. A 5-byte site is exactly one
 *     instruction, so the patch never splits an instruction another thread
 *     may be executing, and can be written with one 8-byte aligned store
 *     when the site does not cross an 8-byte boundary (and by the
 *     int3-first protocol otherwise). A JMP, not a CALL: a call pushes a
 *     return address at -8(%rsp), and in a leaf function that is inside
 *     the 128-byte red zone the compiler may be using for locals; the
 *     trampoline reached by a jmp steps below the red zone before it
 *     touches the stack and jumps back to site + 5.
 * Tools that expect the 1-byte nop do not care: they place an int3 on the
 * first byte of the site, which is what the note's address names.
 *
 * Arguments
 * ---------
 * Integers and pointers of 1, 2, 4 or 8 bytes (signedness is recorded);
 * an array argument is passed as its address. Floating-point arguments are
 * rejected at compile time (tracers read integer registers; pass the bits
 * or a scaled integer). Arguments are evaluated at the site whether or not
 * anyone is tracing, like a function call's; wrap expensive ones in
 * SONDE_PROBE_ENABLED. The "nor" constraint lets the compiler leave a
 * value where it already is, so a site costs no instructions besides the
 * nop; with many arguments under register pressure the compiler may fail
 * with "impossible constraint" - pass fewer or simpler arguments.
 *
 * SONDE_PROBE_JSON(provider, name, fmt, ...)
 * -------------------------------------------
 * A serialized value built only when the probe is enabled: inside
 * `if (SONDE_PROBE_ENABLED(provider, name))` the arguments are formatted
 * with snprintf into a buffer of SONDE_JSON_MAX bytes (default 1024; define
 * it before including this header to change it) on the stack, and the probe
 * fires with
 *     arg0: const char *, the NUL-terminated text,
 *     arg1: int, snprintf's return value (>= SONDE_JSON_MAX: truncated).
 * The format is meant to produce a JSON object, read in scripts with
 * json(str(arg0), "path"); the caller is responsible for escaping strings
 * it interpolates. A site of this macro is reached only while a tracer has
 * the semaphore raised, so it costs one load and a predicted branch when
 * nobody traces. The same pattern works with any serializer:
 *     if (SONDE_PROBE_ENABLED(app, state)) {
 *             char *j = to_json(obj);
 *             SONDE_PROBE(app, state, j, strlen(j));
 *             free(j);
 *     }
 *
 * Limits: provider and name must be C identifiers (use `__` where a
 * tracer shows `-`: `request__start`); at most 12 arguments; x86-64 only
 * (elsewhere, or with SONDE_SDT_DISABLE defined, every macro compiles to
 * nothing and SONDE_PROBE_ENABLED to 0). */
#ifndef SONDE_SDT_H
#define SONDE_SDT_H

#if defined(__x86_64__) && !defined(SONDE_SDT_DISABLE) && !defined(__ASSEMBLER__)

#ifdef __cplusplus
#include <type_traits>
#define _SONDE_SIGNED(x) \
	(std::is_signed<typename std::decay<decltype(x)>::type>::value)
#else
#define _SONDE_SIGNED(x) _Generic((x), \
	signed char: 1, short: 1, int: 1, long: 1, long long: 1, \
	char: ((char)-1 < 0), default: 0)
#endif

/* __builtin_classify_type: 5 pointer, 14 array (C++), 8 real. */
#define _SONDE_SIZE(x) \
	((__builtin_classify_type(x) == 5 || __builtin_classify_type(x) == 14) \
	 ? (int)sizeof(void *) : (int)sizeof(x))
/* Fails to compile (negative array size) for a floating-point argument. */
#define _SONDE_NOT_FLOAT(x) \
	((int)sizeof(char[__builtin_classify_type(x) == 8 ? -1 : 1]))
#define _SONDE_ASIZE(x) \
	((_SONDE_SIGNED(x) ? -1 : 1) * _SONDE_SIZE(x) * _SONDE_NOT_FLOAT(x))

#define _SONDE_STR_(x) #x
#define _SONDE_STR(x) _SONDE_STR_(x)
#define _SONDE_CAT_(a, b) a##b
#define _SONDE_CAT(a, b) _SONDE_CAT_(a, b)

#define _SONDE_SEM(p, n) sonde_sem__##p##__##n

/* The semaphore, defined at most once per assembly file (.ifndef) and
 * once per linked object (COMDAT group named after it). */
#define _SONDE_ASM_SEM(p, n) \
	".ifndef " _SONDE_STR(_SONDE_SEM(p, n)) "\n" \
	".pushsection .probes,\"awG\",@progbits," _SONDE_STR(_SONDE_SEM(p, n)) ",comdat\n" \
	".weak " _SONDE_STR(_SONDE_SEM(p, n)) "\n" \
	".hidden " _SONDE_STR(_SONDE_SEM(p, n)) "\n" \
	".type " _SONDE_STR(_SONDE_SEM(p, n)) ",@object\n" \
	".size " _SONDE_STR(_SONDE_SEM(p, n)) ",2\n" \
	".balign 2\n" \
	_SONDE_STR(_SONDE_SEM(p, n)) ": .2byte 0\n" \
	".popsection\n" \
	".endif\n"

/* sys/sdt.h's _SDT_ASM_BASE: the section whose address lets tools undo
 * prelink. */
#define _SONDE_ASM_BASE \
	".ifndef _.stapsdt.base\n" \
	".pushsection .stapsdt.base,\"aG\",@progbits,.stapsdt.base,comdat\n" \
	".weak _.stapsdt.base\n" \
	".hidden _.stapsdt.base\n" \
	"_.stapsdt.base: .space 1\n" \
	".size _.stapsdt.base, 1\n" \
	".popsection\n" \
	".endif\n"

/* The site and its note. "?" puts the note in the COMDAT group of the
 * code around it (C++ inline functions), so the linker drops them
 * together. */
#define _SONDE_ASM_SITE(p, n, args) \
	_SONDE_ASM_SEM(p, n) \
	"990: .byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n" \
	".pushsection .note.stapsdt,\"?\",\"note\"\n" \
	".balign 4\n" \
	".4byte 992f-991f, 994f-993f, 3\n" \
	"991: .asciz \"stapsdt\"\n" \
	"992: .balign 4\n" \
	"993: .8byte 990b\n" \
	".8byte _.stapsdt.base\n" \
	".8byte " _SONDE_STR(_SONDE_SEM(p, n)) "\n" \
	".asciz \"" #p "\"\n" \
	".asciz \"" #n "\"\n" \
	".asciz \"" args "\"\n" \
	"994: .balign 4\n" \
	".popsection\n" \
	_SONDE_ASM_BASE

/* One argument: "size@operand" in the note, size and value operands. */
#define _SONDE_T(i) "%c[_sonde_s" #i "]@%[_sonde_a" #i "]"
#define _SONDE_OP(i, x) \
	[_sonde_s##i] "n" (_SONDE_ASIZE(x)), [_sonde_a##i] "nor" (x)

#define _SONDE_SITE(p, n, args, ...) \
	__asm__ __volatile__(_SONDE_ASM_SITE(p, n, args) :: __VA_ARGS__)

#define _SONDE_PROBE_2(p, n) __asm__ __volatile__(_SONDE_ASM_SITE(p, n, "") ::)
#define _SONDE_PROBE_3(p, n, a1) \
	_SONDE_SITE(p, n, _SONDE_T(1), _SONDE_OP(1, a1))
#define _SONDE_PROBE_4(p, n, a1, a2) \
	_SONDE_SITE(p, n, _SONDE_T(1) " " _SONDE_T(2), \
		    _SONDE_OP(1, a1), _SONDE_OP(2, a2))
#define _SONDE_PROBE_5(p, n, a1, a2, a3) \
	_SONDE_SITE(p, n, _SONDE_T(1) " " _SONDE_T(2) " " _SONDE_T(3), \
		    _SONDE_OP(1, a1), _SONDE_OP(2, a2), _SONDE_OP(3, a3))
#define _SONDE_PROBE_6(p, n, a1, a2, a3, a4) \
	_SONDE_SITE(p, n, _SONDE_T(1) " " _SONDE_T(2) " " _SONDE_T(3) " " \
		    _SONDE_T(4), \
		    _SONDE_OP(1, a1), _SONDE_OP(2, a2), _SONDE_OP(3, a3), \
		    _SONDE_OP(4, a4))
#define _SONDE_PROBE_7(p, n, a1, a2, a3, a4, a5) \
	_SONDE_SITE(p, n, _SONDE_T(1) " " _SONDE_T(2) " " _SONDE_T(3) " " \
		    _SONDE_T(4) " " _SONDE_T(5), \
		    _SONDE_OP(1, a1), _SONDE_OP(2, a2), _SONDE_OP(3, a3), \
		    _SONDE_OP(4, a4), _SONDE_OP(5, a5))
#define _SONDE_PROBE_8(p, n, a1, a2, a3, a4, a5, a6) \
	_SONDE_SITE(p, n, _SONDE_T(1) " " _SONDE_T(2) " " _SONDE_T(3) " " \
		    _SONDE_T(4) " " _SONDE_T(5) " " _SONDE_T(6), \
		    _SONDE_OP(1, a1), _SONDE_OP(2, a2), _SONDE_OP(3, a3), \
		    _SONDE_OP(4, a4), _SONDE_OP(5, a5), _SONDE_OP(6, a6))
#define _SONDE_PROBE_9(p, n, a1, a2, a3, a4, a5, a6, a7) \
	_SONDE_SITE(p, n, _SONDE_T(1) " " _SONDE_T(2) " " _SONDE_T(3) " " \
		    _SONDE_T(4) " " _SONDE_T(5) " " _SONDE_T(6) " " _SONDE_T(7), \
		    _SONDE_OP(1, a1), _SONDE_OP(2, a2), _SONDE_OP(3, a3), \
		    _SONDE_OP(4, a4), _SONDE_OP(5, a5), _SONDE_OP(6, a6), \
		    _SONDE_OP(7, a7))
#define _SONDE_PROBE_10(p, n, a1, a2, a3, a4, a5, a6, a7, a8) \
	_SONDE_SITE(p, n, _SONDE_T(1) " " _SONDE_T(2) " " _SONDE_T(3) " " \
		    _SONDE_T(4) " " _SONDE_T(5) " " _SONDE_T(6) " " _SONDE_T(7) \
		    " " _SONDE_T(8), \
		    _SONDE_OP(1, a1), _SONDE_OP(2, a2), _SONDE_OP(3, a3), \
		    _SONDE_OP(4, a4), _SONDE_OP(5, a5), _SONDE_OP(6, a6), \
		    _SONDE_OP(7, a7), _SONDE_OP(8, a8))
#define _SONDE_PROBE_11(p, n, a1, a2, a3, a4, a5, a6, a7, a8, a9) \
	_SONDE_SITE(p, n, _SONDE_T(1) " " _SONDE_T(2) " " _SONDE_T(3) " " \
		    _SONDE_T(4) " " _SONDE_T(5) " " _SONDE_T(6) " " _SONDE_T(7) \
		    " " _SONDE_T(8) " " _SONDE_T(9), \
		    _SONDE_OP(1, a1), _SONDE_OP(2, a2), _SONDE_OP(3, a3), \
		    _SONDE_OP(4, a4), _SONDE_OP(5, a5), _SONDE_OP(6, a6), \
		    _SONDE_OP(7, a7), _SONDE_OP(8, a8), _SONDE_OP(9, a9))
#define _SONDE_PROBE_12(p, n, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10) \
	_SONDE_SITE(p, n, _SONDE_T(1) " " _SONDE_T(2) " " _SONDE_T(3) " " \
		    _SONDE_T(4) " " _SONDE_T(5) " " _SONDE_T(6) " " _SONDE_T(7) \
		    " " _SONDE_T(8) " " _SONDE_T(9) " " _SONDE_T(10), \
		    _SONDE_OP(1, a1), _SONDE_OP(2, a2), _SONDE_OP(3, a3), \
		    _SONDE_OP(4, a4), _SONDE_OP(5, a5), _SONDE_OP(6, a6), \
		    _SONDE_OP(7, a7), _SONDE_OP(8, a8), _SONDE_OP(9, a9), \
		    _SONDE_OP(10, a10))
#define _SONDE_PROBE_13(p, n, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11) \
	_SONDE_SITE(p, n, _SONDE_T(1) " " _SONDE_T(2) " " _SONDE_T(3) " " \
		    _SONDE_T(4) " " _SONDE_T(5) " " _SONDE_T(6) " " _SONDE_T(7) \
		    " " _SONDE_T(8) " " _SONDE_T(9) " " _SONDE_T(10) " " \
		    _SONDE_T(11), \
		    _SONDE_OP(1, a1), _SONDE_OP(2, a2), _SONDE_OP(3, a3), \
		    _SONDE_OP(4, a4), _SONDE_OP(5, a5), _SONDE_OP(6, a6), \
		    _SONDE_OP(7, a7), _SONDE_OP(8, a8), _SONDE_OP(9, a9), \
		    _SONDE_OP(10, a10), _SONDE_OP(11, a11))
#define _SONDE_PROBE_14(p, n, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12) \
	_SONDE_SITE(p, n, _SONDE_T(1) " " _SONDE_T(2) " " _SONDE_T(3) " " \
		    _SONDE_T(4) " " _SONDE_T(5) " " _SONDE_T(6) " " _SONDE_T(7) \
		    " " _SONDE_T(8) " " _SONDE_T(9) " " _SONDE_T(10) " " \
		    _SONDE_T(11) " " _SONDE_T(12), \
		    _SONDE_OP(1, a1), _SONDE_OP(2, a2), _SONDE_OP(3, a3), \
		    _SONDE_OP(4, a4), _SONDE_OP(5, a5), _SONDE_OP(6, a6), \
		    _SONDE_OP(7, a7), _SONDE_OP(8, a8), _SONDE_OP(9, a9), \
		    _SONDE_OP(10, a10), _SONDE_OP(11, a11), _SONDE_OP(12, a12))

/* Count the macro arguments (provider and name included: 2..14). */
#define _SONDE_NARG(...) \
	_SONDE_NARG_(__VA_ARGS__, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define _SONDE_NARG_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, \
		     _14, N, ...) N

/* SONDE_PROBE(provider, name, args...): a probe site with 0..12 args. */
#define SONDE_PROBE(...) \
	do { \
		_SONDE_CAT(_SONDE_PROBE_, _SONDE_NARG(__VA_ARGS__))(__VA_ARGS__); \
	} while (0)

/* Non-zero while some tracer has the probe enabled. The asm statement
 * makes sure the semaphore exists even if this file has no site of the
 * probe. */
#define SONDE_PROBE_ENABLED(p, n) __extension__({ \
	extern volatile unsigned short _SONDE_SEM(p, n) \
		__attribute__((visibility("hidden"))); \
	__asm__(_SONDE_ASM_SEM(p, n)); \
	__builtin_expect(_SONDE_SEM(p, n) != 0, 0); \
})

#ifndef SONDE_JSON_MAX
#define SONDE_JSON_MAX 1024
#endif

/* SONDE_PROBE_JSON(provider, name, fmt, ...): see the essay above. */
#define SONDE_PROBE_JSON(p, n, ...) \
	do { \
		if (SONDE_PROBE_ENABLED(p, n)) { \
			char _sonde_json[SONDE_JSON_MAX]; \
			int _sonde_len = __builtin_snprintf( \
				_sonde_json, sizeof(_sonde_json), __VA_ARGS__); \
			_SONDE_PROBE_4(p, n, (const char *)_sonde_json, _sonde_len); \
		} \
	} while (0)

#else /* not x86-64, or disabled */

#define SONDE_PROBE(...) do { } while (0)
#define SONDE_PROBE_ENABLED(p, n) 0
#define SONDE_PROBE_JSON(p, n, ...) do { } while (0)

#endif
#endif /* SONDE_SDT_H */
