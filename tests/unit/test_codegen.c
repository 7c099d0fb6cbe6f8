/* test_codegen.c - code generation without a kernel: scripts go through
 * parser, sema and codegen, and the bytecode runs in the test
 * interpreter against emulated maps and ring buffer, so each construct's
 * semantics (bpftrace 0.17's, where it is particular) are checked by
 * value. test_verifier.c proves the same programs load in the kernel. */
#include <stddef.h>
#include <stdlib.h>

#include "cg_fixture.h"
#include "unit.h"

static struct cgfx F;
static struct emu E;

static void reset(void)
{
	cgfx_free(&F);
	emu_free(&E);
	memset(&E, 0, sizeof(E));
}

/* Compile and run every probe of `text` in order; returns 0 on success. */
static int run(const char *text)
{
	reset();
	if (cgfx_compile(&F, text)) {
		diags_print(&F.d, stdout);
		memset(&E, 0, sizeof(E));
		return -1;
	}
	emu_init(&E, &F.prog);
	for (uint32_t i = 0; i < F.prog.nprobes; i++)
		if (emu_run(&E, i) < 0) {
			printf("# probe %u: %s\n", i, E.in.error);
			return -1;
		}
	return 0;
}

/* Offset in record r of argument i, from the event's layout. */
static uint32_t argoff(uint32_t r, uint32_t i)
{
	uint64_t id = rec_u64(&E, r, 0);
	if (id >= F.prog.nevents || !F.prog.events[id].args ||
	    i >= F.prog.events[id].args->nfields)
		return 1u << 30;
	return 8 + F.prog.events[id].args->offsets[i];
}

/* The i-th argument (as a u64) of record r. */
static uint64_t arg(uint32_t r, uint32_t i)
{
	return rec_u64(&E, r, argoff(r, i));
}

static const char *sarg(uint32_t r, uint32_t i)
{
	return rec_str(&E, r, argoff(r, i));
}

static void test_arith(void)
{
	CHECK(run("BEGIN { $a = 17; $b = 5; printf(\"%d %d %d %d %d %d %d %d %d %d\", "
		  "$a + $b, $a - $b, $a * $b, $a / $b, $a % $b, $a & $b, $a | $b, "
		  "$a ^ $b, $a << 2, $a >> 1); }") == 0, "arith: compiles and runs");
	uint64_t want[] = { 22, 12, 85, 3, 2, 1, 21, 20, 68, 8 };
	int good = E.nrecords == 1;
	for (int i = 0; i < 10 && good; i++)
		good = arg(0, (uint32_t)i) == want[i];
	CHECK(good, "arith: + - * / % & | ^ << >>");
	CHECK(rec_u64(&E, 0, 0) == 0, "arith: record starts with event id");

	CHECK(run("BEGIN { $a = -7; $z = 0; printf(\"%d %d %d %d %d %d %d\", "
		  "$a / 2, $a % 3, -8 >> 1, -$a, ~$a, !$a, $a / $z); }") == 0,
	      "arith: signed operands");
	CHECK(arg(0, 0) == (uint64_t)-7 / 2, "arith: division is unsigned (bpftrace 0.17)");
	CHECK(arg(0, 1) == (uint64_t)-7 % 3, "arith: modulo is unsigned");
	CHECK(arg(0, 2) == (uint64_t)-8 >> 1, "arith: >> is logical");
	CHECK(arg(0, 3) == 7 && arg(0, 4) == 6 && arg(0, 5) == 0,
	      "arith: unary - ~ !");
	CHECK(arg(0, 6) == 0, "arith: division by zero gives 0 (BPF)");

	CHECK(run("BEGIN { printf(\"%d %d %d %d %d %d\", (uint8)257, (int8)255, "
		  "(uint16)65537, (int32)4294967295, (uint32)-1, (int16)-32769); }") == 0,
	      "casts: compile");
	CHECK(arg(0, 0) == 1 && arg(0, 1) == (uint64_t)-1 && arg(0, 2) == 1 &&
	      arg(0, 3) == (uint64_t)-1 && arg(0, 4) == 4294967295u &&
	      arg(0, 5) == 32767, "casts: truncate and sign-extend");

	CHECK(run("BEGIN { $u = (uint64)1; $s = -1; printf(\"%d %d %d %d %d %d\", "
		  "$u > -1, $s < 1, 3 <= 3, 2 >= 3, 1 == 1, 1 != 1); }") == 0,
	      "compare: compile");
	CHECK(arg(0, 0) == 0 && arg(0, 1) == 1 && arg(0, 2) == 1 &&
	      arg(0, 3) == 0 && arg(0, 4) == 1 && arg(0, 5) == 0,
	      "compare: signed only when both sides are signed");

	CHECK(run("BEGIN { $a = 1; $b = 0; printf(\"%d %d %d %d %d %d\", "
		  "$a && $b, $a || $b, $b && $a, $b || $b, $a && !$b, "
		  "$a ? 10 : 20); }") == 0, "logic: compile");
	CHECK(arg(0, 0) == 0 && arg(0, 1) == 1 && arg(0, 2) == 0 &&
	      arg(0, 3) == 0 && arg(0, 4) == 1 && arg(0, 5) == 10,
	      "logic: && || ! ?:");
}

