/* test_dlang.c - the D front end (lang/d*.c): tokens, probe
 * descriptions into attach points, clauses and D's names into the AST,
 * pragmas and options, and hostile input (deep nesting, megabyte
 * scripts, random bytes): bounded diagnostics, no crash. */
#include <stdlib.h>
#include <string.h>

#include "lang/ast.h"
#include "lang/d_lexer.h"
#include "lang/frontend.h"
#include "unit.h"

struct dfx {
	struct arena a;
	struct diag_source src;
	struct diags d;
	struct frontend_settings set;
	struct node *root;
};

static struct node *dparse(struct dfx *f, const char *text, int pid,
			   const char *cmd, bool quiet)
{
	memset(f, 0, sizeof(*f));
	arena_init(&f->a);
	f->src.name = "test.d";
	f->src.text = text;
	diags_init(&f->d, &f->src);
	static char *pos[] = { "7", "word" };
	struct frontend_opts o = { .pid = pid, .cmd = cmd, .quiet = quiet,
				   .set = &f->set, .positional = pos,
				   .npositional = 2 };
	f->root = frontend_dtrace.parse(&f->a, text, &o, NULL, &f->d);
	return f->root;
}

static void dfree(struct dfx *f)
{
	diags_free(&f->d);
	arena_free(&f->a);
}

/* The first error's message, or "". */
static const char *first_error(const struct dfx *f)
{
	for (size_t i = 0; i < f->d.list.n; i++)
		if (f->d.list.v[i].level == DIAG_ERROR)
			return f->d.list.v[i].msg;
	return "";
}

/* The attach points of every clause, "TEXT" joined by " | ". */
static const char *attach_texts(struct dfx *f, char *buf, size_t n)
{
	buf[0] = 0;
	if (!f->root)
		return buf;
	for (uint32_t b = 0; b < f->root->u.list.n; b++) {
		const struct node *p = f->root->u.list.v[b];
		for (uint32_t i = 0; i < p->u.probe.attach.n; i++) {
			if (buf[0])
				strncat(buf, " | ", n - strlen(buf) - 1);
			strncat(buf, p->u.probe.attach.v[i]->u.attach.text,
				n - strlen(buf) - 1);
		}
	}
	return buf;
}

static const char *mapped(const char *desc, int pid, const char *cmd)
{
	static char buf[512];
	char text[256];
	snprintf(text, sizeof(text), "%s { }", desc);
	struct dfx f;
	dparse(&f, text, pid, cmd, true);
	if (f.d.nerrors)
		snprintf(buf, sizeof(buf), "error: %s", first_error(&f));
	else
		attach_texts(&f, buf, sizeof(buf));
	dfree(&f);
	return buf;
}

/* The AST of the first clause's body, dumped. */
static char *dump_body(const char *text, bool quiet)
{
	struct dfx f;
	dparse(&f, text, 0, NULL, quiet);
	char *s = NULL;
	size_t n = 0;
	FILE *m = open_memstream(&s, &n);
	if (f.root && f.root->u.list.n && !f.d.nerrors)
		ast_dump(m, f.root->u.list.v[0]->u.probe.body, &f.a);
	else
		fprintf(m, "error: %s", first_error(&f));
	fclose(m);
	dfree(&f);
	return s;
}

