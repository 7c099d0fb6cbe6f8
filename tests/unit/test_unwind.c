/* test_unwind.c - DWARF CFI unwinding of copied user stacks: a -O2
 * -fomit-frame-pointer capture, a frame-pointer-only capture, a truncated
 * copy, and (when it can be ptraced) a live /usr/bin/python3.11. */
#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "unit.h"
#include "elf_testutil.h"
#include "elf/symbolize.h"

#define MAX_FRAMES 128

struct capture {
	struct unwind_regs regs;
	unsigned char *stack;
	size_t stack_len;
	char *maps;
	size_t maps_len;
};

/* Run PROG FILE and read the capture it writes; returns the child's pid. */
static pid_t run_target(const char *prog, struct capture *c)
{
	char file[] = "/tmp/sonde-unwind-XXXXXX", magic[8];
	int fd = mkstemp(file), status;
	uint64_t n;
	pid_t pid;
	FILE *f;

	memset(c, 0, sizeof(*c));
	if (fd < 0)
		return -1;
	close(fd);
	pid = fork();
	if (pid == 0) {
		execl(prog, prog, file, (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0)
		goto fail;
	f = fopen(file, "r");
	if (!f)
		goto fail;
	if (fread(magic, 1, 8, f) != 8 || memcmp(magic, "SONDECAP", 8) != 0 ||
	    fread(&c->regs, sizeof(c->regs), 1, f) != 1 ||
	    fread(&n, sizeof(n), 1, f) != 1 || n > (1 << 20) ||
	    !(c->stack = malloc(n)) || fread(c->stack, 1, n, f) != n)
		goto fail_file;
	c->stack_len = n;
	if (fread(&n, sizeof(n), 1, f) != 1 || n > (1 << 20) ||
	    !(c->maps = malloc(n + 1)) || fread(c->maps, 1, n, f) != n)
		goto fail_file;
	c->maps[n] = '\0';
	c->maps_len = n;
	fclose(f);
	unlink(file);
	return pid;
fail_file:
	fclose(f);
fail:
	unlink(file);
	free(c->stack);
	free(c->maps);
	memset(c, 0, sizeof(*c));
	return -1;
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* Unwind and symbolize; names[i] point into U. Returns the depth. */
static int unwind_names(struct usyms *u, const struct unwind_sample *s,
			const char **names, uint64_t *ips)
{
	int n = unwind_user(u, s, ips, MAX_FRAMES), i;

	for (i = 0; i < n; i++) {
		struct sym sym;

		names[i] = usyms_lookup(u, s->pid, ips[i], &sym) == 0 ? sym.name : "?";
	}
	return n;
}

static void print_stack(const char **names, const uint64_t *ips, int n)
{
	int i;

	for (i = 0; i < n; i++)
		printf("#     %2d %#" PRIx64 " %s\n", i, ips[i], names[i]);
}

static void test_target(const char *prog, const char *what, int bench)
{
	static const char *want[] = { "unwind_c", "unwind_b", "unwind_a", "main" };
	const char *names[MAX_FRAMES];
	uint64_t ips[MAX_FRAMES];
	struct usyms *u = usyms_new();
	struct unwind_sample s = { 0 };
	struct capture c;
	char name[160];
	int n, i, ok;
	pid_t pid = run_target(prog, &c);

	snprintf(name, sizeof(name), "%s: capture written", what);
	CHECK(pid > 0, name);
	if (pid <= 0) {
		usyms_free(u);
		return;
	}
	snprintf(name, sizeof(name), "%s: maps remembered", what);
	CHECK(usym_process_remember_maps(u, pid, c.maps, c.maps_len) == 0, name);
	s.pid = s.tid = pid;
	s.regs = c.regs;
	s.stack = c.stack;
	s.stack_len = c.stack_len;
	n = unwind_names(u, &s, names, ips);
	ok = n >= 4;
	for (i = 0; ok && i < 4; i++)
		ok = strcmp(names[i], want[i]) == 0;
	snprintf(name, sizeof(name), "%s: main <- unwind_a <- unwind_b <- unwind_c", what);
	CHECK(ok, name);
	if (!ok)
		print_stack(names, ips, n);
	snprintf(name, sizeof(name), "%s: first frame is the sampled ip", what);
	CHECK(n > 0 && ips[0] == c.regs.ip, name);
	ok = 0;
	for (i = 4; i < n; i++)
		ok |= strcmp(names[i], "__libc_start_call_main") == 0 ||
		      strcmp(names[i], "__libc_start_main") == 0 ||
		      strcmp(names[i], "_start") == 0;
	snprintf(name, sizeof(name), "%s: walk goes on into libc's start-up", what);
	CHECK(ok, name);
	if (bench && n > 0) {
		int iters = 2000, depth = 0;
		double t0 = now_us();

		for (i = 0; i < iters; i++)
			depth = unwind_user(u, &s, ips, MAX_FRAMES);
		printf("# %s: depth %d from a %zu-byte stack copy, %.1f us per unwind"
		       " (%d unwinds, Dwfl and CFI cached)\n", what, depth,
		       c.stack_len, (now_us() - t0) / iters, iters);
	}

	/* a copy too short to hold the caller's frame: fewer frames, no crash */
	s.stack_len = 16;
	n = unwind_user(u, &s, ips, MAX_FRAMES);
	snprintf(name, sizeof(name), "%s: truncated copy stops early", what);
	CHECK(n >= 1 && n < 4, name);
	s.stack_len = c.stack_len;
	n = unwind_user(u, &s, ips, 2);
	snprintf(name, sizeof(name), "%s: max frames respected", what);
	CHECK(n == 2, name);
	free(c.stack);
	free(c.maps);
	usyms_free(u);
}

/* A live python3.11 (Debian builds it without frame pointers), stopped
 * with ptrace in its interpreter loop: registers from PTRACE_GETREGS,
 * 16 KiB of stack from /proc/PID/mem, as a probe would copy them. */
static void test_python(void)
{
	const char *py = "/usr/bin/python3.11";
	const char *names[MAX_FRAMES];
	uint64_t ips[MAX_FRAMES];
	struct user_regs_struct r;
	struct unwind_sample s = { 0 };
	static unsigned char stack[16384];
	struct usyms *u;
	char mem[64];
	int status, n = 0, i, has_eval = 0, has_main = 0, ready[2];
	ssize_t got = -1;
	pid_t pid;
	FILE *f;
	double t0;

	if (access(py, X_OK) != 0) {
		printf("ok - python3.11 stack # SKIP %s missing\n", py);
		return;
	}
	if (pipe(ready) < 0)
		return;
	pid = fork();
	if (pid == 0) {
		dup2(ready[1], 1);
		close(ready[0]);
		execl(py, py, "-c",
		      "import sys\n"
		      "def spin(n):\n"
		      "    while True: n = (n * 7 + 1) % 1000003\n"
		      "def f(d):\n"
		      "    if d == 0:\n"
		      "        sys.stdout.write('ready\\n'); sys.stdout.flush()\n"
		      "        spin(d)\n"
		      "    f(d - 1)\n"
		      "f(20)\n", (char *)NULL);
		_exit(127);
	}
	close(ready[1]);
	/* wait until it is in the loop, then a little longer */
	if (read(ready[0], mem, sizeof(mem)) <= 0)
		printf("# python3.11 did not report ready\n");
	close(ready[0]);
	usleep(50 * 1000);
	if (ptrace(PTRACE_SEIZE, pid, 0, 0) < 0 ||
	    ptrace(PTRACE_INTERRUPT, pid, 0, 0) < 0 ||
	    waitpid(pid, &status, 0) != pid) {
		printf("ok - python3.11 stack # SKIP cannot ptrace (%s)\n", strerror(errno));
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return;
	}
	if (ptrace(PTRACE_GETREGS, pid, 0, &r) == 0) {
		snprintf(mem, sizeof(mem), "/proc/%d/mem", (int)pid);
		f = fopen(mem, "r");
		if (f) {
			/* stop at the end of the stack mapping: short reads are fine */
			if (fseeko(f, (off_t)r.rsp, SEEK_SET) == 0)
				got = (ssize_t)fread(stack, 1, sizeof(stack), f);
			fclose(f);
		}
	}
	u = usyms_new();
	CHECK(got > 0 && usym_process_remember(u, pid) == 0,
	      "python3.11: registers, stack and maps copied");
	s.pid = s.tid = pid;
	s.regs = (struct unwind_regs){
		.ip = r.rip, .sp = r.rsp, .bp = r.rbp, .ax = r.rax, .bx = r.rbx,
		.cx = r.rcx, .dx = r.rdx, .si = r.rsi, .di = r.rdi, .r8 = r.r8,
		.r9 = r.r9, .r10 = r.r10, .r11 = r.r11, .r12 = r.r12, .r13 = r.r13,
		.r14 = r.r14, .r15 = r.r15,
	};
	s.stack = stack;
	s.stack_len = got > 0 ? (size_t)got : 0;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);  /* from here on the process is gone */
	if (got > 0)
		n = unwind_names(u, &s, names, ips);
	for (i = 0; i < n; i++) {
		has_eval |= strcmp(names[i], "_PyEval_EvalFrameDefault") == 0;
		has_main |= strcmp(names[i], "Py_BytesMain") == 0 ||
			    strcmp(names[i], "main") == 0;
	}
	CHECK(has_eval, "python3.11: interpreter loop on the stack");
	CHECK(has_main && n >= 8, "python3.11: whole stack down to main");
	if (!(has_eval && has_main && n >= 8) || getenv("SONDE_TEST_VERBOSE"))
		print_stack(names, ips, n);
	if (n > 0) {
		int iters = 2000, depth = 0;

		t0 = now_us();
		for (i = 0; i < iters; i++)
			depth = unwind_user(u, &s, ips, MAX_FRAMES);
		printf("# python3.11: depth %d from a %zu-byte stack copy, %.1f us per unwind\n",
		       depth, s.stack_len, (now_us() - t0) / iters);
		/* the least copy that still reaches the same depth */
		{
			size_t lo = 0, hi = s.stack_len, full = s.stack_len;

			while (lo < hi) {
				s.stack_len = (lo + hi) / 2;
				if (unwind_user(u, &s, ips, MAX_FRAMES) >= depth)
					hi = s.stack_len;
				else
					lo = s.stack_len + 1;
			}
			printf("# python3.11: %zu bytes of stack above rsp are enough for all %d frames\n",
			       lo, depth);
			s.stack_len = full;
		}
	}
	usyms_free(u);
}

int main(void)
{
	/* two buffers: both paths are used after both lookups */
	char nofp_buf[PATH_MAX + 16], fp_buf[PATH_MAX + 16];
	const char *nofp = test_prog_beside("unwind_target", nofp_buf,
					    sizeof(nofp_buf));
	const char *fp = test_prog_beside("unwind_target_fp", fp_buf,
					  sizeof(fp_buf));
	struct usyms *u = usyms_new();
	struct unwind_sample empty = { .pid = getpid(), .tid = getpid() };
	uint64_t ips[4];

	CHECK(unwind_user(u, &empty, ips, 4) == 0, "zero ip: empty stack");
	CHECK(unwind_user(NULL, &empty, ips, 4) == -EINVAL, "no table: -EINVAL");
	usyms_free(u);
	if (!nofp || !fp) {
		printf("ok - unwind targets # SKIP build/tests/progs/unwind_target* not built (make check)\n");
	} else {
		test_target(nofp, "-O2 -fomit-frame-pointer (CFI)", 1);
		test_target(fp, "frame pointers, no CFI (fallback)", 0);
	}
	test_python();
	return UNIT_DONE();
}
