/* test_lexer.c - tokens, literals, escapes, comments, attach text and
 * the lexer's error tags. */
#include <stdlib.h>

#include "lang/lexer.h"
#include "lang/cdefs.h"
#include "unit.h"

struct lx_fixture {
	struct arena a;
	struct diag_source src;
	struct diags d;
	struct lexer lx;
};

static void fx_init(struct lx_fixture *f, const char *text)
{
	arena_init(&f->a);
	f->src.name = "test";
	f->src.text = text;
	diags_init(&f->d, &f->src);
	lexer_init(&f->lx, &f->a, text, &f->d);
}

static void fx_free(struct lx_fixture *f)
{
	diags_free(&f->d);
	arena_free(&f->a);
}

/* Token kinds of `text` joined by spaces, using the names table. */
static const char *kinds(const char *text, char *buf, size_t n)
{
	struct lx_fixture f;
	fx_init(&f, text);
	buf[0] = 0;
	for (int i = 0; i < 64; i++) {
		struct token t = lexer_next(&f.lx);
		if (t.kind == T_EOF)
			break;
		if (buf[0])
			strncat(buf, " ", n - strlen(buf) - 1);
		strncat(buf, token_name(t.kind), n - strlen(buf) - 1);
	}
	fx_free(&f);
	return buf;
}

static uint64_t int_of(const char *text, bool *err)
{
	struct lx_fixture f;
	fx_init(&f, text);
	struct token t = lexer_next(&f.lx);
	uint64_t v = t.kind == T_INT ? t.ival : 0xdead;
	*err = f.d.nerrors > 0;
	if (t.kind == T_INT && lexer_next(&f.lx).kind != T_EOF)
		*err = true;
	fx_free(&f);
	return v;
}

static bool tag_of(const char *text, const char *tag)
{
	struct lx_fixture f;
	fx_init(&f, text);
	for (int i = 0; i < 64; i++)
		if (lexer_next(&f.lx).kind == T_EOF)
			break;
	bool r = diags_has(&f.d, tag);
	fx_free(&f);
	return r;
}

static const char *test_macro(void *ctx, const char *name, size_t len)
{
	static const char *const defs[][2] = {
		{ "A", "3+4" }, { "B", "D(5)" }, { "D", "D" }, { "SELF", "SELF+1" },
	};
	(void)ctx;
	for (size_t i = 0; i < sizeof(defs) / sizeof(defs[0]); i++)
		if (strlen(defs[i][0]) == len && !memcmp(defs[i][0], name, len))
			return defs[i][1];
	return NULL;
}