static void test_control(void)
{
	CHECK(run("BEGIN { $i = 0; $s = 0; while ($i < 10) { $i++; "
		  "if ($i == 3) { continue; } if ($i == 7) { break; } $s += $i; } "
		  "printf(\"%d %d\", $i, $s); }") == 0, "while: compiles");
	CHECK(arg(0, 0) == 7 && arg(0, 1) == 1 + 2 + 4 + 5 + 6,
	      "while: continue and break");
	CHECK(run("BEGIN { $n = 0; unroll(5) { $n += 2; } printf(\"%d\", $n); }") == 0 &&
	      arg(0, 0) == 10, "unroll: body replicated");
	CHECK(run("BEGIN { $x = 5; if ($x > 10) { $y = 1; } else if ($x > 3) "
		  "{ $y = 2; } else { $y = 3; } printf(\"%d\", $y); }") == 0 &&
	      arg(0, 0) == 2, "if / else if / else");
	CHECK(run("BEGIN { printf(\"a\"); exit(); printf(\"b\"); }") == 0 &&
	      E.nrecords == 2, "exit: ends the probe after its event");
	CHECK(run("BEGIN { printf(\"a\"); return; printf(\"b\"); }") == 0 &&
	      E.nrecords == 1, "return: ends the probe");
	CHECK(run("BEGIN /1 == 2/ { printf(\"a\"); } BEGIN /1 == 1/ "
		  "{ printf(\"b\"); }") == 0 && E.nrecords == 1 &&
	      rec_u64(&E, 0, 0) == 1, "predicate: false skips the body");
	CHECK(run("BEGIN { $x = 0; $y = 0; $x++; $y--; ++$x; "
		  "printf(\"%d %d %d\", $x, $y, $x++); }") == 0 &&
	      arg(0, 0) == 2 && arg(0, 1) == (uint64_t)-1 && arg(0, 2) == 2,
	      "incdec on variables");
	CHECK(run("BEGIN { $a = 6; $a *= 7; $a -= 2; $a /= 4; $a <<= 2; $a |= 1; "
		  "$a %= 7; $a ^= 3; $a &= 6; $a >>= 1; printf(\"%d\", $a); }") == 0,
	      "compound assignment compiles");
	{
		uint64_t a = 6; a *= 7; a -= 2; a /= 4; a <<= 2; a |= 1;
		a %= 7; a ^= 3; a &= 6; a >>= 1;
		CHECK(arg(0, 0) == a, "compound assignment on variables");
	}
}

static void test_builtins(void)
{
	CHECK(run("BEGIN { printf(\"%d %d %d %d %d %d %d %s %s\", pid, tid, uid, gid, "
		  "nsecs, elapsed, cpu, comm, probe); }") == 0, "builtins: compile");
	CHECK(arg(0, 0) == 1234 && arg(0, 1) == 1235, "builtins: pid and tid");
	CHECK(arg(0, 2) == 7 && arg(0, 3) == 5, "builtins: uid and gid");
	CHECK(arg(0, 4) == 1000000 && arg(0, 5) == 600000,
	      "builtins: nsecs and elapsed from globals.start_ns");
	CHECK(arg(0, 6) == 1, "builtins: cpu");
	CHECK_STR(sarg(0, 7), "tester", "builtins: comm");
	CHECK(sarg(0, 7)[15] == 0, "builtins: comm NUL-padded");
	CHECK_STR(sarg(0, 8), "BEGIN", "builtins: probe name");
}

