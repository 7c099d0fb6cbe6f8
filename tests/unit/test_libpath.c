/* test_libpath.c - library lookup like the loader, $PATH, /proc/PID/maps
 * and load biases, checked against this test process itself. */
#include "elf/elf.h"
#include "unit.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

static bool same_file(const char *a, const char *b)
{
	char ra[PATH_MAX], rb[PATH_MAX];
	return realpath(a, ra) && realpath(b, rb) && strcmp(ra, rb) == 0;
}

static void test_find_library(void)
{
	static const char *const names[] = { "libc", "c", "libc.so", "libc.so.6" };
	char out[PATH_MAX];
	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++) {
		char name[128];
		int err = elf_find_library(names[i], out, sizeof(out));
		snprintf(name, sizeof(name), "'%s' resolves to the real libc.so.6", names[i]);
		CHECK(err == 0 && same_file(out, "/usr/lib/x86_64-linux-gnu/libc.so.6"), name);
		if (err == 0)
			printf("#   %s -> %s\n", names[i], out);
	}
	CHECK(elf_find_library("libstdc++", out, sizeof(out)) == 0 &&
	      same_file(out, "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"), "libstdc++ resolves");
	CHECK(elf_find_library("libelf", out, sizeof(out)) == 0 && strstr(out, "libelf"),
	      "libelf resolves");
	/* "libc" must not find libcap or libcrypt */
	CHECK(elf_find_library("libc", out, sizeof(out)) == 0 && !strstr(out, "libcap") &&
	      !strstr(out, "libcrypt"), "libc is not a prefix match of libcap");
	CHECK(elf_find_library("libnonexistent_sonde", out, sizeof(out)) == -ENOENT,
	      "unknown library is ENOENT");
	char tiny[8];
	CHECK(elf_find_library("libc", tiny, sizeof(tiny)) == -ENAMETOOLONG, "short buffer is ENAMETOOLONG");
}

static void test_targets(void)
{
	char out[PATH_MAX];
	CHECK(elf_resolve_target("./a/b", 0, out, sizeof(out)) == 0 &&
	      strcmp(out, "./a/b") == 0, "relative path kept");
	CHECK(elf_resolve_target("/usr/bin/true", 0, out, sizeof(out)) == 0 &&
	      strcmp(out, "/usr/bin/true") == 0, "absolute path kept");
	CHECK(elf_resolve_target("sh", 0, out, sizeof(out)) == 0 && same_file(out, "/bin/sh"),
	      "executable found on PATH");
	CHECK(elf_resolve_target("libc", 0, out, sizeof(out)) == 0 &&
	      same_file(out, "/usr/lib/x86_64-linux-gnu/libc.so.6"), "library target");
	char want[64];
	snprintf(want, sizeof(want), "/proc/%d/root/usr/bin/true", (int)getpid());
	CHECK(elf_resolve_target("/usr/bin/true", getpid(), out, sizeof(out)) == 0 &&
	      strcmp(out, want) == 0, "absolute path with pid goes through /proc/PID/root");
	snprintf(want, sizeof(want), "/proc/%d/root/", (int)getpid());
	CHECK(elf_resolve_target("libc", getpid(), out, sizeof(out)) == 0 &&
	      strncmp(out, want, strlen(want)) == 0 && strstr(out, "libc.so.6") &&
	      same_file(out, "/usr/lib/x86_64-linux-gnu/libc.so.6"),
	      "libc of a process found through its maps");
	CHECK(elf_resolve_target("libc", 999999999, out, sizeof(out)) == -ESRCH,
	      "missing process is ESRCH");
	CHECK(elf_resolve_target("no_such_prog_sonde", 0, out, sizeof(out)) == -ENOENT,
	      "missing target is ENOENT");
}

static void test_maps(void)
{
	struct elf_map *maps;
	size_t n;
	int err = elf_proc_maps(getpid(), &maps, &n);
	CHECK(err == 0 && n > 5, "read own /proc/PID/maps");
	if (err)
		return;
	/* the mapping holding getpid's code (not malloc: ASan replaces it),
	 * and libc's bias from it */
	uintptr_t fn = (uintptr_t)&getpid;
	const struct elf_map *text = NULL;
	for (size_t i = 0; i < n; i++)
		if (fn >= maps[i].start && fn < maps[i].end)
			text = &maps[i];
	CHECK(text && strstr(text->path, "libc.so.6") && text->perms[2] == 'x',
	      "getpid lies in an r-x mapping of libc");
	struct elf_file *ef;
	if (text && elf_open(text->path, &ef) == 0) {
		uint64_t bias;
		const struct elf_sym *m = elf_find_sym(ef, "getpid");
		CHECK(elf_map_bias(ef, text, &bias) == 0 && m && m->addr + bias == fn,
		      "load bias maps getpid's vaddr to its runtime address");
		elf_close(ef);
	}
	elf_maps_free(maps, n);

	char **objs;
	err = elf_proc_objects(getpid(), &objs, &n);
	bool libc = false, dup = false;
	for (size_t i = 0; !err && i < n; i++) {
		libc |= strstr(objs[i], "libc.so.6") != NULL;
		for (size_t k = 0; k < i; k++)
			dup |= strcmp(objs[i], objs[k]) == 0;
	}
	CHECK(err == 0 && libc && !dup, "objects of a process: libc once");
	if (!err)
		elf_strings_free(objs, n);
	CHECK(elf_proc_maps(999999999, &maps, &n) == -ESRCH, "maps of a missing process is ESRCH");
	char out[64];
	CHECK(elf_proc_path(42, "/x", out, sizeof(out)) == 0 && strcmp(out, "/proc/42/root/x") == 0,
	      "proc path");
}

int main(void)
{
	test_find_library();
	test_targets();
	test_maps();
	return UNIT_DONE();
}
