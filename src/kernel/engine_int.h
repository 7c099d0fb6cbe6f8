/* engine_int.h - the kernel engine's private state, shared by its files
 * (engine.c: programs, attachment, events; maps.c: maps and the reader).
 * Nothing outside src/kernel/ includes it. */
#ifndef SONDE_ENGINE_INT_H
#define SONDE_ENGINE_INT_H

#include <stdbool.h>

#include "../base/vec.h"
#include "engine.h"

struct ring_buffer;
struct perf_buffer;

/* One loaded probe and what attaches it. Every descriptor is owned here
 * and released by engine_free (or by detach on an attach failure). */
struct engine_probe {
	const struct probe *probe;
	int prog_fd;
	struct attach_req req;      /* from the provider at load time */
	bool has_req;
	bool skipped;               /* optional, and the kernel refused it */
	int load_err;               /* the program's load failed: -errno */
	char *verifier_log;         /* why, until the failure is reported */
	VEC(int) perf_fds;          /* one per CPU when all_cpus */
	VEC(int) link_fds;          /* -1 where PERF_EVENT_IOC_SET_BPF was used */
	/* Sharing one program (multi.c): a member names its leader, whose
	 * program it runs (its own prog_fd stays -1); a leader lists its
	 * members and, with multi_link, attaches them all with one link. */
	int32_t leader;             /* -1: loads its own program */
	VEC(uint32_t) members;
	bool multi_link;
	/* A syscall dispatcher's leader (syscalls.c): the program it loads
	 * is its members' programs behind a jump on the syscall number
	 * (malloc'd), attached to raw_syscalls with the leader's request. */
	bool dispatch;
	struct bpf_insn *dispatch_insns;
	uint32_t dispatch_ninsns;
	uint32_t dispatch_members;         /* probes it serves besides its own */
	uint64_t cookie;                   /* its key in a cookie dispatcher */
	enum bpf_attach_type attach_type;  /* what the program is loaded for */
	int setup_fd;               /* req.on_request: the setup program (watch.c) */
};

/* A breakpoint a watchpoint:FUNC+argN probe asked for (watch.c). */
struct engine_watch {
	uint32_t probe;
	uint64_t addr;
	int pfd, link;              /* link -1: attached by ioctl */
};

struct engine {
	const struct program *prog;
	struct engine_opts opts;
	int *map_fds;               /* prog->nmaps entries, -1 if not created */
	struct engine_probe *probes;
	uint32_t nprobes;
	int ncpus;                  /* possible CPUs: per-CPU value count */
	struct ring_buffer *rb;
	struct perf_buffer *skb_pb; /* skboutput()'s packets, or NULL */
	unsigned long long skb_lost;
	bool stopped;               /* a handler asked to stop */
	bool iters_done;            /* iter: the iterators ran; the run ends */
	bool ignore_events;         /* after exit(), until END runs */
	unsigned handled;           /* records seen in this poll */
	double poll_deadline_ms;    /* when this poll's time is spent; 0: none */
	bool spent;                 /* this poll's budget is spent */
	struct map_reader reader;
	/* mmapable arrays mapped into memory (NULL: read with syscalls) */
	volatile struct sonde_globals *globals;
	size_t globals_len;
	int mapfail_map;            /* SONDE_MAPFAIL_MAP, or -1 */
	uint64_t *mapfails;
	size_t mapfails_len;
	bool backlog;               /* the last poll stopped on its budget */
	double armed_ms;            /* when attaching ended (log_now_ms), */
	bool first_read;            /* for -v: the first record's delay */
	int8_t has_kprobe_multi;    /* the kernel's links: -1 not asked yet */
	int8_t has_uprobe_multi;
	VEC(struct engine_watch) watches;
};

/* multi.c: group the probes that can share a program (and a link), and
 * attach a group's leader with one multi-target link. */
int engine_multi_plan(struct engine *e);
/* The multi links the probes' requests may use (a mask of 1u <<
 * MULTI_UPROBE, 1u << MULTI_KPROBE), and asking the kernel about them
 * before planning (engine_multi_plan asks itself otherwise). */
