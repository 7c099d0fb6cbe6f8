/* test_diag.c - diagnostics stay bounded whatever the script: one error
 * per cause, at most 20 errors kept, long lines shown as a window around
 * the caret, control bytes never echoed, and oversized literals, keys,
 * tuples and records refused by sema with their limit named. */
#include "base/diag.h"
#include "base/log.h"
#include "cg_fixture.h"
#include "lang_fixture.h"
#include "unit.h"

/* The rendered diagnostics as a malloc'd string. */
static char *render(const struct diags *d)
{
	char *out = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&out, &len);
	diags_print(d, m);
	fclose(m);
	return out;
}

static size_t count_tag(const struct diags *d, const char *tag)
{
	size_t n = 0;
	for (size_t i = 0; i < d->list.n; i++)
		n += strcmp(d->list.v[i].tag, tag) == 0;
	return n;
}

static size_t longest_line(const char *s)
{
	size_t best = 0, cur = 0;
	for (; *s; s++) {
		cur = *s == '\n' ? 0 : cur + 1;
		if (cur > best)
			best = cur;
	}
	return best;
}

/* A map key that is a LEN-byte string literal. */
static char *literal_key_script(size_t len)
{
	char *t = malloc(len + 64);
	int h = sprintf(t, "BEGIN { @[\"");
	memset(t + h, 'a', len);
	strcpy(t + h + len, "\"] = 1; }");
	return t;
}

static void test_huge_literal_key(size_t len, const char *name)
{
	char *text = literal_key_script(len);
	struct lang_fx f;
	lang_fx_run(&f, text, NULL, 0, false);
	char *out = render(&f.d);
	char n[128];
	snprintf(n, sizeof(n), "%s key: one error, STRING_TOO_LONG", name);
	CHECK(f.rc < 0 && f.d.nerrors == 1 &&
	      count_tag(&f.d, "STRING_TOO_LONG") == 1, n);
	snprintf(n, sizeof(n), "%s key: the error names the limit", name);
	CHECK(strstr(out, "at most 64 bytes") && strstr(out, "BPFTRACE_STRLEN"),
	      n);
	snprintf(n, sizeof(n), "%s key: under 1 KiB on stderr (was one line "
		 "copy per 8-byte store)", name);
	CHECK(strlen(out) < 1024, n);
	if (strlen(out) >= 1024)
		printf("#   %zu bytes\n", strlen(out));
	free(out);
	lang_fx_free(&f);
	free(text);
}

static void test_cap_and_repeats(void)
{
	struct diag_source src = { "x.bt", "BEGIN { }\n" };
	struct diags d;
	diags_init(&d, &src);
	for (int i = 0; i < 50; i++)
		diag_error(&d, (struct pos){ 1, 1, 1 }, "SYNTAX", "error %d", i);
	for (int i = 0; i < 1000; i++)   /* one cause, many reports */
		diag_error(&d, (struct pos){ 1, 3, 1 }, "CODEGEN", "same");
	for (int i = 0; i < 30; i++)
		diag_warning(&d, (struct pos){ 1, 2, 1 }, "W", "warning %d", i);
	CHECK(d.nerrors == 51, "cap: every distinct error is counted");
	CHECK(d.list.n == DIAG_MAX_ERRORS + DIAG_MAX_WARNINGS,
	      "cap: 20 errors and 20 warnings are kept");
	CHECK(d.dropped_errors == 31 && d.dropped_warnings == 10,
	      "cap: the rest are counted as dropped");
	CHECK(diags_has(&d, "CODEGEN"), "cap: a dropped error's tag is known");
	char *out = render(&d);
	CHECK(strstr(out, "too many errors: 20 shown, 31 more not shown "
		      "[TOO_MANY_ERRORS]") != NULL, "cap: says how many more");
	CHECK(strstr(out, "too many warnings: 20 shown, 10 more") != NULL,
	      "cap: warnings too");
	free(out);
	diags_free(&d);

	diags_init(&d, &src);
	diag_error(&d, (struct pos){ 1, 1, 1 }, "SYNTAX", "twice");
	diag_error(&d, (struct pos){ 1, 1, 1 }, "SYNTAX", "twice");
	diag_error(&d, (struct pos){ 1, 2, 1 }, "SYNTAX", "twice");
	CHECK(d.list.n == 2 && d.nerrors == 2,
	      "repeats: an identical diagnostic is dropped, another place kept");
	diags_free(&d);
}

