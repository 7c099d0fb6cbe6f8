/* diag_tags.h - every diagnostic tag the compiler (lexer, parser,
 * semantic pass, probe expansion, code generation) can report about a
 * script, in one list: the tags are a stable interface (golden tests are
 * named err.TAG.*.bt) and this is where they are documented. The tags
 * that say the system lacks what a valid script names are the other
 * list, PROBE_ENV_TAGS (probes/provider.h). Code passes the tag as a
 * string literal; tests/lint/tags checks that every tag the code passes
 * is in one of the two lists, test_golden_errors that every golden
 * test's tag is listed here. */
#ifndef SONDE_DIAG_TAGS_H
#define SONDE_DIAG_TAGS_H

#define LANG_DIAG_TAGS(X) \
	/* lexer */ \
	X(SYNTAX, "malformed program: unexpected token or character") \
	X(UNTERMINATED_STRING, "a string (or a quoted probe part) never ends") \
	X(UNTERMINATED_COMMENT, "a /* comment never ends") \
	X(BAD_INT, "integer literal malformed or too large for 64 bits") \
	X(BAD_ESCAPE, "unknown escape sequence in a string") \
	/* preprocessor (lang/pp*.c) */ \
	X(INCLUDE_NOT_FOUND, "#include'd or --include file in no search directory") \
	X(UNTERMINATED_IF, "#if/#ifdef/#ifndef without #endif in its file") \
	X(PP_DIRECTIVE, "malformed or misplaced directive (#elif without #if...)") \
	X(PP_EXPR, "#if/#elif expression malformed or dividing by zero") \
	X(PP_ERROR, "an #error directive was reached") \
	X(MACRO_ARGS, "macro call with the wrong arguments, or a bad ## paste") \
	X(PP_LIMIT, "headers too large, deep, many or slow; macros too large") \
	/* C declarations (lang/cdecl*.c) */ \
	X(BAD_DECL, "malformed struct/union/enum/typedef, or one C refuses") \
	/* parser */ \
	X(BAD_UNROLL, "unroll count not an integer literal in 1..100") \
	/* bpftrace 0.2x: config blocks, map declarations, macros */ \
	X(BAD_CONFIG, "config = { } names an unknown variable or a bad value") \
	X(BAD_MAP_DECL, "let @m = TYPE(N): unknown map type or bad size") \
	X(BAD_MACRO, "macro called with the wrong arguments, or recursing") \
	/* semantic pass */ \
	X(BAD_PARAM, "getopt(): a named --option with a value of the wrong kind") \
	X(UNDEF_VAR, "variable read before any assignment in its probe") \
	X(UNDEF_MAP, "map used but never assigned anywhere") \
	X(TYPE_MISMATCH, "operand or assigned value of the wrong type") \
	X(MAP_KEY_MISMATCH, "map used with different key count or types") \
	X(BAD_CALL, "unknown function") \
	X(ARG_COUNT, "wrong number of arguments to a function") \
	X(ARG_TYPE, "argument of the wrong type (or not a literal)") \
	X(PRINTF_FORMAT, "format string and arguments disagree") \
	X(UNSAFE, "system()/signal() without --unsafe") \
	X(BAD_FIELD, "no such field (args->f, tuple .N)") \
	X(UNKNOWN_BUILTIN, "unknown identifier") \
	X(BAD_BUILTIN, "builtin not available for this probe type") \
	X(BAD_POSITIONAL, "positional parameter used as a number is not one") \
	X(AGG_READ, "avg/stats/hist/lhist map used as a value") \
	X(AGG_CONTEXT, "aggregation function not assigned to a map") \
	X(BAD_CONTROL, "break/continue outside a while loop") \
	X(BAD_FOR, "a for loop over a map that has no keys or holds aggregations it cannot read") \
	X(UNKNOWN_TYPE, "struct/union/enum/type name that neither the script, its headers nor the kernel's BTF defines (or only declares)") \
	X(BAD_CAST, "cast to a struct by value, or of a value that is not an integer or pointer") \
	X(BAD_INDEX, "[] on what is not an array or pointer, or a constant index out of bounds") \
	X(DEBUGF, "warning: debugf() writes to the kernel's trace buffer, " \
		  "a debugging aid, not for production") \
	X(SIGNS, "warning: integers of different signs compared or combined, " \
		 "or a signed operand of '/' or '%' (bpftrace 0.17's warnings)") \
	X(UNREACHABLE, "warning (--dialect=0.26): a statement after exit() " \
		       "or return in its block, which never runs") \
	X(UNUSED_MAP, "warning: a map declared (let @m = hash(N);) that no " \
		      "probe uses") \
	X(UNSUPPORTED, "construct sonde does not implement (&, ...)") \
	X(STRING_TOO_LONG, "string literal held as a value longer than BPFTRACE_STRLEN - 1") \
	X(TOO_LARGE, "tuple, map key or event record over 16 KiB (SEMA_VALUE_MAX)") \
	/* probe expansion (compile.c, probes/) */ \
	X(BAD_PROBE, "unknown probe type, malformed attach point, or an " \
		     "iterator mixed with other probes") \
	X(UNTRACEABLE, "warning: the kernel lists that function as not " \
		       "traceable; attaching will likely fail") \
	X(BANNED, "warning: a kretprobe bpftrace 0.17 refuses (it might lock " \
		  "up the system): skipped") \
	/* code generation (codegen/) */ \
	X(CODEGEN, "the program cannot be generated (too large, or a " \
		   "construct the generator refuses)") \
	X(STACK, "the program needs more than the BPF stack's 512 bytes") \
	/* the diagnostics themselves (base/diag.c) */ \
	X(TOO_MANY_ERRORS, "more errors than are shown (20): the rest are counted") \
	X(TOO_MANY_WARNINGS, "more warnings than are shown (20): the rest are counted")

#endif
