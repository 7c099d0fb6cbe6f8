/* test_libpath.c - library lookup like the loader, $PATH, /proc/PID/maps
 * and load biases, checked against this test process itself. */
#include "elf/elf.h"
#include "unit.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
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

/* A copy of a library, under a name, in dir; 0 or -1. */
static int copy_file(const char *from, const char *to)
{
	FILE *in = fopen(from, "rb"), *out = in ? fopen(to, "wb") : NULL;
	char buf[65536];
	size_t n;
	int r = in && out ? 0 : -1;
	while (r == 0 && (n = fread(buf, 1, sizeof(buf), in)) > 0)
		if (fwrite(buf, 1, n, out) != n)
			r = -1;
	if (in)
		fclose(in);
	if (out && fclose(out) != 0)
		r = -1;
	return r;
}

/* -p with a library name: "libsondever" is the versioned soname the
 * process maps (libsondever-3.1.so.3.1, as Ruby's libruby-3.1.so.3.1),
 * and a longer name is not a prefix match of it. */
static void test_versioned_soname(void)
{
	char dir[] = "/tmp/sonde-libpath.XXXXXX", lib[PATH_MAX], out[PATH_MAX];
	if (!mkdtemp(dir)) {
		CHECK(false, "versioned soname: a temp dir");
		return;
	}
	snprintf(lib, sizeof(lib), "%s/libsondever-3.1.so.3.1", dir);
	void *h = NULL;
	if (copy_file("/usr/lib/x86_64-linux-gnu/libz.so.1", lib) == 0)
		h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	CHECK(h != NULL, "versioned soname: the library is loaded");
	if (h) {
		CHECK(elf_resolve_target("libsondever", getpid(), out,
					 sizeof(out)) == 0 &&
		      strstr(out, "/libsondever-3.1.so.3.1") &&
		      same_file(out, lib),
		      "-p: libsondever is libsondever-3.1.so.3.1 in the maps");
		CHECK(elf_resolve_target("sondever", getpid(), out,
					 sizeof(out)) == 0 &&
		      same_file(out, lib), "-p: sondever is its lib name too");
		CHECK(elf_resolve_target("libsondeve", getpid(), out,
					 sizeof(out)) == -ENOENT,
		      "-p: a shorter name is no prefix match");
		dlclose(h);
	}
	unlink(lib);
	rmdir(dir);
}

/* $PATH: a shell shim (pyenv, rbenv, asdf) before the real program is
 * skipped, as bpftrace skips it; with only the shim there is none. */
static void test_path_shim(void)
{
	char dir[] = "/tmp/sonde-libpath.XXXXXX", a[64], b[64];
	char shim[128], prog[128], out[PATH_MAX], path[160];
	if (!mkdtemp(dir)) {
		CHECK(false, "shim: a temp dir");
		return;
	}
	snprintf(a, sizeof(a), "%s/shims", dir);
	snprintf(b, sizeof(b), "%s/bin", dir);
	snprintf(shim, sizeof(shim), "%s/sondeprog", a);
	snprintf(prog, sizeof(prog), "%s/sondeprog", b);
	mkdir(a, 0755);
	mkdir(b, 0755);
	FILE *f = fopen(shim, "w");
	if (f) {
		fputs("#!/bin/sh\nexec true\n", f);
		fclose(f);
	}
	chmod(shim, 0755);
	int ok = copy_file("/usr/bin/true", prog) == 0 && chmod(prog, 0755) == 0;
	const char *old = getenv("PATH");
	char *saved = old ? strdup(old) : NULL;
	snprintf(path, sizeof(path), "%s:%s", a, b);
	setenv("PATH", path, 1);
	CHECK(ok && elf_resolve_target("sondeprog", 0, out, sizeof(out)) == 0 &&
	      strcmp(out, prog) == 0, "PATH: the shim is skipped, the ELF file chosen");
	setenv("PATH", a, 1);
	CHECK(elf_resolve_target("sondeprog", 0, out, sizeof(out)) == -ENOENT,
	      "PATH: only a shim: no target");
	if (saved)
		setenv("PATH", saved, 1);
	else
		unsetenv("PATH");
	free(saved);
	unlink(shim);
	unlink(prog);
	rmdir(a);
	rmdir(b);
	rmdir(dir);
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
	test_versioned_soname();
	test_path_shim();
	test_maps();
	return UNIT_DONE();
}