unsigned engine_multi_questions(const struct engine *e);
void engine_multi_ask(struct engine *e, unsigned questions);
int engine_multi_attach(struct engine *e, struct engine_probe *ep);
/* Does the kernel have kprobe_multi (uprobe_multi) links? Asked of it
 * each time (multi.c caches the answer per engine; --info asks once). */
bool engine_probe_multi(enum attach_multi kind);
/* syscalls.c: syscalls:sys_enter_X/sys_exit_X probes into dispatchers on
 * raw_syscalls, before loading. */
int engine_syscalls_plan(struct engine *e);
/* The dispatcher program of a group (leader first): keyed by the syscall
 * number at ctx + 8, or by the attach cookie (each probe's cookie set). */
enum dispatch_key { DISPATCH_SYSCALL, DISPATCH_COOKIE };
/* Jumps reach 32767 instructions, but the verifier rewrites some
 * instructions into several (inlined helpers, context accesses) and must
 * still patch the jumps over them: a quarter of the reach leaves room. */
#define DISPATCH_MAX_INSNS 8000
int engine_dispatch_build(struct engine *e, const uint32_t *chunk, size_t n,
			  enum dispatch_key key);
bool engine_has_calls(const struct probe *p);

/* bpfsys.c: BPF_MAP_CREATE and BPF_PROG_LOAD without libbpf's feature
 * probes; a descriptor, or -errno. */
int engine_map_create(enum bpf_map_type type, const char *name, uint32_t key,
		      uint32_t value, uint32_t max_entries, uint32_t flags);
struct engine_load_opts {
	enum bpf_attach_type expected_attach_type;
	uint32_t attach_btf_id;
	char *log_buf;              /* the verifier's log, when asked */
	uint32_t log_size;
	uint32_t log_level;
};
int engine_prog_load(enum bpf_prog_type type, const char *name,
		     const struct bpf_insn *insns, uint32_t ninsns,
		     const struct engine_load_opts *o);
/* engine.c, for the other files: replace the map references of a
 * program's instructions by the maps' descriptors; attach a program to a
 * perf event (returns the link, -1 when attached by ioctl, or -errno). */
int engine_patch_maps(struct engine *e, const struct probe *p,
		      struct bpf_insn *insns, uint32_t ninsns);
int engine_perf_link(int prog_fd, int pfd);
/* Keep perf event PFD (taken, closed on failure) in ep->perf_fds and the
 * link of PROG_FD on it in ep->link_fds; a failure to attach is said,
 * naming WHAT was attached. 0 or -errno. */
int engine_keep_perf(struct engine_probe *ep, int prog_fd, int pfd,
		     const char *what);

/* engine.c and attach.c, one to the other */
int engine_some_probe_left(const struct engine *e);
int engine_ring_open(struct engine *e);
int engine_run_iterators(struct engine *e);
void engine_release_each(struct engine *e, void (*fn)(struct engine_probe *));
void engine_detach_all(struct engine *e);
void engine_stop_probe(struct engine_probe *ep);
void engine_close_probe(struct engine_probe *ep);

/* watch.c: watchpoint:FUNCTION+argN. Load a probe's setup program
 * (ep->setup_fd, -1 when it has none); attach it at its uprobe in the
 * traced process; act on an EV_WATCH or EV_UNWATCH record (true when the
 * record was one); close every breakpoint and let a stopped task go. */
int engine_watch_load(struct engine *e, struct engine_probe *ep);
int engine_watch_attach_setup(struct engine *e, struct engine_probe *ep);
bool engine_watch_record(struct engine *e, const void *data, size_t size);
void engine_watch_stop(struct engine *e);

/* maps.c */
int engine_maps_create(struct engine *e);
int engine_globals_write(struct engine *e);
void engine_maps_close(struct engine *e);
/* Map the mmapable arrays (globals, failed-update counters). */
void engine_maps_mmap(struct engine *e);
void engine_reader_init(struct engine *e);
/* BPF object names: [A-Za-z0-9_.], at most 15 characters; '@' becomes "AT_". */
void engine_obj_name(char *out, size_t size, const char *name);

/* tracefs_uprobe.c: --follow-forks' uprobes, defined in tracefs so that
 * a perf event on them is inherited by what the task forks: the event's
 * fd, or -errno; and removing every one this run defined. */
int tracefs_uprobe_open(const struct attach_req *req);
void tracefs_uprobe_remove_all(void);

#endif
