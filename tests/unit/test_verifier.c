/* test_verifier.c - every construct the code generator emits must pass
 * this kernel's verifier. Compiles scripts (parser, sema, codegen), then
 * creates the maps and loads each probe's program with the raw bpf(2)
 * syscall (no libbpf: only src/kernel/ uses it). BEGIN programs are also
 * run with BPF_PROG_TEST_RUN and their maps read back, so the kernel's
 * execution is checked by value, not just accepted. Needs root; prints
 * "ok - ... # SKIP" lines otherwise. */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <linux/bpf.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cg_fixture.h"
#include "unit.h"

static char vlog[1 << 20];

static long sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

static int map_type(enum map_kind k)
{
	switch (k) {
	case MAP_HASH: return BPF_MAP_TYPE_HASH;
	case MAP_PERCPU_HASH: return BPF_MAP_TYPE_PERCPU_HASH;
	case MAP_ARRAY: return BPF_MAP_TYPE_ARRAY;
	case MAP_PERCPU_ARRAY: return BPF_MAP_TYPE_PERCPU_ARRAY;
	case MAP_RINGBUF: return BPF_MAP_TYPE_RINGBUF;
	case MAP_STACK_TRACE: return BPF_MAP_TYPE_STACK_TRACE;
	case MAP_PERF_EVENT_ARRAY: return BPF_MAP_TYPE_PERF_EVENT_ARRAY;
	}
	return -1;
}

struct loaded {
	int map_fd[32];
	uint32_t nmaps;
	int prog_fd[16];
	uint32_t nprogs;
};

static void unload(struct loaded *l)
{
	for (uint32_t i = 0; i < l->nmaps; i++)
		if (l->map_fd[i] >= 0)
			close(l->map_fd[i]);
	for (uint32_t i = 0; i < l->nprogs; i++)
		if (l->prog_fd[i] >= 0)
			close(l->prog_fd[i]);
	memset(l, 0, sizeof(*l));
}

