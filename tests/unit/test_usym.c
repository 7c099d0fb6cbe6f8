/* test_usym.c - user symbolization: own process, an exited C++ process
 * (demangled), debug files by build-id and debuglink, vDSO, perf maps. */
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "unit.h"
#include "elf_testutil.h"
#include "elf/symbolize.h"

static __attribute__((noinline)) int marker_fn(int x)
{
	asm volatile("" ::: "memory");
	return x * 3;
}


/* Start PROG addrs; read the three return addresses it prints. */
static pid_t start_addrs(const char *prog, uint64_t addrs[3])
{
	int fds[2];
	pid_t pid;
	FILE *f;
	int got;

	if (pipe(fds) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		execl(prog, prog, "addrs", (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	f = fdopen(fds[0], "r");
	got = f ? fscanf(f, "%" SCNx64 " %" SCNx64 " %" SCNx64, &addrs[0],
			 &addrs[1], &addrs[2]) : 0;
	if (f)
		fclose(f);
	if (got != 3) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return -1;
	}
	return pid;
}

static int sym_is(struct usyms *u, pid_t pid, uint64_t addr, const char *name)
{
	struct sym s;
	int err = usyms_lookup(u, pid, addr, &s);

	if (err < 0 || strcmp(s.name, name) != 0) {
		printf("#   %#" PRIx64 ": err %d name [%s] want [%s]\n", addr, err,
		       err < 0 ? "" : s.name, name);
		return 0;
	}
	return 1;
}

/* The C++ helper's frames after it has exited: remembered mappings. */
static void test_cxx_exited(const char *prog, const char *what)
{
	struct usyms *u = usyms_new();
	uint64_t a[3];
	pid_t pid = start_addrs(prog, a);
	char name[256];
	struct sym s;
	int err;

	if (pid < 0) {
		snprintf(name, sizeof(name), "%s: helper started", what);
		CHECK(0, name);
		usyms_free(u);
		return;
	}
	err = usym_process_remember(u, pid);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	snprintf(name, sizeof(name), "%s: remembered while running", what);
	CHECK(err == 0, name);
	snprintf(name, sizeof(name), "%s: method demangled after exit", what);
	CHECK(sym_is(u, pid, a[0], "shapes::Widget::work(int)"), name);
	snprintf(name, sizeof(name), "%s: template demangled", what);
	CHECK(sym_is(u, pid, a[1], "long twice<long>(long)"), name);
	snprintf(name, sizeof(name), "%s: static overload demangled", what);
	CHECK(sym_is(u, pid, a[2], "overloaded(int)"), name);
	err = usyms_lookup(u, pid, a[0], &s);
	snprintf(name, sizeof(name), "%s: offset and module", what);
	CHECK(err == 0 && s.offset > 0 && s.offset < 64 && s.start + s.offset == a[0] &&
	      s.module && strstr(s.module, "/") != NULL, name);
	usyms_free(u);
}

/* A stripped copy whose symbols live in a separate file named by
 * .gnu_debuglink (not findable by build-id under /usr/lib/debug). */
static void test_debuglink(const char *prog)
{
	char dir[] = "/tmp/sonde-dbglink-XXXXXX", cmd[3 * PATH_MAX], copy[64];

	if (!mkdtemp(dir)) {
		CHECK(0, "debuglink: temp dir");
		return;
	}
	snprintf(copy, sizeof(copy), "%s/cxx_stripped", dir);
	snprintf(cmd, sizeof(cmd),
		 "cp '%s' '%s' && cd '%s' && objcopy --only-keep-debug cxx_stripped cxx_stripped.debug"
		 " && objcopy --strip-all --add-gnu-debuglink=cxx_stripped.debug cxx_stripped",
		 prog, copy, dir);
	if (system(cmd) != 0) {
		printf("ok - debuglink # SKIP objcopy failed or missing\n");
	} else {
		test_cxx_exited(copy, "debuglink");
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", dir);
}

static void test_self(void)
{
	struct usyms *u = usyms_new();
	pid_t me = getpid();
	struct sym s;
	void *vdso, *fn;
	int err;

	CHECK(usym_process_remember(u, me) == 0, "self: remembered");
	err = usyms_lookup(u, me, (uint64_t)(uintptr_t)marker_fn + 3, &s);
	CHECK(err == 0 && strcmp(s.name, "marker_fn") == 0 && s.offset == 3,
	      "self: static function with offset");
	CHECK(usyms_lookup(u, me, (uint64_t)(uintptr_t)&unit_passed, &s) < 0 ||
	      strcmp(s.name, "marker_fn") != 0, "self: data address is no function");
	CHECK(usyms_lookup(u, me, 0x1000, &s) == -ENOENT && !s.name,
	      "self: unmapped address is unknown");
	vdso = dlopen("linux-vdso.so.1", RTLD_LAZY | RTLD_NOLOAD);
	fn = vdso ? dlsym(vdso, "__vdso_clock_gettime") : NULL;
	if (!fn) {
		printf("ok - self: vDSO symbol # SKIP no vDSO\n");
	} else {
		err = usyms_lookup(u, me, (uint64_t)(uintptr_t)fn + 1, &s);
		CHECK(err == 0 && strstr(s.name, "clock_gettime") && s.offset == 1 &&
		      strcmp(s.module, "[vdso]") == 0, "self: vDSO symbol");
	}
	usym_process_forget(u, me);
	usym_process_forget(u, me);
	usyms_free(u);
}

static uint64_t libc_caller;

static void test_build_id(void)
{
	struct usyms *u = usyms_new();
	struct sym s;
	int err;

	if (access("/usr/share/doc/libc6-dbg", F_OK) != 0) {
		printf("ok - build-id debug file # SKIP libc6-dbg not installed\n");
		usyms_free(u);
		return;
	}
	err = usyms_lookup(u, getpid(), libc_caller, &s);
	CHECK(err == 0 && strcmp(s.name, "__libc_start_call_main") == 0 &&
	      strstr(s.module, "libc.so"),
	      "build-id debug file: a libc symbol missing from .dynsym");
	if (err == 0 && strcmp(s.name, "__libc_start_call_main") != 0)
		printf("#   got %s\n", s.name);
	usyms_free(u);
}

static void test_perf_map(void)
{
	struct usyms *u = usyms_new();
	const char maps[] = "7f0000000000-7f0000010000 r-xp 00000000 00:00 0 \n";
	char path[64];
	struct sym s;
	FILE *f;
	pid_t me = getpid();
	int err;

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)me);
	f = fopen(path, "w");
	if (!f) {
		CHECK(0, "perf map: written");
		usyms_free(u);
		return;
	}
	fprintf(f, "7f0000001000 100 jitted_fn\n7f0000002000 20 _ZN3foo3barEv\nbogus\n");
	fclose(f);
	CHECK(usym_process_remember_maps(u, me, maps, strlen(maps)) == 0,
	      "perf map: maps text remembered");
	err = usyms_lookup(u, me, 0x7f0000001010ull, &s);
	CHECK(err == 0 && strcmp(s.name, "jitted_fn") == 0 && s.offset == 16 &&
	      strcmp(s.module, path) == 0, "perf map: JIT symbol and module");
	CHECK(sym_is(u, me, 0x7f0000002004ull, "foo::bar()"), "perf map: demangled");
	CHECK(usyms_lookup(u, me, 0x7f0000003000ull, &s) == -ENOENT,
	      "perf map: gap is unknown");
	f = fopen(path, "a");
	if (f) {
		fprintf(f, "7f0000003000 10 later_fn\n");
		fclose(f);
	}
	CHECK(sym_is(u, me, 0x7f0000003000ull, "later_fn"),
	      "perf map: re-read after the JIT appended");
	unlink(path);
	usyms_free(u);
}

int main(void)
{
	char cxx_buf[PATH_MAX + 16];
	const char *cxx = test_prog_beside("cxx_stack", cxx_buf, sizeof(cxx_buf));

	/* main's caller lives only in libc's separate debug file */
	libc_caller = (uint64_t)(uintptr_t)__builtin_return_address(0);
	test_self();
	test_build_id();
	test_perf_map();
	if (!cxx) {
		printf("ok - C++ helper # SKIP build/tests/progs/cxx_stack not built (make check)\n");
	} else {
		test_cxx_exited(cxx, "exited C++ process");
		test_debuglink(cxx);
	}
	{
		struct usyms *u = usyms_new();
		struct sym s;

		/* pid_max is at most 2^22: this pid cannot exist */
		CHECK(usyms_lookup(u, 1 << 23, 0x401000, &s) == -ESRCH,
		      "unknown pid that is gone: -ESRCH");
		usyms_free(u);
		usyms_free(NULL);
	}
	return UNIT_DONE();
}
