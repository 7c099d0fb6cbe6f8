/* control.c - sonde's end of the agents' channel (agent/proto.h): the
 * listening socket whose name the -c command inherits, one connection
 * per agent, the handshake that hands the traced process its region, the
 * agents' reports, and detaching them at the end. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "../base/log.h"
#include "../base/proc.h"
#include "../cmdcheck.h"
#include "attach.h"
#include "proc_int.h"

#define AGENT_LIB "libsonde-agent.so"
/* How long detaching waits for the agents to say they are done. */
#define DETACH_WAIT_MS 3000

int proc_agent_path(char *out, size_t len)
{
	const char *env = getenv("SONDE_AGENT_LIB");
	if (env && *env) {
		if (snprintf(out, len, "%s", env) >= (int)len)
			return -ENAMETOOLONG;
	} else {
		char exe[PATH_MAX];
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		if (n <= 0)
			return -errno;
		exe[n] = '\0';
		char *slash = strrchr(exe, '/');
		if (slash)
			*slash = '\0';
		if (snprintf(out, len, "%s/%s", exe, AGENT_LIB) >= (int)len)
			return -ENAMETOOLONG;
	}
	if (access(out, R_OK) < 0)
		return -errno;
	/* LD_PRELOAD splits its list at spaces and colons */
	if (strpbrk(out, " :"))
		return -EINVAL;
	return 0;
}

static int make_env(struct engine *e)
{
	char lib[PATH_MAX];
	int r = proc_agent_path(lib, sizeof(lib));
	if (r < 0) {
		log_error("the process engine's agent library (%s) cannot be "
			  "used: %s%s", AGENT_LIB, strerror(-r),
			  r == -EINVAL ? " (its path has a space or a colon)" :
			  " (set SONDE_AGENT_LIB to its path)");
		return r;
	}
	const char *old = getenv("LD_PRELOAD");
	if (asprintf(&e->env[0], "LD_PRELOAD=%s%s%s", lib, old && *old ? ":" : "",
		     old ? old : "") < 0 ||
	    asprintf(&e->env[1], "%s=%s", PROTO_ENV_SOCKET, e->sock_name) < 0) {
		e->env[0] = e->env[1] = NULL;
		return -ENOMEM;
	}
	e->env[2] = NULL;
	return 0;
}

int proc_control_open(struct engine *e)
{
	uint64_t token;
	if (getrandom(&token, sizeof(token), 0) != sizeof(token))
		token = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	snprintf(e->sock_name, sizeof(e->sock_name), "sonde-%d-%016llx",
		 (int)getpid(), (unsigned long long)token);
	int r = make_env(e);
	if (r < 0)
		return r;
	e->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	e->listen_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC |
			      SOCK_NONBLOCK, 0);
	if (e->wake_fd < 0 || e->listen_fd < 0) {
		r = -errno;
		log_error("process engine: cannot open its channel: %s",
			  strerror(-r));
		return r;
	}
	/* an abstract name: nothing in the file system to clean up */
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	size_t n = strlen(e->sock_name);
	memcpy(a.sun_path + 1, e->sock_name, n);
	socklen_t alen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
	if (bind(e->listen_fd, (struct sockaddr *)&a, alen) < 0 ||
	    listen(e->listen_fd, 16) < 0) {
		r = -errno;
		log_error("process engine: cannot listen on its channel: %s",
			  strerror(-r));
		return r;
	}
	return 0;
}

static void conn_close(struct engine *e, uint32_t i)
{
	/* its slots go to the next child: it wrote its last (it exited,
	 * exec'd, or ended its session before its socket closed) */
	if (e->conns[i].chunk >= 0 && e->conns[i].chunk < SLOT_CHUNKS)
		e->chunk_used[e->conns[i].chunk] = false;
	close(e->conns[i].fd);
	e->conns[i] = e->conns[--e->nconns];
}

static int send_plain(int fd, uint32_t type)
{
	struct proto_plain m = { .type = type };
	return send(fd, &m, sizeof(m), MSG_NOSIGNAL) == sizeof(m) ? 0 : -errno;
}

