/* test_livepatch.c - src/process/livepatch.c and attach.c on running
 * processes (children of this test, traced as their owner), with a
 * stand-in agent (tests/progs/libfprobe_test.c: the real fprobe.c, a
 * probe runner that counts):
 *  - 4 threads hammer a function while it is patched and restored 100
 *    times: every call made while patched is counted exactly once, the
 *    process never crashes, and after each restore its code is the
 *    original byte for byte (read through /proc/PID/mem);
 *  - awkward shapes patched live (a rip-relative load first, a loop
 *    head inside the first bytes, a function shorter than a jump) go on
 *    computing the right results;
 *  - a run that dies with its patches in place is cleaned up after by
 *    the next; a live one is not disturbed;
 *  - C++ exceptions and longjmp through functions with return probes,
 *    and an exception thrown through frames hooked before a detach;
 *  - a site whose code came back as the file has it (a library loaded
 *    again) forgotten by lp_refresh and patched afresh. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent/fprobe.h"
#include "elf/elf.h"
#include "elf_testutil.h"
#include "process/attach.h"
#include "process/inject.h"
#include "process/livepatch.h"
#include "process/tracee.h"
#include "unit.h"

static char target[PATH_MAX + 16], agent[PATH_MAX + 16], cxx[PATH_MAX + 16];

static int out_fd = -1;
static char last_words[256];

/* Start a program, wait for its "ready" line. */
static pid_t start(const char *path, const char *arg, const char *arg2,
		   const char *arg3)
{
	int p[2];
	if (pipe(p) < 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);   /* gone with the test */
		dup2(p[1], 1);
		close(p[0]);
		execl(path, path, arg, arg2, arg3, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	char buf[16] = "";
	ssize_t n = read(p[0], buf, sizeof(buf) - 1);
	out_fd = p[0];   /* its last words go here: no SIGPIPE */
	return n > 0 && strncmp(buf, "ready", 5) == 0 ? pid : -1;
}

/* SIGTERM, and its exit status (SIGKILL after 10 s). */
static int finish(pid_t pid)
{
	int status;
	kill(pid, SIGTERM);
	for (int i = 0; i < 1000; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid) {
			ssize_t n = read(out_fd, last_words, sizeof(last_words) - 1);
			last_words[n > 0 ? n : 0] = 0;
			if (n > 0)
				printf("# its output: %s", last_words);
			close(out_fd);
			return WIFEXITED(status) ? WEXITSTATUS(status) :
						   128 + WTERMSIG(status);
		}
		usleep(10000);
	}
	printf("# %d did not exit\n", pid);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return -1;
}

static uint64_t sym_addr(struct elf_file *ef, uint64_t bias, const char *name)
{
	const struct elf_sym *s = elf_find_sym(ef, name);
	return s ? s->addr + bias : 0;
}

struct held {
	struct tracee *t;
	struct inject_libc lc;
	uint64_t handle, hits, regs_at;
	struct lp_agent ag;
	struct fprobe_registry reg;
};

static int hold(pid_t pid, struct held *h)
{
	char why[512];
	memset(h, 0, sizeof(*h));
	if (tracee_attach(pid, &h->t, why, sizeof(why)) < 0 ||
	    inject_find_libc(pid, &h->lc, why, sizeof(why)) < 0 ||
	    inject_dlopen(h->t, &h->lc, agent, &h->handle, why, sizeof(why)) < 0 ||
	    inject_dlsym(h->t, &h->lc, h->handle, FPROBE_SYM_ENTRY, &h->ag.entry) < 0 ||
	    inject_dlsym(h->t, &h->lc, h->handle, FPROBE_SYM_REGISTRY, &h->ag.registry) < 0 ||
	    inject_dlsym(h->t, &h->lc, h->handle, "fprobe_test_hits", &h->hits) < 0) {
		printf("# hold %d: %s\n", pid, why);
		tracee_detach(h->t);
		h->t = NULL;
		return -1;
	}
	return 0;
}

