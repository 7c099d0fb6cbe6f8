/* agent.c - the agent's sessions: connecting to sonde (from the -c
 * constructor, or from sonde_agent_attach when injected), taking the
 * program, finding and patching the sites, raising the semaphores, and
 * undoing all of it when sonde says DETACH, when sonde dies, or in a
 * fork()ed child. The channel is described in proto.h, the hit path in
 * agent.h. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "../program.h"
#include "agent_int.h"
#include "fprobe.h"
#include "proto.h"

#define SETUP_WAIT_MS 10000
#define QUIESCE_NS 2000000000ull

/* The agent's descriptors live in the program's table, which the program
 * may close wholesale (daemons do) and reuse. They are moved up out of
 * the way, and each is used or closed only while it is still the file
 * it was (its inode), never one the program opened since. */
#define FD_HIGH 512

static int fd_move_high(int fd)
{
	int high = fcntl(fd, F_DUPFD_CLOEXEC, FD_HIGH);
	if (high < 0)
		return fd;
	close(fd);
	return high;
}

static uint64_t fd_ino(int fd)
{
	struct stat st;
	return fd >= 0 && fstat(fd, &st) == 0 ? (uint64_t)st.st_ino : 0;
}

static bool fd_is(int fd, uint64_t ino)
{
	return fd >= 0 && ino && fd_ino(fd) == ino;
}

static void fd_close(int fd, uint64_t ino)
{
	if (fd_is(fd, ino))
		close(fd);
}

struct agent_live *agent_live;
/* The session for bookkeeping (the fork child undoes it): not in the
 * wiped page. */
static struct agent_session *current;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int init_error;

static void at_fork_prepare(void)
{
	agent_patch_lock();
}

static void at_fork_parent(void)
{
	agent_patch_unlock();
}

static int attach_to(const char *name, uint32_t hello_flags);

/* The name of the channel this process was traced through, for a
 * fork()ed child that asks for a session of its own (--follow-forks). */
static char channel[PROTO_SOCKET_MAX + 1];

/* Patches a followed child adopted (agent_fork.c), for its session to
 * put back: sonde's function sites, in the child's copy of the code. */
#define ADOPTED_MAX 4096
static uint32_t adopted[ADOPTED_MAX], nadopted;

uint32_t agent_adopted(const uint32_t **ids)
{
	*ids = adopted;
	return nadopted;
}

/* The parent's session, as a fork()ed child has it: let go of its
 * channel and region and lower its semaphores (a session of the child's
 * own raises them again). */
static void drop_parent_session(struct agent_session *s)
{
	for (uint32_t i = 0; i < s->nsemas; i++)
		if (*s->semas[i])
			(*s->semas[i])--;
	fd_close(s->sock, s->sock_ino);
	fd_close(s->wake_fd, s->wake_ino);
	rt_proc.ring = NULL;
	rt_close(&s->rt);
	/* its memory is this process's copy, which no thread here runs */
	for (uint32_t i = 0; i < s->nprogs; i++)
		vm_prog_free(s->progs[i]);
	agent_free(s->mem, s->mem_bytes);
	agent_free(s->section, s->section_size);
	agent_free(s, sizeof(*s));
}

/* The child of a fork. Untraced (the default), it puts its copy of the
 * code and semaphores back and lets go of the channel and the region.
 * With --follow-forks it keeps the code as it is, makes sonde's patches
 * its own, and asks sonde for a session of its own, before fork()
 * returns in it: its probes run from its first instruction on. If sonde
 * says no (its parent went away meanwhile, too many processes), it puts
 * everything back as an untraced child does. It has one thread. */
static void at_fork_child(void)
{
	agent_patch_unlock();
	agent_loads_child();
	struct agent_session *s = current;
	current = NULL;
	if (agent_live)
		agent_live->session = NULL;
	if (s && s->follow) {
		drop_parent_session(s);
		agent_threads_child();
		agent_patch_lock();
		nadopted += agent_adopt_child(adopted + nadopted,
					      ADOPTED_MAX - nadopted);
		agent_patch_unlock();
		if (attach_to(channel, PROTO_HELLO_F_FORKED) == 0)
			return;
		agent_patch_restore_all_child();   /* the adopted ones too */
		fprobe_restore_child();
		nadopted = 0;
		return;
	}
	agent_patch_restore_all_child();
	fprobe_restore_child();     /* the function probes sonde patched */
	if (s)
		drop_parent_session(s);
}

