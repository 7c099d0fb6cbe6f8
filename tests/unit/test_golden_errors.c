/* test_golden_errors.c - the golden language tests, run through the
 * front end directly (no kernel, no providers):
 *   err.TAG.NAME.bt  must fail, with a [TAG] error that has a position,
 *                    and TAG must be in the documented list;
 *   tst.NAME.bt      must pass, and the AST dump after sema must equal
 *                    tst.NAME.ast (SONDE_BLESS=1 rewrites the .ast).
 * The directory is $SONDE_SRCDIR/tests/golden, else tests/golden. */
#include <dirent.h>

#include "base/file.h"
#include "lang/diag_tags.h"
#include "probes/provider.h"
#include "lang_fixture.h"
#include "unit.h"

static const char *const known_tags[] = {
#define X(tag, what) #tag,
	LANG_DIAG_TAGS(X)
#undef X
	"BAD_PROBE",               /* from probe expansion (compile.c) */
#define X(tag, what) #tag,
	PROBE_ENV_TAGS(X)          /* and the providers (exit status 2) */
#undef X
	NULL,
};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void check_err(const char *dir, const char *file)
{
	char path[2400], tag[128];
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	const char *t = file + 4, *dot = strchr(t, '.');
	snprintf(tag, sizeof(tag), "%.*s", dot ? (int)(dot - t) : 0, t);
	bool known = false;
	for (int i = 0; known_tags[i]; i++)
		known = known || !strcmp(known_tags[i], tag);
	char kname[2600];
	snprintf(kname, sizeof(kname), "golden %s: tag %s is documented", file,
		 tag);
	CHECK(known, kname);
	char *text = file_read(path, NULL);
	struct lang_fx f;
	lang_fx_run(&f, text ? text : "", NULL, 0, false);
	bool has = false, placed = false;
	for (size_t i = 0; i < f.d.list.n; i++)
		if (!strcmp(f.d.list.v[i].tag, tag)) {
			has = true;
			placed = placed || f.d.list.v[i].pos.line > 0;
		}
	char name[2600];
	snprintf(name, sizeof(name), "golden %s fails with [%s] at a position",
		 file, tag);
	CHECK(f.rc < 0 && has && placed, name);
	if (!(f.rc < 0 && has && placed))
		diags_print(&f.d, stdout);
	lang_fx_free(&f);
	free(text);
}

static void check_tst(const char *dir, const char *file)
{
	char path[2400], want_path[2400], name[2600];
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	snprintf(want_path, sizeof(want_path), "%.*s.ast",
		 (int)(strlen(path) - 3), path);
	char *text = file_read(path, NULL);
	struct lang_fx f;
	lang_fx_run(&f, text ? text : "", NULL, 0, false);
	snprintf(name, sizeof(name), "golden %s checks", file);
	CHECK(f.rc == 0, name);
	if (f.rc)
		diags_print(&f.d, stdout);
	char *got = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&got, &len);
	if (f.rc == 0)
		ast_dump(m, f.root, &f.a);
	fclose(m);
	const char *bless = getenv("SONDE_BLESS");
	if (bless && !strcmp(bless, "1") && f.rc == 0) {
		FILE *o = fopen(want_path, "w");
		if (o) {
			fputs(got, o);
			fclose(o);
		}
	}
	char *want = file_read(want_path, NULL);
	snprintf(name, sizeof(name), "golden %s dump matches .ast", file);
	CHECK(want && !strcmp(want, got), name);
	if (want && strcmp(want, got))
		printf("# got:\n%s", got);
	free(want);
	free(got);
	lang_fx_free(&f);
	free(text);
}

int main(void)
{
	char dir[1024];
	const char *src = getenv("SONDE_SRCDIR");
	snprintf(dir, sizeof(dir), "%s/tests/golden", src ? src : ".");
	DIR *d = opendir(dir);
	CHECK(d != NULL, "golden directory opens");
	if (!d)
		return UNIT_DONE();
	char *names[1024];
	size_t n = 0;
	struct dirent *e;
	while ((e = readdir(d)) && n < 1024) {
		size_t l = strlen(e->d_name);
		if (l > 3 && !strcmp(e->d_name + l - 3, ".bt") &&
		    (!strncmp(e->d_name, "err.", 4) ||
		     !strncmp(e->d_name, "tst.", 4)))
			names[n++] = strdup(e->d_name);
	}
	closedir(d);
	qsort(names, n, sizeof(names[0]), cmp_str);
	size_t nerr = 0;
	for (size_t i = 0; i < n; i++) {
		if (!strncmp(names[i], "err.", 4)) {
			check_err(dir, names[i]);
			nerr++;
		} else {
			check_tst(dir, names[i]);
		}
		free(names[i]);
	}
	CHECK(nerr >= 30, "at least 30 golden error tests");
	return UNIT_DONE();
}