static void test_strings(void)
{
	CHECK(run("BEGIN { $s = \"tester\"; printf(\"%d %d %d %d %d %d %d %d\", "
		  "comm == \"tester\", comm == \"test\", comm != \"tester\", "
		  "$s == comm, \"ab\" == \"ab\", strncmp(comm, \"tex\", 2), "
		  "strncmp(comm, \"tex\", 3), $s == \"testers\"); }") == 0,
	      "strings: compare compiles");
	CHECK(arg(0, 0) == 1 && arg(0, 1) == 0 && arg(0, 2) == 0 &&
	      arg(0, 3) == 1 && arg(0, 4) == 1, "strings: == and !=");
	CHECK(arg(0, 5) == 0 && arg(0, 6) == 1, "strings: strncmp is 0 on a match");
	CHECK(arg(0, 7) == 0, "strings: longer literal differs");
	CHECK(run("BEGIN { printf(\"%d %d %d %d\", strcontains(comm, \"ste\"), "
		  "strcontains(comm, \"xyz\"), strcontains(comm, \"\"), "
		  "strcontains(comm, \"testerr\")); }") == 0,
	      "strcontains: compiles");
	CHECK(arg(0, 0) == 1 && arg(0, 1) == 0 && arg(0, 2) == 1 && arg(0, 3) == 0,
	      "strcontains: found, not found, empty, too long");
	CHECK(run("BEGIN { $s = \"abc\"; $t = $s; printf(\"%s|%s\", $t, "
		  "1 ? \"yes\" : \"no\"); }") == 0, "strings: vars and ?:");
	CHECK_STR(sarg(0, 0), "abc", "strings: variable copy");
	CHECK_STR(sarg(0, 1), "yes", "strings: ?: into record");
}

/* Find the emulated entry of map `name` whose key starts with the u64 k
 * (or any entry if k is ~0). */
static uint8_t *entry(const char *name, const void *key, size_t klen)
{
	int m = program_find_map(&F.prog, name);
	if (m < 0)
		return NULL;
	for (uint32_t i = 0; i < E.maps[m].n; i++)
		if (!key || !memcmp(E.maps[m].keys[i], key, klen))
			return E.maps[m].vals[i];
	return NULL;
}

static uint64_t val64(const char *name, uint64_t k, uint32_t off)
{
	uint8_t *v = entry(name, &k, 8);
	uint64_t x = 0;
	if (v)
		memcpy(&x, v + off, 8);
	return v ? x : 0xbad;
}

static void test_maps(void)
{
	CHECK(run("BEGIN { @m[1] = 5; @m[2] = @m[1] + 1; @m[3] = @m[9]; @n = 4; "
		  "@m[2] += 10; @m[1]++; delete(@m[3]); @c = count(); @c = count(); "
		  "@s = sum(5); @s = sum(-2); @lo = min(7); @lo = min(3); @lo = min(9); "
		  "@hi = max(-1); @hi = max(-5); @a = avg(4); @a = avg(8); "
		  "@st = stats(10); }") == 0, "maps: compile");
	CHECK(val64("@m", 1, 0) == 6 && val64("@m", 2, 0) == 16,
	      "maps: read, write, += and ++");
	CHECK(val64("@m", 3, 0) == 0xbad, "maps: delete");
	CHECK(val64("@n", 0, 0) == 4, "maps: scalar map uses key 0");
	/* a keyless count() is a per-CPU array's one slot (index 0) */
	int c = program_find_map(&F.prog, "@c");
	uint64_t cv = 0;
	if (c >= 0 && c < 16)
		memcpy(&cv, E.arrays[c], 8);
	CHECK(c >= 0 && F.prog.maps[c].kind == MAP_PERCPU_ARRAY && cv == 2,
	      "maps: count");
	CHECK(val64("@s", 0, 0) == 3, "maps: sum");
	CHECK(val64("@lo", 0, 0) == 3 && val64("@lo", 0, 8) == 1, "maps: min {value, set}");
	CHECK(val64("@hi", 0, 0) == (uint64_t)-1, "maps: max is signed");
	CHECK(val64("@a", 0, 0) == 2 && val64("@a", 0, 8) == 12,
	      "maps: avg {count, total}");
	CHECK(val64("@st", 0, 0) == 1 && val64("@st", 0, 8) == 10, "maps: stats");

	CHECK(run("BEGIN { @k[\"ab\", 3] = 1; @k[\"ab\", 4] = 2; @k[\"ab\", 3] += 5; "
		  "@v[comm] = \"hello\"; printf(\"%d %s\", @k[\"ab\", 3], @v[\"tester\"]); }") == 0,
	      "maps: tuple and string keys compile");
	CHECK(arg(0, 0) == 6, "maps: tuple key read back");
	CHECK_STR(sarg(0, 1), "hello", "maps: string value by string key");
	int k = program_find_map(&F.prog, "@k");
	CHECK(k >= 0 && E.maps[k].n == 2, "maps: distinct tuple keys");
}