static void init(void)
{
	agent_live = agent_alloc(4096);
	if (!agent_live) {
		init_error = -ENOMEM;
		return;
	}
	/* a child made by any fork reads no session here */
	madvise(agent_live, 4096, MADV_WIPEONFORK);
	agent_threads_init();
	pthread_atfork(at_fork_prepare, at_fork_parent, at_fork_child);
}

/* ---- the channel ---- */

static int conn_open(const char *name)
{
	size_t n = strnlen(name, PROTO_SOCKET_MAX + 1);
	if (n == 0 || n > PROTO_SOCKET_MAX)
		return -EINVAL;
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	memcpy(a.sun_path + 1, name, n);
	socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
	if (connect(fd, (struct sockaddr *)&a, len) < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	/* Anyone can listen on an abstract name, sonde's too once sonde is
	 * gone (a -c command that execs after sonde was killed asks again):
	 * the listener must be the sonde the name names (its pid is in it,
	 * proto.h), run by root or by this process's own user. A pid of 0
	 * is a listener outside this process's pid namespace: a sonde
	 * reaching into a container with -p, which asks once, while sonde
	 * holds the name. */
	struct ucred cred;
	socklen_t clen = sizeof(cred);
	long want = 0;
	const char *p = strchr(name, '-');
	for (p = p ? p + 1 : ""; *p >= '0' && *p <= '9' && want < (1L << 40); p++)
		want = want * 10 + (*p - '0');
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) < 0 ||
	    (cred.pid != 0 && (cred.pid != want ||
			       (cred.uid != 0 && cred.uid != geteuid())))) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

static void send_msg(int fd, const void *m, size_t n)
{
	ssize_t k;
	do
		k = send(fd, m, n, MSG_NOSIGNAL);
	while (k < 0 && errno == EINTR);
}

/* One message, with up to two descriptors; -ETIMEDOUT, -errno, or its
 * length (0: the connection ended). */
static ssize_t recv_msg(int fd, void *buf, size_t n, int *fds, int timeout_ms)
{
	struct pollfd p = { fd, POLLIN, 0 };
	int r;
	do
		r = poll(&p, 1, timeout_ms);
	while (r < 0 && errno == EINTR);
	if (r == 0)
		return -ETIMEDOUT;
	char cbuf[CMSG_SPACE(2 * sizeof(int))];
	struct iovec iov = { buf, n };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	ssize_t k;
	do
		k = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC);
	while (k < 0 && errno == EINTR);
	if (k < 0)
		return -errno;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		size_t nfd = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		int got[2] = { -1, -1 };
		memcpy(got, CMSG_DATA(c), (nfd > 2 ? 2 : nfd) * sizeof(int));
		for (size_t i = 0; i < nfd && i < 2; i++) {
			if (fds && fds[i] < 0)
				fds[i] = got[i];
			else
				close(got[i]);
		}
	}
	return k;
}

static void report(struct agent_session *s, uint32_t site, int status,
		   uint64_t addr, const char *text)
{
	struct proto_report m = { .type = PROTO_REPORT, .site = site,
				  .status = status, .addr = addr };
	if (text) {
		size_t n = strnlen(text, sizeof(m.text) - 1);
		memcpy(m.text, text, n);
	}
	if (fd_is(s->sock, s->sock_ino))
		send_msg(s->sock, &m, sizeof(m));
}

void agent_site_event(struct agent_session *s, uint32_t event, uint64_t addr,
		      uint64_t ms)
{
	struct proto_site_msg m = { .type = PROTO_SITE, .event = event,
				.addr = addr, .ms = ms };
	if (fd_is(s->sock, s->sock_ino))
		send_msg(s->sock, &m, sizeof(m));
}

/* ---- the kinds of sites ---- */

/* Prepare the patch of one site found at addr: *id, or -errno with why.
 * A new kind of site (a function's entry or return) is one more case:
 * check the code there, then add its patch (agent.h). */