static long read_long(struct tracee *t, uint64_t at)
{
	long v = -1;
	tracee_read(t, at, &v, sizeof(v));
	return v;
}

/* hammer's body: a thread there has counted its call but not returned */
static uint64_t body_lo, body_hi;

static bool inside(struct held *h, size_t i, uint64_t agent_lo, uint64_t agent_hi)
{
	struct user_regs_struct *r = tracee_regs(h->t, i);
	uint64_t ip = r ? r->rip : 0;
	bool in = (ip >= agent_lo && ip < agent_hi) || (ip > body_lo && ip < body_hi);
	for (uint32_t k = 0; k < h->reg.nregions && !in; k++)
		in = ip >= h->reg.region[k] && ip < h->reg.region[k] + h->reg.region_len[k];
	return in;
}

/* Step every thread that is inside a trampoline or the agent out of it
 * (it would count its call on one side of a snapshot and not on the
 * other), the others staying stopped. */
static int quiesce(struct held *h, uint64_t agent_lo, uint64_t agent_hi)
{
	tracee_read(h->t, h->ag.registry, &h->reg, sizeof(h->reg));
	for (size_t i = 0; i < h->t->nthreads; i++)
		for (int steps = 0; inside(h, i, agent_lo, agent_hi); steps++)
			if (steps > 100000 || tracee_step(h->t, i) < 0)
				return -1;
	return 0;
}

/* The agent's code mapping, to tell when a thread is inside it. */
static void agent_text(pid_t pid, uint64_t *lo, uint64_t *hi)
{
	struct elf_map *maps;
	size_t n;
	*lo = *hi = 0;
	if (elf_proc_maps(pid, &maps, &n) < 0)
		return;
	for (size_t i = 0; i < n; i++)
		if (strstr(maps[i].path, "libfprobe_test.so") && maps[i].perms[2] == 'x') {
			*lo = maps[i].start;
			*hi = maps[i].end;
		}
	elf_maps_free(maps, n);
}

static bool mem_equals(pid_t pid, uint64_t at, const uint8_t *want, size_t n)
{
	char path[64];
	uint8_t got[64];
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	int fd = open(path, O_RDONLY);
	bool same = fd >= 0 && pread(fd, got, n, (off_t)at) == (ssize_t)n &&
		    memcmp(got, want, n) == 0;
	if (fd >= 0)
		close(fd);
	return same;
}

