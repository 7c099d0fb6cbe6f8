/* vm_bench.c - what one run of a probe's program costs in the VM
 * (src/vm), interpreted and JIT-compiled: the programs sonde's compiler
 * emits for a USDT site of <sonde/sdt.h> (bench/uprobe_bench's
 * bench:sonde_site) with the bodies bench/uprobes measures, a printf,
 * and a loop of 100 iterations (where the helpers hardly count). Helpers are stubs that do almost nothing (a map lookup returns
 * one fixed slot, the ring hands out one fixed record), so the figures
 * are the VM's share of a hit: the process engine's real helpers and its
 * trampoline come on top.
 *
 *   vm_bench UPROBE_BENCH_BINARY [ITERATIONS [ROUNDS]]
 *
 * Each figure is the best of ROUNDS rounds of ITERATIONS runs (other
 * load only ever adds time). No root needed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compile.h"
#include "vm/vm.h"

/* ---- stub helpers ---- */

static uint64_t slots[64][64] __attribute__((aligned(64)));
static uint8_t record[4096] __attribute__((aligned(8)));
static uint64_t clock_ns;

static uint64_t h_zero(uint64_t a, uint64_t b, uint64_t c, uint64_t d,
		       uint64_t e)
{
	return 0;
}

static uint64_t h_lookup(uint64_t map, uint64_t key, uint64_t c, uint64_t d,
			 uint64_t e)
{
	return (uint64_t)(uintptr_t)slots[map & 63];
}

static uint64_t h_update(uint64_t map, uint64_t key, uint64_t val,
			 uint64_t d, uint64_t e)
{
	memcpy(slots[map & 63], (const void *)(uintptr_t)val, 8);
	return 0;
}

static uint64_t h_reserve(uint64_t map, uint64_t size, uint64_t c,
			  uint64_t d, uint64_t e)
{
	return size <= sizeof(record) ? (uint64_t)(uintptr_t)record : 0;
}

static uint64_t h_query(uint64_t map, uint64_t what, uint64_t c, uint64_t d,
			uint64_t e)
{
	return what == BPF_RB_RING_SIZE ? 1u << 22 : 0;
}

static uint64_t h_pid_tgid(uint64_t a, uint64_t b, uint64_t c, uint64_t d,
			   uint64_t e)
{
	return (1234ull << 32) | 1235;
}

static uint64_t h_ktime(uint64_t a, uint64_t b, uint64_t c, uint64_t d,
			uint64_t e)
{
	return clock_ns += 10;
}

/* probe_read*: zeros (the context's registers are not real addresses) */
static uint64_t h_read(uint64_t dst, uint64_t size, uint64_t src, uint64_t d,
		       uint64_t e)
{
	memset((void *)(uintptr_t)dst, 0, size);
	return 0;
}

static vm_helper_fn helpers[256];

static void helpers_init(void)
{
	for (int i = 0; i < 256; i++)
		helpers[i] = h_zero;
	helpers[BPF_FUNC_map_lookup_elem] = h_lookup;
	helpers[BPF_FUNC_map_update_elem] = h_update;
	helpers[BPF_FUNC_ringbuf_reserve] = h_reserve;
	helpers[BPF_FUNC_ringbuf_query] = h_query;
	helpers[BPF_FUNC_get_current_pid_tgid] = h_pid_tgid;
	helpers[BPF_FUNC_ktime_get_ns] = h_ktime;
	helpers[BPF_FUNC_probe_read] = h_read;
	helpers[BPF_FUNC_probe_read_user] = h_read;
	helpers[BPF_FUNC_probe_read_kernel] = h_read;
	helpers[BPF_FUNC_probe_read_str] = h_read;
	helpers[BPF_FUNC_probe_read_user_str] = h_read;
	helpers[BPF_FUNC_probe_read_kernel_str] = h_read;
}

/* ---- timing ---- */

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* The same work written in C and called like native code: the floor
 * (nothing) and count() (lookup, then increment) through the same
 * helper table, for what the JIT's code could at best be. */
static uint64_t c_floor(void *ctx, int *err)
{
	return 0;
}

static uint64_t c_count(void *ctx, int *err)
{
	uint64_t key = 0;
	uint64_t *v = (uint64_t *)(uintptr_t)helpers[BPF_FUNC_map_lookup_elem](
		2, (uint64_t)(uintptr_t)&key, 0, 0, 0);
	if (v)
		*v += 1;
	return 0;
}