static int site_prepare(const struct proto_site *t, uint64_t addr,
			uint32_t *id, char *why, size_t len)
{
	switch (t->kind) {
	case PROTO_SITE_USDT: {
		/* the nop the file has, or our own patch of it (two probes on
		 * one site) */
		struct agent_patch *old = agent_patch_find(addr);
		char hb[16];
		if (!(old && old->applied) &&
		    !rt_memeq((const void *)addr, t->expect, t->len)) {
			snprintf(why, len, "the code at 0x%llx is %s, not the nop "
				 "the file has (a breakpoint of a debugger or a "
				 "kernel uprobe?)", (unsigned long long)addr,
				 agent_hexbytes(hb, (const uint8_t *)addr, t->len));
			return -EBUSY;
		}
		int r = agent_patch_add(addr, t->expect, t->len,
					t->len == 5 ? PATCH_JMP : PATCH_INT3, id);
		if (r < 0)
			snprintf(why, len, "cannot prepare its patch: %s",
				 r == -ENOMEM ? "no memory for a trampoline within "
				 "2 GiB of it" : strerror(-r));
		return r;
	}
	default:
		snprintf(why, len, "a kind of site this agent does not know (%u)",
			 t->kind);
		return -EINVAL;
	}
}

/* ---- a session ---- */

/* site_patch[i] of a site whose patch could not be made (reported) */
#define SITE_GIVEN_UP (UINT32_MAX - 1)
/* of a stock site sonde patched itself, after its nop (fprobe.c runs it) */
#define SITE_SONDE (UINT32_MAX - 2)

static void *take(uint8_t **cur, size_t bytes)
{
	void *p = *cur;
	*cur += (bytes + 15) & ~(size_t)15;
	return p;
}

/* Note a site's is-enabled semaphore (once) to be raised. */
static void add_sema(struct agent_session *s, const struct agent_maps *maps,
		     const struct proto_file *f, uint64_t sema_offset, uint32_t ns)
{
	uint64_t sema = sema_offset ?
		agent_address_of(maps, f, sema_offset, PROT_READ | PROT_WRITE) : 0;
	bool seen = false;
	for (uint32_t k = 0; k < s->nsemas; k++)
		seen |= (uint64_t)(uintptr_t)s->semas[k] == sema;
	if (sema && !seen && !(sema & 1) && s->nsemas < ns)
		s->semas[s->nsemas++] = (uint16_t *)(uintptr_t)sema;
}

/* Find the sites of the session not patched yet among what the process
 * maps now, patch them, raise their semaphores, report each. At the
 * start of a session, and again after each dlopen() (a library that
 * carries sites may come later: a JVM's libjvm.so). Under the patch lock,
 * with the session published. */
