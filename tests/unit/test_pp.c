/* test_pp.c - the preprocessor: macros (object, function-like, #, ##,
 * variadic, recursion), conditionals and their expressions, #include
 * search order and guards, errors with their file:line:col, and bounds. */
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lang/pp.h"
#include "unit.h"

static char dir[64];

/* The output tokens spelled with single spaces. */
static char *run(const char *text, struct diags *d, struct pp **out,
		 const char *const *incs, size_t ninc, const char *const *files,
		 size_t nfiles)
{
	static struct diag_source src;
	src.name = "test.bt";
	src.text = text;
	diags_init(d, &src);
	struct pp *pp = pp_new();
	const char *const sys[] = { dir };
	struct pp_opts o = { .name = "test.bt", .text = text,
			     .len = strlen(text), .include_dirs = incs,
			     .ninclude_dirs = ninc, .include_files = files,
			     .ninclude_files = nfiles, .have_btf = true,
			     .sys_dirs = sys, .nsys_dirs = 1 };
	pp_run(pp, &o, d);
	size_t n;
	const struct ptok *t = pp_tokens(pp, &n);
	size_t cap = 1;
	for (size_t i = 0; i < n; i++)
		cap += t[i].len + 1;
	char *s = calloc(1, cap), *w = s;
	for (size_t i = 0; i < n && t[i].kind != PT_EOF; i++) {
		if (w != s)
			*w++ = ' ';
		memcpy(w, t[i].text, t[i].len);
		w += t[i].len;
	}
	*w = 0;
	if (out)
		*out = pp;
	else
		pp_free(pp);
	return s;
}

static void expect(const char *text, const char *want, const char *name)
{
	struct diags d;
	char *got = run(text, &d, NULL, NULL, 0, NULL, 0);
	CHECK_STR(got, want, name);
	CHECK(d.nerrors == 0, name);
	if (d.nerrors)
		diags_print(&d, stdout);
	free(got);
	diags_free(&d);
}

/* The first diagnostic, rendered. */
static char *error_of(const char *text)
{
	struct diags d;
	free(run(text, &d, NULL, NULL, 0, NULL, 0));
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	diags_print(&d, f);
	fclose(f);
	diags_free(&d);
	return buf;
}

static void expect_error(const char *text, const char *want, const char *name)
{
	char *e = error_of(text);
	CHECK(e && strstr(e, want), name);
	if (!e || !strstr(e, want))
		printf("#   got: %s#   want: %s\n", e ? e : "(null)", want);
	free(e);
}

static void write_file(const char *name, const char *text)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	char *slash = strrchr(path, '/');
	*slash = 0;
	mkdir(path, 0755);
	*slash = '/';
	FILE *f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
}

static void test_macros(void)
{
	expect("#define A 1\nA + A", "1 + 1", "object-like");
	expect("#define A B\n#define B 2\nA", "2", "nested");
	expect("#define A A + 1\nA", "A + 1", "self-reference stops");
	expect("#define A B\n#define B A\nA B", "A B", "mutual recursion stops");
	expect("#define F(x, y) (x * y)\nF(1 + 2, (3, 4))", "( 1 + 2 * ( 3 , 4 ) )",
	       "function-like, nested parentheses in an argument");
	expect("#define F(x) x\nF", "F", "function-like name alone");
	expect("#define S(x) #x\nS(a  \"b\\n\" c)", "\"a \\\"b\\\\n\\\" c\"",
	       "stringizing escapes");
	expect("#define P(a, b) a ## b\nP(foo, bar) P(1, 2) P(, x)",
	       "foobar 12 x", "pasting");
	expect("#define V(f, ...) f(__VA_ARGS__)\nV(g, 1, 2) V(h)",
	       "g ( 1 , 2 ) h ( )", "variadic");
	expect("#define E(f, args...) f(1, ## args)\nE(g) E(g, 2)",
	       "g ( 1 ) g ( 1 , 2 )", "GNU named variadic and , ##");
	expect("#define O(...) a __VA_OPT__(, b)\nO() O(1)", "a a , b",
	       "__VA_OPT__");
	expect("#define F(x) [x]\n#define G F(F(1))\nG", "[ [ 1 ] ]",
	       "arguments expanded before substitution");
	expect("#define f(a) a*g\n#define g(a) f(a)\nf(2)(9)",
	       "2 * 9 * g", "C standard example: hide sets");
	expect("#define A 1\n#undef A\nA", "A", "#undef");
	expect("__LINE__\n__LINE__", "1 2", "__LINE__");
	expect("#define X __FILE__\nX", "\"test.bt\"", "__FILE__");
	expect("#define EMPTY\nEMPTY a EMPTY", "a", "empty macro");
	expect("#define L \\\n  1 \\\n  + 2\nL", "1 + 2", "line splices");
	expect("#define C /* c */ 3 // d\nC", "3", "comments in a body");
}