enum how { INTERP, JIT, NATIVE };

/* Best ns per run over `rounds` rounds of `n` runs. */
static double time_runs(const struct vm_prog *p, vm_native_fn fn, void *ctx,
			enum how how, long n, int rounds)
{
	double best = 1e30;
	for (int r = 0; r < rounds; r++) {
		uint64_t ret, sink = 0;
		double t0 = now_ns();
		for (long i = 0; i < n; i++) {
			if (how == INTERP) {
				vm_prog_interp(p, ctx, &ret);
			} else if (how == JIT) {
				vm_prog_run(p, ctx, &ret);
			} else {
				int err = 0;
				ret = fn(ctx, &err);
			}
			sink += ret;
		}
		double per = (now_ns() - t0) / (double)n;
		__asm__ volatile("" : : "r"(sink));
		if (per < best)
			best = per;
	}
	return best;
}

struct bench_case {
	const char *name;
	const char *body;
};

static const struct bench_case cases[] = {
	{ "floor", "{ }" },
	{ "count", "{ @c = count(); }" },
	{ "hist", "{ @h = hist(arg0); }" },
	{ "sum", "{ @m[tid] = sum(arg0); }" },
	{ "printf", "{ printf(\"%d %d\\n\", tid, arg0); }" },
	/* 100 iterations of 9 instructions: the engines without helpers */
	{ "loop", "{ $i = 0; $s = 0; while ($i < 100) { $s += $i * arg0; $i++; } "
		  "@c = sum($s); }" },
};

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: vm_bench UPROBE_BENCH_BINARY [ITERATIONS [ROUNDS]]\n");
		return 1;
	}
	long n = argc > 2 ? atol(argv[2]) : 2000000;
	int rounds = argc > 3 ? atoi(argv[3]) : 7;
	helpers_init();
	static uint64_t ctx[32];         /* a pt_regs */
	for (int i = 0; i < 32; i++)
		ctx[i] = (uint64_t)i * 3;
	printf("%-8s %6s %8s %10s %10s %10s %8s\n", "program", "insns",
	       "native", "interp", "jit", "jit-call", "ratio");
	for (size_t c = 0; c < sizeof(cases) / sizeof(*cases); c++) {
		char text[512];
		snprintf(text, sizeof(text), "usdt:%s:bench:sonde_site %s",
			 argv[1], cases[c].body);
		struct diag_source src = { .name = "bench", .text = text };
		struct diags d;
		diags_init(&d, &src);
		struct compile_opts o = { .name = "bench", .text = text };
		struct program *prog = compile(&o, &d);
		if (!prog) {
			diags_print(&d, stderr);
			diags_free(&d);
			return 1;
		}
		uint64_t *maps = calloc(prog->nmaps + 1, sizeof(*maps));
		for (uint32_t i = 0; i < prog->nmaps; i++)
			maps[i] = i;
		struct vm_env env = { .helpers = helpers, .nhelpers = 256,
				      .maps = maps, .nmaps = prog->nmaps };
		char err[256];
		const struct probe *pr = &prog->probes[0];
		struct vm_prog *p = vm_prog_load(pr->insns, pr->ninsns, &env,
						 err, sizeof(err));
		if (!p || !vm_prog_native(p)) {
			fprintf(stderr, "vm_bench: %s: %s\n", cases[c].name,
				p ? vm_prog_jit_error(p) : err);
			return 1;
		}
		vm_native_fn fn = vm_prog_native(p);
		double ti = time_runs(p, fn, ctx, INTERP, n, rounds);
		double tj = time_runs(p, fn, ctx, JIT, n, rounds);
		double tn = time_runs(p, fn, ctx, NATIVE, n, rounds);
		printf("%-8s %6u %7zuB %8.2fns %8.2fns %8.2fns %7.1fx\n",
		       cases[c].name, pr->ninsns, vm_prog_native_size(p), ti, tj,
		       tn, ti / tj);
		if (c <= 1) {           /* the same in C, for comparison */
			vm_native_fn cf = c ? c_count : c_floor;
			printf("%-8s %6s %8s %10s %10s %8.2fns\n",
			       c ? "C count" : "C floor", "-", "-", "-", "-",
			       time_runs(p, cf, ctx, NATIVE, n, rounds));
		}
		vm_prog_free(p);
		free(maps);
		program_free(prog);
		diags_free(&d);
	}
	return 0;
}