static int session_scan(struct agent_session *s)
{
	struct section sec;
	int r = agent_section_read(&sec, s->section, s->section_size);
	if (r < 0)
		return r;
	uint32_t ns = sec.h.nsites;
	struct agent_maps maps;
	if ((r = agent_maps_read(&maps)) < 0)
		return r;
	/* the sites found now, with their patches */
	uint32_t *found = agent_alloc((ns + 2 * AGENT_PATCH_MAX) * sizeof(uint32_t));
	if (!found) {
		agent_maps_free(&maps);
		return -ENOMEM;
	}
	uint32_t *count = found + ns, *cursor = count + AGENT_PATCH_MAX;
	uint32_t nfound = 0, semas_before = s->nsemas;
	for (uint32_t i = 0; i < ns; i++) {
		uint32_t was = s->site_patch[i];
		struct agent_patch *old = was < SITE_GIVEN_UP ? agent_patch_get(was) :
			NULL;
		/* patched already, or given up; or its code went with a
		 * library (dlclose) and is looked for again */
		if (was == SITE_GIVEN_UP || (old && !old->gone))
			continue;
		const struct proto_site *t = &sec.sites[i];
		const struct proto_file *f = &sec.files[t->file];
		uint64_t addr = agent_address_of(&maps, f, t->offset, PROT_EXEC);
		if (!addr)
			continue;          /* not in this process (yet) */
		/* sonde's still; or its library went and came again, and
		 * sonde could not patch it this time: a patch of the agent's */
		if (was == SITE_SONDE && fprobe_patched_at(addr + 1))
			continue;
		if (was == SITE_SONDE)
			s->nsonde--;
		uint32_t id;
		char text[160];
		if (t->kind == PROTO_SITE_USDT && t->len == 1 &&
		    fprobe_patched_at(addr + 1)) {
			/* sonde's jump after the nop runs its programs */
			s->site_patch[i] = SITE_SONDE;
			s->nsonde++;
			report(s, i, 0, addr, NULL);
			add_sema(s, &maps, f, t->sema_offset, ns);
			continue;
		}
		r = site_prepare(t, addr, &id, text, sizeof(text));
		bool again = r == 0 && id == was && s->sites[id];
		if (r < 0 || (!again && s->sites[id] && !count[id])) {
			if (r >= 0)
				snprintf(text, sizeof(text), "its address is "
					 "another site's already");
			report(s, i, r < 0 ? r : -EEXIST, addr, text);
			s->site_patch[i] = SITE_GIVEN_UP;
			continue;
		}
		s->site_patch[i] = id;
		found[nfound++] = i;
		if (!again)
			count[id]++;     /* new in this session's table */
		add_sema(s, &maps, f, t->sema_offset, ns);
	}
	agent_maps_free(&maps);

	/* which programs run at which patch, in site order: a counting sort
	 * of the new sites by patch, appended to the session's table; a
	 * patch's entry is published last (hits read it first) */
	uint32_t at = s->nsite_progs;
	for (uint32_t k = 0; k < nfound; k++) {
		uint32_t id = s->site_patch[found[k]];
		if (cursor[id] || !count[id])
			continue;
		cursor[id] = at + 1;
		at += count[id];
	}
	for (uint32_t k = 0; k < nfound; k++) {
		uint32_t i = found[k], id = s->site_patch[i];
		if (!count[id])
			continue;
		uint32_t slot = cursor[id]++ - 1;
		s->site_progs[slot] = sec.sites[i].probe;
		s->site_fns[slot] = s->fns[sec.sites[i].probe];
	}
	__atomic_store_n(&s->nsite_progs, at, __ATOMIC_RELEASE);
	for (uint32_t k = 0; k < nfound; k++) {
		uint32_t id = s->site_patch[found[k]];
		if (s->sites[id] || !count[id])
			continue;
		uint32_t first = cursor[id] - 1 - count[id];
		__atomic_store_n(&s->sites[id], (uint64_t)first << 32 | count[id],
				 __ATOMIC_RELEASE);
	}

	agent_tramp_seal();
	for (uint32_t k = 0; k < nfound; k++) {
		uint32_t i = found[k], id = s->site_patch[i];
		struct agent_patch *p = agent_patch_get(id);
		bool mine = false;
		for (uint32_t j = 0; j < s->napplied && !mine; j++)
			mine = s->applied[j] == id;
		if (mine && p->applied) {
			report(s, i, 0, p->addr, NULL);    /* a shared address */
			continue;
		}
		r = agent_patch_apply(p);
		if (r < 0) {
			char text[160];
			snprintf(text, sizeof(text), "cannot write the code at "
				 "0x%llx: %s", (unsigned long long)p->addr,
				 strerror(-r));
			report(s, i, r, p->addr, text);
			continue;
		}
		if (!mine)
			s->applied[s->napplied++] = id;
		report(s, i, 0, p->addr, NULL);
	}
	for (uint32_t k = semas_before; k < s->nsemas; k++)
		__atomic_add_fetch(s->semas[k], 1, __ATOMIC_SEQ_CST);
	agent_free(found, (ns + 2 * AGENT_PATCH_MAX) * sizeof(uint32_t));
	return 0;
}

/* Everything but the waiting: build the session, publish it, patch,
 * report. On failure `why` says it for sonde (the session is then
 * ended). */
