/* proc_int.h - the process engine's state on sonde's side, shared by its
 * files (engine.c: the run; layout.c: the shared region; control.c: the
 * agents' connections; reader.c: the maps for output). Nothing outside
 * src/process/ includes it. */
#ifndef SONDE_PROC_INT_H
#define SONDE_PROC_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../agent/proto.h"
#include "../engine.h"
#include "../runtime/rt.h"

struct vm_prog;
struct pattach;

#define PROTO_SOCKET_NAME_MAX 108   /* sun_path */

struct proc_probe {
	const struct probe *probe;
	struct process_req req;
	struct vm_prog *vm;        /* the probes sonde runs itself */
	uint32_t section_index;    /* the agents' probes: their index in the
				    * program section (layout.c) */
	bool patched;              /* a function probe patched at least once */
	bool stock_site;           /* USDT at a sys/sdt.h 1-byte nop: sonde
				    * patches it as it does functions, else
				    * the agent traps it (fprobes.c) */
	bool late;                 /* a function probe or stock site whose
				    * file the process had not mapped when
				    * sonde patched it: patched when it is
				    * (proc_fprobes_late) */
	uint64_t next_ns;          /* PROCESS_TIMER: when it runs next */
};

/* One connection from an agent: a traced process, or one told to stay
 * inert, until it says goodbye or its connection ends. */
struct proc_conn {
	int fd;
	int pid;                   /* its pid, from the socket */
	enum { CONN_HELLO, CONN_ATTACHING, CONN_ATTACHED, CONN_DETACHING,
	       CONN_INERT } state;
	uint32_t patched, failed;
	uint32_t site_events;      /* PROTO_SITE messages: said up to a bound */
	uint32_t mapped_asks;      /* PROTO_MAPPED messages: bounded */
	/* its per-CPU slots: [slot_first, slot_first + slot_count), and
	 * (--follow-forks) which chunk of them it holds (-1: none) */
	uint32_t slot_first, slot_count;
	int chunk;
	bool child;                /* --follow-forks: a process the traced
				    * one forked (not the -p/-c process) */
};

/* --follow-forks: each process traced at once writes slots of its own
 * (its threads each their slot, but for the last, shared under a lock
 * of its own): the -p/-c process SLOTS_ROOT of them, each child
 * SLOTS_CHILD, out of RT_SLOTS_FOLLOW in all (slot 0 is sonde's). */
#define RT_SLOTS_FOLLOW 256
#define SLOTS_ROOT 16
#define SLOTS_CHILD 2
#define SLOT_CHUNKS ((RT_SLOTS_FOLLOW - 1 - SLOTS_ROOT) / SLOTS_CHILD)

#define PROC_CONNS_MAX 256

struct engine {
	const struct program *prog;
	struct engine_opts opts;
	struct proc_probe *probes;
	uint32_t nprobes;
	uint32_t nsites;           /* site probes: what agents patch */
	uint32_t nfuncs;           /* function probes: what sonde patches */
	uint32_t nstock;           /* sites of those that are stock_site */
	struct pattach *fattach;   /* the process they are patched in */
	/* the region: sonde's mapping, the memfd agents get */
	int memfd;
	uint64_t region_size;
	struct rt rt;
	/* The ring sonde's own probes write (BEGIN, END, interval): private,
	 * so a traced process cannot write records as them. Of the events,
	 * which the agents' probes may write into the shared ring. */
	struct rt_ring own_ring;
	bool *agent_events;
	bool broken;               /* the shared region failed a check (said) */
	volatile struct sonde_globals *globals;
	struct map_reader reader;
	/* the agents' channel */
	int listen_fd;
	char sock_name[PROTO_SOCKET_NAME_MAX];
	int wake_fd;               /* eventfd: agents wake the reader */
	struct proc_conn conns[PROC_CONNS_MAX];
	uint32_t nconns;
	bool chunk_used[SLOT_CHUNKS];   /* --follow-forks: children's slots */
	bool follow_full_said;          /* no slots left: said once */
	uint64_t *site_addr;       /* where each site was patched (reports) */
	char *env[3];              /* child_env: LD_PRELOAD, SONDE_AGENT */
	bool attached;             /* agents may attach (after attach()) */
	bool failed;               /* an agent could not attach: say so once */
	uint32_t traced;           /* agents that attached to the command */
	bool any_patched;          /* a site or function patched somewhere */
	uint32_t late_warned;      /* late probes that failed, said (bounded) */
	char cmd_ran[256];         /* -c: the program it ran last (its agent's
				    * hello), for cmdcheck_report */
	/* events */
	bool stopped;              /* a handler asked to stop */
	bool ignore_events;        /* after exit(), until END runs */
	bool backlog;              /* the last poll stopped on its budget */
	bool spent;                /* ... on its time (POLL_BUDGET_MS) */
	double poll_deadline_ms;   /* when this poll's time is up */
	unsigned handled;
	uint64_t stalled;          /* ring records skipped (writer died) */
};

