/* test_engine.c - the kernel engine against the real kernel (root only):
 * load hand-assembled programs, attach, see events arrive, read per-CPU
 * maps, and check that no descriptor outlives engine_free or a failure. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/syscall.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "kernel/engine.h"
#include "probes/provider.h"
#include "unit.h"

/* The few instruction encoders these tests need. */
#define R0 0
#define R1 1
#define R2 2
#define R3 3
#define R4 4
#define R10 10
#define INSN(c, d, s, o, i) ((struct bpf_insn){ .code = (c), .dst_reg = (d), \
	.src_reg = (s), .off = (o), .imm = (i) })
#define MOV_IMM(d, i) INSN(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define MOV_REG(d, s) INSN(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define ADD_IMM(d, i) INSN(BPF_ALU64 | BPF_ADD | BPF_K, d, 0, 0, i)
#define RSH_IMM(d, i) INSN(BPF_ALU64 | BPF_RSH | BPF_K, d, 0, 0, i)
#define STX_DW(d, s, o) INSN(BPF_STX | BPF_MEM | BPF_DW, d, s, o, 0)
#define LDX_DW(d, s, o) INSN(BPF_LDX | BPF_MEM | BPF_DW, d, s, o, 0)
#define JEQ_IMM(d, i, o) INSN(BPF_JMP | BPF_JEQ | BPF_K, d, 0, o, i)
#define JA(o) INSN(BPF_JMP | BPF_JA, 0, 0, o, 0)
#define CALL(f) INSN(BPF_JMP | BPF_CALL, 0, 0, 0, f)
#define EXIT() INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)
#define LD_MAP(d, idx) INSN(BPF_LD | BPF_IMM | BPF_DW, d, BPF_PSEUDO_MAP_FD, 0, idx), \
	INSN(0, 0, 0, 0, 0)

#define MAP_RING 0
#define MAP_GLOBALS 1
#define MAP_COUNT 2

/* Write { 42, tgid } to the ring. */
static struct bpf_insn prog_report[] = {
	CALL(BPF_FUNC_get_current_pid_tgid),
	RSH_IMM(R0, 32),
	STX_DW(R10, R0, -8),
	MOV_IMM(R1, 42),
	STX_DW(R10, R1, -16),
	LD_MAP(R1, MAP_RING),
	MOV_REG(R2, R10),
	ADD_IMM(R2, -16),
	MOV_IMM(R3, 16),
	MOV_IMM(R4, 0),
	CALL(BPF_FUNC_ringbuf_output),
	MOV_IMM(R0, 0),
	EXIT(),
};

/* @count[0]++ in a per-CPU hash. */
static struct bpf_insn prog_count[] = {
	MOV_IMM(R1, 0),
	STX_DW(R10, R1, -8),          /* key 0 */
	MOV_IMM(R1, 1),
	STX_DW(R10, R1, -16),         /* initial value 1 */
	LD_MAP(R1, MAP_COUNT),
	MOV_REG(R2, R10),
	ADD_IMM(R2, -8),
	CALL(BPF_FUNC_map_lookup_elem),
	JEQ_IMM(R0, 0, 4),
	LDX_DW(R1, R0, 0),
	ADD_IMM(R1, 1),
	STX_DW(R0, R1, 0),
	JA(8),
	LD_MAP(R1, MAP_COUNT),
	MOV_REG(R2, R10),
	ADD_IMM(R2, -8),
	MOV_REG(R3, R10),
	ADD_IMM(R3, -16),
	MOV_IMM(R4, 0),
	CALL(BPF_FUNC_map_update_elem),
	MOV_IMM(R0, 0),
	EXIT(),
};