static int send_setup(struct engine *e, const struct proc_conn *c)
{
	int fd = c->fd;
	struct proto_setup m = {
		.type = PROTO_SETUP, .version = PROTO_VERSION,
		.region_size = e->region_size, .slot_first = c->slot_first,
		.slot_count = c->slot_count,
	};
	if (e->opts.follow_forks)
		m.flags |= PROTO_F_FOLLOW_FORKS;
	/* probes whose files it has not mapped: sonde patches them when
	 * it does (the -p/-c process; a followed child's are its parent's
	 * copies) */
	if (!c->child && proc_fprobes_late_any(e))
		m.flags |= PROTO_F_LATE;
	const char *nojit = getenv("SONDE_NO_JIT");
	if (nojit && strcmp(nojit, "0") != 0)
		m.flags |= PROTO_F_NO_JIT;
	int fds[2] = { e->memfd, e->wake_fd };
	char cbuf[CMSG_SPACE(sizeof(fds))];
	memset(cbuf, 0, sizeof(cbuf));
	struct iovec iov = { &m, sizeof(m) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(fds));
	memcpy(CMSG_DATA(cm), fds, sizeof(fds));
	return sendmsg(fd, &msg, MSG_NOSIGNAL) == sizeof(m) ? 0 : -errno;
}

static const char *site_probe_name(struct engine *e, uint32_t site)
{
	/* sites are the PROCESS_USDT probes, in order */
	uint32_t k = 0;
	for (uint32_t i = 0; i < e->nprobes; i++) {
		if (e->probes[i].req.how != PROCESS_USDT)
			continue;
		if (k++ == site)
			return e->probes[i].probe->name;
	}
	return "?";
}

/* The connection's peer is the traced process: the pid the kernel took
 * when it connected (SO_PEERCRED: a process cannot claim another's), the
 * one -p names or the -c command's (through its execs; what it starts is
 * not traced, as the kernel engine binds USDT probes to it). */
static bool traced_peer(const struct engine *e, const struct proc_conn *c)
{
	int traced = e->opts.pid > 0 ? e->opts.pid : e->opts.cpid;
	return e->attached && c->pid > 0 && c->pid == traced;
}

/* --follow-forks: is the peer a child of a process traced now (the
 * -p/-c one, or a child traced before it)? Its pid is the kernel's
 * (SO_PEERCRED), and so is its parent: a process cannot claim another's
 * place. */
static bool followed_child(const struct engine *e, const struct proc_conn *c)
{
	if (!e->opts.follow_forks || !e->attached || c->pid <= 0)
		return false;
	int ppid = proc_ppid(c->pid);
	int root = e->opts.pid > 0 ? e->opts.pid : e->opts.cpid;
	if (ppid <= 0)
		return false;
	if (ppid == root)
		return true;
	for (uint32_t i = 0; i < e->nconns; i++)
		if (e->conns[i].pid == ppid && e->conns[i].child &&
		    (e->conns[i].state == CONN_ATTACHING ||
		     e->conns[i].state == CONN_ATTACHED))
			return true;
	return false;
}

/* Slots for a new connection: all but sonde's, or with --follow-forks
 * the root's or a child's chunk. false when none is left. */
static bool take_slots(struct engine *e, struct proc_conn *c)
{
	c->chunk = -1;
	if (!e->opts.follow_forks) {
		c->slot_first = 1;
		c->slot_count = e->rt.hdr.nslots - 1;
		return true;
	}
	if (!c->child) {
		c->slot_first = 1;
		c->slot_count = SLOTS_ROOT;
		return true;
	}
	for (int k = 0; k < SLOT_CHUNKS; k++)
		if (!e->chunk_used[k]) {
			e->chunk_used[k] = true;
			c->chunk = k;
			c->slot_first = 1 + SLOTS_ROOT + (uint32_t)k * SLOTS_CHILD;
			c->slot_count = SLOTS_CHILD;
			return true;
		}
	if (!e->follow_full_said) {
		e->follow_full_said = true;
		log_warn("process engine: --follow-forks: more than %d processes "
			 "traced at once; process %d and those that come while "
			 "so many run are not traced", SLOT_CHUNKS, c->pid);
	}
	return false;
}