/* diags_move: what probes name but the system lacks becomes warnings
 * (or errors), message suffixed, the source kept, the cap still holding. */
static void test_move(void)
{
	struct diag_source src = { "x.bt", "uprobe:/bin/x:f { }\n" };
	struct diags d, missing;
	diags_init(&d, &src);
	diags_init(&missing, &src);
	diag_error(&missing, (struct pos){ 1, 1, 5 }, "NO_SYMBOL", "no function 'f'");
	diags_move(&d, &missing, DIAG_WARNING, "; the probe is skipped");
	CHECK(d.nerrors == 0 && d.list.n == 1 &&
	      d.list.v[0].level == DIAG_WARNING,
	      "move: an error moved as a warning is not an error");
	CHECK(strcmp(d.list.v[0].msg, "no function 'f'; the probe is skipped") == 0,
	      "move: the suffix is appended");
	CHECK(missing.list.n == 0 && missing.nerrors == 0,
	      "move: the source is left empty");
	char *out = render(&d);
	CHECK(strstr(out, "x.bt:1:1: WARNING: no function 'f'; the probe is "
		      "skipped [NO_SYMBOL]") != NULL, "move: rendered as a warning");
	free(out);
	diags_free(&d);

	diags_init(&d, &src);
	for (int i = 0; i < 30; i++)
		diag_error(&missing, (struct pos){ 1, 1, 1 }, "NO_PROBE", "p%d", i);
	diags_move(&d, &missing, DIAG_ERROR, "");
	CHECK(d.nerrors == 30 && d.list.n == DIAG_MAX_ERRORS &&
	      d.dropped_errors == 10 && diags_has(&d, "NO_PROBE"),
	      "move: as errors, every one counted and the cap kept");
	diags_free(&d);
	d.no_warnings = true;
	diag_error(&missing, (struct pos){ 1, 1, 1 }, "NO_PROBE", "p");
	diags_move(&d, &missing, DIAG_WARNING, "");
	CHECK(d.list.n == 0, "move: --no-warnings drops the warnings");
	diags_free(&d);
	diags_free(&missing);
}

