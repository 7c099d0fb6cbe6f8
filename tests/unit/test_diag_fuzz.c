/* test_diag_fuzz.c - a fuzz run over the diagnostic renderer on every
 * `make check`: the checks of tests/fuzz/fuzz_diag.c (no control byte
 * out, no line or total past what diag.h promises) over its corpus and
 * over seeded random inputs with long lines (up to 300 KB, of ASCII,
 * tabs, UTF-8 whole and cut, stray continuation bytes, control bytes)
 * and diagnostics anywhere on them. The seed is fixed so a failure
 * repeats; SONDE_DIAG_FUZZ_RUNS changes how many inputs (default 400),
 * SONDE_DIAG_FUZZ_SEED the seed. The libFuzzer target itself (make fuzz)
 * explores further. */
#define DIAG_FUZZ_NO_MAIN
#include "../fuzz/fuzz_diag.c"

#include <dirent.h>

#include "unit.h"

static uint64_t rng_state;

static uint64_t rng(void)
{
	/* splitmix64 */
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static size_t below(size_t n)
{
	return n ? (size_t)(rng() % n) : 0;
}

/* Appends one piece of script text of the kind the renderer must cope
 * with; returns the bytes written (at most 4). */
static size_t piece(uint8_t *p, unsigned kind)
{
	static const char *const utf8[] = { "\xc3\xa9", "\xe2\x82\xac",
					    "\xf0\x9f\x98\x80" };
	switch (kind) {
	case 0:                         /* newline: a new, shorter line */
		*p = '\n';
		return 1;
	case 1:
		*p = '\t';
		return 1;
	case 2: {                       /* a whole UTF-8 character */
		const char *u = utf8[below(3)];
		size_t n = strlen(u);
		memcpy(p, u, n);
		return n;
	}
	case 3: {                       /* a cut one */
		const char *u = utf8[1 + below(2)];
		size_t n = 1 + below(strlen(u) - 1);
		memcpy(p, u, n);
		return n;
	}
	case 4:                         /* a stray continuation byte */
		*p = (uint8_t)(0x80 | below(0x40));
		return 1;
	case 5:                         /* a control byte or an escape */
		*p = (uint8_t)(below(2) ? below(0x20) : 0x7f);
		if (*p == 0 || *p == '\n')
			*p = 0x1b;
		return 1;
	default:
		*p = (uint8_t)(' ' + below(95));
		return 1;
	}
}

/* One random input in fuzz_diag's layout (count, 8-byte specs, text). */
static uint8_t *random_input(size_t *size)
{
	/* mostly long lines: a few long ones, or one huge one */
	size_t text_len = below(4) == 0 ? below(300000) : below(20000);
	size_t ndiag = below(4) == 0 ? below(256) : below(30);
	/* how the text mixes: ASCII only, or rich in odd bytes, or made of
	 * continuation bytes alone (no character boundary to cut at) */
	unsigned style = (unsigned)below(4);
	unsigned newline_every = below(3) == 0 ? 0 : 1 + (unsigned)below(50000);
	uint8_t *in = malloc(1 + ndiag * 8 + text_len + 4);
	if (!in)
		return NULL;
	in[0] = (uint8_t)ndiag;
	size_t lines = 1;
	uint8_t *t = in + 1 + ndiag * 8;
	size_t n = 0;
	while (n < text_len) {
		unsigned kind;
		if (newline_every && below(newline_every) == 0)
			kind = 0;
		else if (style == 0)
			kind = 6;
		else if (style == 3)
			kind = 4;
		else
			kind = below(10) < 7 ? 6 : 1 + (unsigned)below(5);
		size_t k = piece(t + n, kind);
		lines += t[n] == '\n';
		n += k;
	}
	for (size_t i = 0; i < ndiag; i++) {
		uint8_t *s = in + 1 + i * 8;
		/* mostly on a line of the text, sometimes past it */
		unsigned line = below(8) ? 1 + (unsigned)below(lines) :
				(unsigned)below(65536);
		unsigned col = below(8) ? (unsigned)below(text_len + 2) :
			       (unsigned)below(1u << 24);
		unsigned len = below(4) ? (unsigned)below(20) :
			       (unsigned)below(65536);
		s[0] = (uint8_t)(line >> 8);
		s[1] = (uint8_t)line;
		s[2] = (uint8_t)(col >> 16);
		s[3] = (uint8_t)(col >> 8);
		s[4] = (uint8_t)col;
		s[5] = (uint8_t)(len >> 8);
		s[6] = (uint8_t)len;
		s[7] = (uint8_t)rng();
	}
	*size = 1 + ndiag * 8 + n;
	return in;
}

static void run_corpus(void)
{
	const char *root = getenv("SONDE_SRCDIR");
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s/tests/fuzz/corpus/diag",
		 root ? root : ".");
	DIR *dp = opendir(dir);
	CHECK(dp != NULL, "diag fuzz: the corpus is there");
	if (!dp)
		return;
	size_t n = 0;
	const char *bad = NULL;
	char first_bad[512] = "";
	struct dirent *e;
	while ((e = readdir(dp))) {
		if (e->d_name[0] == '.')
			continue;
		char path[8192];
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		FILE *f = fopen(path, "rb");
		if (!f)
			continue;
		uint8_t buf[1 << 16];
		size_t len = fread(buf, 1, sizeof(buf), f);
		fclose(f);
		const char *b = diag_fuzz_one(buf, len);
		if (b && !bad) {
			bad = b;
			snprintf(first_bad, sizeof(first_bad), "%s: %s",
				 e->d_name, b);
		}
		n++;
	}
	closedir(dp);
	char name[160];
	snprintf(name, sizeof(name), "diag fuzz: the corpus (%zu inputs) "
		 "within the bounds", n);
	CHECK(n > 0 && !bad, name);
	if (bad)
		printf("#   %s\n", first_bad);
}

static void run_random(void)
{
	const char *e = getenv("SONDE_DIAG_FUZZ_RUNS");
	size_t runs = e ? strtoul(e, NULL, 10) : 400;
	e = getenv("SONDE_DIAG_FUZZ_SEED");
	uint64_t seed = e ? strtoull(e, NULL, 0) : 13;
	rng_state = seed;
	size_t failed = 0, longest = 0;
	for (size_t i = 0; i < runs; i++) {
		uint64_t at = rng_state;
		size_t size;
		uint8_t *in = random_input(&size);
		if (!in)
			break;
		if (size > longest)
			longest = size;
		const char *bad = diag_fuzz_one(in, size);
		if (bad && failed++ < 3)
			printf("#   input %zu (state %#llx, %zu bytes): %s\n", i,
			       (unsigned long long)at, size, bad);
		free(in);
	}
	char name[200];
	snprintf(name, sizeof(name), "diag fuzz: %zu random inputs (seed %llu, "
		 "up to %zu bytes) within the bounds", runs,
		 (unsigned long long)seed, longest);
	CHECK(failed == 0, name);
}

int main(void)
{
	run_corpus();
	run_random();
	return UNIT_DONE();
}