/* Is the program process pid runs now one of the probes' files? */
static bool runs_probes_file(const struct engine *e, int pid)
{
	char path[64];
	struct stat exe, f;
	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	if (stat(path, &exe) < 0)
		return false;
	for (uint32_t i = 0; i < e->nprobes; i++) {
		const struct uprobe_info *u = e->probes[i].probe->uprobe;
		if (u && u->path && stat(u->path, &f) == 0 &&
		    f.st_dev == exe.st_dev && f.st_ino == exe.st_ino)
			return true;
	}
	return false;
}

/* 0, or -ECANCELED when the function probes could not be patched (the
 * process is told to run untraced, and the run fails). */
static int on_hello(struct engine *e, struct proc_conn *c,
		    const struct proto_hello *h)
{
	/* --follow-forks: a child asks from its fork handler; asking after
	 * an exec, it goes on traced only if it runs the probes' program */
	if (c->child && !(h->flags & PROTO_HELLO_F_FORKED) &&
	    !runs_probes_file(e, c->pid)) {
		log_info("process engine: process %d (a traced process's child) "
			 "runs another program now: not traced", c->pid);
		send_plain(c->fd, PROTO_INERT);
		c->state = CONN_INERT;
		return 0;
	}
	/* a -c command: its functions are patched while it waits for its
	 * region in the agent's constructor, before main() (with -p they
	 * were patched when the agent was loaded) */
	if ((e->nfuncs || e->nstock) && e->opts.pid <= 0 && !c->child &&
	    proc_fprobes_attach(e, c->pid, false) < 0) {
		send_plain(c->fd, PROTO_INERT);
		c->state = CONN_INERT;
		return -ECANCELED;
	}
	if (!c->child && e->opts.cmd_script) {
		char exe[64];
		snprintf(exe, sizeof(exe), "/proc/%d/exe", c->pid);
		ssize_t k = readlink(exe, e->cmd_ran, sizeof(e->cmd_ran) - 1);
		e->cmd_ran[k > 0 ? k : 0] = '\0';
	}
	if (send_setup(e, c) == 0) {
		c->state = CONN_ATTACHING;
		e->traced += !c->child;
		log_info("process engine: process %d connected%s; attaching",
			 c->pid, c->child ? " (a traced process's child)" : "");
		return 0;
	}
	send_plain(c->fd, PROTO_INERT);
	c->state = CONN_INERT;
	return 0;
}

/* Libraries a process may say it loaded (PROTO_MAPPED), at most: each
 * may cost a stop of the process; a JVM loads a few dozen, python one
 * per C module it imports. Past that the answer is "nothing patched". */
#define MAPPED_ASKS_MAX 4096

/* Site events said per connection, at most (then counted): each site
 * has a few in a run, another tracer coming and going. */
#define SITE_EVENTS_SAID 32

/* The probes at a patched address: a USDT site's (from its report) or a
 * function's; NULL if none was patched there. */
static const char *probe_at(struct engine *e, uint64_t addr, char *buf,
			    size_t len)
{
	for (uint32_t i = 0; e->site_addr && i < e->nsites; i++)
		if (e->site_addr[i] == addr)
			return site_probe_name(e, i);
	const char *f = pattach_site_name(e->fattach, addr);
	if (!f)
		return NULL;
	snprintf(buf, len, "the probes of function %s", f);
	return buf;
}

static int protocol_broken(struct engine *e, struct proc_conn *c,
			   const char *what, uint32_t type);

/* What the agent saw at a site: another tracer's breakpoint over it
 * (src/agent/agent_watch.c), said with the probe's name. */