static void test_window(void)
{
	/* a 10,000-byte line, the caret at column 5,001 on "XYZ" */
	size_t len = 10000;
	char *text = malloc(len + 2);
	for (size_t i = 0; i < len; i++)
		text[i] = (char)('a' + i % 26);
	memcpy(text + 5000, "XYZ", 3);
	text[len] = '\n';
	text[len + 1] = '\0';
	struct diag_source src = { "long.bt", text };
	struct diags d;
	diags_init(&d, &src);
	diag_error(&d, (struct pos){ 1, 5001, 3 }, "SYNTAX", "here");
	char *out = render(&d);
	CHECK(longest_line(out) <= DIAG_LINE_WINDOW + 6 + 40,
	      "window: no line much longer than the window");
	/* the caret sits under X */
	char *l2 = strchr(out, '\n') + 1, *l3 = strchr(l2, '\n') + 1;
	char *caret = strchr(l3, '^');
	size_t col = (size_t)(caret - l3);
	CHECK(caret && l2[col] == 'X' && strncmp(caret, "^~~\n", 4) == 0,
	      "window: the caret and underline sit under the construct");
	CHECK(strncmp(l2, "...", 3) == 0 && strstr(l2, "...\n"),
	      "window: cut ends are marked");
	free(out);
	diags_free(&d);

	/* an underline longer than the window stops at its end */
	diags_init(&d, &src);
	diag_error(&d, (struct pos){ 1, 11, 9000 }, "SYNTAX", "long span");
	out = render(&d);
	CHECK(longest_line(out) <= DIAG_LINE_WINDOW + 6 + 40,
	      "window: a long span's underline is cut too");
	free(out);
	diags_free(&d);
	free(text);

	/* short lines are shown whole, tabs and UTF-8 keep the caret aligned */
	src.text = "BEGIN {\n\t\xc3\xa9t\xc3\xa9 = 1; }\n";
	diags_init(&d, &src);
	diag_error(&d, (struct pos){ 2, 8, 1 }, "SYNTAX", "at =");
	out = render(&d);
	CHECK(strstr(out, "\n\t\xc3\xa9t\xc3\xa9 = 1; }\n\t    ^\n") != NULL,
	      "caret: one column per character, tabs kept");
	free(out);
	diags_free(&d);

	/* escape sequences in the script are not sent to the terminal */
	src.text = "\x1b]0;owned\x07 BEGIN { }\n";
	diags_init(&d, &src);
	diag_error(&d, (struct pos){ 1, 2, 1 }, "SYNTAX", "bad '\x1b[2J'");
	out = render(&d);
	CHECK(!strchr(out, '\x1b') && !strchr(out, '\x07'),
	      "control bytes are shown as '?'");
	free(out);
	diags_free(&d);
}

static void test_nul(void)
{
	const char text[] = "BEGIN {\n  printf(\"x\");\0 exit(); }\n";
	struct diag_source src = { "nul.bt", text };
	struct diags d;
	diags_init(&d, &src);
	CHECK(diag_check_nul(&d, text, sizeof(text) - 1),
	      "NUL byte: found");
	CHECK(d.nerrors == 1 && d.list.v[0].pos.line == 2 &&
	      d.list.v[0].pos.col == 15, "NUL byte: at its line and column");
	diags_free(&d);
	diags_init(&d, &src);
	CHECK(!diag_check_nul(&d, text, 10) && d.nerrors == 0,
	      "NUL byte: none before it");
	diags_free(&d);
}

static bool script_fails_with(const char *text, const char *tag)
{
	struct lang_fx f;
	lang_fx_run(&f, text, NULL, 0, false);
	bool r = f.rc < 0 && diags_has(&f.d, tag);
	if (!r)
		diags_print(&f.d, stdout);
	lang_fx_free(&f);
	return r;
}

static bool script_has(const char *text, const char *tag)
{
	struct lang_fx f;
	lang_fx_run(&f, text, NULL, 0, false);
	bool r = diags_has(&f.d, tag);
	lang_fx_free(&f);
	return r;
}

static bool script_ok(const char *text)
{
	struct lang_fx f;
	lang_fx_run(&f, text, NULL, 0, false);
	bool r = f.rc == 0;
	if (!r)
		diags_print(&f.d, stdout);
	lang_fx_free(&f);
	return r;
}

/* A script with "%s" replaced by a literal of LEN 'b's. */
static char *with_literal(const char *fmt, size_t len)
{
	char *lit = malloc(len + 1);
	memset(lit, 'b', len);
	lit[len] = '\0';
	char *t;
	if (asprintf(&t, fmt, lit) < 0)
		t = NULL;
	free(lit);
	return t;
}

