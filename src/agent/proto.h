/* proto.h - how sonde and the agent in a traced process talk: the
 * control channel and the program section of the shared region. Shared
 * by src/process/ (sonde's side) and src/agent/ (the target's side).
 *
 * Starting. sonde listens on an abstract unix socket (SOCK_SEQPACKET)
 * named "sonde-<its pid>-<random>", and gives a -c command two variables:
 *     LD_PRELOAD=/path/libsonde-agent.so[:what was there]
 *     SONDE_AGENT=<socket name>
 * (for -p, the injector makes the process call sonde_agent_attach(name)
 * instead, agent.h). The agent's constructor connects before main runs
 * and says HELLO. Both ends check who the other is (SO_PEERCRED), since
 * anyone can connect to an abstract name, or take it once sonde is gone:
 * sonde keeps a connection only from the process it traces (anyone else,
 * such as a child the command forked and exec'd, which inherited the
 * variables, is told INERT at once and let go; that child takes the
 * variables out of its environment so its own children do not ask
 * again, and runs untraced), and the agent talks only to the pid the
 * name carries, run by root or by its own user.
 * The traced process gets SETUP with two descriptors: the region's memfd
 * and an eventfd to wake sonde. It maps the region, loads the programs
 * into the VM, patches every site it finds mapped (one REPORT per site
 * found), raises the semaphores, answers ATTACHED, and only then lets
 * main() run. Each exec of the traced process starts over with a new
 * connection (the socket is close-on-exec; sonde sees its EOF).
 *
 * Stopping. DETACH from sonde: the agent restores every patched byte and
 * lowers the semaphores, waits until no thread is inside a probe, unmaps
 * the region and answers DETACHED. If the connection ends instead (sonde
 * died, even by SIGKILL), the agent does the same on its own: the target
 * goes on, untraced. Sonde never writes to the target's memory.
 *
 * Messages are one struct each (SOCK_SEQPACKET keeps their bounds), with
 * a u32 type first. Every length and index in them and in the region is
 * checked by the receiver. sonde trusts nothing the traced process says:
 * a message it does not expect in the connection's state, of the wrong
 * size or naming a site it was not given ends the session
 * (proc_control_message), and text from the agent is printed with its
 * control bytes escaped. */
#ifndef SONDE_AGENT_PROTO_H
#define SONDE_AGENT_PROTO_H

#include <stdint.h>

#define PROTO_VERSION 1
#define PROTO_ENV_SOCKET "SONDE_AGENT"
#define PROTO_SOCKET_MAX 100         /* bytes of the name, without the NUL */
#define PROTO_TEXT_MAX 160           /* a message's text, with its NUL */

enum proto_msg {
	PROTO_HELLO = 1,     /* agent -> sonde */
	PROTO_SETUP,         /* sonde -> agent, with [memfd, eventfd] */
	PROTO_INERT,         /* sonde -> agent: not traced */
	PROTO_REPORT,        /* agent -> sonde: one site */
	PROTO_ATTACHED,      /* agent -> sonde: done, main() may run */
	PROTO_DETACH,        /* sonde -> agent */
	PROTO_DETACHED,      /* agent -> sonde */
	PROTO_SITE,          /* agent -> sonde: another tracer at a site */
	PROTO_MAPPED,        /* agent -> sonde: the program mapped a library */
	PROTO_MAPPED_DONE,   /* sonde -> agent: its answer */
};

struct proto_hello {
	uint32_t type;             /* PROTO_HELLO */
	uint32_t version;
	uint32_t pid;              /* getpid() in its own namespace */
	uint32_t flags;            /* PROTO_HELLO_F_* */
};
/* Asked from a fork handler (not after an exec): with --follow-forks a
 * child that execs is traced on only if it runs the probes' program. */
#define PROTO_HELLO_F_FORKED 1u

struct proto_setup {
	uint32_t type;             /* PROTO_SETUP */
	uint32_t version;
	uint64_t region_size;      /* of the memfd */
	uint32_t slot_first;       /* per-CPU slots this process may use: */
	uint32_t slot_count;       /* [first, first + count) */
	uint32_t flags;            /* PROTO_F_* */
	uint32_t pad;
};
#define PROTO_F_NO_JIT 1u      /* interpret only (SONDE_NO_JIT=1) */
/* --follow-forks: a child this process forks keeps the patches and asks
 * sonde for a session of its own (a connection of its own, from its
 * fork handler, before fork() returns in it), which sonde gives to a
 * process whose parent it traces (SO_PEERCRED, then the parent the
 * kernel names for that pid). Without it the child puts its copy of
 * the code back and runs untraced. */
