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

typedef int (*target_fn)(const unsigned char *, size_t);

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* A few random edits of in (n bytes) into out (up to cap), as libFuzzer's
 * simplest mutators do: flip a bit, set a byte, copy a run, cut, grow. */
static size_t mutate(const uint8_t *in, size_t n, uint8_t *out, size_t cap)
{
	if (n > cap)
		n = cap;
	memcpy(out, in, n);
	int edits = 1 + (int)(next() % 8);
	for (int e = 0; e < edits; e++) {
		size_t at = n ? next() % n : 0;
		switch (next() % 5) {
		case 0:
			if (n)
				out[at] ^= (uint8_t)(1u << (next() % 8));
			break;
		case 1:
			if (n)
				out[at] = (uint8_t)next();
			break;
		case 2:
			if (n) {
				size_t from = next() % n, len = 1 + next() % 16;
				for (size_t k = 0; k < len && at + k < n && from + k < n; k++)
					out[at + k] = out[from + k];
			}
			break;
		case 3:
			n = at;
			break;
		default:
			for (int k = 0; k < 8 && n < cap; k++)
				out[n++] = (uint8_t)next();
			break;
		}
	}
	return n;
}

/* Runs target on every file of dir and on MUTATIONS mutants of them.
 * Returns the number of corpus files (0: none found). */
static unsigned run_corpus(const char *name, target_fn target)
{
	static uint8_t files[64][8192];
	static size_t sizes[64];
	static uint8_t buf[8192];
	const char *src = getenv("SONDE_SRCDIR");
	char dir[512];
	snprintf(dir, sizeof(dir), "%s/tests/fuzz/corpus/%s", src ? src : ".", name);
	DIR *d = opendir(dir);
	unsigned nf = 0;
	struct dirent *de;
	while (d && (de = readdir(d)) && nf < 64) {
		if (de->d_name[0] == '.')
			continue;
		char path[1024];
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		FILE *f = fopen(path, "rb");
		if (!f)
			continue;
		sizes[nf] = fread(files[nf], 1, sizeof(files[nf]), f);
		fclose(f);
		printf("# input %s\n", path);
		fflush(stdout);
		target(files[nf], sizes[nf]);
		nf++;
	}
	if (d)
		closedir(d);
	for (int k = 0; nf && k < MUTATIONS; k++) {
		unsigned from = (unsigned)(next() % nf);
		size_t n = mutate(files[from], sizes[from], buf, sizeof(buf));
		target(buf, n);
	}
	return nf;
}

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