static int create_maps(const struct program *p, struct loaded *l)
{
	for (uint32_t i = 0; i < p->nmaps && i < 32; i++) {
		const struct map_spec *m = &p->maps[i];
		union bpf_attr a = { 0 };
		a.map_type = (uint32_t)map_type(m->kind);
		a.key_size = m->kind == MAP_RINGBUF ? 0 : m->key_size;
		a.value_size = m->kind == MAP_RINGBUF ? 0 : m->value_size;
		a.max_entries = m->kind == MAP_RINGBUF ? 1u << 16 :
			m->max_entries ? m->max_entries : 1;
		l->map_fd[i] = (int)sys_bpf(BPF_MAP_CREATE, &a);
		l->nmaps = i + 1;
		if (l->map_fd[i] < 0) {
			printf("# map %s: %s\n", m->name, strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* Load probe i of the compiled program; prints the verifier's log on
 * failure. Returns the fd or -1. */
static int load_probe(const struct program *p, uint32_t i, struct loaded *l)
{
	const struct probe *pr = &p->probes[i];
	struct bpf_insn *insns = malloc(pr->ninsns * sizeof(*insns));
	memcpy(insns, pr->insns, pr->ninsns * sizeof(*insns));
	for (uint32_t k = 0; k < pr->ninsns; k++)
		if (insns[k].code == (BPF_LD | BPF_DW | BPF_IMM) &&
		    insns[k].src_reg == BPF_PSEUDO_MAP_FD)
			insns[k].imm = l->map_fd[insns[k].imm];
	union bpf_attr a = { 0 };
	a.prog_type = pr->prog_type;
	a.insns = (uint64_t)(uintptr_t)insns;
	a.insn_cnt = pr->ninsns;
	a.license = (uint64_t)(uintptr_t)"GPL";
	a.log_buf = (uint64_t)(uintptr_t)vlog;
	a.log_size = sizeof(vlog);
	a.log_level = 1;
	vlog[0] = 0;
	int fd = (int)sys_bpf(BPF_PROG_LOAD, &a);
	if (fd < 0) {
		/* The last lines say why. */
		size_t len = strlen(vlog);
		const char *tail = len > 1500 ? vlog + len - 1500 : vlog;
		printf("# %s: %s\n# verifier: ...", pr->name, strerror(errno));
		for (const char *c = tail; *c; c++) {
			putchar(*c);
			if (*c == '\n')
				printf("#   ");
		}
		printf("\n");
	}
	free(insns);
	l->prog_fd[l->nprogs++] = fd;
	return fd;
}

static struct cgfx F;
static struct loaded L;

/* Compile text and load every probe; returns the number that failed or
 * -1 if compilation failed. */
static int verify(const char *text)
{
	cgfx_free(&F);
	unload(&L);
	if (cgfx_compile(&F, text)) {
		diags_print(&F.d, stdout);
		return -1;
	}
	if (create_maps(&F.prog, &L))
		return -1;
	int bad = 0;
	for (uint32_t i = 0; i < F.prog.nprobes; i++)
		if (load_probe(&F.prog, i, &L) < 0)
			bad++;
	return bad;
}

static int test_run(int fd)
{
	union bpf_attr a = { 0 };
	uint64_t args[4] = { 0 };
	a.test.prog_fd = (uint32_t)fd;
	a.test.ctx_in = (uint64_t)(uintptr_t)args;
	a.test.ctx_size_in = sizeof(args);
	return (int)sys_bpf(BPF_PROG_TEST_RUN, &a);
}

/* Sum over CPUs of the u64 at `off` in the per-CPU value of key. */
static uint64_t map_value(const char *name, const void *key, uint32_t off,
			  int *found)
{
	int m = program_find_map(&F.prog, name);
	*found = 0;
	if (m < 0)
		return 0;
	const struct map_spec *s = &F.prog.maps[m];
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	bool percpu = s->kind == MAP_PERCPU_HASH || s->kind == MAP_PERCPU_ARRAY;
	size_t stride = (s->value_size + 7) & ~7u;
	uint8_t *val = calloc(percpu ? (size_t)ncpu : 1, stride);
	union bpf_attr a = { 0 };
	a.map_fd = (uint32_t)L.map_fd[m];
	a.key = (uint64_t)(uintptr_t)key;
	a.value = (uint64_t)(uintptr_t)val;
	uint64_t sum = 0;
	if (sys_bpf(BPF_MAP_LOOKUP_ELEM, &a) == 0) {
		*found = 1;
		for (long c = 0; c < (percpu ? ncpu : 1); c++) {
			uint64_t v;
			memcpy(&v, val + (size_t)c * stride + off, 8);
			sum += v;
		}
	}
	free(val);
	return sum;
}

static const struct { const char *name, *text; } cases[] = {
	{ "arithmetic", "BEGIN { $a = 17; $b = 5; printf(\"%d %d %d %d %d %d %d %d %d %d\\n\", "
	  "$a + $b, $a - $b, $a * $b, $a / $b, $a % $b, $a & $b, $a | $b, $a ^ $b, "
	  "$a << 2, $a >> 1); printf(\"%d %d %d\\n\", -$a, ~$a, !$a); }" },
	{ "casts and compares", "BEGIN { $u = (uint64)1; $s = -1; printf(\"%d %d %d %d %d %d\\n\", "
	  "(uint8)257, (int8)255, (int32)4294967295, $u > -1, $s < 1, $s >= $u); }" },
	{ "logic and ternary", "BEGIN { $a = 1; $b = 0; printf(\"%d %d %d\\n\", $a && $b, "
	  "$a || $b, $a ? 10 : 20); if ($a && !$b || $b) { printf(\"x\\n\"); } }" },
	{ "while, break, continue", "BEGIN { $i = 0; while ($i < 100) { $i++; if ($i == 3) "
	  "{ continue; } if ($i == 50) { break; } @seen[$i] = 1; } }" },
	{ "unroll", "BEGIN { $n = 0; unroll(10) { $n += 2; if ($n > 15) { $n = 0; } } "
	  "printf(\"%d\\n\", $n); }" },
	{ "incdec and compound", "BEGIN { $x = 1; $x++; --$x; $x += 4; $x <<= 2; "
	  "@m[1]++; @m[1] += 5; @m[2] = @m[1]--; printf(\"%d\\n\", $x); }" },
	{ "builtins", "BEGIN { printf(\"%d %d %d %d %d %d %d %s %s %p %d %d %d\\n\", pid, tid, "
	  "uid, gid, nsecs, elapsed, cpu, comm, probe, curtask, rand, cgroup, cpid); }" },
	{ "string compare", "BEGIN { $s = \"tester\"; printf(\"%d %d %d %d\\n\", comm == \"bash\", "
	  "$s == comm, strncmp(comm, $s, 3), $s != \"x\"); }" },
	{ "strcontains", "BEGIN { printf(\"%d\\n\", strcontains(comm, \"ash\")); "
	  "$s = str(\"hello world\"); printf(\"%d\\n\", strcontains($s, \"o w\")); }" },
	{ "aggregations", "BEGIN { @c = count(); @s = sum(5); @mn = min(-3); @mx = max(9); "
	  "@a = avg(4); @st = stats(8); @h = hist(1000); @l = lhist(7, 0, 100, 10); "
	  "@ck[comm, pid] = count(); @hk[\"x\"] = hist(-1); }" },
	{ "map values and keys", "BEGIN { @s[1] = \"str\"; @t[\"k\", 2] = (1, \"two\"); "
	  "$v = @s[1]; $t = @t[\"k\", 2]; printf(\"%s %d %s\\n\", $v, $t.0, $t.1); "
	  "delete(@s[1]); }" },
	{ "events", "BEGIN { print(@m); @m[1] = 2; print(@m, 5, 2); print(comm); clear(@m); "
	  "zero(@m); time(\"%H\\n\"); exit(); }" },
	{ "tracepoint fields", "tracepoint:syscalls:sys_enter_openat { "
	  "printf(\"%d %p %s %s %d\\n\", args->fd, args->buf, args->comm, args->filename, "
	  "args->small); @f[args->filename] = count(); @p[str(args->buf)] = count(); }" },
	{ "buf of strings", "BEGIN { $n = 2; printf(\"%r %r %r\\n\", buf(\"abc\", 3), "
	  "buf(comm, $n), buf(\"xyz\", $n)); @b[buf(\"k\", 1)] = count(); }" },
	{ "ntop", "tracepoint:syscalls:sys_enter_openat { printf(\"%s %s %s %s\\n\", "
	  "ntop(args->addr6), ntop(args->addr4), ntop(2, args->fd), "
	  "ntop(args->small, args->addr6)); @[ntop(args->addr4)] = count(); } "
	  "BEGIN { $a = ntop(0x0100007f); print($a); }" },
	{ "tracepoint predicate", "tracepoint:syscalls:sys_enter_openat "
	  "/args->fd > 2 && comm != \"cat\"/ { @[comm] = count(); }" },
	{ "uprobe args", "uprobe:/bin/sh:main { printf(\"%d %d %d %d %d %d %d %d\\n\", "
	  "arg0, arg1, arg2, arg3, arg4, arg5, arg6, arg7); printf(\"%s %s\\n\", "
	  "str(arg0), str(arg1, 4)); $n = arg2; printf(\"%s %r\\n\", str(arg0, $n), "
	  "buf(arg1, $n)); }" },
	{ "uprobe regs", "uprobe:/bin/sh:main { printf(\"%p %p %d\\n\", reg(\"ip\"), "
	  "reg(\"sp\"), sarg0); join(arg1); printf(\"%s %s\\n\", func, usym(arg0)); "
	  "printf(\"%s\\n\", ksym(arg0)); }" },
	{ "uretprobe", "uretprobe:/bin/sh:main { @r = hist(retval); }" },
	{ "stacks", "uprobe:/bin/sh:main { @u[ustack] = count(); @k[kstack(perf, 5)] = count(); "
	  "printf(\"%s\\n\", ustack(3)); } tracepoint:syscalls:sys_enter_openat "
	  "{ @t[kstack] = count(); } interval:s:1 { @i[kstack, ustack] = count(); }" },
	{ "json", "BEGIN { $d = str(\"{\\\"a\\\":{\\\"b\\\":[1,2,{\\\"c\\\":3}]}}\"); "
	  "printf(\"%s %s\\n\", json($d, \"a.b[2].c\"), json($d, \"a\")); "
	  "@[json($d, \"a.b[0]\")] = count(); if (json($d, \"x\") == \"3\") { exit(); } }" },
	{ "json of a user string", "uprobe:/bin/sh:main { printf(\"%s\\n\", "
	  "json(str(arg0), \"k[3].v\")); }" },
	{ "interval", "interval:s:1 { @ticks = count(); printf(\"%d\\n\", elapsed); }" },
	{ "big strings via scratch", "BEGIN { $a = str(\"a\"); $b = str(\"b\"); $c = str(\"c\"); "
	  "$d = str(\"d\"); $e = str(\"e\"); $f = str(\"f\"); $g = str(\"g\"); "
	  "$h = str(\"h\"); $i = str(\"i\"); $j = str(\"j\"); "
	  "printf(\"%s%s%s%s%s%s%s%s%s%s\\n\", $a, $b, $c, $d, $e, $f, $g, $h, $i, $j); "
	  "@m[$a, $b, $c] = count(); if ($a == $b) { printf(\"eq\\n\"); } }" },
	{ "register pressure", "BEGIN { $a = 1; $b = 2; $c = 3; $d = 4; $e = 5; $f = 6; "
	  "$g = 7; printf(\"%d %d %d %d %d %d %d %d %d %d %d %d\\n\", $a, $b, $c, $d, $e, $f, "
	  "$g, pid, $a + $b, $c * $d, nsecs, $a + $b + $c + $d + $e + $f + $g); "
	  "@x[$a, $b, $c, $d] = sum($e + $f + $g); }" },
	{ "multiple probes", "BEGIN { @a = 1; } END { @b = 2; } "
	  "tracepoint:syscalls:sys_enter_openat, tracepoint:syscalls:sys_exit_openat "
	  "{ @c[probe] = count(); }" },
};

static void test_load_all(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		char name[128];
		snprintf(name, sizeof(name), "verifier accepts: %s", cases[i].name);
		CHECK(verify(cases[i].text) == 0, name);
	}
}

/* Copied user stacks (the default ustack): the page-by-page copy into
 * the ring record must pass in every context that can ask for one, with
 * the smallest and the largest copies. */
static void test_ustack_copy(void)
{
	static const uint32_t sizes[] = { 4096, 8192, 65536 };
	const char *text = "uprobe:/bin/sh:main { @u[ustack] = count(); "
		"printf(\"%s %s\\n\", ustack(3), ustack(perf)); print(ustack); "
		"@v = ustack(5); } tracepoint:syscalls:sys_enter_openat "
		"{ @t[ustack, kstack] = count(); } "
		"profile:hz:99 { @p[comm, ustack] = count(); }";
	for (size_t i = 0; i < sizeof(sizes) / sizeof(*sizes); i++) {
		char name[128];
		cgfx_ustack_copy = sizes[i];
		snprintf(name, sizeof(name), "verifier accepts: copied ustack, "
			 "%u bytes, uprobe/tracepoint/profile", sizes[i]);
		CHECK(verify(text) == 0, name);
	}
	cgfx_ustack_copy = 0;
}

/* Run BEGIN in the kernel and read the maps it wrote. */
static void test_execute(void)
{
	int ok = verify("BEGIN { @c = count(); @c = count(); @s = sum(40); @s = sum(2); "
			"@mn = min(5); @mn = min(-3); @h = hist(1000); "
			"@l = lhist(37, 0, 100, 10); @k[\"ab\", 3] = 7; @k[\"ab\", 3] += 1; "
			"$i = 0; while ($i < 20) { $i++; } @i = $i; @p = pid; }") == 0;
	CHECK(ok, "kernel run: loads");
	if (!ok)
		return;
	CHECK(test_run(L.prog_fd[0]) == 0, "kernel run: BEGIN via BPF_PROG_TEST_RUN");
	int f;
	uint64_t zero[2] = { 0, 0 };
	CHECK(map_value("@c", zero, 0, &f) == 2 && f, "kernel run: count");
	CHECK(map_value("@s", zero, 0, &f) == 42 && f, "kernel run: sum");
	CHECK((int64_t)map_value("@mn", zero, 0, &f) == -3 && f, "kernel run: min");
	uint64_t hk[2] = { 0, 11 };
	CHECK(map_value("@h", hk, 0, &f) == 1 && f, "kernel run: hist(1000) in bucket 11");
	uint64_t lk[2] = { 0, 4 };
	CHECK(map_value("@l", lk, 0, &f) == 1 && f, "kernel run: lhist(37, 0, 100, 10) in bucket 4");
	int m = program_find_map(&F.prog, "@k");
	uint8_t *key = calloc(1, m >= 0 ? F.prog.maps[m].key_size : 8);
	memcpy(key, "ab", 3);
	uint64_t three = 3;
	if (m >= 0)
		memcpy(key + F.prog.maps[m].key_type->offsets[1], &three, 8);
	CHECK(map_value("@k", key, 0, &f) == 8 && f, "kernel run: tuple key with string");
	free(key);
	CHECK(map_value("@i", zero, 0, &f) == 20 && f, "kernel run: loop count");
}

/* The differential corpus (scripts compared against bpftrace) must load
 * too. Scripts the fixture cannot compile (fields of real tracepoints)
 * are left to the system tests. */
static void test_corpus(void)
{
	glob_t g;
	const char *dir = getenv("SONDE_SRCDIR");
	char diffdir[512];
	snprintf(diffdir, sizeof(diffdir), "%s/tests/diff", dir ? dir : ".");
	/* in tests/diff, as tests/diff/run: a script's own #include "x.h"
	 * is looked up from the working directory, as bpftrace's is */
	int cwd = open(".", O_RDONLY | O_DIRECTORY);
	if (cwd < 0 || chdir(diffdir) != 0 || glob("*.bt", 0, NULL, &g) != 0) {
		printf("ok - corpus # SKIP no tests/diff here\n");
		if (cwd >= 0 && fchdir(cwd) != 0)
			printf("# cannot return to the working directory\n");
		if (cwd >= 0)
			close(cwd);
		return;
	}
	for (size_t i = 0; i < g.gl_pathc; i++) {
		FILE *f = fopen(g.gl_pathv[i], "r");
		static char text[1 << 16];
		size_t n = f ? fread(text, 1, sizeof(text) - 1, f) : 0;
		if (f)
			fclose(f);
		text[n] = 0;
		const char *base = g.gl_pathv[i];
		char name[256];
		struct cgfx fx;
		int rc = cgfx_compile(&fx, text);
		int sema_only = rc == -2;
		/* uaddr() reads the symbol from the probed file, which a
		 * path given as $1 names only at run time */
		int needs_file = strstr(text, "uaddr(") &&
				 strstr(text, "probe:$1:");
		cgfx_free(&fx);
		snprintf(name, sizeof(name), "verifier accepts corpus %s%s", base,
			 sema_only ? " # SKIP needs real tracepoint fields" :
			 needs_file ? " # SKIP needs the probed file" : "");
		if (sema_only || needs_file) {
			printf("ok - %s\n", name);
			continue;
		}
		CHECK(verify(text) == 0, name);
	}
	globfree(&g);
	if (fchdir(cwd) != 0)
		printf("# cannot return to the working directory\n");
	close(cwd);
}

int main(void)
{
	if (geteuid() != 0) {
		printf("ok - verifier tests # SKIP not root\n");
		return UNIT_DONE();
	}
	test_load_all();
	test_ustack_copy();
	test_execute();
	test_corpus();
	cgfx_free(&F);
	unload(&L);
	return UNIT_DONE();
}