#define PROTO_F_FOLLOW_FORKS 2u
/* Some probes' files (function probes, stock sys/sdt.h sites) were not
 * mapped when sonde patched the process: the agent says PROTO_MAPPED
 * after each dlopen(), and waits for the answer. */
#define PROTO_F_LATE 4u

/* A library came (dlopen returned; sent by the thread that called it,
 * which waits for PROTO_MAPPED_DONE with the same seq, bounded). It
 * names no file and no address: sonde reads the process's mappings
 * itself, patches the sites of its probes' files mapped since with the
 * process stopped, as at attach, and answers. The agent then patches
 * its own sites (a stock site sonde patched runs from sonde's jump; one
 * it could not takes the breakpoint). */
struct proto_mapped {
	uint32_t type;             /* PROTO_MAPPED or PROTO_MAPPED_DONE */
	uint32_t seq;              /* the asker's number, answered back */
	uint32_t patched;          /* DONE: sites sonde patched now */
	uint32_t failed;           /* DONE: sites it could not (said) */
};

/* One site the agent found mapped: patched (status 0, at addr), or not
 * (status -errno, and why in text). */
struct proto_report {
	uint32_t type;             /* PROTO_REPORT */
	uint32_t site;             /* index in the program section */
	int32_t status;
	uint32_t pad;
	uint64_t addr;
	char text[PROTO_TEXT_MAX];
};

struct proto_attached {
	uint32_t type;             /* PROTO_ATTACHED or PROTO_DETACHED */
	uint32_t patched;          /* sites patched (ATTACHED) / restored */
	uint32_t failed;
	uint32_t semaphores;       /* raised / lowered */
	char text[PROTO_TEXT_MAX]; /* ATTACHED: why it failed as a whole */
};

/* What the agent saw at one of the sites patched in its process (its
 * own, or a function sonde patched): another tracer's breakpoint (a
 * kernel uprobe, a debugger) written over the patch. The agent checks
 * its sites every few milliseconds; under such a breakpoint it puts the
 * original bytes (so that the breakpoint's removal leaves the code
 * whole), and once the breakpoint is gone it patches again. */
enum proto_site_event {
	PROTO_SITE_COVERED = 1,   /* a breakpoint over it: hits go uncounted */
	PROTO_SITE_UNCOVERED,     /* gone after ms: patched again */
	PROTO_SITE_REPAIRED,      /* found taken and given back (ms: since
				   * when it was last seen whole) */
	PROTO_SITE_FOREIGN,       /* changed by someone else: left alone */
};

struct proto_site_msg {
	uint32_t type;             /* PROTO_SITE */
	uint32_t event;            /* enum proto_site_event */
	uint64_t addr;             /* the patched address */
	uint64_t ms;
};

/* A message that carries only its type (INERT, DETACH). */
struct proto_plain {
	uint32_t type;
	uint32_t pad;
};

/* ---- the program section of the region (rt_header.prog_off) ---- */

#define PROTO_PROG_MAGIC 0x676f7270u     /* "prog" */

/* Offsets are from the start of the section, checked against its size. */
struct proto_prog {
	uint32_t magic;
	uint32_t nprobes, nsites, nfiles;
	uint32_t probes_off, sites_off, files_off;
	uint32_t strings_off, strings_size;
	uint32_t pad;
};

/* A program the agent runs: the bytecode of one probe. */
struct proto_probe {
	uint32_t insns_off;        /* struct bpf_insn[ninsns], 8-aligned */
	uint32_t ninsns;
	uint32_t name_off;         /* in the strings: the probe's name */
	uint32_t index;            /* in the compiled program's probes */
};

/* A file sites are in, as sonde found it (stat of the path). */
struct proto_file {
	uint64_t dev, ino;
	uint32_t path_off;         /* in the strings */
	uint32_t pad;
};

enum proto_site_kind {
	PROTO_SITE_USDT = 1,       /* a USDT site: the nop the note names */
};

/* One place to patch. Several sites may share an address (two probes on
 * one USDT site): the agent patches it once and runs their programs in
 * site order. */
struct proto_site {
	uint32_t probe;            /* index in the section's probes */
	uint32_t file;             /* index in the section's files */
	uint32_t kind;             /* enum proto_site_kind */
	uint32_t len;              /* bytes of the instruction there */
	uint64_t offset;           /* its file offset */
	uint64_t sema_offset;      /* the is-enabled semaphore's, or 0 */
	uint64_t vaddr;            /* its link-time address (messages) */
	uint8_t expect[8];         /* the file's bytes at offset (len) */
};

#endif