static void test_sema_limits(void)
{
	struct { const char *fmt; size_t len; bool ok; const char *name; } c[] = {
		{ "BEGIN { @[\"%s\"] = 1; }", 63, true, "63-byte key literal fits" },
		{ "BEGIN { @[\"%s\"] = 1; }", 64, false, "64-byte key literal" },
		{ "BEGIN { printf(\"%%s\", \"%s\"); }", 100, false,
		  "printf argument literal" },
		{ "BEGIN { if (comm == \"%s\") { exit(); } }", 100, false,
		  "compared literal" },
		{ "BEGIN { printf(\"%s\\n\"); }", 5000, true,
		  "printf format: compile time only" },
		{ "BEGIN { time(\"%s\"); }", 500, true, "time() format" },
		{ "uprobe:/bin/sh:main { @ = reg(\"%s\"); }", 100, false,
		  "reg() name: its own error, not the length" },
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(*c); i++) {
		char *t = with_literal(c[i].fmt, c[i].len);
		char name[160];
		snprintf(name, sizeof(name), "limits: %s", c[i].name);
		if (c[i].ok)
			CHECK(script_ok(t), name);
		else if (strstr(c[i].fmt, "reg("))
			CHECK(script_fails_with(t, "ARG_TYPE") &&
			      !script_has(t, "STRING_TOO_LONG"), name);
		else
			CHECK(script_fails_with(t, "STRING_TOO_LONG"), name);
		free(t);
	}

	/* 300 strings of 64 bytes: a key, a tuple, a printf record */
	char key[4096] = "", fmt[1024] = "";
	for (int i = 0; i < 300; i++) {
		strcat(key, i ? ",str(comm)" : "str(comm)");
		strcat(fmt, "%s");
	}
	char *t;
	if (asprintf(&t, "BEGIN { @[%s] = 1; }", key) > 0) {
		CHECK(script_fails_with(t, "TOO_LARGE"),
		      "limits: a 19,200-byte map key");
		free(t);
	}
	if (asprintf(&t, "BEGIN { $t = (%s); }", key) > 0) {
		CHECK(script_fails_with(t, "TOO_LARGE"),
		      "limits: a 19,200-byte tuple");
		free(t);
	}
	if (asprintf(&t, "BEGIN { printf(\"%s\", %s); }", fmt, key) > 0) {
		CHECK(script_fails_with(t, "TOO_LARGE"),
		      "limits: a 19,200-byte printf record");
		free(t);
	}
	/* a tuple too large because of a literal too long: one error */
	t = with_literal("BEGIN { $t = (1, \"%s\"); }", 20000);
	struct lang_fx f;
	lang_fx_run(&f, t, NULL, 0, false);
	CHECK(f.d.nerrors == 1 && diags_has(&f.d, "STRING_TOO_LONG"),
	      "limits: one cause, one error");
	lang_fx_free(&f);
	free(t);
}

/* Codegen: a probe whose values overflow the scratch area gets one
 * error naming the limit, not one per store. */
static void test_codegen_one_error(void)
{
	/* six tuples of 100 strings of 64 bytes: 6,400 bytes each, under
	 * the limit for one value, 38,400 together */
	char tuple[2048] = "";
	for (int i = 0; i < 100; i++)
		strcat(tuple, i ? ",str(comm)" : "str(comm)");
	char *t;
	if (asprintf(&t, "BEGIN { $a = (%1$s); $b = (%1$s); $c = (%1$s); "
		     "$d = (%1$s); $e = (%1$s); $f = (%1$s); "
		     "printf(\"%%s%%s%%s%%s%%s%%s\", $a.0, $b.0, $c.0, $d.0, "
		     "$e.0, $f.0); }", tuple) < 0)
		return;
	struct cgfx f;
	int rc = cgfx_compile(&f, t);
	CHECK(rc < 0 && f.d.nerrors == 1 && diags_has(&f.d, "CODEGEN"),
	      "codegen: one error for a probe over the scratch limit");
	char *out = render(&f.d);
	CHECK(strstr(out, "32768 bytes of scratch") != NULL,
	      "codegen: the error names the limit");
	free(out);
	cgfx_free(&f);
	free(t);
}

int main(void)
{
	test_huge_literal_key(100 * 1000, "100 KB");
	test_huge_literal_key(1000 * 1000, "1 MB");
	test_cap_and_repeats();
	test_move();
	test_window();
	test_nul();
	test_sema_limits();
	test_codegen_one_error();
	return UNIT_DONE();
}