static void test_tokens(void)
{
	struct arena a;
	struct diags d;
	struct diag_source src = { "t", "" };
	arena_init(&a);
	diags_init(&d, &src);
	struct d_lexer l;
	d_lex_init(&l, &a, "a->b ^^ <<= @agg @ $$1 $target 0x1f 'c' '\\n' "
		   "\"s\\t\\x41\\101\" /* c */ // line\n x", &d);
	struct d_tok t;
	const char *want[] = { "a", "->", "b", "^^", "<<=", "@agg", "@",
			       "$$1", "$target", "31", "99", "10", "s\tAA",
			       "x" };
	bool ok = true;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		d_lex_next(&l, &t);
		char got[64];
		switch (t.kind) {
		case DT_IDENT: snprintf(got, sizeof(got), "%s", t.s); break;
		case DT_OP: snprintf(got, sizeof(got), "%s", t.op); break;
		case DT_AGG: snprintf(got, sizeof(got), "@%s", t.s); break;
		case DT_MACRO: snprintf(got, sizeof(got), "%s%s",
					t.dollar2 ? "$$" : "$", t.s); break;
		case DT_INT: case DT_CHAR:
			snprintf(got, sizeof(got), "%llu",
				 (unsigned long long)t.ival); break;
		case DT_STR: snprintf(got, sizeof(got), "%s", t.s); break;
		default: snprintf(got, sizeof(got), "?%d", t.kind);
		}
		if (strcmp(got, want[i]) != 0) {
			printf("#   token %zu: got [%s] want [%s]\n", i, got,
			       want[i]);
			ok = false;
		}
	}
	d_lex_next(&l, &t);
	CHECK(ok && t.kind == DT_EOF && !d.nerrors, "d lexer: tokens");
	diags_free(&d);
	arena_free(&a);

	static const struct { const char *text, *tag; } bad[] = {
		{ "\"abc", "UNTERMINATED_STRING" },
		{ "/* never", "UNTERMINATED_COMMENT" },
		{ "99999999999999999999999", "BAD_INT" },
		{ "12abc", "BAD_INT" },
		{ "\"\\q\"", "BAD_ESCAPE" },
		{ "`", "SYNTAX" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		arena_init(&a);
		diags_init(&d, &src);
		d_lex_init(&l, &a, bad[i].text, &d);
		for (int k = 0; k < 8; k++) {
			d_lex_next(&l, &t);
			if (t.kind == DT_EOF)
				break;
		}
		char name[96];
		snprintf(name, sizeof(name), "d lexer: %s is %s", bad[i].text,
			 bad[i].tag);
		CHECK(diags_has(&d, bad[i].tag), name);
		diags_free(&d);
		arena_free(&a);
	}
}

static void test_descriptions(void)
{
	CHECK_STR(mapped("BEGIN", 0, NULL), "BEGIN", "desc: BEGIN");
	CHECK_STR(mapped("dtrace:::END", 0, NULL), "END", "desc: dtrace:::END");
	CHECK_STR(mapped("dtrace:::", 0, NULL), "BEGIN | END | ERROR",
		  "desc: dtrace::: is BEGIN, END and ERROR");
	CHECK_STR(mapped("profile-997", 0, NULL), "profile:hz:997",
		  "desc: profile-997");
	CHECK_STR(mapped("profile:::tick-1sec", 0, NULL), "interval:s:1",
		  "desc: tick-1sec");
	CHECK_STR(mapped("tick-10ms", 0, NULL), "interval:ms:10",
		  "desc: tick-10ms");
	CHECK_STR(mapped("tick-2m", 0, NULL), "interval:s:120",
		  "desc: tick-2m (minutes)");
	CHECK(strncmp(mapped("tick-0", 0, NULL), "error", 5) == 0,
	      "desc: tick-0 is an error");
	CHECK_STR(mapped("syscall::read:entry", 0, NULL),
		  "tracepoint:syscalls:sys_enter_read", "desc: syscall entry");
	CHECK_STR(mapped("syscall::read*:", 0, NULL),
		  "tracepoint:syscalls:sys_enter_read* | "
		  "tracepoint:syscalls:sys_exit_read*",
		  "desc: syscall glob, name omitted");
	CHECK_STR(mapped("syscall:::return", 0, NULL),
		  "tracepoint:syscalls:sys_exit_*", "desc: every syscall return");
	CHECK_STR(mapped("fbt::vfs_read:return", 0, NULL), "kretprobe:vfs_read",
		  "desc: fbt return");
	CHECK_STR(mapped("fbt:vmlinux:vfs_*:entry", 0, NULL), "kprobe:vfs_*",
		  "desc: fbt glob");
	CHECK_STR(mapped("fbt:::return", 0, NULL), "kretprobe:*",
		  "desc: fbt, every function");
	CHECK_STR(mapped("pid42:::entry", 0, NULL), "uprobe:/proc/42/exe:*",
		  "desc: pid, every function of the program");
	CHECK_STR(mapped("pid123::main:entry", 0, NULL),
		  "uprobe:/proc/123/exe:main", "desc: pidN, the program");
	CHECK_STR(mapped("pid123:libc.so.6:malloc:return", 0, NULL),
		  "uretprobe:libc.so.6:malloc", "desc: pidN, a library");
	CHECK_STR(mapped("pid$target:a.out:f:1c", 42, NULL),
		  "uprobe:/proc/42/exe:f+28", "desc: pid$target offset (hex)");
	CHECK_STR(mapped("pid$target::f:entry", 0, "/bin/true -x"),
		  "uprobe:/bin/true:f", "desc: pid$target with -c");
	CHECK_STR(mapped("my_prov*:::p", 0, NULL), "usdt:/proc/*:my_prov*:p",
		  "desc: USDT glob without a process: every process");
	CHECK_STR(mapped("my_prov$target:::p", 42, NULL), "usdt::my_prov:p",
		  "desc: USDT with -p");
	CHECK_STR(mapped("my_prov*:::p", 0, "/bin/prog"),
		  "usdt:/bin/prog:my_prov*:p", "desc: USDT with -c");
	CHECK_STR(mapped("syscall::$2:entry", 0, NULL),
		  "tracepoint:syscalls:sys_enter_word",
		  "desc: macro arguments in a description");
	CHECK(strstr(mapped("pid$target::main:entry", 0, NULL),
		     "$target is defined only") != NULL,
	      "desc: $target needs -c or -p");
	CHECK_STR(mapped("dtrace:::ERROR", 0, NULL), "ERROR",
		  "desc: dtrace:::ERROR");
	char buf[256];
	struct dfx f;
	dparse(&f, "BEGIN, END, syscall::close:entry /1/ { }", 0, NULL, true);
	CHECK_STR(attach_texts(&f, buf, sizeof(buf)),
		  "BEGIN | END | tracepoint:syscalls:sys_enter_close",
		  "clause: several descriptions");
	CHECK(f.root && f.root->u.list.v[0]->u.probe.predicate,
	      "clause: predicate");
	dfree(&f);
}

