/* test_providers.c - the provider table: names and aliases, attach-point
 * checks with bpftrace's messages, canonical probe names, globbing, -l
 * matching, and the perf events each provider asks for. */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <unistd.h>

#include "probes/probe_util.h"
#include "probes/provider.h"
#include "unit.h"
#include "base/glob.h"

struct parsed {
	int r;
	struct attach_point n;
	const char *msg;       /* first diagnostic, or NULL */
	const char *tag;
	const char *names[8];  /* expanded probe names */
	uint64_t freq[8];
	int nnames;
	const struct provider *pv;
};

static struct arena arena;

static int emit(void *arg, const char *target, const char *func, uint64_t freq)
{
	struct parsed *p = arg;
	if (p->nnames < 8) {
		const char *name = p->pv->name;
		if (target && func)
			name = arena_printf(&arena, "%s:%s:%s", name, target, func);
		else if (target)
			name = arena_printf(&arena, "%s:%s", name, target);
		else if (func)
			name = arena_printf(&arena, "%s:%s", name, func);
		p->freq[p->nnames] = freq;
		p->names[p->nnames] = name;
	}
	p->nnames++;
	return 0;
}

/* Parse and expand one attach point as compile.c does. */
static struct parsed run(const char *text)
{
	struct parsed p = { 0 };
	struct diag_source src = { .name = "test", .text = text };
	struct diags d;
	diags_init(&d, &src);
	struct expand_ctx ctx = { .arena = &arena, .diags = &d };
	p.n.text = text;
	const char *colon = strchr(text, ':');
	p.n.provider = colon ?
		arena_strndup(&arena, text, (size_t)(colon - text)) : text;
	p.pv = provider_find(p.n.provider);
	if (!p.pv) {
		p.r = -ENOENT;
	} else {
		p.r = p.pv->parse(&p.n, &ctx);
		if (p.r == 0)
			p.r = p.pv->expand(&p.n, &ctx, emit, &p);
	}
	if (d.list.n) {
		p.msg = arena_strdup(&arena, d.list.v[0].msg);
		p.tag = d.list.v[0].tag;
	}
	diags_free(&d);
	return p;
}

static void expect_error(const char *text, const char *msg)
{
	struct parsed p = run(text);
	char name[256];
	snprintf(name, sizeof(name), "%s: rejected: %s", text, msg);
	CHECK(p.r < 0, name);
	CHECK_STR(p.msg, msg, name);
}

static void expect_probe(const char *text, const char *name, uint64_t freq)
{
	struct parsed p = run(text);
	char check[256];
	snprintf(check, sizeof(check), "%s: is %s", text, name);
	CHECK(p.r == 0 && p.nnames == 1 && p.freq[0] == freq, check);
	CHECK_STR(p.nnames ? p.names[0] : NULL, name, check);
}

static void test_find(void)
{
	static const char *const names[][2] = {
		{ "BEGIN", "BEGIN" }, { "END", "END" },
		{ "interval", "interval" }, { "i", "interval" },
		{ "tracepoint", "tracepoint" }, { "t", "tracepoint" },
		{ "software", "software" }, { "s", "software" },
		{ "hardware", "hardware" }, { "h", "hardware" },
		{ "profile", "profile" }, { "p", "profile" },
		{ "k", "kprobe" }, { "kr", "kretprobe" },
		{ "rt", "rawtracepoint" },
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const struct provider *pv = provider_find(names[i][0]);
		char check[64];
		snprintf(check, sizeof(check), "find %s -> %s", names[i][0],
			 names[i][1]);
		CHECK(pv && strcmp(pv->name, names[i][1]) == 0, check);
	}
	/* bpftrace 0.24: names in any case; the short aliases keep theirs */
	CHECK(provider_find("begin") == provider_find("BEGIN") &&
	      provider_find("Interval") == provider_find("interval"),
	      "find: names are case-insensitive");
	CHECK(provider_find("U") != provider_find("u"),
	      "find: the aliases u and U stay two providers");
	CHECK(provider_find("nope") == NULL, "find: unknown is NULL");
	CHECK(provider_find(NULL) == NULL, "find: NULL is NULL");
	bool all_parse = true;
	for (const struct provider *const *p = providers; *p; p++)
		all_parse &= (*p)->parse && (*p)->expand && (*p)->attach;
	CHECK(all_parse, "table: every provider parses, expands, attaches");
	CHECK(provider_find("BEGIN")->prog_type == BPF_PROG_TYPE_RAW_TRACEPOINT,
	      "BEGIN runs as a raw tracepoint program (test_run)");

	/* capabilities: what the compiler and the engines ask instead of
	 * a provider's name */
	bool mem_one = true;
	for (const struct provider *const *p = providers; *p; p++) {
		uint32_t m = (*p)->caps & (PROBE_USER_MEM | PROBE_KERNEL_MEM);
		if (!((*p)->caps & PROBE_RUNS_ONCE))
			mem_one &= m == PROBE_USER_MEM || m == PROBE_KERNEL_MEM;
	}
	CHECK(mem_one, "caps: every probe reads user or kernel memory, not both");
	CHECK(provider_find("BEGIN")->caps & PROBE_RUNS_ONCE &&
	      provider_find("END")->caps & PROBE_RUNS_ONCE &&
	      !(provider_find("interval")->caps & PROBE_RUNS_ONCE),
	      "caps: BEGIN and END run once");
	struct arena a;
	arena_init(&a);
	const char *ret = provider_names_with(&a, PROBE_RETVAL);
	CHECK(strstr(ret, "fexit") && strstr(ret, "uretprobe") &&
	      !strstr(ret, "usdt"), "caps: the names of the providers with retval");
	CHECK(strcmp(provider_names_with(&a, PROBE_RUNS_ONCE),
		     "BEGIN, bench and END") == 0,
	      "caps: names joined with ', ' and 'and'");
	arena_free(&a);
}