static int session_build(struct agent_session *s, const struct proto_setup *m,
			 char *why, size_t whylen)
{
	int r = rt_open(s->memfd, m->region_size, &s->rt);
	if (r < 0) {
		snprintf(why, whylen, "cannot map the shared memory: %s",
			 strerror(-r));
		return r;
	}
	/* the section is copied first (sonde's side may write the region)
	 * and kept for the scans after dlopen() */
	uint64_t psize = s->rt.hdr.prog_size;
	s->section = agent_alloc(psize);
	s->section_size = psize;
	struct section sec;
	if (!s->section)
		return -ENOMEM;
	memcpy(s->section, s->rt.base + s->rt.hdr.prog_off, psize);
	if ((r = agent_section_read(&sec, s->section, psize)) < 0) {
		snprintf(why, whylen, "the program section is malformed");
		return r;
	}
	uint32_t np = sec.h.nprobes, ns = sec.h.nsites;
	size_t bytes = np * (sizeof(*s->progs) + sizeof(*s->fns)) +
		AGENT_PATCH_MAX * sizeof(uint64_t) +
		ns * (sizeof(uint32_t) * 3 + sizeof(vm_native_fn) +
		      sizeof(uint16_t *)) + 16 * 16;
	uint8_t *cur = s->mem = agent_alloc(bytes);
	s->mem_bytes = bytes;
	if (!cur)
		return -ENOMEM;
	s->progs = take(&cur, np * sizeof(*s->progs));
	s->fns = take(&cur, np * sizeof(*s->fns));
	s->sites = take(&cur, AGENT_PATCH_MAX * sizeof(uint64_t));
	s->site_progs = take(&cur, ns * sizeof(uint32_t));
	s->site_fns = take(&cur, ns * sizeof(vm_native_fn));
	s->applied = take(&cur, ns * sizeof(uint32_t));
	s->site_patch = take(&cur, ns * sizeof(uint32_t));
	s->semas = take(&cur, ns * sizeof(uint16_t *));
	for (uint32_t i = 0; i < ns; i++)
		s->site_patch[i] = UINT32_MAX;

	/* the programs */
	struct vm_env env = {
		.helpers = (const vm_helper_fn *)rt_helpers,
		.nhelpers = rt_nhelpers, .maps = s->rt.map_addrs,
		.nmaps = s->rt.nmaps, .no_jit = m->flags & PROTO_F_NO_JIT,
	};
	for (uint32_t i = 0; i < np; i++) {
		const struct proto_probe *p = &sec.probes[i];
		char err[160] = "";
		s->progs[i] = vm_prog_load((const void *)(sec.base + p->insns_off),
					   p->ninsns, &env, err, sizeof(err));
		if (!s->progs[i]) {
			snprintf(why, whylen, "probe %s: cannot load: %s",
				 sec.strings + p->name_off, err);
			return -EINVAL;
		}
		s->nprogs = i + 1;
		s->fns[i] = vm_prog_native(s->progs[i]);
	}
	if ((r = agent_signals_init()) < 0) {
		snprintf(why, whylen, "cannot install its signal handlers: %s",
			 strerror(-r));
		return r;
	}
	/* published before the patches go in, so the first hit runs */
	rt_process_init(true);
	rt_proc.ring = &s->rt.ring;
	s->rt.ring.wake_fd = s->wake_fd;
	s->rt.ring.wake_ino = s->wake_ino;
	current = s;
	__atomic_store_n(&agent_live->session, s, __ATOMIC_RELEASE);
	agent_live->pid = rt_proc.pid;
	if ((r = session_scan(s)) < 0)
		snprintf(why, whylen, "cannot find its sites: %s", strerror(-r));
	return r;
}

/* After the program unloaded a library: the patches it took away are
 * forgotten, and their sites looked for again at the next scan. */
void agent_unmapped(void)
{
	if (!agent_live)
		return;
	agent_patch_lock();
	agent_patch_forget_unmapped();
	agent_patch_unlock();
}

void agent_scan_new(void)
{
	agent_patch_lock();
	struct agent_session *s = current;
	struct section sec;
	bool pending = false;
	if (s && agent_live->session == s &&
	    agent_section_read(&sec, s->section, s->section_size) == 0) {
		/* a site not found yet, or whose library went away (or
		 * came again, sonde's patch of it gone): the maps are read
		 * only then (Python loads dozens of modules) */
		for (uint32_t i = 0; i < sec.h.nsites && !pending; i++) {
			uint32_t id = s->site_patch[i];
			struct agent_patch *p = id < SITE_GIVEN_UP ?
				agent_patch_get(id) : NULL;
			pending = id == UINT32_MAX || id == SITE_SONDE ||
				  (p && p->gone);
		}
	}
	if (pending)
		session_scan(s);
	agent_patch_unlock();
}

