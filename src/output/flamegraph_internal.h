/* flamegraph_internal.h - the stack tree shared by flamegraph.c and flamegraph_svg.c (not a public seam). */
#ifndef SONDE_OUTPUT_FLAMEGRAPH_INTERNAL_H
#define SONDE_OUTPUT_FLAMEGRAPH_INTERNAL_H

#include "flamegraph.h"

/* deeper stacks keep their outermost frames; BPF stacks stop at 127 */
#define FG_MAX_DEPTH 1024

struct fg_node {
	char *name;             /* NULL for the root */
	uint64_t self, total;
	struct fg_node **kids;  /* sorted by name */
	size_t nkids, cap;
};

struct flamegraph {
	struct fg_node root;
	size_t max_depth;
};

#endif
