/* fuzz_corpus.h - the fuzz targets' replay in `make check`, without
 * clang or libFuzzer (test_vm_fuzz.c, test_process_fuzz.c): each target
 * on its checked-in corpus (tests/fuzz/corpus/NAME) and on MUTATIONS
 * mutants of it, from a fixed seed (FUZZ_SEED) so a failure repeats; the
 * input a target faults on is named first, as "# input". Define
 * FUZZ_SEED and MUTATIONS before including it. */
#ifndef SONDE_TEST_FUZZ_CORPUS_H
#define SONDE_TEST_FUZZ_CORPUS_H

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*target_fn)(const unsigned char *, size_t);

static uint64_t rng = FUZZ_SEED;

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

#endif