/* Does the traced process need the agent (site or function probes)? */
static inline bool proc_uses_agent(const struct engine *e)
{
	return e->nsites || e->nfuncs;
}

/* layout.c: create the memfd with every map, the ring and the program
 * section (the agents' probes and sites); 0 or -errno, said. */
int proc_region_create(struct engine *e);

/* engine.c: the pid messages name for the traced process (-p, or the -c
 * command). */
int proc_traced_pid(const struct engine *e);
/* The traced process broke the shared region (what, said once): its
 * session ends. Returns -ECANCELED for the caller to pass on. */
int proc_region_broken(struct engine *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* control.c */
/* The agent library: $SONDE_AGENT_LIB, else beside sonde's executable;
 * 0 or -errno (-EINVAL: a path LD_PRELOAD cannot take). */
int proc_agent_path(char *out, size_t len);
int proc_control_open(struct engine *e);
void proc_control_close(struct engine *e);
/* Serve the agents' connections: accept, answer, read reports. Returns
 * 0, or -ECANCELED when an agent could not attach (said). */
int proc_control_poll(struct engine *e, const short *revents, uint32_t n);
/* Descriptors to wait on (listen socket, connections): fills fds with at
 * most max entries, returns how many. */
uint32_t proc_control_fds(struct engine *e, int *fds, uint32_t max);
/* Ask every attached agent to detach and wait for them (bounded). */
void proc_control_detach(struct engine *e);
/* One message from the traced process's agent on connection c (what it
 * sends is checked: its type in c's state, its size, the site it names;
 * its text is printed escaped). 0, or -ECANCELED when its session ends:
 * its attach failed, or it broke the protocol (said). */
int proc_control_message(struct engine *e, struct proc_conn *c,
			 const void *buf, size_t n);

/* fprobes.c: function probes, patched by sonde in the traced process
 * (over ptrace: src/process/attach.h). */
/* Patch them in process pid; with start_agent (-p), load the agent and
 * start its session too, and wait until it has attached. A -c command
 * says hello again after each exec: what was patched in its old image
 * is forgotten (the image is gone) and its new one patched. 0, or -errno
 * with the probe and the reason said. */
int proc_fprobes_attach(struct engine *e, int pid, bool start_agent);
/* Are there probes whose files the process had not mapped when sonde
 * patched it (PROTO_F_LATE)? */
bool proc_fprobes_late_any(const struct engine *e);
/* The process says it mapped a library (PROTO_MAPPED, which names
 * nothing): patch the late probes whose files it maps now, unless a
 * live site of theirs is there already, stopping it only if there is
 * one. *patched and *failed count the sites; what failed is said, and
 * those USDT sites stay the agent's breakpoints. */
void proc_fprobes_late(struct engine *e, int pid, uint32_t *patched,
		       uint32_t *failed);
/* Put their bytes back (the process may be gone); warn about probes
 * never patched (a -c command that never loaded their file). */
void proc_fprobes_detach(struct engine *e);
/* -p with no probe in the process: put back what a killed sonde left
 * patched there (its agent loaded, its functions jumping to inert
 * trampolines), said. */
void proc_fprobes_cleanup(struct engine *e, int pid);

/* reader.c */
void proc_reader_init(struct engine *e);

#endif