static void test_clauses(void)
{
	char *s = dump_body("BEGIN { self->t = 1; this->v = 2; g = 3; "
			    "a[1, \"k\"] = 4; }", true);
	CHECK(strstr(s, "@.self.t") && strstr(s, "this_v") &&
	      strstr(s, "@.g") && strstr(s, "@.a"),
	      "scopes: self-> a map, this-> a variable, globals maps");
	free(s);
	s = dump_body("BEGIN { self->t = 0; }", true);
	CHECK(strstr(s, "delete") != NULL, "self->x = 0 frees it");
	free(s);
	s = dump_body("BEGIN { @q = quantize(1); @l = lquantize(1, 0, 10); "
		      "clear(@q); trunc(@l); }", true);
	CHECK(strstr(s, "hist") && strstr(s, "lhist") && strstr(s, "zero") &&
	      strstr(s, "clear"), "aggregation functions map");
	free(s);
	s = dump_body("BEGIN { trace(1); }", false);
	CHECK(strstr(s, "__dtrace_probe_line") && strstr(s, "__dtrace_trace"),
	      "not quiet: the record line is added");
	free(s);
	s = dump_body("BEGIN { trace(1); }", true);
	CHECK(!strstr(s, "__dtrace_probe_line"), "quiet: no record line");
	free(s);
	s = dump_body("BEGIN { x = 1; }", false);
	CHECK(!strstr(s, "__dtrace_probe_line"),
	      "a clause that records nothing prints no line");
	free(s);
	s = dump_body("BEGIN { printf(\"%d\", $1 + 1); printf(\"%s\", $$2); }",
		      true);
	CHECK(strstr(s, "positional") || strstr(s, "$1"),
	      "macro arguments");
	free(s);
	s = dump_body("syscall::read:entry /pid == 1 && (arg0 / 2) > 1/ "
		      "{ x = 4 / 2; }", true);
	CHECK(strncmp(s, "error", 5) != 0, "division in a predicate's parens");
	free(s);
	s = dump_body("BEGIN { x = a ^^ b; }", true);
	CHECK(strncmp(s, "error", 5) != 0, "^^");
	free(s);
	s = dump_body("BEGIN { if (x > 1) { y = 1; } else if (x) y = 2; "
		      "else { y = 3; } }", true);
	CHECK(strncmp(s, "error", 5) != 0, "if / else if / else");
	free(s);
	s = dump_body("BEGIN { x = (int)1 + (unsigned long)2 + "
		      "(char *)0 + (uint64_t)3; }", true);
	CHECK(strncmp(s, "error", 5) != 0, "casts");
	free(s);

	struct dfx f;
	dparse(&f, "#!/usr/sbin/dtrace -s\n#pragma D option quiet\n"
	       "#pragma D option strsize=32\n#pragma ident \"x\"\n"
	       "BEGIN { }\n", 0, NULL, false);
	CHECK(!f.d.nerrors && f.set.quiet && f.set.strsize == 32,
	      "#! line, #pragma D option, other pragmas ignored");
	dfree(&f);
	dparse(&f, "#pragma D option nosuch\nBEGIN { }", 0, NULL, false);
	CHECK(strstr(first_error(&f), "unknown option") != NULL,
	      "#pragma D option unknown");
	dfree(&f);
	dparse(&f, "#include <x.h>\nBEGIN { }", 0, NULL, false);
	CHECK(diags_has(&f.d, "PP_DIRECTIVE"), "#include needs -C");
	dfree(&f);
	{
		memset(&f, 0, sizeof(f));
		arena_init(&f.a);
		f.src.name = "cpp.d";
		f.src.text = "#pragma D option quiet\n#define N 3\n"
			"#if N > 2\nBEGIN { x = N; }\n#endif\n";
		diags_init(&f.d, &f.src);
		static const char *const defs[] = { "DM=1" };
		struct frontend_opts o = { .cpp = true, .defines = defs,
					   .ndefines = 1, .set = &f.set };
		f.root = frontend_dtrace.parse(&f.a, f.src.text, &o, NULL, &f.d);
		CHECK(!f.d.nerrors && f.root && f.root->u.list.n == 1 &&
		      f.set.quiet, "-C: macros, conditionals, pragmas kept");
		dfree(&f);
	}
	dparse(&f, "BEGIN\n{\n\tx = ;\n}\n", 0, NULL, false);
	CHECK(f.d.nerrors && f.d.list.v[0].pos.line == 3 &&
	      strstr(first_error(&f), "syntax error near \";\""),
	      "syntax error: its line and DTrace's words");
	dfree(&f);
	dparse(&f, "BEGIN { trace(caller); }", 0, NULL, false);
	CHECK(strstr(first_error(&f), "not supported yet") != NULL,
	      "missing builtins say so");
	dfree(&f);
	dparse(&f, "", 0, NULL, false);
	CHECK(strstr(first_error(&f), "no probes specified") != NULL,
	      "empty script");
	dfree(&f);
}