static void test_hammer(void)
{
	pid_t pid = start(target, "4", NULL, NULL);
	CHECK(pid > 0, "the hammering target runs");
	if (pid <= 0)
		return;
	struct elf_file *ef;
	uint64_t bias = 0;
	struct elf_map *maps;
	size_t nm;
	elf_open(target, &ef);
	elf_proc_maps(pid, &maps, &nm);
	for (size_t i = 0; i < nm; i++)
		if (strcmp(maps[i].path, target) == 0 && elf_map_bias(ef, &maps[i], &bias) == 0)
			break;
	elf_maps_free(maps, nm);
	uint64_t hammer = sym_addr(ef, bias, "hammer");
	body_lo = hammer;
	body_hi = hammer + elf_find_sym(ef, "hammer")->size;
	uint64_t calls_at = sym_addr(ef, bias, "hammer_calls");
	if (!calls_at) {
		uint64_t v = 0;
		elf_symbol_addr(ef, "hammer_calls", &v);
		calls_at = v + bias;
	}
	uint8_t orig[16];
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	int fd = open(path, O_RDONLY);
	bool read_ok = fd >= 0 && pread(fd, orig, sizeof(orig), (off_t)hammer) == sizeof(orig);
	if (fd >= 0)
		close(fd);
	CHECK(read_ok, "hammer's bytes read before any patch");

	int sessions = 0, exact = 0, restored = 0, counted = 0;
	long total_hits = 0, total_calls = 0;
	uint64_t lo = 0, hi = 0;
	char why[512] = "";
	for (int s = 0; s < 100; s++) {
		struct held h;
		if (hold(pid, &h) < 0)
			break;
		if (!lo)
			agent_text(pid, &lo, &hi);
		struct livepatch *lp;
		uint32_t probes[2] = { 0, 1 };
		struct lp_site site = { .name = "hammer", .addr = hammer, .kind = FPROBE_PROBES,
					.nentry = 1, .nret = 1, .probes = probes };
		if (lp_begin(h.t, &h.ag, &lp, why, sizeof(why)) < 0 ||
		    lp_add(lp, h.t, &site, why, sizeof(why)) < 0 || quiesce(&h, lo, hi) < 0) {
			printf("# session %d: %s\n", s, why);
			tracee_detach(h.t);
			break;
		}
		long c0 = read_long(h.t, calls_at), e0 = read_long(h.t, h.hits),
		     r0 = read_long(h.t, h.hits + 8);
		if (lp_commit(lp, h.t, why, sizeof(why)) < 0) {
			printf("# commit %d: %s\n", s, why);
			tracee_detach(h.t);
			lp_free(lp);
			break;
		}
		tracee_detach(h.t);
		usleep(2000 + (s % 7) * 300);
		if (tracee_attach(pid, &h.t, why, sizeof(why)) < 0 || quiesce(&h, lo, hi) < 0) {
			printf("# reattach %d: %s\n", s, why);
			lp_free(lp);
			break;
		}
		long c1 = read_long(h.t, calls_at), e1 = read_long(h.t, h.hits),
		     r1 = read_long(h.t, h.hits + 8);
		int rr = lp_restore(lp, h.t, why, sizeof(why));
		tracee_detach(h.t);
		lp_free(lp);
		sessions++;
		exact += e1 - e0 == c1 - c0 && r1 - r0 == c1 - c0;
		counted += c1 > c0;
		total_hits += e1 - e0;
		total_calls += c1 - c0;
		if (e1 - e0 != c1 - c0 || r1 - r0 != c1 - c0)
			printf("# session %d: calls %ld, entries %ld, returns %ld\n", s,
			       c1 - c0, e1 - e0, r1 - r0);
		restored += rr == 0 && mem_equals(pid, hammer, orig, sizeof(orig));
	}
	CHECK(sessions == 100, "100 sessions of patching and restoring while 4 threads hammer");
	CHECK(exact == sessions, "each session counted every call made while patched, "
	      "entries and returns, exactly");
	CHECK(counted >= 90, "the threads did call it while patched");
	printf("# %ld calls counted in %d sessions\n", total_calls, sessions);
	(void)total_hits;
	CHECK(restored == sessions, "after each session the code is the original byte "
	      "for byte (/proc/PID/mem)");
	CHECK(finish(pid) == 0, "the target ran on and every result it checked was right");
	elf_close(ef);
}

/* Functions of awkward shapes, patched through pattach while the
 * target's main thread calls and checks them. */
