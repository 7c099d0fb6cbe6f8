/* test_vm_corpus.c - every program the compiler makes of the script
 * corpora (tests/diff: the scripts compared with bpftrace; tests/golden:
 * the language tests, fuzzer finds included) loaded into the VM: the JIT
 * must compile each one (no instruction or helper call it lacks), and
 * the interpreter and the JIT must agree on each run (cg_fixture.h's
 * emu_run compares r0, helper calls, maps, ring records and globals).
 *
 * Each probe runs on three contexts: zeros; every 8-byte slot the
 * address of a readable buffer holding a string (so str(), ->, uptr()
 * and friends read real memory); and every byte 0x41 (bad pointers,
 * which probe_read turns into zeros and errors in both engines).
 * The VM's stack is the native stack, garbage and all, so bytes a
 * program stores without writing them first differ between the two
 * runs (and between hits in a traced process): the comparison finds
 * them. The tuple padding such a run found is checked on its own below.
 *
 * Scripts the fixture cannot compile (real tracepoint fields, BTF
 * types, positional parameters, scripts that are meant to fail) are
 * counted and skipped; enough must remain for the test to mean
 * something. */
#include <glob.h>
#include <stdlib.h>

#include "cg_fixture.h"
#include "unit.h"
#include "vm_asm.h"

static struct cgfx F;
static struct emu E;
static uint8_t target[1 << 20] __attribute__((aligned(16)));
static uint8_t ctx[1 << 17] __attribute__((aligned(16)));

struct tally {
	unsigned scripts, compiled, programs, runs;
	unsigned refused, disagree, failed;
};

static void fill_ctx(int kind)
{
	memset(ctx, kind == 2 ? 0x41 : 0, sizeof(ctx));
	if (kind == 1)
		for (size_t off = 0; off + 8 <= 512; off += 8) {
			uint64_t a = (uint64_t)(uintptr_t)target;
			memcpy(ctx + off, &a, 8);
		}
}

static void run_script(const char *path, const char *text, struct tally *t)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	t->scripts++;
	cgfx_free(&F);
	if (cgfx_compile(&F, text))
		return;
	/* the emulator keeps 16 maps (cg_fixture.h) */
	if (F.prog.nmaps > 16)
		return;
	t->compiled++;
	for (uint32_t i = 0; i < F.prog.nprobes; i++) {
		t->programs++;
		for (int kind = 0; kind < 3; kind++) {
			fill_ctx(kind);
			emu_init(&E, &F.prog);
			E.tp_record = ctx;
			int64_t r = emu_run(&E, i);
			const char *err = r < 0 ? E.in.error : NULL;
			t->runs++;
			if (!err || !strncmp(err, "run failed", 10)) {
				t->failed += err != NULL;
				emu_free(&E);
				continue;
			}
			if (strstr(err, "disagree"))
				t->disagree++;
			else
				t->refused++;
			char name[1200];
			snprintf(name, sizeof(name), "%s probe %s (context %d): %s",
				 base, F.prog.probes[i].name, kind, err);
			CHECK(0, name);
			emu_free(&E);
		}
	}
}

static void run_corpus(const char *pattern, struct tally *t)
{
	const char *dir = getenv("SONDE_SRCDIR");
	char pat[512];
	glob_t g;
	snprintf(pat, sizeof(pat), "%s/%s", dir ? dir : ".", pattern);
	if (glob(pat, 0, NULL, &g) != 0)
		return;
	static char text[1 << 16];
	for (size_t i = 0; i < g.gl_pathc; i++) {
		const char *dot = strrchr(g.gl_pathv[i], '.');
		if (dot && (!strcmp(dot, ".ast") || !strcmp(dot, ".bpf")))
			continue;                  /* expected dumps */
		FILE *f = fopen(g.gl_pathv[i], "r");
		size_t n = f ? fread(text, 1, sizeof(text) - 1, f) : 0;
		if (f)
			fclose(f);
		text[n] = 0;
		run_script(g.gl_pathv[i], text, t);
	}
	globfree(&g);
}

/* Fills the stack below the caller with a pattern, so that a VM run
 * from the same caller finds it in its uninitialised stack. */
static __attribute__((noinline)) void dirty_stack(void)
{
	volatile uint8_t junk[16384];
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = 0xa5;
}

/* A tuple's padding (here the 6 bytes after (1, "s")'s string[2]) is
 * zeroed, not left as stack garbage in the map. */
static void test_tuple_padding(void)
{
	/* control: does a run see the pattern in its stack? (not under
	 * ASan's fake stacks, for one) */
	struct bpf_insn peek[] = { LDX(BPF_DW, 0, 10, -16), EXIT() };
	struct vm_prog *p = vm_prog_load(peek, 2, NULL, NULL, 0);
	uint64_t r = 0;
	dirty_stack();
	if (p)
		vm_prog_interp(p, NULL, &r);
	vm_prog_free(p);
	if (r != 0xa5a5a5a5a5a5a5a5ull) {
		printf("ok - tuple padding is zeroed # SKIP the stack is not "
		       "reused here\n");
		return;
	}
	cgfx_free(&F);
	if (cgfx_compile(&F, "BEGIN { @tu = (1, \"s\"); }")) {
		CHECK(0, "tuple padding: the script compiles");
		return;
	}
	emu_init(&E, &F.prog);
	dirty_stack();
	int64_t rc = emu_run(&E, 0);
	int m = program_find_map(&F.prog, "@tu");
	const uint8_t *v = m >= 0 && E.maps[m].n == 1 ? E.maps[m].vals[0] : NULL;
	static const uint8_t want[16] = { 1, 0, 0, 0, 0, 0, 0, 0, 's' };
	CHECK(rc >= 0 && v && F.prog.maps[m].value_size == 16 &&
	      !memcmp(v, want, 16), "tuple padding is zeroed");
	emu_free(&E);
}

int main(void)
{
	static const char hello[] = "hello from the corpus";
	memcpy(target, hello, sizeof(hello));
	for (size_t k = sizeof(hello); k < sizeof(target); k++)
		target[k] = (uint8_t)(k * 7);

	struct tally d = { 0 }, g = { 0 };
	run_corpus("tests/diff/*.bt", &d);
	run_corpus("tests/golden/*", &g);
	test_tuple_padding();
	cgfx_free(&F);

	struct tally *ts[] = { &d, &g };
	const char *names[] = { "tests/diff", "tests/golden" };
	for (int k = 0; k < 2; k++) {
		struct tally *t = ts[k];
		printf("# %s: %u scripts, %u compiled, %u programs, %u runs "
		       "(%u stopped by the budget or failed alike in both); "
		       "%u refused by the VM or the JIT, %u runs disagree\n",
		       names[k], t->scripts, t->compiled, t->programs, t->runs,
		       t->failed, t->refused, t->disagree);
	}
	char name[160];
	snprintf(name, sizeof(name), "the JIT compiles all %u corpus programs",
		 d.programs + g.programs);
	CHECK(d.refused + g.refused == 0, name);
	snprintf(name, sizeof(name), "interpreter and JIT agree on all %u "
		 "corpus runs", d.runs + g.runs);
	CHECK(d.disagree + g.disagree == 0, name);
	/* 79 programs of tests/diff compile in the fixture, 26 of
	 * tests/golden (mostly scripts meant to fail): if far fewer do, the
	 * fixture broke, not the VM, and this test would check nothing. */
	CHECK(d.programs >= 60, "most of tests/diff compiles in the fixture");
	CHECK(g.programs >= 20, "the tests/golden scripts that compile do in the fixture");
	return UNIT_DONE();
}