static void test_conditionals(void)
{
	expect("#if 1 + 2 * 3 == 7 && !0\ny\n#else\nn\n#endif", "y",
	       "#if arithmetic");
	expect("#if -1 < 0u\ny\n#else\nn\n#endif", "n",
	       "unsigned comparison converts");
	expect("#if (1 ? 2 : 3) == 2 && (0x10 >> 2) == 4 && 'a' == 97\ny\n"
	       "#endif", "y", "ternary, hex, shifts, characters");
	expect("#define A\n#if defined A && defined(A) && !defined B\ny\n"
	       "#endif", "y", "defined");
	expect("#if UNDEFINED_NAME\nn\n#elif 0\nn\n#elif 2 > 1\ny\n#else\nn\n"
	       "#endif", "y", "#elif chain; names are 0");
	expect("#ifdef BPFTRACE_HAVE_BTF\nbtf\n#endif\n#ifndef __x86_64__\nn\n"
	       "#endif", "btf", "predefined macros");
	expect("#if 0\n#if 1\nn\n#else\nn\n#endif\n#error no\n#else\ny\n"
	       "#endif", "y", "nested skipped groups");
	expect("#if 0\ndon't ' \" care\n#endif\nok", "ok",
	       "stray quotes in skipped code");
	expect("#if __has_include(<stddef.h>) && !__has_include(\"nope.h\")\n"
	       "y\n#endif", "y", "__has_include");
	expect("#if __GNUC__ >= 4 && __has_attribute(packed) == 0\ny\n#endif",
	       "y", "__has_attribute is 0");
}

static void test_includes(void)
{
	write_file("a.h", "#pragma once\nint a;\n");
	write_file("g.h", "#ifndef G_H\n#define G_H\nint g;\n#endif\n");
	write_file("sub/n.h", "int sub_n;\n#include_next <n.h>\n");
	write_file("n.h", "int n;\n");
	write_file("sub/q.h", "#include \"a.h\"\nint q;\n");
	write_file("sub/a.h", "int sub_a;\n");
	write_file("bad.h", "\n  #if 1\nint x;\n");
	write_file("err.h", "int e;\n#error from header\n");
	write_file("loop.h", "#include <loop.h>\n");
	char sub[128];
	snprintf(sub, sizeof(sub), "%s/sub", dir);
	const char *incs[] = { sub };
	struct diags d;
	char *got = run("#include <a.h>\n#include <a.h>\n#include <g.h>\n"
			"#include <g.h>\nG_H", &d, NULL, NULL, 0, NULL, 0);
	CHECK_STR(got, "int a ; int g ;", "#pragma once and include guards");
	free(got);
	diags_free(&d);
	got = run("#include <n.h>\n#include <q.h>", &d, NULL, incs, 1,
		  NULL, 0);
	CHECK_STR(got, "int sub_n ; int n ; int sub_a ; int q ;",
		  "-I first, #include_next, \"...\" beside the includer");
	free(got);
	diags_free(&d);
	const char *files[] = { "a.h", "n.h" };
	char cwd[512];
	if (!getcwd(cwd, sizeof(cwd)))
		cwd[0] = 0;
	if (chdir(dir) == 0) {
		got = run("x", &d, NULL, NULL, 0, files, 2);
		CHECK_STR(got, "int a ; int n ; x", "--include, in order");
		free(got);
		diags_free(&d);
		if (chdir(cwd) != 0)
			printf("# cannot return to %s\n", cwd);
	}
	expect("#include <stddef.h>\nsize_t", "typedef long int "
	       "ptrdiff_t ; typedef long unsigned int size_t ; typedef int "
	       "wchar_t ; typedef unsigned int wint_t ; typedef struct { long "
	       "long __max_align_ll __attribute__ ( ( __aligned__ ( 8 ) ) ) ; "
	       "long double __max_align_ld __attribute__ ( ( __aligned__ ( 16 )"
	       " ) ) ; } max_align_t ; size_t", "built-in stddef.h");
	expect_error("\n#include <nothere.h>\n", "test.bt:2:10: ERROR: "
		     "'nothere.h' file not found", "missing header: position");
	expect_error("#include <nothere.h>\n", "[INCLUDE_NOT_FOUND]",
		     "missing header: tag");
	expect_error("#include <bad.h>\n", "bad.h:2:3: ERROR: unterminated "
		     "conditional directive", "unterminated #if in a header");
	expect_error("#include <bad.h>\n", "  #if 1\n  ^\n",
		     "caret under the header's line");
	expect_error("#include <err.h>\n", "err.h:2:2: ERROR: #error from "
		     "header [PP_ERROR]", "#error");
	expect_error("#include <loop.h>\n", "nested more than", "include loop "
		     "is bounded");
}