static int64_t hist_bucket_of(int64_t v)
{
	char text[128];
	snprintf(text, sizeof(text), "BEGIN { @h = hist(%lld); }", (long long)v);
	if (run(text) < 0)
		return -100;
	int m = program_find_map(&F.prog, "@h");
	if (m < 0 || E.maps[m].n != 1)
		return -101;
	int64_t b;
	memcpy(&b, E.maps[m].keys[0] + F.prog.maps[m].key_size - 8, 8);
	return b;
}

static int64_t lhist_bucket_of(int64_t v, int64_t min, int64_t max, int64_t step)
{
	char text[160];
	snprintf(text, sizeof(text), "BEGIN { @l[7] = lhist(%lld, %lld, %lld, %lld); }",
		 (long long)v, (long long)min, (long long)max, (long long)step);
	if (run(text) < 0)
		return -100;
	int m = program_find_map(&F.prog, "@l");
	if (m < 0 || E.maps[m].n != 1)
		return -101;
	int64_t b, k;
	memcpy(&k, E.maps[m].keys[0], 8);
	memcpy(&b, E.maps[m].keys[0] + 8, 8);
	return k == 7 ? b : -102;
}

static void test_hist(void)
{
	/* Observed with bpftrace 0.17: (..., 0) [0] [1] [2, 4) ... and
	 * values >= 2^32 in [2G, 4G). */
	struct { int64_t v, b; } h[] = {
		{ -5, 0 }, { 0, 1 }, { 1, 2 }, { 2, 3 }, { 3, 3 }, { 4, 4 },
		{ 7, 4 }, { 8, 5 }, { 1000, 11 }, { 1024, 12 },
		{ (1ll << 31) + 1, 33 }, { 1ll << 33, 33 }, { 1ll << 40, 33 },
	};
	for (size_t i = 0; i < sizeof(h) / sizeof(*h); i++) {
		char name[64];
		snprintf(name, sizeof(name), "hist: %lld in bucket %lld",
			 (long long)h[i].v, (long long)h[i].b);
		CHECK(hist_bucket_of(h[i].v) == h[i].b, name);
	}
	struct { int64_t v, min, max, step, b; } l[] = {
		{ -5, 0, 10, 5, 0 }, { 0, 0, 10, 5, 1 }, { 3, 0, 10, 5, 1 },
		{ 7, 0, 10, 5, 2 }, { 10, 0, 10, 5, 3 }, { 12, 0, 10, 5, 3 },
		{ 9, 0, 10, 3, 4 }, { 8, 0, 10, 3, 3 }, { 23, 20, 40, 5, 1 },
		{ 19, 20, 40, 5, 0 }, { 100, 20, 40, 5, 5 },
	};
	for (size_t i = 0; i < sizeof(l) / sizeof(*l); i++) {
		char name[80];
		snprintf(name, sizeof(name), "lhist: %lld in (%lld,%lld,%lld) bucket %lld",
			 (long long)l[i].v, (long long)l[i].min,
			 (long long)l[i].max, (long long)l[i].step,
			 (long long)l[i].b);
		CHECK(lhist_bucket_of(l[i].v, l[i].min, l[i].max, l[i].step) ==
		      l[i].b, name);
	}
}