static int on_site_event(struct engine *e, struct proc_conn *c, const void *buf)
{
	struct proto_site_msg m;
	memcpy(&m, buf, sizeof(m));
	char name[300];
	const char *who = probe_at(e, m.addr, name, sizeof(name));
	if (!who || m.event < PROTO_SITE_COVERED || m.event > PROTO_SITE_FOREIGN)
		return protocol_broken(e, c, "a site event on no site it was "
				       "given", PROTO_SITE);
	if (++c->site_events > SITE_EVENTS_SAID) {
		if (c->site_events == SITE_EVENTS_SAID + 1)
			log_warn("process engine: process %d: more breakpoints of "
				 "other tracers at its sites (not said)", c->pid);
		return 0;
	}
	unsigned long long a = (unsigned long long)m.addr,
		ms = (unsigned long long)m.ms;
	switch (m.event) {
	case PROTO_SITE_COVERED:
		log_warn("%s: another tracer's breakpoint (a kernel uprobe, a "
			 "debugger) is over its patch at 0x%llx in process %d: "
			 "its hits there are not counted while it stays", who, a,
			 c->pid);
		break;
	case PROTO_SITE_UNCOVERED:
		log_warn("%s: the breakpoint over its patch at 0x%llx in process "
			 "%d went after %llu ms: patched again (the hits of that "
			 "time were not counted)", who, a, c->pid, ms);
		break;
	case PROTO_SITE_REPAIRED:
		log_warn("%s: its patch at 0x%llx in process %d was taken over "
			 "(another tracer's breakpoint, come and gone within "
			 "%llu ms): patched again (the hits of that time were "
			 "not counted)", who, a, c->pid, ms);
		break;
	default:
		log_warn("%s: its patch at 0x%llx in process %d was changed by "
			 "someone else: left alone (its hits there are no longer "
			 "counted)", who, a, c->pid);
		break;
	}
	return 0;
}

/* The traced process said what its agent does not say: it is not an
 * agent that sonde can trust with a session. */
static int protocol_broken(struct engine *e, struct proc_conn *c,
			   const char *what, uint32_t type)
{
	log_error("process engine: process %d broke the protocol (%s, message "
		  "type %u): its session ends", c->pid, what, type);
	c->state = CONN_INERT;
	return -ECANCELED;
}

int proc_control_message(struct engine *e, struct proc_conn *c,
			 const void *buf, size_t n)
{
	uint32_t type;
	char clean[4 * PROTO_TEXT_MAX];
	if (c->state == CONN_INERT)
		return 0;          /* said goodbye, or broke the protocol */
	if (n < sizeof(type))
		return protocol_broken(e, c, "a message too short", 0);
	memcpy(&type, buf, sizeof(type));
	switch (type) {
	case PROTO_HELLO:
		if (c->state != CONN_HELLO)
			return protocol_broken(e, c, "a second hello", type);
		if (n != sizeof(struct proto_hello))
			return protocol_broken(e, c, "a hello of the wrong size",
					       type);
		{
			struct proto_hello h;
			memcpy(&h, buf, sizeof(h));
			return on_hello(e, c, &h);
		}
	case PROTO_REPORT: {
		/* a site found at attach, or later in a library it loaded */
		if (c->state != CONN_ATTACHING && c->state != CONN_ATTACHED)
			return protocol_broken(e, c, "a report before its setup",
					       type);
		if (n != sizeof(struct proto_report))
			return protocol_broken(e, c, "a report of the wrong size",
					       type);
		struct proto_report r;
		memcpy(&r, buf, sizeof(r));
		r.text[sizeof(r.text) - 1] = '\0';
		if (r.site >= e->nsites)
			return protocol_broken(e, c, "a report on a site it was "
					       "not given", type);
		/* each site is found once, and again in a library loaded
		 * again: far more than that is not an agent's doing */
		if (c->patched + c->failed > 16 * e->nsites + 64)
			return protocol_broken(e, c, "more reports than its sites "
					       "explain", type);
		if (r.status == 0) {
			c->patched++;
			e->any_patched = true;
			if (e->site_addr)
				e->site_addr[r.site] = r.addr;
			log_info("process engine: %s attached at 0x%llx in "
				 "process %d", site_probe_name(e, r.site),
				 (unsigned long long)r.addr, c->pid);
		} else {
			c->failed++;
			log_error("probe %s: cannot attach in process %d: %s",
				  site_probe_name(e, r.site), c->pid,
				  log_clean(clean, sizeof(clean), r.text));
		}
		return 0;
	}
	case PROTO_ATTACHED: {
		if (c->state != CONN_ATTACHING)
			return protocol_broken(e, c, "attached when it was not "
					       "attaching", type);
		if (n != sizeof(struct proto_attached))
			return protocol_broken(e, c, "a message of the wrong size",
					       type);
		struct proto_attached a;
		memcpy(&a, buf, sizeof(a));
		a.text[sizeof(a.text) - 1] = '\0';
		c->state = CONN_ATTACHED;
		if (a.text[0])
			log_error("process engine: process %d cannot be traced: "
				  "%s", c->pid, log_clean(clean, sizeof(clean),
							  a.text));
		else
			log_info("process engine: process %d attached: %u "
				 "sites, %u semaphores", c->pid, a.patched,
				 a.semaphores);
		if (a.text[0] || a.failed || c->failed)
			return -ECANCELED;
		return 0;
	}
	case PROTO_DETACHED: {
		if (c->state != CONN_DETACHING)
			return protocol_broken(e, c, "detached when not asked to",
					       type);
		if (n != sizeof(struct proto_attached))
			return protocol_broken(e, c, "a message of the wrong size",
					       type);
		struct proto_attached a;
		memcpy(&a, buf, sizeof(a));
		log_info("process engine: process %d detached (%u sites and %u "
			 "semaphores restored)", c->pid, a.patched, a.semaphores);
		c->state = CONN_INERT;
		return 0;
	}
	case PROTO_MAPPED: {
		/* a thread of a process attaching (-p: its agent's session
		 * is published before it says attached) or detaching may
		 * load a library at any moment */
		if (c->state != CONN_ATTACHING && c->state != CONN_ATTACHED &&
		    c->state != CONN_DETACHING)
			return protocol_broken(e, c, "a library mapped before its "
					       "setup", type);
		if (n != sizeof(struct proto_mapped))
			return protocol_broken(e, c, "a message of the wrong size",
					       type);
		struct proto_mapped m;
		memcpy(&m, buf, sizeof(m));
		struct proto_mapped a = { .type = PROTO_MAPPED_DONE, .seq = m.seq };
		/* the request names nothing: what it may cost sonde is one
		 * look at the process's mappings, and a stop of the process
		 * when a probe's file is mapped there unpatched; a process
		 * asking without end is answered without either (said once) */
		if (++c->mapped_asks > MAPPED_ASKS_MAX) {
			if (c->mapped_asks == MAPPED_ASKS_MAX + 1)
				log_warn("process engine: process %d loaded more than "
					 "%u libraries: the sites of those it loads "
					 "from now on are taken with a breakpoint",
					 c->pid, MAPPED_ASKS_MAX);
		} else if (!c->child && c->state != CONN_DETACHING) {
			proc_fprobes_late(e, c->pid, &a.patched, &a.failed);
		}
		send(c->fd, &a, sizeof(a), MSG_NOSIGNAL);
		return 0;
	}
	case PROTO_SITE:
		if (c->state != CONN_ATTACHED && c->state != CONN_DETACHING)
			return protocol_broken(e, c, "a site event before it "
					       "attached", type);
		if (n != sizeof(struct proto_site_msg))
			return protocol_broken(e, c, "a message of the wrong size",
					       type);
		return on_site_event(e, c, buf);
	default:
		return protocol_broken(e, c, "a message no agent sends", type);
	}
}