static void test_shapes(void)
{
	pid_t pid = start(target, "1", NULL, NULL);
	if (pid <= 0) {
		CHECK(0, "the shapes target runs");
		return;
	}
	struct elf_file *ef;
	elf_open(target, &ef);
	char why[512] = "";
	struct pattach *pa;
	int r = pattach_open(pid, agent, &pa, why, sizeof(why));
	CHECK(r == 0, "pattach_open: held, agent loaded");
	if (r < 0) {
		printf("# %s\n", why);
		finish(pid);
		elf_close(ef);
		return;
	}
	static const char *const names[] = { "riprel_first", "loop_head", "tiny_fn" };
	for (uint32_t i = 0; i < 3; i++) {
		const struct elf_sym *s = elf_find_sym(ef, names[i]);
		char label[128];
		r = s ? pattach_add(pa, target, s->addr, names[i], false, 10 + i, why,
				    sizeof(why)) : -ENOENT;
		snprintf(label, sizeof(label), "%s planned live", names[i]);
		CHECK(r == 0, label);
		if (r < 0)
			printf("# %s\n", why);
		s = elf_find_sym(ef, names[i]);
		r = s ? pattach_add(pa, target, s->addr, names[i], true, 20 + i, why,
				    sizeof(why)) : -ENOENT;
		snprintf(label, sizeof(label), "%s: a return probe too", names[i]);
		CHECK(r == 0, label);
	}
	const struct elf_sym *hs = elf_find_sym(ef, "hammer");
	r = hs ? pattach_add(pa, target, hs->addr, "hammer", false, 5, why,
			     sizeof(why)) : -ENOENT;
	CHECK(r == 0, "hammer planned too");
	hs = elf_find_sym(ef, "forker");
	r = hs ? pattach_add(pa, target, hs->addr, "forker", true, 6, why,
			     sizeof(why)) : -ENOENT;
	CHECK(r == 0, "a return probe on the function that forks");
	r = pattach_commit(pa, why, sizeof(why));
	CHECK(r == 0, "committed: the process runs patched");
	usleep(50000);
	kill(pid, SIGUSR1);   /* a fork child checks its copy is unpatched */
	usleep(100000);
	r = pattach_detach(pa, why, sizeof(why));
	CHECK(r == 0, "detached: every byte put back");
	if (r < 0)
		printf("# %s\n", why);
	struct held h;
	if (hold(pid, &h) == 0) {
		long e[3], x[3];
		for (int i = 0; i < 3; i++) {
			e[i] = read_long(h.t, h.hits + 8 * (10 + i));
			x[i] = read_long(h.t, h.hits + 8 * (20 + i));
		}
		printf("# entries %ld %ld %ld, returns %ld %ld %ld\n", e[0], e[1], e[2],
		       x[0], x[1], x[2]);
		CHECK(e[0] > 10 && e[1] > 10 && e[2] > 10,
		      "the entry probes of the three shapes ran");
		CHECK(x[0] > 10 && x[1] > 10 && x[2] > 10 &&
		      x[0] <= e[0] && e[0] - x[0] <= 1,
		      "their return probes ran as often (a call in flight aside)");
		tracee_detach(h.t);
	}
	pattach_free(pa);
	CHECK(finish(pid) == 0, "the shapes computed right all along");
	CHECK(strstr(last_words, "forks 1 0") != NULL,
	      "a child forked while patched runs the original code, and returns "
	      "through the frame hooked before the fork");
	elf_close(ef);
}

/* A run that died with its patches in place (nothing restored, its
 * ownership left in the registry) is undone by the next; a run that is
 * still alive is refused. */
