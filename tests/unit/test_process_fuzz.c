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

typedef int (*target_fn)(const unsigned char *, size_t);

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* A few random edits, as libFuzzer's simplest mutators make: flip a
 * bit, set a byte, copy a run, cut, grow. */
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

/* Runs target on every file of the corpus directory and on MUTATIONS
 * mutants of them. Returns the number of corpus files (0: none). */
static unsigned run_corpus(const char *name, target_fn target)
{
	static uint8_t files[64][16384];
	static size_t sizes[64];
	static uint8_t buf[16384];
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