uint32_t proc_control_fds(struct engine *e, int *fds, uint32_t max)
{
	uint32_t n = 0;
	if (e->listen_fd >= 0 && n < max)
		fds[n++] = e->listen_fd;
	for (uint32_t i = 0; i < e->nconns && n < max; i++)
		fds[n++] = e->conns[i].fd;
	return n;
}

/* Connections taken at each wake-up, at most: a flood of them (anyone
 * can connect to an abstract socket) never keeps sonde from its work. */
#define ACCEPT_BATCH 64

/* Who connects is known at once (SO_PEERCRED): only the traced process
 * gets a place; any other (a child of the -c command, which inherited
 * its environment, or anyone else) is told to stay inert and let go
 * there and then, keeping nothing of sonde's. */
static void accept_all(struct engine *e)
{
	for (int k = 0; k < ACCEPT_BATCH; k++) {
		int fd = accept4(e->listen_fd, NULL, NULL,
				 SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0)
			return;
		struct proc_conn c = { .fd = fd, .state = CONN_HELLO, .chunk = -1 };
		struct ucred cred;
		socklen_t len = sizeof(cred);
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0)
			c.pid = cred.pid;
		bool ok = traced_peer(e, &c);
		if (!ok && followed_child(e, &c))
			ok = c.child = true;
		if (!ok || e->nconns == PROC_CONNS_MAX || !take_slots(e, &c)) {
			log_info("process engine: process %d is not traced", c.pid);
			send_plain(fd, PROTO_INERT);
			close(fd);
			continue;
		}
		e->conns[e->nconns++] = c;
	}
}