static void test_stale(void)
{
	pid_t pid = start(target, "2", NULL, NULL);
	if (pid <= 0)
		return;
	struct elf_file *ef;
	elf_open(target, &ef);
	const struct elf_sym *s = elf_find_sym(ef, "hammer");
	char why[512] = "";
	pid_t dead = fork();
	if (dead == 0) {
		/* the run that dies: patch and exit without restoring */
		struct pattach *pa;
		if (pattach_open(pid, agent, &pa, why, sizeof(why)) == 0 &&
		    pattach_add(pa, target, s->addr, "hammer", false, 0, why, sizeof(why)) == 0 &&
		    pattach_commit(pa, why, sizeof(why)) == 0)
			_exit(0);
		_exit(1);
	}
	int st;
	waitpid(dead, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "a run patches and dies");
	struct held h;
	struct pattach *pa;
	int r = pattach_open(pid, agent, &pa, why, sizeof(why));
	CHECK(r == 0, "the next run attaches");
	uint8_t orig[8];
	memcpy(orig, (const uint8_t *)"\xf0\x48\xff\x05", 4);   /* lock incq ...(%rip) */
	if (r == 0) {
		pattach_free(pa);
		struct elf_map *maps;
		size_t nm;
		uint64_t bias = 0;
		elf_proc_maps(pid, &maps, &nm);
		for (size_t i = 0; i < nm; i++)
			if (strcmp(maps[i].path, target) == 0 &&
			    elf_map_bias(ef, &maps[i], &bias) == 0)
				break;
		elf_maps_free(maps, nm);
		CHECK(mem_equals(pid, s->addr + bias, orig, 4),
		      "and finds the dead run's patch undone");
	}
	/* a live owner: pretend to be this test's parent, which runs */
	if (hold(pid, &h) == 0) {
		struct fprobe_registry reg;
		tracee_read(h.t, h.ag.registry, &reg, sizeof(reg));
		reg.owner_pid = (uint64_t)getppid();
		reg.owner_start = lp_proc_start(getppid());
		tracee_write(h.t, h.ag.registry, &reg, sizeof(reg));
		struct livepatch *lp = NULL;
		r = lp_begin(h.t, &h.ag, &lp, why, sizeof(why));
		CHECK(r == -EBUSY && strstr(why, "another sonde"),
		      "a run finding another live one's patches leaves them alone");
		if (r != -EBUSY)
			printf("# %d %s\n", r, why);
		reg.owner_pid = reg.owner_start = 0;
		tracee_write(h.t, h.ag.registry, &reg, sizeof(reg));
		lp_free(lp);
		tracee_detach(h.t);
	}
	CHECK(finish(pid) == 0, "the target ran on through it all");
	elf_close(ef);
}

/* The target's voluntary context switches: its loop sleeps once a round,
 * so this counts rounds whatever the machine's load. */
static long sleeps(pid_t pid)
{
	char path[64], line[128];
	long n = -1;
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	FILE *f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "voluntary_ctxt_switches: %ld", &n) == 1)
			break;
	if (f)
		fclose(f);
	return n;
}

/* Until the target has gone ROUNDS more times round its loop (10 s at
 * most): a fixed sleep gave too few rounds on a loaded machine. */
static void wait_rounds(pid_t pid, long rounds)
{
	long from = sleeps(pid);
	for (int i = 0; i < 1000 && sleeps(pid) - from < rounds; i++)
		usleep(10000);
}

/* Attach to the C++ target and probe the returns of fns[0..n) (probe
 * ids 30 + i) and, with entries, their entries too (40 + i); committed.
 * 0, or -errno with why. */
static int probe_cxx(pid_t pid, struct elf_file *ef, const char *const *fns,
		     uint32_t n, bool entries, struct pattach **pa, char *why,
		     size_t whylen)
{
	int r = pattach_open(pid, agent, pa, why, whylen);
	for (uint32_t i = 0; r == 0 && i < n; i++) {
		const struct elf_sym *s = elf_find_sym(ef, fns[i]);
		r = s ? pattach_add(*pa, cxx, s->addr, fns[i], true, 30 + i, why,
				    whylen) : -ENOENT;
		if (r == 0 && entries)
			r = pattach_add(*pa, cxx, s->addr, fns[i], false, 40 + i,
					why, whylen);
	}
	if (r == 0)
		r = pattach_commit(*pa, why, whylen);
	return r;
}