/* .globals lost_events += 1, as codegen does when the ring is full. */
static struct bpf_insn prog_lost[] = {
	MOV_IMM(R1, 0),
	STX_DW(R10, R1, -8),
	LD_MAP(R1, MAP_GLOBALS),
	MOV_REG(R2, R10),
	ADD_IMM(R2, -8),
	CALL(BPF_FUNC_map_lookup_elem),
	JEQ_IMM(R0, 0, 2),
	MOV_IMM(R1, 1),
	INSN(BPF_STX | BPF_ATOMIC | BPF_DW, R0, R1,
	     offsetof(struct sonde_globals, lost_events), BPF_ADD),
	MOV_IMM(R0, 0),
	EXIT(),
};

/* Rejected by the verifier: r0 is never set. */
static struct bpf_insn prog_bad[] = {
	EXIT(),
};

static struct map_spec maps[] = {
	{ .name = ".events", .kind = MAP_RINGBUF, .max_entries = 1u << 18 },
	{ .name = ".globals", .kind = MAP_ARRAY, .key_size = 4,
	  .value_size = sizeof(struct sonde_globals), .max_entries = 1 },
	{ .name = "@count", .kind = MAP_PERCPU_HASH, .key_size = 8,
	  .value_size = 8, .max_entries = 16, .nkeys = 1 },
};

static struct probe mkprobe(const char *provider, const char *name,
			    const char *target, const char *func,
			    uint64_t freq, struct bpf_insn *insns,
			    uint32_t ninsns)
{
	const struct provider *pv = provider_find(provider);
	return (struct probe){
		.provider = pv, .kind = pv ? pv->name : NULL,
		.fires_newest_first = pv && pv->fires_newest_first,
		.name = name, .target = target, .func = func,
		.freq = freq, .prog_type = pv ? pv->prog_type : 0,
		.caps = pv ? pv->caps : 0,
		.insns = insns, .ninsns = ninsns,
	};
}

/* A program as the driver hands it to an engine: its providers asked
 * what the engine needs (providers_describe), as compile() does. */
static struct arena prog_arena;
static struct program mkprogram(struct probe *probes, uint32_t n)
{
	struct program prog = {
		.arena = &prog_arena,
		.probes = probes, .nprobes = n, .maps = maps,
		.nmaps = sizeof(maps) / sizeof(maps[0]),
		.ringbuf_map = MAP_RING, .globals_map = MAP_GLOBALS,
		.strlen = 64, .nblocks = n,
	};
	providers_describe(&prog);
	return prog;
}

/* Descriptors of each BPF kind this process holds. */
struct fd_count {
	int prog, map, link, perf;
};