static void test_hostile(void)
{
	/* nesting: capped, one error, no stack overflow */
	size_t depth = 100000;
	char *s = malloc(2 * depth + 64);
	strcpy(s, "BEGIN { x = ");
	size_t n = strlen(s);
	memset(s + n, '(', depth);
	n += depth;
	s[n++] = '1';
	memset(s + n, ')', depth);
	n += depth;
	strcpy(s + n, "; }");
	struct dfx f;
	dparse(&f, s, 0, NULL, false);
	CHECK(f.d.nerrors >= 1 && f.d.list.n <= DIAG_MAX_ERRORS &&
	      strstr(first_error(&f), "nested"), "deep nesting: one error");
	dfree(&f);
	memset(s, 0, 2 * depth + 64);
	for (size_t i = 0; i < depth; i++)
		s[i] = "-!~*"[i % 4];
	char *t = malloc(depth + 64);
	snprintf(t, depth + 64, "BEGIN { x = %s1; }", s);
	dparse(&f, t, 0, NULL, false);
	CHECK(f.d.nerrors >= 1 && f.d.list.n <= DIAG_MAX_ERRORS,
	      "deep unary operators: bounded");
	dfree(&f);
	free(t);
	free(s);

	/* a megabyte of clauses parses, a megabyte of errors is bounded */
	size_t big = 1 << 20;
	char *m = malloc(big + 64);
	size_t k = 0;
	while (k + 40 < big)
		k += (size_t)sprintf(m + k, "BEGIN /x/ { @c[%zu] = count(); }\n",
				     k % 1000);
	m[k] = 0;
	dparse(&f, m, 0, NULL, true);
	CHECK(!f.d.nerrors && f.root && f.root->u.list.n == 1 &&
	      f.set.nclauses == 1 && f.set.clauses[0] > 10000,
	      "1 MB script of clauses of one probe: one program");
	dfree(&f);
	k = 0;
	for (size_t i = 1; k + 64 < big; i++)
		k += (size_t)sprintf(m + k, "tick-%zus { @c%zu[%zu] = count(); "
				     "v%zu = %zu; }\n", i, i, i, i, i);
	m[k] = 0;
	dparse(&f, m, 0, NULL, true);
	CHECK(!f.d.nerrors && f.root && f.root->u.list.n > 10000 &&
	      f.set.naggs > 10000, "1 MB script of distinct clauses");
	dfree(&f);
	for (k = 0; k + 8 < big; k += 8)
		memcpy(m + k, "BEGIN {;", 8);
	m[k] = 0;
	dparse(&f, m, 0, NULL, true);
	CHECK(f.d.nerrors >= 1 && f.d.list.n <= DIAG_MAX_ERRORS + 1,
	      "1 MB of broken clauses: bounded diagnostics");
	dfree(&f);
	memset(m, '(', big);
	m[big] = 0;
	dparse(&f, m, 0, NULL, true);
	CHECK(f.d.nerrors >= 1 && f.d.list.n <= DIAG_MAX_ERRORS + 1,
	      "1 MB of '(': bounded");
	dfree(&f);

	/* random bytes and random token soup: no crash (ASan in CI) */
	static const char *const words[] = {
		"BEGIN", "{", "}", "/", "(", ")", "[", "]", "@a", "self->x",
		"this->y", "=", "+", ";", "trace", "printf", "\"s\"", "1", ",",
		"?", ":", "syscall::read:entry", "#pragma D option quiet\n",
		"$1", "$$2", "$target", "->", "quantize", "if", "else", "'c'",
		"/*", "*/", "\n", "\\", "\"", "`", "pid$target::f:entry",
	};
	unsigned seed = 12345;
	bool alive = true;
	for (int round = 0; round < 3000; round++) {
		char buf[512];
		size_t len = 0;
		int nw = (int)(rand_r(&seed) % 40);
		for (int i = 0; i < nw && len < sizeof(buf) - 40; i++) {
			if (round % 3 == 0) {
				buf[len++] = (char)(rand_r(&seed) % 255 + 1);
				continue;
			}
			const char *w = words[rand_r(&seed) %
					      (sizeof(words) / sizeof(words[0]))];
			len += (size_t)snprintf(buf + len, sizeof(buf) - len,
						"%s ", w);
		}
		buf[len] = 0;
		dparse(&f, buf, 0, NULL, round % 2);
		alive &= f.d.list.n <= DIAG_MAX_ERRORS + 1;
		dfree(&f);
	}
	CHECK(alive, "3000 random inputs: no crash, bounded diagnostics");
	free(m);
}

