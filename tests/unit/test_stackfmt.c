/* test_stackfmt.c - kstack/ustack/ksym/usym text against bpftrace 0.17's. */
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "unit.h"
#include "elf_testutil.h"
#include "output/stackfmt.h"

static const char kallsyms[] =
	"ffffffff81000100 t helper\n"
	"ffffffff81000300 T vfs_read\n";

static void check_str(char *got, const char *want, const char *name)
{
	CHECK_STR(got, want, name);
	free(got);
}

static void test_kernel(void)
{
	char path[] = "/tmp/sonde-stackfmt-XXXXXX";
	int fd = mkstemp(path);
	uint64_t ips[] = { 0xffffffff81000125ull, 0xffffffff81000305ull,
			   0xffffffff80000000ull, 0, 0xffffffff81000305ull };
	struct stackfmt f = { .indent = STACKFMT_INDENT_KEY };

	if (fd < 0 || write(fd, kallsyms, sizeof(kallsyms) - 1) < 0) {
		CHECK(0, "kernel: fake kallsyms");
		return;
	}
	close(fd);
	f.ksyms = ksyms_new(path);
	/* map key: 4 spaces; unknown address as a pointer; stops at 0 */
	check_str(stackfmt_string(ips, 5, &f),
		  "\n    helper+37\n    vfs_read+5\n    0xffffffff80000000\n",
		  "kstack as a map key");
	f.indent = STACKFMT_INDENT_VALUE;
	check_str(stackfmt_string(ips, 2, &f),
		  "\n        helper+37\n        vfs_read+5\n", "kstack in printf");
	f.mode = STACK_MODE_PERF;
	check_str(stackfmt_string(ips, 3, &f),
		  "\n\tffffffff81000125 helper+37\n\tffffffff81000305 vfs_read+5\n"
		  "\tffffffff80000000 0xffffffff80000000\n", "kstack(perf)");
	f.limit = 1;
	check_str(stackfmt_string(ips, 3, &f), "\n\tffffffff81000125 helper+37\n",
		  "kstack(perf, 1)");
	f.mode = STACK_MODE_RAW;
	f.limit = 0;
	check_str(stackfmt_string(ips, 2, &f), "\nffffffff81000125\nffffffff81000305\n",
		  "kstack raw");
	check_str(stackfmt_string(ips, 0, &f), "", "unreadable stack prints nothing");
	check_str(stackfmt_sym_string(&f, 0xffffffff81000125ull), "helper", "ksym");
	check_str(stackfmt_sym_string(&f, 0x7fd783379ddeull), "0x7fd783379dde",
		  "ksym of a user address");
	check_str(stackfmt_sym_string(&f, 0), "0", "ksym(0) prints 0 as bpftrace does");
	ksyms_free(f.ksyms);
	unlink(path);
}

/* JIT frames from a perf map: known names and modules in any process. */
static void test_perf_map(void)
{
	const char maps[] = "7f0000000000-7f0000010000 r-xp 00000000 00:00 0 \n";
	pid_t me = getpid();
	char path[64], want[512];
	uint64_t ips[] = { 0x7f0000001020ull, 0x7f0000009000ull };
	struct stackfmt f = { .user = true, .pid = me, .mode = STACK_MODE_PERF };
	FILE *pm;

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)me);
	pm = fopen(path, "w");
	if (!pm) {
		CHECK(0, "perf map written");
		return;
	}
	fprintf(pm, "7f0000001000 100 _ZN6shapes6Widget4workEi\n");
	fclose(pm);
	f.usyms = usyms_new();
	usym_process_remember_maps(f.usyms, me, maps, strlen(maps));
	snprintf(want, sizeof(want),
		 "\n\t7f0000001020 shapes::Widget::work(int)+32 (%s)\n"
		 "\t7f0000009000 0x7f0000009000 ([unknown])\n", path);
	check_str(stackfmt_string(ips, 2, &f), want, "ustack(perf): module and [unknown]");
	check_str(stackfmt_sym_string(&f, ips[0]), "shapes::Widget::work(int)", "usym");
	check_str(stackfmt_sym_string(&f, 0x1234), "0x1234", "usym of an unknown address");
	usyms_free(f.usyms);
	unlink(path);
}

/* The C++ helper's real frames, compared with what bpftrace 0.17 printed
 * for `uprobe:cxx_stack:_ZN6shapes6Widget4leafEi { print(ustack) }` on
 * the same binary (g++ 12 -O0): the offsets are the compiler's, so a
 * different compiler may move them. */
static void test_cxx(void)
{
	static const char *bpftrace_frames[] = {
		"shapes::Widget::work(int)+32",
		"long twice<long>(long)+39",
		"overloaded(int)+24",
		"overloaded(double)+29",
	};
	char prog[PATH_MAX + 16], want[PATH_MAX + 1024];
	uint64_t a[6];
	struct stackfmt f = { .user = true, .indent = STACKFMT_INDENT_VALUE };
	int fds[2], got = 0, i;
	char *s;
	FILE *in;
	pid_t pid;

	if (!test_prog_beside("cxx_stack", prog, sizeof(prog)) || pipe(fds) < 0) {
		printf("ok - ustack of a C++ program # SKIP cxx_stack not built (make check)\n");
		return;
	}
	pid = fork();
	if (pid == 0) {
		dup2(fds[1], 1);
		execl(prog, prog, "addrs", (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	in = fdopen(fds[0], "r");
	if (in) {
		for (got = 0; got < 6 && fscanf(in, "%" SCNx64, &a[got]) == 1; got++)
			;
		fclose(in);
	}
	f.usyms = usyms_new();
	f.pid = pid;
	if (got == 6)
		usym_process_remember(f.usyms, pid);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	CHECK(got == 6, "C++ helper printed its return addresses");
	if (got == 6) {
		int len = 0;

		want[0] = '\0';
		for (i = 0; i < 4; i++)
			len += snprintf(want + len, sizeof(want) - (size_t)len,
					"\n        %s", bpftrace_frames[i]);
		f.limit = 4;
		s = stackfmt_string(a, 6, &f);
		snprintf(want + len, sizeof(want) - (size_t)len, "\n");
		CHECK_STR(s, want, "ustack of an exited C++ program reads as bpftrace's");
		free(s);
		f.limit = 0;
		s = stackfmt_string(a, 6, &f);
		/* main's caller is named only by libc's separate debug file */
		CHECK(s && strstr(s, "\n        main+") &&
		      (strstr(s, "\n        __libc_start_call_main+122\n") ||
		       access("/usr/share/doc/libc6-dbg", F_OK) != 0),
		      "ustack goes on through main into libc (debug file)");
		free(s);
		f.mode = STACK_MODE_PERF;
		f.limit = 1;
		s = stackfmt_string(a, 6, &f);
		snprintf(want, sizeof(want), "\n\t%" PRIx64 " shapes::Widget::work(int)+32 (%s)\n",
			 a[0], prog);
		CHECK_STR(s, want, "ustack(perf) of a C++ program reads as bpftrace's");
		free(s);
	}
	usyms_free(f.usyms);
}

int main(void)
{
	test_kernel();
	test_perf_map();
	test_cxx();
	return UNIT_DONE();
}
