/* pprof.h - the stack-keyed maps as a pprof profile (--pprof): what go
 * tool pprof, Pyroscope, Parca and Grafana read.
 *
 * Every map keyed by a kstack and/or ustack (with other fields or not)
 * whose values are count(), sum() or integers is one sample type, named
 * after the map ("@" alone: "samples"); its unit is "count" for count(),
 * for sum() and integers the one --pprof-unit gives, else one read off
 * the map's name (..._ns: nanoseconds, _us, _ms, _bytes), else "count".
 * Each entry is a sample: its stacks are the locations (kernel frames
 * above user frames, as in --flamegraph), its other key fields string
 * labels. Locations name their functions and their mapping (the file,
 * its range and offset, and its GNU build ID, so a symbolizer elsewhere
 * can find the binary). The profile is gzipped, as pprof writes them. */
#ifndef SONDE_EXPORT_PPROF_H
#define SONDE_EXPORT_PPROF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../output/output.h"

struct pprof_opts {
	const char *const *units;   /* "@MAP:UNIT" (--pprof-unit) */
	size_t nunits;
	int64_t duration_ns;        /* how long the run took */
};

/* Check --pprof-unit specs against PROG: 0, or -EINVAL with a message. */
int pprof_check(const struct program *prog, const char *const *units,
		size_t nunits);
/* Write the profile to F: 0, -ENOENT when no map qualifies, -errno. */
int pprof_write(struct output *o, FILE *f, const struct pprof_opts *opts);

#endif