static void test_glob(void)
{
	CHECK(glob_match("*", ""), "glob: * matches empty");
	CHECK(glob_match("sys_enter_*", "sys_enter_read"), "glob: prefix");
	CHECK(!glob_match("sys_enter_*", "sys_exit_read"), "glob: prefix miss");
	CHECK(glob_match("*read*", "sys_enter_readv"), "glob: infix");
	CHECK(glob_match("a*b*c", "axxbyybzc"), "glob: backtracking");
	CHECK(!glob_match("a*b*c", "axxbyybz"), "glob: backtracking miss");
	CHECK(glob_match("sys_enter_getpp?d", "sys_enter_getppid"), "glob: ?");
	CHECK(!glob_match("?", ""), "glob: ? needs a character");
	CHECK(glob_match("abc", "abc") && !glob_match("abc", "abcd"),
	      "glob: literal is exact");
}

static void test_numbers(void)
{
	static const struct { const char *s; uint64_t v; } good[] = {
		{ "1", 1 }, { "1_000", 1000 }, { "0x10", 16 }, { "010", 8 },
		{ "1e3", 1000 }, { "1E3", 1000 }, { "+5", 5 }, { " 5", 5 },
		{ "18446744073709551615", UINT64_MAX },
	};
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		uint64_t v = 0;
		const char *why = NULL;
		char check[64];
		snprintf(check, sizeof(check), "number: %s", good[i].s);
		CHECK(ap_parse_u64(good[i].s, &v, &why) == 0 && v == good[i].v,
		      check);
	}
	static const char *const bad[] = {
		"", "abc", "1k", "1.5e3", "1e", "-1", "99999999999999999999",
		"1e20", "0x",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint64_t v;
		const char *why = NULL;
		char check[64];
		snprintf(check, sizeof(check), "number: '%s' rejected", bad[i]);
		CHECK(ap_parse_u64(bad[i], &v, &why) == -EINVAL && why, check);
	}
}