/* Integer constants' D types (the guide's "Constants", C's rules):
 * size | D_INT_UNSIGNED from the suffix and the magnitude; decimal
 * constants stay signed, octal and hexadecimal ones may be unsigned. */
static void test_constant_types(void)
{
	static const struct { const char *text; uint8_t type; } c[] = {
		{ "1", 4 }, { "2147483647", 4 }, { "2147483648", 8 },
		{ "0x7fffffff", 4 }, { "0x80000000", 4 | D_INT_UNSIGNED },
		{ "0xffffffff", 4 | D_INT_UNSIGNED },
		{ "4294967295", 8 }, { "0x100000000", 8 },
		{ "0xffffffffffffffff", 8 | D_INT_UNSIGNED },
		{ "1u", 4 | D_INT_UNSIGNED }, { "1U", 4 | D_INT_UNSIGNED },
		{ "1l", 8 }, { "1L", 8 }, { "1ll", 8 }, { "1LL", 8 },
		{ "1ul", 8 | D_INT_UNSIGNED }, { "1LU", 8 | D_INT_UNSIGNED },
		{ "1ULL", 8 | D_INT_UNSIGNED }, { "1llu", 8 | D_INT_UNSIGNED },
		{ "0x80000000u", 4 | D_INT_UNSIGNED }, { "017", 4 },
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct arena a;
		struct diags d;
		struct diag_source src = { "t", "" };
		arena_init(&a);
		diags_init(&d, &src);
		struct d_lexer l;
		struct d_tok t;
		d_lex_init(&l, &a, c[i].text, &d);
		d_lex_next(&l, &t);
		char name[96];
		snprintf(name, sizeof(name), "d lexer: %s has D type %#x",
			 c[i].text, c[i].type);
		CHECK(t.kind == DT_INT && t.itype == c[i].type && !d.nerrors,
		      name);
		diags_free(&d);
		arena_free(&a);
	}
	/* suffixes C does not have */
	static const char *const bad[] = { "1lL", "1uu", "1lul", "1lll" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct arena a;
		struct diags d;
		struct diag_source src = { "t", "" };
		arena_init(&a);
		diags_init(&d, &src);
		struct d_lexer l;
		struct d_tok t;
		d_lex_init(&l, &a, bad[i], &d);
		d_lex_next(&l, &t);
		char name[96];
		snprintf(name, sizeof(name), "d lexer: %s is BAD_INT", bad[i]);
		CHECK(diags_has(&d, "BAD_INT"), name);
		diags_free(&d);
		arena_free(&a);
	}
}

int main(void)
{
	test_tokens();
	test_constant_types();
	test_descriptions();
	test_clauses();
	test_hostile();
	return UNIT_DONE();
}
