/* output_bench.c - what the reader spends on one printf record, from the
 * ring's bytes to the output file, in text and in JSON: the records
 * bench/floor's event-rate row delivers (printf("%d %d\n", tid, nsecs))
 * and one with a string and padding, run through output_event() into a
 * file, as the engine hands them over. CPU time of this thread only, so
 * other work on a shared machine does not count.
 *
 *   output_bench [RECORDS [ROUNDS]]    (default 1000000 records, best of 5)
 *
 * Prints "FORMAT SCRIPT ns_per_record". No root needed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compile.h"
#include "output/output.h"

static double cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static struct program *compile_text(const char *text)
{
	struct diag_source src = { .name = "bench", .text = text };
	struct diags d;
	diags_init(&d, &src);
	struct compile_opts co = { .name = "bench", .text = text };
	struct program *p = compile(&co, &d);
	if (!p)
		diags_print(&d, stderr);
	diags_free(&d);
	return p;
}

/* ns per record, best of `rounds` */
static double run(const char *script, const char *kind, long n,
		  int rounds)
{
	struct program *p = compile_text(script);
	if (!p)
		exit(1);
	uint32_t id = 0;
	while (id < p->nevents && p->events[id].kind != EV_PRINTF)
		id++;
	if (id == p->nevents) {
		fprintf(stderr, "output_bench: no printf in '%s'\n", script);
		exit(1);
	}
	const struct event_spec *e = &p->events[id];
	size_t size = 8 + (e->args ? e->args->size : 0);
	uint8_t *rec = calloc(1, size);
	uint64_t id64 = id;
	memcpy(rec, &id64, 8);
	/* argument bytes: small integers, and text where a string goes */
	for (size_t i = 8; i < size; i++)
		rec[i] = (uint8_t)('a' + i % 26);
	if (e->args && e->args->kind == TYPE_TUPLE)
		for (uint32_t k = 0; k < e->args->nfields; k++)
			if (e->args->fields[k]->kind == TYPE_INT) {
				uint64_t v = 1234567 + k * 1000000007ull;
				memcpy(rec + 8 + e->args->offsets[k], &v,
				       e->args->fields[k]->size);
			} else if (e->args->fields[k]->kind == TYPE_STR) {
				rec[8 + e->args->offsets[k] + 12] = 0;
			}
	FILE *out = tmpfile();
	if (!out)
		exit(1);
	setvbuf(out, NULL, _IOFBF, 1 << 16);
	struct output_opts oo = { .format = kind, .out = out };
	struct output *o = output_new(p, &oo, NULL);
	double best = 1e30;
	for (int r = 0; r < rounds; r++) {
		rewind(out);
		double t0 = cpu_ns();
		for (long i = 0; i < n; i++)
			output_event(o, rec, size);
		fflush(out);
		double per = (cpu_ns() - t0) / (double)n;
		if (per < best)
			best = per;
	}
	output_free(o);
	fclose(out);
	free(rec);
	program_free(p);
	return best;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	int rounds = argc > 2 ? atoi(argv[2]) : 5;
	static const char *const scripts[] = {
		"BEGIN { printf(\"%d %d\\n\", tid, nsecs); }",
		"BEGIN { printf(\"%-16s %6d %lld\\n\", comm, pid, nsecs); }",
	};
	for (size_t s = 0; s < sizeof(scripts) / sizeof(*scripts); s++) {
		double t = run(scripts[s], "text", n, rounds);
		double j = run(scripts[s], "json", n, rounds);
		printf("text %7.1f ns  json %7.1f ns  json/text %.2f   %s\n",
		       t, j, j / t, scripts[s]);
	}
	return 0;
}
