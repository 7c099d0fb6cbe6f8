/* fuzz_vm_raw.c - libFuzzer target: the VM's loader on arbitrary
 * bytecode (the input, 8 bytes per instruction). A program the loader
 * accepts must also be accepted by the JIT; and when its only memory
 * accesses are r10-based (which the loader bounds to the stack) and its
 * calls go to helpers that read no memory, it is run in both engines,
 * which must return the same status and r0. So that no run reads stack
 * bytes nothing wrote, the input follows 64 instructions zeroing the
 * stack (its jumps are relative: a backward one may land among them). fuzz_vm covers memory and
 * helpers with programs of a verified shape; this one covers encodings
 * that shape never produces. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vm/vm.h"

static uint64_t calls;

/* The loader cannot know how many arguments a helper takes, so a call
 * may pass registers nothing wrote: this helper reads none of them. */
static uint64_t h_mix(uint64_t a, uint64_t b, uint64_t c, uint64_t d,
		      uint64_t e)
{
	return ++calls * 0x9e3779b97f4a7c15ull;
}

static const vm_helper_fn helpers[] = { h_mix, h_mix, h_mix };
static const uint64_t maps[] = { 0x1000, 0x2000 };

/* Memory only through r10 (the loader bounds those accesses to the
 * stack), and r10 used for nothing else: its value is an address, which
 * differs between the engines. */
static bool runnable(const struct bpf_insn *in, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		uint8_t cls = BPF_CLASS(in[i].code);
		bool mem_dst = cls == BPF_ST || cls == BPF_STX;
		if (cls == BPF_LDX ? in[i].src_reg != BPF_REG_10 :
		    mem_dst ? in[i].dst_reg != BPF_REG_10 :
		    in[i].dst_reg == BPF_REG_10 || in[i].src_reg == BPF_REG_10)
			return false;
		if (cls == BPF_STX && in[i].src_reg == BPF_REG_10)
			return false;
		if (in[i].code == (BPF_LD | BPF_IMM | BPF_DW))
			i++;                   /* the second half is data */
	}
	return true;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	enum { ZERO = VM_STACK_SIZE / 8 };
	uint32_t n = (uint32_t)(size / sizeof(struct bpf_insn));
	if (!n || n > 4096)
		return 0;
	struct bpf_insn *in = malloc((ZERO + n) * sizeof(*in));
	if (!in)
		return 0;
	for (int k = 0; k < ZERO; k++)
		in[k] = (struct bpf_insn){ .code = BPF_ST | BPF_DW | BPF_MEM,
					   .dst_reg = BPF_REG_10,
					   .off = (int16_t)(-8 * (k + 1)) };
	memcpy(in + ZERO, data, n * sizeof(*in));
	n += ZERO;
	struct vm_env env = { .helpers = helpers, .nhelpers = 3, .maps = maps,
			      .nmaps = 2, .map_values = maps, .budget = 10000 };
	char err[256];
	struct vm_prog *p = vm_prog_load(in, n, &env, err, sizeof(err));
	if (p && !vm_prog_native(p)) {
		fprintf(stderr, "fuzz_vm_raw: the JIT refused a valid program: %s\n",
			vm_prog_jit_error(p));
		abort();
	}
	if (p && runnable(in, n)) {
		uint64_t ri = 1, rj = 2, ci, cj;
		calls = 0;
		int rci = vm_prog_interp(p, NULL, &ri);
		ci = calls;
		calls = 0;
		int rcj = vm_prog_run(p, NULL, &rj);
		cj = calls;
		if (rci != rcj || ri != rj || ci != cj) {
			fprintf(stderr, "fuzz_vm_raw: interp rc %d r0 %#llx calls %llu, "
				"jit rc %d r0 %#llx calls %llu\n", rci,
				(unsigned long long)ri, (unsigned long long)ci, rcj,
				(unsigned long long)rj, (unsigned long long)cj);
			abort();
		}
	}
	vm_prog_free(p);
	free(in);
	return 0;
}
