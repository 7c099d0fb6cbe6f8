/* test_vm_fuzz.c - the VM's fuzz targets in `make check`, without clang
 * or libFuzzer: their own code (tests/fuzz/fuzz_vm.c, interpreter against
 * JIT on programs of a verified shape; tests/fuzz/fuzz_vm_raw.c, arbitrary
 * bytecode into the loader, then both engines), included here with their
 * entry points renamed, run on their checked-in corpora and on a bounded
 * number of mutations of them (a fixed seed, so a failure repeats). A
 * target that finds a difference prints the program and aborts, which
 * fails this test with its report in the output; the input that did it
 * is printed first, as "# input".
 *
 * The long runs are `make fuzz` (the README says how); test_vm_diff runs
 * 20,000 fresh programs of fuzz_vm's generator. */
#include <dirent.h>
#include <stdlib.h>

#define LLVMFuzzerTestOneInput fuzz_vm_one
#include "../fuzz/fuzz_vm.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_vm_raw_one
#include "../fuzz/fuzz_vm_raw.c"
#undef LLVMFuzzerTestOneInput

#include "unit.h"

#define MUTATIONS 3000

#define FUZZ_SEED 0x2545f4914f6cdd1dull
#include "fuzz_corpus.h"

int main(void)
{
	unsigned n = run_corpus("vm", fuzz_vm_one);
	char name[128];
	snprintf(name, sizeof(name), "fuzz_vm: %u corpus inputs and %d mutants, "
		 "interpreter and JIT agree", n, MUTATIONS);
	CHECK(n > 0, name);
	n = run_corpus("vm_raw", fuzz_vm_raw_one);
	snprintf(name, sizeof(name), "fuzz_vm_raw: %u corpus inputs and %d "
		 "mutants, loader, interpreter and JIT agree", n, MUTATIONS);
	CHECK(n > 0, name);
	return UNIT_DONE();
}
