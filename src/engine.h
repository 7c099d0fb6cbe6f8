/* engine.h - what runs a compiled program: one table of operations per
 * engine, which main.c picks (--engine=) and drives.
 *
 *   kernel    the programs run in the kernel (src/kernel/, libbpf): every
 *             probe type; needs root (CAP_BPF and friends).
 *   process   the same bytecode runs inside the traced process (src/process/
 *             on sonde's side, src/agent/ in the target): user-space probes
 *             and the probes sonde runs itself (BEGIN, END, interval); no
 *             kernel BPF, so no root for one's own processes.
 *
 * The run is the same for both: check, load, attach, BEGIN, poll until
 * done, END, print the maps through map_reader, free. `struct engine` is
 * each engine's own state (src/kernel/engine_int.h, src/process/proc_int.h
 * define it; no file sees both): main.c only holds the pointer. */
#ifndef SONDE_ENGINE_IFACE_H
#define SONDE_ENGINE_IFACE_H

#include <stdbool.h>
#include <stddef.h>

#include "map_reader.h"
#include "program.h"

struct engine;

struct engine_opts {
	int pid;          /* -p PID, or 0 */
	int cpid;         /* -c child pid, or 0 */
	/* --follow-forks: every process the traced one forks from then on
	 * is traced too (its user-space probes), until it execs another
	 * program */
	bool follow_forks;
	/* -c: its program's name and, when $PATH finds it a script that
	 * may exec another program than the probes name (a shim), the
	 * script; NULL otherwise. The engine says at the end if the probes'
	 * files were never loaded (cmdcheck.h). */
	const char *cmd_name, *cmd_script;
	/* Called for each ring-buffer record; return 1 to stop polling. */
	int (*on_event)(void *ctx, const void *data, size_t size);
	void *event_ctx;
	/* Called for each skboutput() record (struct sonde_skb_record, then
	 * the packet; size is what the perf buffer holds, maybe padded). */
	void (*on_packet)(void *ctx, const void *data, size_t size);
	void *packet_ctx;
	uint64_t log_size;    /* verifier log bytes (BPFTRACE_LOG_SIZE), 0:
			       * the engine's default */
};

struct engine_ops {
	const char *name;          /* as --engine= names it */
	/* Can this engine run the program at all? 0, or -EOPNOTSUPP with a
	 * message naming the probe and why (unless quiet): a script error,
	 * exit 1, nothing loaded. NULL: every program. */
	int (*check)(const struct program *prog, const struct engine_opts *opts,
		     bool quiet);
	/* -p: can this engine trace process pid at all? Asked before the
	 * script is compiled, so that a process sonde may not trace is
	 * refused for what it is, whatever the probes name. 0, or -errno
	 * with the reason said (exit 2). NULL: no such question. */
	int (*preflight_pid)(int pid);
	/* Create maps and load every program; nothing attached yet. */
	int (*load)(const struct program *prog, const struct engine_opts *opts,
		    struct engine **out);
	/* The environment the -c command must start with to be traced:
	 * "NAME=VALUE" strings, NULL-terminated, owned by the engine; NULL
	 * when it needs none. Asked after attach. */
	const char *const *(*child_env)(struct engine *e);
	/* Attach every probe except BEGIN/END; returns the number of
	 * probes, or -errno with a message naming the probe. */
	int (*attach)(struct engine *e);
	/* Run the BEGIN (or END) probes once. END comes after every other
	 * probe has stopped. */
	int (*run_begin)(struct engine *e);
	int (*run_end)(struct engine *e);
	/* --mode bench: time each bench:NAME probe, in script order, and
	 * report its average run in nanoseconds and how many runs. NULL:
	 * the engine cannot run them. */
	int (*run_bench)(struct engine *e,
			 int (*report)(void *arg, const char *name,
				       uint64_t avg_ns, uint64_t iters),
			 void *arg);
	/* D: run the dtrace:::ERROR probes once, their arg0..arg5 the
	 * fault's (output_on_fault). NULL: the engine has none. */
	int (*run_fault)(struct engine *e, const uint64_t args[6]);
	/* Wait up to timeout_ms for events and dispatch them. Returns 1 if a
	 * handler asked to stop, 0 on timeout or progress, -errno on failure
	 * (-EINTR when a signal arrived; -ECANCELED when the engine failed
	 * and has said why). */
	int (*poll)(struct engine *e, int timeout_ms);
	/* Dispatch whatever is left in the ring without waiting. NULL e: 0. */
	int (*drain)(struct engine *e);
	/* The map reader that output uses. */
	const struct map_reader *(*map_reader)(struct engine *e);
	/* Events dropped because the ring was full. */
	unsigned long long (*lost_events)(struct engine *e);
	/* Detach everything and release every resource. NULL is a no-op. */
	void (*free)(struct engine *e);
};

extern const struct engine_ops engine_kernel;    /* src/kernel/engine.c */
extern const struct engine_ops engine_process;   /* src/process/engine.c */

/* The engine of that name, or NULL. */
const struct engine_ops *engine_find(const char *name);

#endif