static struct fd_count count_fds(void)
{
	struct fd_count c = { 0 };
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	while (d && (de = readdir(d))) {
		char path[300], target[256];
		snprintf(path, sizeof(path), "/proc/self/fd/%s", de->d_name);
		ssize_t n = readlink(path, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		if (strstr(target, "bpf-prog"))
			c.prog++;
		else if (strstr(target, "bpf-map"))
			c.map++;
		else if (strstr(target, "bpf_link"))
			c.link++;
		else if (strstr(target, "perf_event"))
			c.perf++;
	}
	if (d)
		closedir(d);
	return c;
}

static bool fds_none(void)
{
	struct fd_count c = count_fds();
	return !c.prog && !c.map && !c.link && !c.perf;
}

static pid_t my_pid;

struct seen {
	int records, mine, other;
	uint64_t first_id;
	int stop_after;
};

static int on_event(void *ctx, const void *data, size_t size)
{
	struct seen *s = ctx;
	uint64_t v[2];
	if (size < sizeof(v)) {
		s->other++;
		return 0;
	}
	memcpy(v, data, sizeof(v));
	if (!s->records++)
		s->first_id = v[0];
	/* Our pid was read once: calling getpid() here would trace itself. */
	if (v[0] == 42 && v[1] == (uint64_t)my_pid)
		s->mine++;
	return s->stop_after && s->records >= s->stop_after ? 1 : 0;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void test_tracepoint(void)
{
	struct probe probes[] = {
		mkprobe("tracepoint", "tracepoint:syscalls:sys_enter_getpid",
			"syscalls", "sys_enter_getpid", 0, prog_report,
			sizeof(prog_report) / sizeof(prog_report[0])),
	};
	struct program prog = mkprogram(probes, 1);
	struct seen s = { 0 };
	struct engine_opts o = { .on_event = on_event, .event_ctx = &s };
	struct engine *e;
	int r = engine_load(&prog, &o, &e);
	CHECK(r == 0, "tracepoint: load");
	if (r)
		return;
	CHECK(engine_attach(e) == 1, "tracepoint: one probe attached");
	struct fd_count c = count_fds();
	CHECK(c.perf == 1 && c.link == 1,
	      "tracepoint: one perf event and one link (any CPU fires it)");
	double until = now_s() + 30;   /* a bound for a loaded machine, not a time claim */
	while (!s.mine && now_s() < until) {
		syscall(SYS_getpid);
		engine_poll(e, 50);
	}
	CHECK(s.mine > 0, "tracepoint: getpid() record arrives with our pid");
	engine_free(e);
	CHECK(fds_none(), "tracepoint: engine_free leaves no descriptor");
}

static void test_begin_end_percpu(void)
{
	uint32_t n = sizeof(prog_count) / sizeof(prog_count[0]);
	uint32_t nr = sizeof(prog_report) / sizeof(prog_report[0]);
	struct probe probes[] = {
		mkprobe("BEGIN", "BEGIN", NULL, NULL, 0, prog_count, n),
		mkprobe("END", "END", NULL, NULL, 0, prog_count, n),
	};
	struct program prog = mkprogram(probes, 2);
	struct seen s = { 0 };
	struct engine_opts o = { .on_event = on_event, .event_ctx = &s,
				 .pid = 4242, .cpid = 77 };
	struct engine *e;
	int r = engine_load(&prog, &o, &e);
	CHECK(r == 0, "begin/end: load");
	if (r)
		return;
	CHECK(engine_attach(e) == 0, "begin/end: nothing to attach");

	const struct map_reader *mr = engine_map_reader(e);
	struct map_snapshot snap;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t now = (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
	r = mr->dump(mr->ctx, MAP_GLOBALS, &snap);
	struct sonde_globals g = { 0 };
	if (r == 0 && snap.n == 1)
		memcpy(&g, snap.values, sizeof(g));
	CHECK(r == 0 && snap.n == 1 && g.cpid == 77 && g.filter_pid == 4242 &&
	      g.start_ns <= now && now - g.start_ns < 5000000000ull,
	      "globals: start_ns, cpid and filter pid written");
	if (r == 0) {
		free(snap.keys);
		free(snap.values);
	}

	/* BEGIN on CPU 0, END on the last CPU: two per-CPU slots. */
	int ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	sched_setaffinity(0, sizeof(set), &set);
	CHECK(engine_run_begin(e) == 0, "begin: test_run");
	CPU_ZERO(&set);
	CPU_SET(ncpu - 1, &set);
	sched_setaffinity(0, sizeof(set), &set);
	CHECK(engine_run_end(e) == 0, "end: test_run");
	CPU_ZERO(&set);
	for (int i = 0; i < ncpu; i++)
		CPU_SET(i, &set);
	sched_setaffinity(0, sizeof(set), &set);

	r = mr->dump(mr->ctx, MAP_COUNT, &snap);
	CHECK(r == 0 && snap.n == 1 && snap.key_size == 8 &&
	      snap.value_stride == 8 && snap.nvalues >= (uint32_t)ncpu,
	      "per-CPU dump: one key, one value per possible CPU");
	if (r == 0 && snap.n == 1) {
		uint64_t sum = 0, v;
		uint32_t nonzero = 0;
		for (uint32_t c = 0; c < snap.nvalues; c++) {
			memcpy(&v, snap.values + c * snap.value_stride, 8);
			sum += v;
			nonzero += v != 0;
		}
		CHECK(sum == 2, "per-CPU dump: BEGIN and END counted, merged sum 2");
		CHECK(nonzero == (ncpu > 1 ? 2u : 1u),
		      "per-CPU dump: counts kept per CPU");
	}
	if (r == 0) {
		free(snap.keys);
		free(snap.values);
	}
	CHECK(mr->zero(mr->ctx, MAP_COUNT) == 0, "zero: ok");
	r = mr->dump(mr->ctx, MAP_COUNT, &snap);
	bool zeroed = r == 0 && snap.n == 1;
	for (uint32_t c = 0; zeroed && c < snap.nvalues; c++) {
		uint64_t v;
		memcpy(&v, snap.values + c * snap.value_stride, 8);
		zeroed = v == 0;
	}
	CHECK(zeroed, "zero: key kept, every CPU's value 0");
	if (r == 0) {
		free(snap.keys);
		free(snap.values);
	}
	CHECK(mr->clear(mr->ctx, MAP_COUNT) == 0, "clear: ok");
	r = mr->dump(mr->ctx, MAP_COUNT, &snap);
	CHECK(r == 0 && snap.n == 0, "clear: no key left");
	if (r == 0) {
		free(snap.keys);
		free(snap.values);
	}
	CHECK(mr->dump(mr->ctx, MAP_RING, &snap) < 0, "dump: the ring is not a map to read");
	engine_free(e);

	/* BEGIN sees sonde's own pid. */
	struct probe p2[] = {
		mkprobe("BEGIN", "BEGIN", NULL, NULL, 0, prog_report, nr),
	};
	prog = mkprogram(p2, 1);
	memset(&s, 0, sizeof(s));
	r = engine_load(&prog, &o, &e);
	CHECK(r == 0 && engine_run_begin(e) == 0 && engine_drain(e) == 0 &&
	      s.mine == 1, "begin: runs in our own process, record delivered");
	engine_free(e);

	struct probe p3[] = {
		mkprobe("BEGIN", "BEGIN", NULL, NULL, 0, prog_lost,
			sizeof(prog_lost) / sizeof(prog_lost[0])),
		mkprobe("END", "END", NULL, NULL, 0, prog_lost,
			sizeof(prog_lost) / sizeof(prog_lost[0])),
	};
	prog = mkprogram(p3, 2);
	r = engine_load(&prog, &o, &e);
	CHECK(r == 0 && engine_lost_events(e) == 0 && engine_run_begin(e) == 0 &&
	      engine_run_end(e) == 0 && engine_lost_events(e) == 2,
	      "lost events: read from .globals");
	engine_free(e);
	CHECK(engine_lost_events(NULL) == 0, "lost events: NULL engine");
	CHECK(fds_none(), "begin/end: engine_free leaves no descriptor");
}

static void test_interval(void)
{
	struct probe probes[] = {
		mkprobe("interval", "interval:ms:10", "ms", "10", 10,
			prog_report,
			sizeof(prog_report) / sizeof(prog_report[0])),
	};
	struct program prog = mkprogram(probes, 1);
	struct seen s = { .stop_after = 3 };
	struct engine_opts o = { .on_event = on_event, .event_ctx = &s };
	struct engine *e;
	int r = engine_load(&prog, &o, &e);
	CHECK(r == 0, "interval: load");
	if (r)
		return;
	CHECK(engine_attach(e) == 1, "interval: attached");
	double t0 = now_s(), until = t0 + 30;   /* a bound, not a time claim */
	int stopped = 0;
	while (!stopped && now_s() < until)
		stopped = engine_poll(e, 100) == 1;
	double took = now_s() - t0;
	CHECK(stopped && s.records == 3,
	      "interval: fires; a handler's 1 stops the poll");
	CHECK(took > 0.015, "interval: not faster than its period");
	/* After the stop, records are ignored until END. */
	int before = s.records;
	usleep(50000);
	engine_drain(e);
	CHECK(s.records == before, "interval: records after exit() ignored");
	engine_run_end(e);
	CHECK(count_fds().link == 0, "end: every program stopped before END");
	before = s.records;
	usleep(50000);
	engine_drain(e);
	CHECK(s.records == before, "end: nothing fires after END");
	engine_free(e);
	CHECK(fds_none(), "interval: engine_free leaves no descriptor");
}

static void test_software(void)
{
	struct probe probes[] = {
		mkprobe("software", "software:cpu-clock:100000", "cpu-clock",
			"100000", 100000, prog_report,
			sizeof(prog_report) / sizeof(prog_report[0])),
	};
	struct program prog = mkprogram(probes, 1);
	struct seen s = { .stop_after = 1 };
	struct engine_opts o = { .on_event = on_event, .event_ctx = &s };
	struct engine *e;
	int r = engine_load(&prog, &o, &e);
	CHECK(r == 0 && engine_attach(e) == 1, "software: attached");
	CHECK(r == 0 && count_fds().perf == sysconf(_SC_NPROCESSORS_ONLN),
	      "software: one perf event per online CPU");
	double until = now_s() + 30;   /* a bound for a loaded machine, not a time claim */
	while (r == 0 && !s.records && now_s() < until) {
		for (volatile int i = 0; i < 1000000; i++)
			;
		engine_poll(e, 10);
	}
	CHECK(s.records > 0, "software: cpu-clock samples arrive");
	engine_free(e);
	CHECK(fds_none(), "software: engine_free leaves no descriptor");
}

/* Many syscall tracepoints: one dispatcher on raw_syscalls (one event,
 * one link) serves them all, and all of it is released. */
static void test_many(void)
{
	static const char *const events[] = {
		"getcpu", "getcwd", "getdents64", "getegid", "geteuid",
		"getgid", "getgroups", "getitimer", "getpgid", "getpgrp",
		"getpid", "getppid", "getpriority", "getrandom", "getresgid",
		"getresuid", "getrlimit", "getrusage", "getsid", "gettid",
		"gettimeofday", "getuid", "getxattr", "getpeername",
	};
	enum { N = sizeof(events) / sizeof(events[0]) };
	static struct probe probes[N];
	static char names[N][96], funcs[N][64];
	for (int i = 0; i < N; i++) {
		snprintf(funcs[i], sizeof(funcs[i]), "sys_enter_%s", events[i]);
		snprintf(names[i], sizeof(names[i]),
			 "tracepoint:syscalls:sys_enter_%s", events[i]);
		probes[i] = mkprobe("tracepoint", names[i], "syscalls", funcs[i],
				    0, prog_report,
				    sizeof(prog_report) / sizeof(prog_report[0]));
	}
	struct program prog = mkprogram(probes, N);
	struct seen s = { 0 };
	struct engine_opts o = { .on_event = on_event, .event_ctx = &s };
	struct engine *e;
	int r = engine_load(&prog, &o, &e);
	CHECK(r == 0 && engine_attach(e) == N, "many: 24 tracepoints attached");
	struct fd_count c = count_fds();
	CHECK(c.perf == 1 && c.link == 1,
	      "many: one event and link for the syscall dispatcher");
	double t0 = now_s();
	if (r == 0)
		engine_run_end(e);
	c = count_fds();
	CHECK(c.link == 0 && c.perf == 1, "many: END stops programs, events stay");
	engine_free(e);
	printf("#   released %d probes in %.2f s\n", N, now_s() - t0);
	CHECK(fds_none(), "many: engine_free leaves no descriptor");
}

/* Capture stderr while `fn` runs. */
static char *with_stderr(int (*fn)(void *), void *arg, int *ret)
{
	char path[] = "/tmp/sonde-test-engine.XXXXXX";
	int fd = mkstemp(path);
	fflush(stderr);
	int saved = dup(2);
	dup2(fd, 2);
	*ret = fn(arg);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	char *buf = calloc(1, 8192);
	if (buf && pread(fd, buf, 8191, 0) < 0)
		buf[0] = '\0';
	close(fd);
	unlink(path);
	/* Show what a user would see, as comments for the runner. */
	for (const char *l = buf; l && *l;) {
		const char *nl = strchr(l, '\n');
		int len = nl ? (int)(nl - l) : (int)strlen(l);
		printf("#   stderr: %.*s\n", len, l);
		l = nl ? nl + 1 : NULL;
	}
	return buf;
}

static int load_and_attach(void *arg)
{
	struct program *prog = arg;
	struct engine_opts o = { 0 };
	struct engine *e;
	int r = engine_load(prog, &o, &e);
	if (r < 0)
		return r;
	r = engine_attach(e);
	/* Nothing may be left attached after a failed attach, even before
	 * engine_free. */
	struct fd_count c = count_fds();
	if (r < 0 && (c.perf || c.link))
		r = -EBUSY;
	engine_free(e);
	return r;
}

static void test_failures(void)
{
	uint32_t nr = sizeof(prog_report) / sizeof(prog_report[0]);
	struct probe bad[] = {
		mkprobe("tracepoint", "tracepoint:syscalls:sys_enter_getpid",
			"syscalls", "sys_enter_getpid", 0, prog_bad, 1),
	};
	struct program prog = mkprogram(bad, 1);
	int r;
	char *err = with_stderr(load_and_attach, &prog, &r);
	CHECK(r < 0, "verifier: rejected program fails the load");
	CHECK(err && strstr(err, "probe tracepoint:syscalls:sys_enter_getpid: "
			    "the kernel verifier rejected the program: R0 !read_ok"),
	      "verifier: the error names the probe and the reason");
	if (err && !strstr(err, "R0 !read_ok"))
		printf("#   stderr: %s", err);
	free(err);
	CHECK(fds_none(), "verifier: nothing left after a rejected load");
	log_verbose = 1;
	err = with_stderr(load_and_attach, &prog, &r);
	log_verbose = 0;
	CHECK(r < 0 && err && strstr(err, "verifier log for tracepoint:syscalls:"
				     "sys_enter_getpid:\n") &&
	      strstr(err, "(95) exit\nR0 !read_ok\n"),
	      "verifier: -v prints the whole log");
	free(err);

	/* A map the kernel refuses, after others were created. */
	struct map_spec badmaps[4];
	memcpy(badmaps, maps, sizeof(maps));
	badmaps[3] = (struct map_spec){ .name = "@huge", .kind = MAP_HASH,
		.key_size = 8, .value_size = 1u << 30, .max_entries = 1 << 20 };
	prog.maps = badmaps;
	prog.nmaps = 4;
	err = with_stderr(load_and_attach, &prog, &r);
	CHECK(r < 0 && err && strstr(err, "cannot create map @huge"),
	      "maps: a refused map fails the load, named");
	free(err);
	CHECK(fds_none(), "maps: nothing left after a refused map");
	prog = mkprogram(bad, 1);

	struct bpf_insn badmap[] = { LD_MAP(R1, 99), MOV_IMM(R0, 0), EXIT() };
	bad[0].insns = badmap;
	bad[0].ninsns = 4;
	err = with_stderr(load_and_attach, &prog, &r);
	CHECK(r == -EINVAL && err && strstr(err, "map 99"),
	      "load: a reference to a missing map is an error");
	free(err);

	struct probe two[] = {
		mkprobe("tracepoint", "tracepoint:syscalls:sys_enter_getpid",
			"syscalls", "sys_enter_getpid", 0, prog_report, nr),
		mkprobe("software", "software:cpu-clock:", "cpu-clock", NULL,
			0, prog_report, nr),
		mkprobe("tracepoint", "tracepoint:sonde_none:nothing",
			"sonde_none", "nothing", 0, prog_report, nr),
	};
	prog = mkprogram(two, 3);
	err = with_stderr(load_and_attach, &prog, &r);
	CHECK(r < 0 && r != -EBUSY, "attach: a failing probe fails the load or attach");
	CHECK(err && strstr(err, "tracepoint:sonde_none:nothing"),
	      "attach: the error names the failing probe");
	free(err);
	CHECK(fds_none(), "attach failure: nothing left behind");

	/* Attach fails after others succeeded: a bad perf config. */
	struct probe late[] = {
		mkprobe("tracepoint", "tracepoint:syscalls:sys_enter_getpid",
			"syscalls", "sys_enter_getpid", 0, prog_report, nr),
		mkprobe("interval", "interval:s:1", "s", "1", 1, prog_report, nr),
		mkprobe("hardware", "hardware:cycles:1", "cycles", "1",
			1, prog_report, nr),
	};
	prog = mkprogram(late, 3);
	err = with_stderr(load_and_attach, &prog, &r);
	if (r >= 0) {
		printf("ok - late attach failure # SKIP this machine has a PMU\n");
	} else {
		CHECK(r != -EBUSY, "late attach failure: earlier probes released");
		CHECK(err && strstr(err, "hardware:cycles:1"),
		      "late attach failure: names the probe");
	}
	free(err);
	CHECK(fds_none(), "late attach failure: nothing left behind");
}

/* A program that calls bpf_override_return asks its provider first: a
 * tracepoint cannot override; a kprobe needs the error-injection list
 * (which kernels without CONFIG_FUNCTION_ERROR_INJECTION lack). */
static struct bpf_insn prog_override[] = {
	MOV_IMM(R2, -12),
	CALL(BPF_FUNC_override_return),
	MOV_IMM(R0, 0),
	EXIT(),
};

static void test_override(void)
{
	uint32_t n = sizeof(prog_override) / sizeof(prog_override[0]);
	struct probe tp[] = {
		mkprobe("tracepoint", "tracepoint:syscalls:sys_enter_getpid",
			"syscalls", "sys_enter_getpid", 0, prog_override, n),
	};
	struct program prog = mkprogram(tp, 1);
	int r;
	char *err = with_stderr(load_and_attach, &prog, &r);
	CHECK(r < 0 && err && strstr(err, "probe tracepoint:syscalls:"
				     "sys_enter_getpid: this probe type cannot "
				     "override a return"),
	      "override: a tracepoint cannot, said before loading");
	free(err);
	struct probe kp[] = {
		mkprobe("kprobe", "kprobe:vfs_read", NULL, "vfs_read", 0,
			prog_override, n),
	};
	prog = mkprogram(kp, 1);
	err = with_stderr(load_and_attach, &prog, &r);
	if (access("/sys/bus/event_source/devices/kprobe", F_OK) != 0)
		CHECK(r < 0 && err && strstr(err, "this kernel has no kprobes"),
		      "override: without kprobes, said");
	else if (access("/sys/kernel/debug/error_injection/list", R_OK) != 0)
		CHECK(r < 0 && err && strstr(err, "probe kprobe:vfs_read: this "
					     "kernel cannot override returns: no "
					     "error-injection list"),
		      "override: without an error-injection list, said");
	else
		CHECK(r < 0 && err && strstr(err, "vfs_read is not in the "
					     "kernel's error-injection list"),
		      "override: a function not in the list, said");
	free(err);
	CHECK(fds_none(), "override: nothing left behind");
}

int main(void)
{
	arena_init(&prog_arena);
	if (geteuid() != 0) {
		printf("ok - engine # SKIP needs root\n");
		return UNIT_DONE();
	}
	my_pid = getpid();
	CHECK(fds_none(), "start: no BPF descriptors");
	test_tracepoint();
	test_begin_end_percpu();
	test_interval();
	test_software();
	test_many();
	test_failures();
	test_override();
	return UNIT_DONE();
}
