/* agent_int.h - what the agent's own files share beyond agent.h: the
 * session's state, the per-thread records, the live page. */
#ifndef SONDE_AGENT_INT_H
#define SONDE_AGENT_INT_H

#include "../runtime/rt.h"
#include "../vm/vm.h"
#include "agent.h"
#include "proto.h"

/* One session: the region of one sonde run, the programs loaded from
 * it, which programs run at which patch, and what it changed. All in
 * private memory the session owns (`mem`), freed at its end. */
struct agent_session {
	struct rt rt;
	int sock, wake_fd, memfd;
	uint64_t sock_ino, wake_ino;   /* what they are (agent.c: fd_is) */
	uint32_t slot_first, slot_count;
	uint32_t nprogs;
	struct vm_prog **progs;
	vm_native_fn *fns;
	/* per patch id: (first << 32 | n), n programs from site_progs[first],
	 * whose native code (or NULL: interpreted) is site_fns[first] */
	uint64_t *sites;
	uint32_t *site_progs;
	vm_native_fn *site_fns;
	uint32_t nsite_progs;
	/* the program section (a checked private copy), and per site its
	 * patch id (UINT32_MAX: not found yet; UINT32_MAX - 1: given up) */
	uint8_t *section;
	uint64_t section_size;
	uint32_t *site_patch;
	/* what it applied and raised, to undo */
	uint32_t *applied;
	uint32_t napplied;
	uint32_t nsonde;               /* stock sites sonde patched (SITE_SONDE) */
	bool follow;                   /* --follow-forks: a child goes on traced */
	bool late;                     /* PROTO_F_LATE: ask sonde after dlopen */
	uint16_t **semas;
	uint32_t nsemas;
	void *mem;
	size_t mem_bytes;
};

/* The page the current session is published in. It is mapped with
 * MADV_WIPEONFORK, so a child made by any kind of fork reads no session
 * and its hits do nothing. */
struct agent_live {
	struct agent_session *session;
	uint32_t pid;              /* the process the session belongs to */
};
extern struct agent_live *agent_live;

/* A thread that ran a probe has a record (while it lives): its per-CPU
 * slot is slot_first + index, and `busy` says it is inside a session's
 * programs. Threads beyond the records, or beyond the session's slots,
 * share the last slot under a lock. */
#define AGENT_THREADS_MAX 1024
struct agent_thread {
	uint32_t used;
	uint32_t busy;
};
extern struct agent_thread agent_threads[AGENT_THREADS_MAX];
extern uint32_t agent_threads_hwm;
extern uint32_t agent_shared_lock;

/* Hits fence their busy flag when the kernel has no expedited
 * membarrier to do it for them (or the agent has not registered for it
 * yet). */
extern bool agent_fence_hits;

/* agent_patch.c */
/* Register the process for expedited membarriers, once (later calls
 * return at once). In a process with several threads each registration
 * waits for an RCU grace period, 15-25 ms on the test machine: the -c
 * constructor registers before main(), a -p attach in the session's
 * thread once the agent has said it is attached. Until then hits fence
 * themselves, and code writes rely on mprotect's TLB shootdown. */
void agent_patch_register(void);
void agent_patch_restore_all_child(void);
void agent_patch_forget_unmapped(void);

/* agent.c: patch the session's sites found in what the process maps
 * now and not patched yet (after dlopen(), sonde's patches made); after
 * dlclose(), forget the patches it took away */
void agent_scan_new(void);
void agent_unmapped(void);
/* agent.c: the current session's channel (its socket and what it is),
 * and whether sonde wants to hear of libraries loaded (PROTO_F_LATE);
 * false without a session. agent_send sends on it while it is still
 * that socket. */
bool agent_channel(int *fd, uint64_t *ino, bool *late);
void agent_send(int fd, uint64_t ino, const void *m, size_t n);

/* agent_dl.c: libraries loaded later (see there). A session starts
 * (before the patch lock: the loader's lock is never taken under it);
 * the session's thread got sonde's answer; it ended (a thread waiting
 * goes on); in a fork()ed child; a library loaded that sonde has not
 * been told of; the session's thread between messages. */
void agent_loads_session(void);
void agent_loads_answered(uint32_t seq);
void agent_loads_closed(void);
void agent_loads_child(void);
bool agent_loads_untold(void);
void agent_loads_watch(void);

/* agent_hit.c */
int agent_threads_init(void);
/* In a fork()ed child that goes on being traced (--follow-forks): the
 * parent's thread records are gone with its threads. */
void agent_threads_child(void);
/* Wait until no thread runs a session's programs (after it was
 * unpublished and agent_barrier_all); false on timeout. */
bool agent_quiesce(uint64_t timeout_ns);

/* agent_trap.c: SIGTRAP (int3 sites), SIGSEGV and SIGBUS (reads that
 * fault) handlers, chaining to the ones they replace. 0 or -errno. */
int agent_signals_init(void);

/* agent_watch.c: check the session's sites and sonde's function sites
 * for another tracer's breakpoint over them (and cope), from the
 * session's thread every WATCH_MS. */
#define AGENT_WATCH_MS 20
/* loads_pending: the loader loaded a library sonde has not been asked
 * about yet (agent.c: watch_loads) */
void agent_watch(struct agent_session *s, bool loads_pending);
/* agent.c: tell sonde what the watch saw at a site (PROTO_SITE). */
void agent_site_event(struct agent_session *s, uint32_t event, uint64_t addr,
		      uint64_t ms);

/* agent_fork.c: in a fork()ed child that goes on traced, sonde's patches
 * of its copy of the code become the agent's (their ids in ids, at most
 * max; how many returned). */
uint32_t agent_adopt_child(uint32_t *ids, uint32_t max);
/* agent.c: the patches adopted so (ids), for the watch; under the patch
 * lock. */
uint32_t agent_adopted(const uint32_t **ids);

/* agent_section.c: the program section (proto.h), every offset and
 * count checked against its size by agent_section_read before use */
struct section {
	const uint8_t *base;       /* a private copy */
	uint64_t size;
	struct proto_prog h;
	const struct proto_probe *probes;
	const struct proto_site *sites;
	const struct proto_file *files;
	const char *strings;
};
int agent_section_read(struct section *sec, const uint8_t *base, uint64_t size);
/* the address where this process maps file offset OFF of F, in a
 * mapping with all of PROT; 0 if none */
uint64_t agent_address_of(const struct agent_maps *maps,
		    const struct proto_file *f, uint64_t off, int prot);
/* N bytes as "xx xx ..." into OUT (3 * N bytes) */
char *agent_hexbytes(char *out, const uint8_t *b, uint32_t n);

#endif