static void test_tracepoint(void)
{
	uint8_t rec[128] = { 0 };
	int32_t fd = -3;
	int16_t small = -2;
	memcpy(rec + 16, &fd, 4);
	uint64_t bufp = 0x1234;
	memcpy(rec + 24, &bufp, 8);
	memcpy(rec + 32, "cmdname", 8);
	uint32_t loc = (6u << 16) | 64;
	memcpy(rec + 48, &loc, 4);
	memcpy(rec + 52, &small, 2);
	memcpy(rec + 64, "/tmp/x", 7);
	reset();
	CHECK(cgfx_compile(&F, "tracepoint:syscalls:sys_enter_openat { "
			   "printf(\"%d %p %s %s %d\", args->fd, args->buf, args->comm, "
			   "args->filename, args->small); }") == 0,
	      "tracepoint: args compile");
	if (F.rc == 0) {
		emu_init(&E, &F.prog);
		E.tp_record = rec;
		CHECK(emu_run(&E, 0) == 0, "tracepoint: runs");
		CHECK(arg(0, 0) == (uint64_t)-3, "tracepoint: signed int field");
		CHECK(arg(0, 1) == 0x1234, "tracepoint: pointer field");
		CHECK_STR(sarg(0, 2), "cmdname", "tracepoint: char array");
		CHECK_STR(sarg(0, 3), "/tmp/x", "tracepoint: __data_loc string");
		CHECK(arg(0, 4) == (uint64_t)-2, "tracepoint: s16 sign-extended");
	}
}

static void test_pressure(void)
{
	CHECK(run("BEGIN { $a = 1; $b = 2; $c = 3; $d = 4; $e = 5; $f = 6; $g = 7; "
		  "printf(\"%d %d %d %d %d %d %d %d %d %d %d %d\", $a, $b, $c, $d, $e, $f, $g, "
		  "pid, $a + $b, $c * $d, nsecs, $a + $b + $c + $d + $e + $f + $g); "
		  "printf(\"%d\", $g); }") == 0, "pressure: many values across calls");
	uint64_t want[] = { 1, 2, 3, 4, 5, 6, 7, 1234, 3, 12, 1000000, 28 };
	int good = E.nrecords == 2;
	for (int i = 0; i < 12 && good; i++)
		good = arg(0, (uint32_t)i) == want[i];
	CHECK(good && arg(1, 0) == 7, "pressure: every value survives");
}

static void test_big(void)
{
	CHECK(run("BEGIN { $a = str(\"a\"); $b = str(\"b\"); $c = str(\"c\"); "
		  "$d = str(\"d\"); $e = str(\"e\"); $f = str(\"f\"); $g = str(\"g\"); "
		  "$h = str(\"h\"); $i = str(\"i\"); $j = str(\"j\"); "
		  "printf(\"%s%s%s%s%s%s%s%s%s%s\", $a, $b, $c, $d, $e, $f, $g, $h, $i, $j); }") == 0,
	      "big: 640 bytes of variables compile");
	CHECK(program_find_map(&F.prog, ".scratch") >= 0,
	      "big: variables moved to the scratch map");
	int ok = E.nrecords == 1;
	for (int i = 0; i < 10 && ok; i++)
		ok = sarg(0, (uint32_t)i)[0] == 'a' + i;
	CHECK(ok, "big: values intact through scratch");
}

static void test_dump(void)
{
	reset();
	CHECK(cgfx_compile(&F, "BEGIN { printf(\"%d\", pid); }") == 0, "dump: compiles");
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	program_dump_bpf(f, &F.prog);
	fclose(f);
	CHECK(buf && strstr(buf, "\nBEGIN:\n   0: ("),
	      "dump: probe name then code");
	CHECK(buf && strstr(buf, "call bpf_get_current_pid_tgid#14"),
	      "dump: helper names");
	CHECK(buf && strstr(buf, "call bpf_ringbuf_reserve#131"),
	      "dump: event through the ring buffer");
	CHECK(buf && strstr(buf, "map[id:0] .events\n"), "dump: map table");
	free(buf);
}

int main(void)
{
	test_arith();
	test_control();
	test_builtins();
	test_strings();
	test_maps();
	test_hist();
	test_tracepoint();
	test_pressure();
	test_big();
	test_dump();
	cgfx_free(&F);
	emu_free(&E);
	return UNIT_DONE();
}