static void test_parse(void)
{
	expect_probe("BEGIN", "BEGIN", 0);
	expect_probe("END", "END", 0);
	expect_error("BEGIN:x", "BEGIN probe type requires 0 arguments");

	expect_probe("interval:s:1", "interval:s:1", 1);
	expect_probe("i:ms:1e3", "interval:ms:1000", 1000);
	expect_probe("i:hz:99", "interval:hz:99", 99);
	expect_probe("interval:us:0x10", "interval:us:16", 16);
	expect_error("interval:s", "interval probe type requires 2 arguments");
	expect_error("interval:s:1:2", "interval probe type requires 2 arguments");
	expect_error("interval", "interval probe type requires 2 arguments");
	expect_error("interval:x:1", "x is not an accepted unit of time");
	expect_error("interval:ns:100", "ns is not an accepted unit of time");
	expect_error("interval:s:0", "interval period should be a positive integer");
	expect_error("interval:s:abc", "interval: 'abc' is not a number");
	expect_error("interval:s:1k",
		     "interval: '1k' has trailing characters that are not digits");

	expect_probe("profile:hz:99", "profile:hz:99", 99);
	expect_probe("p:ms:10", "profile:ms:10", 10);
	expect_error("profile:hz", "profile probe type requires 2 arguments");
	expect_error("profile:hz:0", "profile frequency should be a positive integer");
	expect_error("profile:x:1", "x is not an accepted unit of time");

	expect_probe("software:cpu-clock:1000", "software:cpu-clock:1000", 1000);
	expect_probe("s:cs", "software:cs", 0);
	expect_probe("software:faults:1", "software:faults:1", 1);
	expect_error("software:foo:1", "foo is not a software probe");
	expect_error("software:*:1", "wildcards are not allowed for software probe type");
	expect_error("software:cpu:1:2", "software probe type requires 1 or 2 arguments");
	expect_error("software", "software probe type requires 1 or 2 arguments");
	expect_probe("h:cycles", "hardware:cycles", 0);
	expect_error("hardware:bogus", "bogus is not a hardware probe");

	expect_error("tracepoint:syscalls", "tracepoint probe type requires 2 arguments");
	expect_error("t:a:b:c", "tracepoint probe type requires 2 arguments");

	/* kprobes: the offset rides in freq; the kernel judges the name */
	expect_probe("kprobe:vfs_read", "kprobe:vfs_read", 0);
	expect_probe("k:vfs_read+0x10", "kprobe:vfs_read", 16);
	expect_probe("kr:vfs_read", "kretprobe:vfs_read", 0);
	expect_error("kprobe", "kprobe probe type requires 1 argument: "
		     "'kprobe:FUNCTION[+OFFSET]' (got 'kprobe')");
	expect_error("kprobe:a:b", "kprobe probe type requires 1 argument: "
		     "'kprobe:FUNCTION[+OFFSET]' (got 'kprobe:a:b')");
	expect_error("kr:vfs_read+4", "kr:vfs_read+4: a kretprobe cannot take "
		     "an offset ('vfs_read+4')");
	expect_error("k:vfs_*+4", "k:vfs_*+4: an offset cannot follow a wildcard");
	expect_error("k:vfs_read+x", "k:vfs_read+x: the offset 'x' is not a number");
	expect_error("k:+4", "k:+4: the offset '4' has no function before it");
	if (access("/sys/bus/event_source/devices/kprobe", F_OK) != 0) {
		struct parsed kp = run("k:vfs_rea*");
		CHECK(kp.r < 0 && kp.tag && strcmp(kp.tag, "NO_KPROBES") == 0 &&
		      strstr(kp.msg, "this kernel has no kprobes"),
		      "kprobe wildcard without kprobes: says so (NO_KPROBES)");
		struct attach_req req = { 0 };
		struct probe pr = { .provider = provider_find("kprobe"),
				    .func = "vfs_read" };
		CHECK(pr.provider->attach(&pr, &req) == -EOPNOTSUPP &&
		      req.error && strstr(req.error, "this kernel has no kprobes"),
		      "kprobe attach without kprobes: says so");
	}

	expect_probe("rt:sched_switch", "rawtracepoint:sched_switch", 0);
	expect_probe("rawtracepoint:vmlinux:sched_switch",
		     "rawtracepoint:sched_switch", 0);
	expect_error("rawtracepoint", "rawtracepoint probes take one "
		     "tracepoint event: 'rawtracepoint:EVENT' (got 'rawtracepoint')");

	struct parsed p = run("t:syscalls:sys_enter_read");
	CHECK(p.r == 0 || p.r == -ENOENT, "tracepoint: parse ok");
	CHECK_STR(p.n.provider, "tracepoint", "tracepoint: alias canonical");
	CHECK_STR(p.n.target, "syscalls", "tracepoint: category");
	CHECK_STR(p.n.func, "sys_enter_read", "tracepoint: event");
}

static void test_tracepoint_expand(void)
{
	if (access("/sys/kernel/tracing/events/syscalls", R_OK) != 0) {
		printf("ok - tracepoint expansion # SKIP tracefs not readable\n");
		return;
	}
	expect_probe("t:syscalls:sys_enter_getppid",
		     "tracepoint:syscalls:sys_enter_getppid", 0);
	struct parsed p = run("tracepoint:syscalls:sys_*_getppid");
	CHECK(p.r == 0 && p.nnames == 2, "wildcard: two getppid events");
	if (p.nnames == 2) {
		CHECK_STR(p.names[0], "tracepoint:syscalls:sys_enter_getppid",
			  "wildcard: sorted, enter first");
		CHECK_STR(p.names[1], "tracepoint:syscalls:sys_exit_getppid",
			  "wildcard: then exit");
	}
	p = run("t:sysc?lls:sys_enter_getpp*");
	CHECK(p.r == 0 && p.nnames == 1, "wildcard: ? in the category");
	expect_error("t:foo:bar", "tracepoint not found: foo:bar");
	expect_error("t:foo*:bar", "tracepoints not found: foo*:bar");
	expect_error("tracepoint::x", "tracepoint not found: :x");
	expect_error("t:syscalls:../../x", "tracepoint not found: syscalls:../../x");
	p = run("t:foo:bar");
	CHECK_STR(p.tag, "NO_MATCH", "not found: tag NO_MATCH");

	/* args of one expanded probe. */
	const struct provider *tp = provider_find("tracepoint");
	struct probe pr = { .provider = tp, .target = "sched",
			    .func = "sched_switch" };
	struct expand_ctx ctx = { .arena = &arena };
	const struct type *t = tp->args_type(&pr, &ctx);
	CHECK(t && t->kind == TYPE_RECORD && t->nfields == 7,
	      "args: sched_switch record from tracefs");
	pr.func = "no_such_event";
	CHECK(tp->args_type(&pr, &ctx) == NULL, "args: NULL for a missing event");

	/* The perf event it asks for. */
	pr.func = "sched_switch";
	struct attach_req req = { 0 };
	CHECK(tp->attach(&pr, &req) == 1 && req.how == ATTACH_PERF_EVENT &&
	      req.perf_type == PERF_TYPE_TRACEPOINT && req.perf_config > 0 &&
	      req.sample_period == 1 && !req.all_cpus && req.pid == -1,
	      "attach: tracepoint id, one event");
	pr.func = "no_such_event";
	CHECK(tp->attach(&pr, &req) == -ENOENT, "attach: missing event -ENOENT");
}

