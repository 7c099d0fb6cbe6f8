/* flamegraph.h - flame graphs from counted stacks: folded text and a self-contained interactive SVG. */
#ifndef SONDE_OUTPUT_FLAMEGRAPH_H
#define SONDE_OUTPUT_FLAMEGRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Stacks merged into one tree: a frame's count is the sum over every
 * stack that passes through it. */
struct flamegraph;

struct flamegraph *flamegraph_new(void);
void flamegraph_free(struct flamegraph *fg);

/* Add COUNT samples of the stack FRAMES[0..N). kstack/ustack order is
 * innermost first (LEAF_FIRST true); folded text is root first. Frame
 * names are cleaned as flamegraph.pl's stackcollapse scripts do: ';'
 * becomes ':', control characters become spaces, surrounding spaces go,
 * and an empty name becomes "[unknown]". 0 or -ENOMEM. */
int flamegraph_add(struct flamegraph *fg, const char *const *frames, size_t n,
		   uint64_t count, bool leaf_first);
struct stackfmt;
/* Add COUNT samples of a kstack/ustack of N addresses (innermost first,
 * ending at N or the first 0), each frame named by F's symbolizer without
 * its offset so samples anywhere in a function merge; an address that
 * resolves to nothing is "[unknown]". 0 or -errno. */
int flamegraph_add_stack(struct flamegraph *fg, const uint64_t *ips, size_t n,
			 uint64_t count, const struct stackfmt *f);
/* Total samples added. */
uint64_t flamegraph_total(const struct flamegraph *fg);

/* Folded stacks, one line per distinct stack (callers before callees,
 * siblings in name order):
 * "main;a;b 42" - what flamegraph.pl, speedscope and inferno read. */
int flamegraph_write_folded(const struct flamegraph *fg, FILE *out);
/* Add every line of folded text (blank and malformed lines are skipped;
 * their number is returned through SKIPPED when it is not NULL). */
int flamegraph_read_folded(struct flamegraph *fg, FILE *in, size_t *skipped);

struct flamegraph_opts {
	const char *title;       /* NULL: "Flame Graph" */
	const char *subtitle;    /* NULL: none */
	const char *count_name;  /* NULL: "samples" */
	unsigned width;          /* 0: 1200 pixels */
	unsigned frame_height;   /* 0: 16 pixels */
	double min_width;        /* frames narrower are left out; 0: 0.1 px */
	bool inverted;           /* icicle graph: root at the top */
};

/* A standalone SVG (no external resources): one rectangle per frame,
 * width proportional to its count, with a label and a <title> tooltip,
 * and embedded JavaScript for click-to-zoom, reset, and search (regex,
 * matches highlighted, matched share of samples shown). OPTS may be NULL. */
int flamegraph_write_svg(const struct flamegraph *fg, FILE *out,
			 const struct flamegraph_opts *opts);

#endif
