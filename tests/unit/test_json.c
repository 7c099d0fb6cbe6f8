/* test_json.c - json(document, path) (cg_json.c) run in the test
 * interpreter: paths of keys and indices, every kind of value, nesting
 * that must be skipped, strings with escapes and structural characters,
 * missing paths, malformed and truncated documents, and the compile-time
 * errors for bad paths. test_verifier.c loads the same code in the
 * kernel. */
#include <stdlib.h>

#include "cg_fixture.h"
#include "unit.h"

static struct cgfx F;
static struct emu E;
static bool quiet;      /* a compile error is expected */

/* json(doc, path) as printf("%s") prints it, or NULL if it failed. */
static const char *extract(const char *doc, const char *path)
{
	static char out[512];
	char text[2048], esc[1024];
	size_t n = 0;
	for (const char *c = doc; *c && n + 2 < sizeof(esc); c++) {
		if (*c == '"' || *c == '\\')
			esc[n++] = '\\';
		esc[n++] = *c;
	}
	esc[n] = '\0';
	snprintf(text, sizeof(text),
		 "BEGIN { printf(\"%%s\", json(\"%s\", \"%s\")); }", esc, path);
	cgfx_free(&F);
	emu_free(&E);
	if (cgfx_compile(&F, text)) {
		if (!quiet)
			diags_print(&F.d, stdout);
		memset(&E, 0, sizeof(E));
		return NULL;
	}
	emu_init(&E, &F.prog);
	if (emu_run(&E, 0) < 0) {
		printf("# %s\n", E.in.error);
		return NULL;
	}
	if (E.nrecords != 1)
		return NULL;
	snprintf(out, sizeof(out), "%s", rec_str(&E, 0, 8));
	return out;
}

static void check(const char *doc, const char *path, const char *want)
{
	char name[256];
	snprintf(name, sizeof(name), "json(%s, \"%s\") is \"%s\"", doc, path, want);
	CHECK_STR(extract(doc, path), want, name);
}

static void test_paths(void)
{
	check("{\"a\":1}", "a", "1");
	check("{\"a\":1,\"b\":22}", "b", "22");
	check("{\"id\":100,\"qty\":2,\"item\":\"pear\"}", "item", "pear");
	check("{\"a\":{\"b\":[1,2,{\"c\":\"hi\"}]}}", "a.b[2].c", "hi");
	check("{\"a\":{\"b\":[1,2,{\"c\":\"hi\"}]}}", "a.b[1]", "2");
	check("{\"a\":{\"b\":[1,2,{\"c\":\"hi\"}]}}", "a.b[0]", "1");
	check("[10,20,30]", "[2]", "30");
	check("[[1,2],[3,4]]", "[1][0]", "3");
	check("[[1,2],[3,4]]", "[0][1]", "2");
	check("{\"a\":[[5]]}", "a[0][0]", "5");
}

static void test_values(void)
{
	check("{\"s\":\"text\"}", "s", "text");
	check("{\"n\":-12.5e3}", "n", "-12.5e3");
	check("{\"t\":true,\"f\":false,\"z\":null}", "t", "true");
	check("{\"t\":true,\"f\":false,\"z\":null}", "f", "false");
	check("{\"t\":true,\"f\":false,\"z\":null}", "z", "null");
	check("{\"o\":{\"x\":1,\"y\":[2]}}", "o", "{\"x\":1,\"y\":[2]}");
	check("{\"a\":[1,[2,3]]}", "a[1]", "[2,3]");
	check("{\"a\":1}", "", "{\"a\":1}");
	check("42", "", "42");
	check("{\"e\":\"\"}", "e", "");
	/* escapes are kept as written */
	check("{\"s\":\"say \\\"hi\\\"\"}", "s", "say \\\"hi\\\"");
}

