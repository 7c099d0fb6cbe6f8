/* engine.h - the kernel engine: the only part of sonde that talks to
 * libbpf. Creates maps, loads each probe's program, attaches, reads the
 * ring buffer, and releases every kernel object on the way out. */
#ifndef SONDE_ENGINE_H
#define SONDE_ENGINE_H

#include <stddef.h>

#include "../engine.h"
#include "../map_reader.h"
#include "../program.h"

/* Its operations are the table engine_kernel (engine.h); the functions
 * below are that table's, named for tests that drive the kernel engine
 * directly. */

/* Create maps and load every program; nothing attached yet. On a
 * verifier rejection the error names the probe; -v adds the log. */
int engine_load(const struct program *prog, const struct engine_opts *opts,
		struct engine **out);
/* Attach every probe except BEGIN/END; returns the number of probes. */
int engine_attach(struct engine *e);
/* Run the BEGIN (or END) probes once. */
int engine_run_begin(struct engine *e);
int engine_run_bench(struct engine *e,
		     int (*report)(void *arg, const char *name,
				   uint64_t avg_ns, uint64_t iters),
		     void *arg);
int engine_run_end(struct engine *e);
int engine_run_fault(struct engine *e, const uint64_t args[6]);
/* Wait up to timeout_ms for events and dispatch them. Returns 1 if a
 * handler asked to stop, 0 on timeout or progress, -errno on failure
 * (-EINTR when a signal arrived). */
int engine_poll(struct engine *e, int timeout_ms);
/* Drain whatever is left in the ring without waiting. */
int engine_drain(struct engine *e);
/* The map reader that output uses. */
const struct map_reader *engine_map_reader(struct engine *e);
/* Events dropped because the ring was full. */
unsigned long long engine_lost_events(struct engine *e);
/* Detach everything and close every descriptor. NULL is a no-op. */
void engine_free(struct engine *e);

#endif