static void test_attach_reqs(void)
{
	struct attach_req req = { 0 };
	struct probe pr = { .target = "ms", .freq = 10 };
	const struct provider *pv = provider_find("interval");
	CHECK(pv->attach(&pr, &req) == 1 && req.perf_type == PERF_TYPE_SOFTWARE &&
	      req.perf_config == PERF_COUNT_SW_CPU_CLOCK &&
	      req.sample_period == 10000000 && !req.all_cpus,
	      "interval:ms:10: cpu-clock, 10 ms, one CPU");
	pr.target = "hz";
	pr.freq = 100;
	CHECK(pv->attach(&pr, &req) == 1 && req.sample_period == 10000000,
	      "interval:hz:100: a 10 ms period");
	pv = provider_find("profile");
	CHECK(pv->attach(&pr, &req) == 1 && req.all_cpus,
	      "profile: every CPU");
	pv = provider_find("software");
	pr.target = "cs";
	pr.freq = 0;
	CHECK(pv->attach(&pr, &req) == 1 &&
	      req.perf_config == PERF_COUNT_SW_CONTEXT_SWITCHES &&
	      req.sample_period == 1000 && req.all_cpus,
	      "software:cs: context switches, default 1000, every CPU");
	pr.target = "page-faults";
	pr.freq = 7;
	CHECK(pv->attach(&pr, &req) == 1 &&
	      req.perf_config == PERF_COUNT_SW_PAGE_FAULTS &&
	      req.sample_period == 7, "software:page-faults:7");
	pv = provider_find("BEGIN");
	CHECK(pv->attach(&pr, &req) == 1 && req.how == ATTACH_TEST_RUN &&
	      !req.at_end, "BEGIN: test run, at start");
	pv = provider_find("END");
	CHECK(pv->attach(&pr, &req) == 1 && req.how == ATTACH_TEST_RUN &&
	      req.at_end, "END: test run, at end");
}

static void test_list_match(void)
{
	const struct provider *tp = provider_find("tracepoint");
	const struct provider *sw = provider_find("software");
	const char *n = "tracepoint:syscalls:sys_enter_openat";
	CHECK(provider_list_match(tp, NULL, n), "list: no pattern lists all");
	CHECK(provider_list_match(tp, "tracepoint:syscalls:sys_enter_open*", n),
	      "list: full pattern");
	CHECK(provider_list_match(tp, "t:syscalls:sys_enter_open*", n),
	      "list: alias in the pattern");
	CHECK(provider_list_match(tp, "sys_enter_open*", n),
	      "list: bare pattern matches the event name");
	CHECK(!provider_list_match(tp, "syscalls*", n),
	      "list: bare pattern is not matched against the category");
	CHECK(!provider_list_match(tp, "software:*", n),
	      "list: another provider's pattern");
	CHECK(!provider_list_wants(tp, "software:*") &&
	      provider_list_wants(sw, "s:*") && provider_list_wants(sw, "x*"),
	      "list: wants");
	CHECK(!provider_list_match(tp, "tracepoint:syscalls", n),
	      "list: no implicit wildcard");

	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int r = sw->list("software:cpu*", 0, f);
	fclose(f);
	CHECK(r == 2, "list software:cpu*: two events");
	CHECK_STR(buf, "software:cpu-clock:\nsoftware:cpu-migrations:\n",
		  "list software:cpu*: names");
	free(buf);
}

int main(void)
{
	arena_init(&arena);
	test_find();
	test_glob();
	test_numbers();
	test_parse();
	test_tracepoint_expand();
	test_attach_reqs();
	test_list_match();
	arena_free(&arena);
	return UNIT_DONE();
}