int main(void)
{
	char buf[512];
	bool err;

	CHECK_STR(kinds("a += b <<= c >>= d -> e", buf, sizeof(buf)),
		  "<name> += <name> <<= <name> >>= <name> -> <name>",
		  "longest-match punctuation");
	CHECK_STR(kinds("x++ + ++y -- - --", buf, sizeof(buf)),
		  "<name> ++ + ++ <name> -- - --", "increment operators");
	CHECK_STR(kinds("== != <= >= < > && || & | ^ ~ !", buf, sizeof(buf)),
		  "== != <= >= < > && || & | ^ ~ !", "comparison and logic");
	CHECK_STR(kinds("if else unroll while break continue return iff",
			buf, sizeof(buf)),
		  "if else unroll while break continue return <name>",
		  "keywords, and a name that starts like one");
	CHECK_STR(kinds("$x $1 $# @m @ @m2[", buf, sizeof(buf)),
		  "<$variable> <$N> $# <@map> <@map> <@map> [",
		  "variables, positionals, maps");
	CHECK_STR(kinds("a // comment\n b /* multi\nline */ c", buf, sizeof(buf)),
		  "<name> <name> <name>", "comments skipped");

	CHECK(int_of("1234", &err) == 1234 && !err, "decimal");
	CHECK(int_of("1_000_000", &err) == 1000000 && !err, "underscores");
	CHECK(int_of("0x1F", &err) == 31 && !err, "hex");
	CHECK(int_of("0xffffffffffffffff", &err) == UINT64_MAX && !err,
	      "hex max u64");
	CHECK(int_of("010", &err) == 8 && !err, "octal");
	CHECK(int_of("0", &err) == 0 && !err, "zero");
	CHECK(int_of("1e3", &err) == 1000 && !err, "exponent");
	CHECK(int_of("5ULL", &err) == 5 && !err, "ULL suffix");
	CHECK(int_of("5u", &err) == 5 && !err, "u suffix");
	CHECK(int_of("0e99999999999999999", &err) == 0 && !err,
	      "0 with a huge exponent is 0, quickly (fuzz)");
	int_of("1e99999999999999999", &err);
	CHECK(err, "huge exponent overflows, quickly (fuzz)");
	int_of("2e19", &err);
	CHECK(err, "2e19 overflows");
	CHECK(int_of("1e19", &err) == 10000000000000000000ull && !err, "1e19");
	int_of("09", &err);
	CHECK(err, "09 is a bad octal");
	int_of("99999999999999999999", &err);
	CHECK(err, "overflow is an error");
	int_of("1k", &err);
	CHECK(err, "1k: trailing letters");
	int_of("1_", &err);
	CHECK(err, "trailing underscore");
	int_of("0x", &err);
	CHECK(err, "0x without digits");
	CHECK(tag_of("0x1_0", "BAD_INT"), "underscore in hex is BAD_INT");

	struct lx_fixture f;
	fx_init(&f, "\"a\\n\\t\\\\\\\"\\x41\\101\\0z\"");
	struct token t = lexer_next(&f.lx);
	CHECK(t.kind == T_STR && t.slen == 9 &&
	      memcmp(t.sval, "a\n\t\\\"AA\0z", 9) == 0, "string escapes");
	CHECK(f.d.nerrors == 0, "no errors for valid escapes");
	fx_free(&f);

	CHECK(tag_of("\"abc", "UNTERMINATED_STRING"), "unterminated string");
	CHECK(tag_of("\"ab\ncd\"", "UNTERMINATED_STRING"),
	      "newline ends a string");
	CHECK(tag_of("\"a\\q\"", "BAD_ESCAPE"), "unknown escape");
	CHECK(tag_of("/* never closed", "UNTERMINATED_COMMENT"),
	      "unterminated comment");
	CHECK(tag_of("a ` b", "SYNTAX"), "stray character");
	CHECK(tag_of("$ x", "SYNTAX"), "lone dollar");

	fx_init(&f, "  foo\n  bar");
	lexer_next(&f.lx);
	t = lexer_next(&f.lx);
	CHECK(t.pos.line == 2 && t.pos.col == 3 && t.pos.len == 3,
	      "positions: line, col, len");
	fx_free(&f);

	/* attach points */
	const char *aps[][2] = {
		{ "tracepoint:syscalls:sys_enter_* {", "tracepoint:syscalls:sys_enter_*" },
		{ "uprobe:/bin/bash:readline /pid/", "uprobe:/bin/bash:readline" },
		{ "BEGIN/1/{", "BEGIN" },
		{ "uprobe:/x:\"a b{,\" {", "uprobe:/x:\"a b{,\"" },
		{ "  // c\n i:s:1,END", "i:s:1" },
		{ "uprobe:x:sym+8{", "uprobe:x:sym+8" },
		{ "usdt:./a.out:prov:name{", "usdt:./a.out:prov:name" },
	};
	for (size_t i = 0; i < sizeof(aps) / sizeof(aps[0]); i++) {
		fx_init(&f, aps[i][0]);
		t = lexer_attach(&f.lx);
		CHECK_STR(t.kind == T_ATTACH ? t.sval : "(not attach)",
			  aps[i][1], aps[i][1]);
		fx_free(&f);
	}
	fx_init(&f, "BEGIN, END {");
	lexer_attach(&f.lx);
	CHECK(lexer_next(&f.lx).kind == T_COMMA, "comma after attach");
	t = lexer_attach(&f.lx);
	CHECK(t.kind == T_ATTACH && strcmp(t.sval, "END") == 0 &&
	      t.pos.col == 8, "second attach point and its column");
	fx_free(&f);
	/* directives belong before the probes (lang/cdefs.c runs them) */
	CHECK_STR(kinds("#!/usr/bin/env bpftrace\na", buf, sizeof(buf)),
		  "<name>", "#! line");
	CHECK(tag_of("a\n#define X 1\nb", "SYNTAX"),
	      "directive among the probes");
	/* macros of the definitions, expanded as bpftrace does: as text */
	fx_init(&f, "A * B C $A @B \"A\" F(1) SELF");
	f.lx.macro = test_macro;
	const char *want[] = { "3", "+", "4", "*", "D", "(", "5", ")",
			       "C", "$A", "@B", "\"A\"", "F", "(", "1", ")",
			       "SELF", "+", "1" };
	bool same = true;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		t = lexer_next(&f.lx);
		char tok[64];
		snprintf(tok, sizeof(tok), "%.*s", (int)t.len, t.start);
		if (strcmp(tok, want[i])) {
			printf("#   token %zu: got [%s] want [%s]\n", i, tok,
			       want[i]);
			same = false;
			break;
		}
		if (i == 1 && (t.pos.line != 1 || t.pos.col != 1))
			same = false; /* a macro's tokens are where it is named */
	}
	CHECK(same, "object-like macros expand in probes, recursively, "
	      "not in variables, maps or strings, and not into themselves");
	CHECK(lexer_next(&f.lx).kind == T_EOF, "end after macros");
	fx_free(&f);
	unsigned line, col;
	const char *defs = "#!/bin/x\n// c\n#include <a.h>\nstruct s { int a; "
		"/* } */ };\n#if 1\nunion u { int b; } enum e { E };\n"
		"typedef struct { int c; } t;\n#endif\nBEGIN { }";
	size_t end = cdefs_end(defs, &line, &col);
	CHECK(end == strlen(defs) - 10 && line == 8 && col == 7,
	      "cdefs_end: directives, definitions and comments");
	CHECK(cdefs_end("BEGIN {}", &line, &col) == 0 && line == 1 &&
	      col == 1, "cdefs_end: no definitions");
	CHECK(tag_of("a # b", "SYNTAX"), "'#' inside a line is a stray");
	fx_init(&f, "   ");
	CHECK(lexer_attach(&f.lx).kind == T_EOF, "attach at end of input");
	fx_free(&f);
	return UNIT_DONE();
}
