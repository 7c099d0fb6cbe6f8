/* test_process_fuzz.c - the process engine's fuzz targets in `make
 * check`, without clang or libFuzzer, as test_vm_fuzz.c runs the VM's:
 * tests/fuzz/fuzz_region.c (sonde reading a shared region a traced
 * process wrote: the ring, the maps) and tests/fuzz/fuzz_control.c
 * (sonde taking the messages a traced process sends), each on its
 * checked-in corpus and a bounded number of mutants of it (a fixed seed,
 * so a failure repeats). A target that finds a fault aborts (or ASan
 * reports it, under make SANITIZE=1), which fails this test; the input
 * that did it is printed first, as "# input". The long runs are `make
 * fuzz` (tests/fuzz/Makefile.fuzz says how). */
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>

#define LLVMFuzzerTestOneInput fuzz_region_one
#include "../fuzz/fuzz_region.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_control_one
#include "../fuzz/fuzz_control.c"
#undef LLVMFuzzerTestOneInput

#include "unit.h"

#define MUTATIONS 3000

#define FUZZ_SEED 0x9e3779b97f4a7c15ull
#include "fuzz_corpus.h"

int main(void)
{
	char name[160];
	unsigned n = run_corpus("region", fuzz_region_one);
	snprintf(name, sizeof(name), "fuzz_region: %u corpus inputs and %d "
		 "mutants, the region read without a fault", n, MUTATIONS);
	CHECK(n > 0, name);
	/* what sonde says of each hostile message is not the point here */
	fflush(stderr);
	int err = dup(2), null = open("/dev/null", O_WRONLY);
	if (null >= 0)
		dup2(null, 2);
	n = run_corpus("control", fuzz_control_one);
	if (err >= 0)
		dup2(err, 2);
	snprintf(name, sizeof(name), "fuzz_control: %u corpus inputs and %d "
		 "mutants, every message taken or refused", n, MUTATIONS);
	CHECK(n > 0, name);
	return UNIT_DONE();
}