static void test_cxx(void)
{
	pid_t pid = start(cxx, "0", "20", NULL);
	if (pid <= 0) {
		CHECK(0, "the C++ target runs");
		return;
	}
	struct elf_file *ef;
	elf_open(cxx, &ef);
	char why[512] = "";
	struct pattach *pa;
	static const char *const fns[] = { "catcher", "middle", "thrower", "jumper",
					   "via_call" };
	int r = probe_cxx(pid, ef, fns, 5, true, &pa, why, sizeof(why));
	CHECK(r == 0, "return probes on functions exceptions and longjmp cross");
	if (r < 0)
		printf("# %s\n", why);
	wait_rounds(pid, 200);
	r = pattach_detach(pa, why, sizeof(why));
	CHECK(r == 0, "detached");
	struct held h;
	long ret[5] = { 0 }, ent[5] = { 0 };
	if (hold(pid, &h) == 0) {
		for (int i = 0; i < 5; i++) {
			ret[i] = read_long(h.t, h.hits + 8 * (30 + i));
			ent[i] = read_long(h.t, h.hits + 8 * (40 + i));
		}
		tracee_detach(h.t);
	}
	pattach_free(pa);
	printf("# entries %ld %ld %ld %ld %ld, returns %ld %ld %ld %ld %ld\n",
	       ent[0], ent[1], ent[2], ent[3], ent[4], ret[0], ret[1], ret[2],
	       ret[3], ret[4]);
	CHECK(ent[0] > 30 && ret[0] >= ent[0] - 1 && ret[0] <= ent[0],
	      "catcher: every call returned through its probe, thrown through or not");
	CHECK(ret[1] < ent[1] && ret[1] > ent[1] / 2,
	      "middle: the calls an exception crossed did not return, the others did");
	CHECK(ret[3] < ent[3] && ret[3] > ent[3] / 4,
	      "jumper: the calls left by longjmp did not return, the others did");
	CHECK(labs(ent[4] - ent[0]) <= 1 && ret[4] < ent[4] && ret[4] > ent[4] / 2,
	      "via_call, whose moved first instructions hold the call the "
	      "exceptions cross: they did not return, the others did");
	CHECK(finish(pid) == 0, "the C++ program caught every exception right, "
	      "ran every destructor and went on");
	elf_close(ef);
}

/* The system call a stopped or sleeping process is in (-1: running). */
static long syscall_of(pid_t pid)
{
	char path[64], line[256] = "";
	snprintf(path, sizeof(path), "/proc/%d/syscall", pid);
	FILE *f = fopen(path, "r");
	long nr = -1;
	if (f && fgets(line, sizeof(line), f) && sscanf(line, "%ld", &nr) != 1)
		nr = -1;
	if (f)
		fclose(f);
	return nr;
}

/* Detached while the program sleeps in thrower(), under catcher() and
 * middle() whose returns are hooked: the exception thrown after the
 * detach must meet real return addresses, the unwinder's hooks being
 * gone with the rest. */
static void test_cxx_detach_inside(void)
{
	/* thrower() sleeps 20 ms before each throw; nothing else sleeps */
	pid_t pid = start(cxx, "0", "0", "20000");
	if (pid <= 0) {
		CHECK(0, "the C++ target runs");
		return;
	}
	struct elf_file *ef;
	elf_open(cxx, &ef);
	char why[512] = "";
	struct pattach *pa;
	static const char *const fns[] = { "catcher", "middle" };
	int r = probe_cxx(pid, ef, fns, 2, false, &pa, why, sizeof(why));
	CHECK(r == 0, "return probes on catcher and middle");
	if (r < 0)
		printf("# %s\n", why);
	/* a throw entered after the patch: past two sleeps, then in one */
	wait_rounds(pid, 2);
	bool inside = false;
	for (int i = 0; i < 500 && !inside; i++) {
		long nr = syscall_of(pid);
		inside = nr == 230 /* clock_nanosleep */ || nr == 35 /* nanosleep */;
		if (!inside)
			usleep(1000);
	}
	CHECK(inside, "the program sleeps in thrower(), its callers hooked");
	r = pattach_detach(pa, why, sizeof(why));
	CHECK(r == 0, "detached while it sleeps there");
	pattach_free(pa);
	wait_rounds(pid, 3);
	CHECK(finish(pid) == 0, "the exception thrown after the detach crossed "
	      "the frames hooked before it and was caught");
	elf_close(ef);
}

/* lp_refresh, for a library unloaded and loaded again at the same
 * address (its file's bytes back where sonde's jump was; simulated by
 * writing them back through /proc/PID/mem): the site is forgotten, its
 * record says restored, lp_has_probe no longer counts it live, and it
 * is patched afresh (not merged into the old one); one still patched
 * stays. */