static void test_skipping(void)
{
	/* keys with the same name deeper down are not the one */
	check("{\"x\":{\"a\":1},\"a\":2}", "a", "2");
	/* structural characters inside strings are text */
	check("{\"k\":\"{[,:]}\",\"a\":3}", "a", "3");
	check("{\"k\":\"a\\\"}\",\"a\":4}", "a", "4");
	/* a value string equal to the key is not a key */
	check("{\"b\":\"a\",\"a\":5}", "a", "5");
	check("{\"list\":[{\"a\":0},{\"a\":1}],\"a\":6}", "a", "6");
	/* blanks anywhere */
	check("{ \"a\" : { \"b\" : [ 1 , 7 ] } }", "a.b[1]", "7");
	check("{\"a\": 8 , \"b\": 9}", "a", "8");
	/* prefixes and extensions of the key are other keys */
	check("{\"ab\":1,\"a\":2,\"abc\":3}", "a", "2");
	check("{\"ab\":1,\"a\":2,\"abc\":3}", "abc", "3");
}

static void test_missing(void)
{
	check("{\"a\":1}", "b", "");
	check("{\"a\":{\"b\":1}}", "a.c", "");
	check("{\"a\":[1,2]}", "a[2]", "");
	check("{\"a\":[]}", "a[0]", "");
	check("{\"a\":1}", "a.b", "");        /* into a scalar */
	check("{\"a\":[1]}", "a.b", "");      /* key on an array */
	check("{\"a\":{\"b\":1}}", "a[0]", ""); /* index on an object */
	check("[1,2]", "a", "");
	check("", "a", "");
	check("not json", "a", "");
	/* cut off: what was read */
	check("{\"a\":\"unterminated", "a", "unterminated");
	check("{\"a\":123", "a", "123");
}

static void test_bad_paths(void)
{
	const char *bad[] = { ".a", "a..b", "a[", "a[x]", "a[1", "a.", "[]" };
	quiet = true;
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		char name[128];
		snprintf(name, sizeof(name), "bad path '%s' is a compile error", bad[i]);
		CHECK(extract("{}", bad[i]) == NULL && F.d.nerrors > 0, name);
	}
	quiet = false;
}

static void test_uses(void)
{
	/* as a map key, in a comparison and a predicate */
	cgfx_free(&F);
	emu_free(&E);
	int ok = cgfx_compile(&F, "BEGIN { $d = \"{\\\"k\\\":\\\"v\\\",\\\"n\\\":3}\"; "
			      "@[json($d, \"k\")] = count(); "
			      "if (json($d, \"n\") == \"3\") { printf(\"eq\"); } "
			      "printf(\"%s-%s\", json($d, \"k\"), json($d, \"n\")); }") == 0;
	CHECK(ok, "json: map key, comparison, printf compile");
	if (!ok) {
		diags_print(&F.d, stdout);
		memset(&E, 0, sizeof(E));
		return;
	}
	emu_init(&E, &F.prog);
	CHECK(emu_run(&E, 0) >= 0, "json: runs");
	uint64_t ev = rec_u64(&E, 0, 0);
	CHECK(E.nrecords == 2 && ev < F.prog.nevents &&
	      !strcmp(F.prog.events[ev].fmt, "eq"),
	      "json: comparison with a string");
	CHECK(E.nrecords == 2 && !strcmp(rec_str(&E, 1, 8), "v") &&
	      !strcmp(rec_str(&E, 1, 8 + F.prog.strlen), "3"),
	      "json: two calls in one printf");
	int m = program_find_map(&F.prog, "@");
	int key_ok = m >= 0 && E.maps[m].n == 1 &&
		!strcmp((const char *)E.maps[m].keys[0], "v");
	CHECK(key_ok, "json: the value is the map key");
}

int main(void)
{
	test_paths();
	test_values();
	test_skipping();
	test_missing();
	test_bad_paths();
	test_uses();
	cgfx_free(&F);
	emu_free(&E);
	return UNIT_DONE();
}