/* Messages read from one connection at each wake-up, at most: an agent
 * sends one per site and a few more, and a process that sends more
 * keeps sonde from nothing else. */
#define READ_BATCH 256

/* Read what one connection has; false once it is closed. */
static bool conn_read(struct engine *e, uint32_t i, int *err)
{
	for (int k = 0; k < READ_BATCH; k++) {
		union { struct proto_report r; struct proto_attached a;
			struct proto_hello h; char raw[256]; } buf;
		ssize_t n = recv(e->conns[i].fd, &buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return true;
		if (n <= 0) {
			if (e->conns[i].state == CONN_ATTACHING)
				log_info("process engine: process %d went away "
					 "while attaching", e->conns[i].pid);
			conn_close(e, i);
			return false;
		}
		int r = proc_control_message(e, &e->conns[i], &buf, (size_t)n);
		if (r < 0 && !*err)
			*err = r;
	}
	return true;
}

int proc_control_poll(struct engine *e, const short *revents, uint32_t n)
{
	int err = 0;
	/* the connections first (their indices move as they close), then
	 * new ones */
	uint32_t first = e->listen_fd >= 0 ? 1 : 0;
	int fds[PROC_CONNS_MAX];
	uint32_t nc = n > first ? n - first : 0;
	for (uint32_t k = 0; k < nc && k < e->nconns; k++)
		fds[k] = e->conns[k].fd;
	for (uint32_t k = 0; k < nc; k++) {
		if (!revents[first + k])
			continue;
		for (uint32_t i = 0; i < e->nconns; i++)
			if (e->conns[i].fd == fds[k]) {
				conn_read(e, i, &err);
				break;
			}
	}
	if (first && revents[0])
		accept_all(e);
	if (err && !e->failed) {
		e->failed = true;
		return err;
	}
	return 0;
}

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void proc_control_detach(struct engine *e)
{
	e->attached = false;
	uint32_t waiting = 0;
	for (uint32_t i = 0; i < e->nconns; i++) {
		struct proc_conn *c = &e->conns[i];
		if (c->state == CONN_ATTACHING || c->state == CONN_ATTACHED) {
			if (send_plain(c->fd, PROTO_DETACH) == 0) {
				c->state = CONN_DETACHING;
				waiting++;
			}
		} else if (c->state == CONN_HELLO) {
			send_plain(c->fd, PROTO_INERT);
			c->state = CONN_INERT;
		}
	}
	uint64_t deadline = now_ms() + DETACH_WAIT_MS;
	while (waiting) {
		struct pollfd p[PROC_CONNS_MAX];
		uint32_t n = 0;
		for (uint32_t i = 0; i < e->nconns; i++)
			if (e->conns[i].state == CONN_DETACHING)
				p[n++] = (struct pollfd){ e->conns[i].fd, POLLIN, 0 };
		if (!n)
			break;
		uint64_t now = now_ms();
		if (now >= deadline) {
			log_warn("process engine: %u process%s did not detach in "
				 "time (stopped?); %s when %s next", n,
				 n == 1 ? "" : "es",
				 n == 1 ? "it detaches on its own" :
				 "they detach on their own",
				 n == 1 ? "it runs" : "they run");
			break;
		}
		if (poll(p, n, (int)(deadline - now)) < 0 && errno != EINTR)
			break;
		for (uint32_t k = 0; k < n; k++) {
			if (!p[k].revents)
				continue;
			for (uint32_t i = 0; i < e->nconns; i++)
				if (e->conns[i].fd == p[k].fd) {
					int err = 0;
					conn_read(e, i, &err);
					break;
				}
		}
		waiting = 0;
		for (uint32_t i = 0; i < e->nconns; i++)
			waiting += e->conns[i].state == CONN_DETACHING;
	}
}

void proc_control_close(struct engine *e)
{
	if (!e)
		return;
	while (e->nconns)
		conn_close(e, e->nconns - 1);
	if (e->listen_fd >= 0)
		close(e->listen_fd);
	if (e->wake_fd >= 0)
		close(e->wake_fd);
	e->listen_fd = e->wake_fd = -1;
	for (int i = 0; i < 2; i++) {
		free(e->env[i]);
		e->env[i] = NULL;
	}
}