static void test_errors(void)
{
	expect_error("\n#if 1\nx\n", "test.bt:2:1: ERROR: unterminated "
		     "conditional directive", "unterminated #if");
	expect_error("#endif\n", "#endif without #if", "stray #endif");
	expect_error("#if 1\n#else\n#else\n#endif\n", "#else without #if",
		     "#else after #else");
	expect_error("#if 1 +\n#endif\n", "[PP_EXPR]", "bad #if expression");
	expect_error("#if 1 / 0\n#endif\n", "division by zero",
		     "division by zero");
	expect_error("#foo\n", "invalid preprocessing directive '#foo'",
		     "unknown directive");
	expect_error("#define F(a, b) a\nF(1)\n", "wrong number of arguments "
		     "to macro 'F'", "macro argument count");
	expect_error("#define F(a) a\nF(1\n", "unterminated call", "unterminated "
		     "macro call");
	expect_error("#define F(a,) a\n", "malformed parameter list",
		     "bad parameter list");
	/* exponential expansion: 2^40 tokens, stopped by the bound */
	char buf[4096], *w = buf;
	w += sprintf(w, "#define M0 x x\n");
	for (int i = 1; i <= 40; i++)
		w += sprintf(w, "#define M%d M%d M%d\n", i, i - 1, i - 1);
	sprintf(w, "M40\n");
	expect_error(buf, "[PP_LIMIT]", "exponential expansion is bounded");
}

static void test_object_macros(void)
{
	struct diags d;
	struct pp *pp;
	free(run("#define A 3+4\n#define S \"hi\"\n#define F(x) x\n"
		 "#define N  -5  /* c */\n", &d, &pp, NULL, 0, NULL, 0));
	CHECK_STR(pp_object_macro(pp, "A", 1), "3+4", "macro text as written");
	CHECK_STR(pp_object_macro(pp, "S", 1), "\"hi\"", "string macro");
	CHECK_STR(pp_object_macro(pp, "N", 1), "-5", "spaces and comments");
	CHECK(pp_object_macro(pp, "F", 1) == NULL, "function-like: none");
	CHECK(pp_object_macro(pp, "__LINE__", 8) == NULL, "builtin: none");
	CHECK_STR(pp_object_macro(pp, "__STDC__", 8), "1", "predefined");
	pp_free(pp);
	diags_free(&d);
}

int main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/sonde-pp-XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	test_macros();
	test_conditionals();
	test_includes();
	test_errors();
	test_object_macros();
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", dir);
	return UNIT_DONE();
}
