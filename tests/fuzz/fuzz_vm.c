/* fuzz_vm.c - libFuzzer target: the VM's interpreter against its JIT on
 * random programs of a verified shape built from the input
 * (tests/fuzz/vm_gen.h says which shape and what is compared). Any
 * difference, and any program the VM refuses or cannot compile, aborts
 * with the program and both results on stderr. */
#include "vm_gen.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	static struct vg_prog p;
	static struct vg_result ri, rj;
	char why[256] = "";
	vg_generate(data, size, &p);
	const char *diff = vg_compare(&p, &ri, &rj, why, sizeof(why));
	if (!diff)
		return 0;
	fprintf(stderr, "fuzz_vm: %s %s\n", diff, why);
	fprintf(stderr, "  interp: rc %d r0 %#llx, %u calls\n", ri.rc,
		(unsigned long long)ri.r0, ri.log.n);
	fprintf(stderr, "  jit:    rc %d r0 %#llx, %u calls\n", rj.rc,
		(unsigned long long)rj.r0, rj.log.n);
	vg_dump(stderr, &p);
	abort();
}