bool agent_channel(int *fd, uint64_t *ino, bool *late)
{
	agent_patch_lock();
	struct agent_session *s = current;
	bool ok = s && agent_live && agent_live->session == s;
	*fd = ok ? s->sock : -1;
	*ino = ok ? s->sock_ino : 0;
	*late = ok && s->late;
	agent_patch_unlock();
	return ok;
}

void agent_send(int fd, uint64_t ino, const void *m, size_t n)
{
	if (fd_is(fd, ino))
		send_msg(fd, m, n);
}

/* Undo a session: code, semaphores, then (once no thread is inside it)
 * its memory. Under the patch lock but for the wait. */
static void session_end(struct agent_session *s, bool reply)
{
	struct proto_attached m = { .type = PROTO_DETACHED };
	agent_patch_lock();
	if (agent_live && agent_live->session == s) {
		__atomic_store_n(&agent_live->session, NULL, __ATOMIC_RELEASE);
		agent_barrier_all();
	}
	for (uint32_t i = 0; i < s->napplied; i++) {
		struct agent_patch *p = agent_patch_get(s->applied[i]);
		if (p && agent_patch_restore(p) == 0)
			m.patched++;
		else
			m.failed++;
	}
	s->napplied = 0;
	/* a followed child's copies of sonde's patches (at_fork_child) */
	for (uint32_t i = 0; i < nadopted; i++) {
		struct agent_patch *p = agent_patch_get(adopted[i]);
		if (p && agent_patch_restore(p) == 0)
			m.patched++;
		else
			m.failed++;
	}
	nadopted = 0;
	for (uint32_t i = 0; i < s->nsemas; i++) {
		uint16_t v = __atomic_load_n(s->semas[i], __ATOMIC_SEQ_CST);
		while (v && !__atomic_compare_exchange_n(s->semas[i], &v, v - 1,
							 false, __ATOMIC_SEQ_CST,
							 __ATOMIC_SEQ_CST))
			;
		m.semaphores++;
	}
	s->nsemas = 0;
	if (current == s)
		current = NULL;
	agent_patch_unlock();
	bool quiet = agent_quiesce(QUIESCE_NS);
	if (reply && fd_is(s->sock, s->sock_ino))
		send_msg(s->sock, &m, sizeof(m));
	fd_close(s->sock, s->sock_ino);
	fd_close(s->wake_fd, s->wake_ino);
	if (!quiet)
		return;     /* a thread is stuck inside: leave it all mapped */
	if (rt_proc.ring == &s->rt.ring)
		rt_proc.ring = NULL;
	for (uint32_t i = 0; i < s->nprogs; i++)
		vm_prog_free(s->progs[i]);
	rt_close(&s->rt);
	agent_free(s->mem, s->mem_bytes);
	agent_free(s->section, s->section_size);
	agent_free(s, sizeof(*s));
}

/* A system call made directly: what control_wait does runs after the
 * program's functions are patched, and a probe on the C library's
 * nanosleep() or read() must not see the agent's own. */
static long raw_syscall(long nr, long a, long b, long c, long d)
{
	long ret;
	register long r10 __asm__("r10") = d;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10)
			 : "rcx", "r11", "memory");
	return ret;
}

/* The control thread's tid once it runs (0 before): sonde_agent_attach
 * waits until that thread is blocked in recv() (control_wait). */
static uint32_t control_tid;

/* Sets how long the session's thread waits in recv() before it checks
 * the sites (agent_watch), on its socket only. */