static void test_refresh(void)
{
	pid_t pid = start(target, "1", NULL, NULL);
	if (pid <= 0) {
		CHECK(0, "the refresh target runs");
		return;
	}
	struct elf_file *ef;
	uint64_t bias = 0;
	struct elf_map *maps;
	size_t nm;
	elf_open(target, &ef);
	elf_proc_maps(pid, &maps, &nm);
	for (size_t i = 0; i < nm; i++)
		if (strcmp(maps[i].path, target) == 0 && elf_map_bias(ef, &maps[i], &bias) == 0)
			break;
	elf_maps_free(maps, nm);
	uint64_t hammer = sym_addr(ef, bias, "hammer");
	char why[512] = "";
	struct held h = { 0 };
	struct livepatch *lp = NULL;
	uint32_t probes[1] = { 0 };
	struct lp_site site = { .name = "hammer", .addr = hammer, .kind = FPROBE_PROBES,
				.nentry = 1, .probes = probes };
	uint8_t orig[16];
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	int mem = open(path, O_RDWR);
	bool ok = mem >= 0 && pread(mem, orig, sizeof(orig), (off_t)hammer) == sizeof(orig) &&
		  hold(pid, &h) == 0 && lp_begin(h.t, &h.ag, &lp, why, sizeof(why)) == 0 &&
		  lp_add(lp, h.t, &site, why, sizeof(why)) == 0 &&
		  lp_commit(lp, h.t, why, sizeof(why)) == 0;
	CHECK(ok, "a function patched");
	if (!ok) {
		printf("# %s\n", why);
		goto out;
	}
	CHECK(lp_refresh(lp, h.t) == 0 && lp_nsites(lp) == 1 &&
	      lp_has_probe(lp, hammer, 0, mem) && !lp_has_probe(lp, hammer, 1, mem),
	      "refreshed while patched: nothing forgotten, the probe live there");
	/* its library "loaded again": the file's bytes back */
	ok = pwrite(mem, orig, sizeof(orig), (off_t)hammer) == sizeof(orig);
	CHECK(ok && !lp_has_probe(lp, hammer, 0, mem) && lp_has_probe(lp, hammer, 0, -1),
	      "the file's bytes back: not live (by its code), still planned (by the records)");
	CHECK(lp_refresh(lp, h.t) == 1 && lp_nsites(lp) == 0 &&
	      !lp_has_probe(lp, hammer, 0, -1), "lp_refresh forgets it");
	ok = lp_add(lp, h.t, &site, why, sizeof(why)) == 0 &&
	     lp_commit(lp, h.t, why, sizeof(why)) == 0;
	CHECK(ok && lp_nsites(lp) == 1 && lp_has_probe(lp, hammer, 0, mem) &&
	      !mem_equals(pid, hammer, orig, 5), "patched afresh at the same address");
	if (!ok)
		printf("# %s\n", why);
	CHECK(lp_restore(lp, h.t, why, sizeof(why)) == 0 &&
	      mem_equals(pid, hammer, orig, sizeof(orig)), "and put back byte for byte");
	tracee_detach(h.t);
	h.t = NULL;
out:
	if (h.t)
		tracee_detach(h.t);
	lp_free(lp);
	if (mem >= 0)
		close(mem);
	CHECK(finish(pid) == 0, "the target ran on right");
	elf_close(ef);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!test_prog_beside("fprobe_target", target, sizeof(target)) ||
	    !test_prog_beside("libfprobe_test.so", agent, sizeof(agent)) ||
	    !test_prog_beside("cxx_unwind", cxx, sizeof(cxx))) {
		printf("ok - livepatch # SKIP test programs not built\n");
		return UNIT_DONE();
	}
	test_hammer();
	test_shapes();
	test_stale();
	test_cxx();
	test_cxx_detach_inside();
	test_refresh();
	return UNIT_DONE();
}