static void recv_timeout(struct agent_session *s, long ms)
{
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };
	if (fd_is(s->sock, s->sock_ino))
		setsockopt(s->sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

/* Waits for DETACH, or for the channel to end (sonde died); checks the
 * sites every AGENT_WATCH_MS meanwhile. The first wait is a second: a
 * program that closes every descriptor as it starts finds the thread
 * inside recv(), which keeps the socket (control_wait). */
static void *control_main(void *arg)
{
	struct agent_session *s = arg;
	ssize_t n;
	bool watching = false;
	__atomic_store_n(&control_tid, (uint32_t)raw_syscall(SYS_gettid, 0, 0, 0, 0),
			 __ATOMIC_RELEASE);
	/* -p: slow, so not before the agent said it is attached */
	agent_patch_register();
	recv_timeout(s, 1000);
	for (;;) {
		union { struct proto_plain p; struct proto_mapped d; } u;
		memset(&u, 0, sizeof(u));
		struct proto_plain m = { 0 };
		n = recv(s->sock, &u, sizeof(u), 0);
		memcpy(&m, &u, sizeof(m));
		if (n == (ssize_t)sizeof(u.d) && u.d.type == PROTO_MAPPED_DONE &&
		    fd_is(s->sock, s->sock_ino)) {
			agent_loads_answered(u.d.seq);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			agent_watch(s, agent_loads_untold());
			agent_loads_watch();
			if (!watching) {
				recv_timeout(s, AGENT_WATCH_MS);
				watching = true;
			}
			continue;
		}
		/* a message from a descriptor the program has reused is not
		 * sonde's: the channel is gone */
		if (n > 0 && !fd_is(s->sock, s->sock_ino))
			n = 0;
		if (n <= 0 || m.type == PROTO_DETACH)
			break;
	}
	session_end(s, n > 0);
	agent_loads_closed();     /* a thread waiting for sonde goes on */
	return NULL;
}

static int control_start(struct agent_session *s)
{
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 << 10);
	/* the thread takes none of the target's signals */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_t t;
	int r = pthread_create(&t, &attr, control_main, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (r == 0)
		pthread_setname_np(t, "sonde-agent");
	return -r;
}

/* Whether thread tid is blocked in recv() (recvfrom), as
 * /proc/self/task/TID/syscall says; true when that cannot be read. */
static bool in_recv(uint32_t tid)
{
	char path[48] = "/proc/self/task/", digits[12], buf[32];
	size_t len = strlen(path), nd = 0;
	do
		digits[nd++] = (char)('0' + tid % 10);
	while ((tid /= 10) && nd < sizeof(digits));
	while (nd)
		path[len++] = digits[--nd];
	memcpy(path + len, "/syscall", sizeof("/syscall"));
	long fd = raw_syscall(SYS_openat, AT_FDCWD, (long)path,
			      O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return true;
	long n = raw_syscall(SYS_read, fd, (long)buf, sizeof(buf) - 1, 0);
	raw_syscall(SYS_close, fd, 0, 0, 0);
	if (n <= 0)
		return true;
	long nr = 0;
	for (long i = 0; i < n && buf[i] >= '0' && buf[i] <= '9'; i++)
		nr = nr * 10 + (buf[i] - '0');
	return buf[0] >= '0' && buf[0] <= '9' && nr == SYS_recvfrom;
}

/* Before the program's main() runs, the control thread's recv() must be
 * under way: a program that closes every descriptor first thing (as
 * daemons do) would otherwise close the channel before it, and the
 * session would end at once, its probes never run. A recv() already
 * blocked keeps its socket (close() does not interrupt it) until sonde
 * speaks or goes. Bounded: a thread not there in time is not waited
 * for. */
#define CONTROL_WAIT_MS 2000

static void control_wait(void)
{
	struct timespec nap = { 0, 100 * 1000 };
	for (uint32_t waited = 0; waited < CONTROL_WAIT_MS * 10; waited++) {
		uint32_t tid = __atomic_load_n(&control_tid, __ATOMIC_ACQUIRE);
		if (tid && in_recv(tid))
			return;
		raw_syscall(SYS_nanosleep, (long)&nap, 0, 0, 0);
	}
}

int sonde_agent_attach(const char *name) __attribute__((visibility("default")));
void *sonde_agent_attach_thread(void *name) __attribute__((visibility("default")));

/* What the thread sonde starts in a process it attaches to (-p) runs:
 * detached, so that its stack is freed when it ends (a joinable thread
 * nobody joins kept 8 MiB of every attach mapped). */
void *sonde_agent_attach_thread(void *name)
{
	pthread_detach(pthread_self());
	return (void *)(intptr_t)sonde_agent_attach(name);
}

int sonde_agent_attach(const char *name)
{
	return attach_to(name, 0);
}

static int attach_to(const char *name, uint32_t hello_flags)
{
	pthread_once(&init_once, init);
	if (init_error)
		return init_error;
	if (agent_live->session)
		return -EBUSY;
	int fd = conn_open(name);
	if (fd < 0)
		return fd;
	struct proto_hello hello = { .type = PROTO_HELLO,
				     .version = PROTO_VERSION,
				     .pid = (uint32_t)getpid(),
				     .flags = hello_flags };
	send_msg(fd, &hello, sizeof(hello));
	struct proto_setup m;
	int fds[2] = { -1, -1 };
	ssize_t n = recv_msg(fd, &m, sizeof(m), fds, SETUP_WAIT_MS);
	/* sonde tells a process it does not trace to stay inert and closes
	 * at once: the reset that closing reports comes before the
	 * message, which is there to read */
	if (n == -ECONNRESET)
		n = recv_msg(fd, &m, sizeof(m), fds, 100);
	if (n < (ssize_t)sizeof(m) || m.type != PROTO_SETUP || fds[0] < 0 ||
	    fds[1] < 0 || m.version != PROTO_VERSION) {
		int r = n >= 4 && m.type == PROTO_INERT ? -EPERM :
			n < 0 ? (int)n : -EPROTO;
		if (fds[0] >= 0)
			close(fds[0]);
		if (fds[1] >= 0)
			close(fds[1]);
		close(fd);
		return r;
	}
	struct agent_session *s = agent_alloc(sizeof(*s));
	if (!s) {
		close(fds[0]);
		close(fds[1]);
		close(fd);
		return -ENOMEM;
	}
	s->sock = fd_move_high(fd);
	s->memfd = fds[0];
	s->wake_fd = fd_move_high(fds[1]);
	s->sock_ino = fd_ino(s->sock);
	s->wake_ino = fd_ino(s->wake_fd);
	fd = s->sock;
	s->slot_first = m.slot_first;
	s->slot_count = m.slot_count;
	s->follow = m.flags & PROTO_F_FOLLOW_FORKS;
	s->late = m.flags & PROTO_F_LATE;
	if (name != channel)
		snprintf(channel, sizeof(channel), "%s", name);
	struct proto_attached a = { .type = PROTO_ATTACHED };
	/* what is loaded now is scanned now (before the patch lock: the
	 * loader's lock is never taken under it) */
	agent_loads_session();
	agent_patch_lock();
	int r = session_build(s, &m, a.text, sizeof(a.text));
	agent_patch_unlock();
	close(s->memfd);     /* the mapping keeps the memory */
	s->memfd = -1;
	__atomic_store_n(&control_tid, 0, __ATOMIC_RELEASE);
	if (r == 0 && (r = control_start(s)) < 0)
		snprintf(a.text, sizeof(a.text), "cannot start its thread: %s",
			 strerror(-r));
	a.patched = s->napplied;
	a.patched += s->nsonde;
	a.semaphores = s->nsemas;
	send_msg(fd, &a, sizeof(a));
	if (r < 0)
		session_end(s, false);
	else
		control_wait();      /* s may be gone by now: not used */
	return r;
}

/* Remove the agent from the environment, so what this process starts
 * does not load it again. */
static void scrub_env(void)
{
	unsetenv(PROTO_ENV_SOCKET);
	Dl_info info;
	const char *pre = getenv("LD_PRELOAD");
	if (!pre || !dladdr((void *)scrub_env, &info) || !info.dli_fname)
		return;
	size_t plen = strlen(info.dli_fname), n = strlen(pre);
	char *rest = malloc(n + 1);
	if (!rest)
		return;
	size_t k = 0;
	for (const char *p = pre; *p;) {
		size_t len = strcspn(p, ": ");
		if (len && !(len == plen && memcmp(p, info.dli_fname, len) == 0)) {
			if (k)
				rest[k++] = ':';
			memcpy(rest + k, p, len);
			k += len;
		}
		p += len;
		if (*p)
			p++;
	}
	rest[k] = '\0';
	if (k)
		setenv("LD_PRELOAD", rest, 1);
	else
		unsetenv("LD_PRELOAD");
	free(rest);
}

/* LD_PRELOAD: before main(), attach if sonde asked for it. */
__attribute__((constructor)) static void agent_preload(void)
{
	const char *name = getenv(PROTO_ENV_SOCKET);
	if (!name || !*name)
		return;
	agent_patch_register();   /* before main(), as the patches are */
	int r = sonde_agent_attach(name);
	/* not traced (a child of the traced command, or sonde is gone):
	 * its own children need not ask */
	if (r == -EPERM || r == -ECONNREFUSED || r == -ENOENT)
		scrub_env();
}
