/* hostile.c - a traced program that attacks the process engine, for
 * tests/system/trust: it calls tick() every millisecond (the function
 * the tests probe), prints "ready", and, once sonde's agent has mapped
 * the shared region (found in /proc/self/maps), does what MODE says:
 *
 *   loop       nothing: a well-behaved target
 *   garbage    random bytes over the region's header and ring, again and
 *              again
 *   ringlen    a record whose length is past the ring
 *   truncate   ftruncate() the region's memfd to 0 (the descriptor is
 *              kept by interposing recvmsg, through which the agent gets
 *              it); prints "truncate: <result>"
 *   forge      a well-formed record of event 0 (the script's first
 *              printf, in BEGIN) with the argument 666
 *   say        connects to sonde's socket itself and says its attach
 *              failed, with escape codes in the reason
 *   fifo       before all that: maps a file named libc-evil.so at a low
 *              address, deletes it, and puts a FIFO where "(deleted)"
 *              names it (DIR, the second argument, is where)
 *   slowconnect  connect() sleeps 60 s (the agent's attach hangs)
 *   mapped     loads DIR/libstock.so (its own copy of the probes'
 *              library, at another path), then on its agent's socket
 *              says 5000 times that it mapped a library (PROTO_MAPPED),
 *              then once with 4096 bytes: sonde patches nothing of its
 *              copy, answers without stopping it past a bound, and ends
 *              the session at the long one; prints "mapped: N sent"
 *
 *   hostile MODE [DIR]
 *
 * It exits 0 on SIGTERM, having checked its own computations all along
 * (3 if one went wrong). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "../../src/agent/proto.h"
#include "../../src/runtime/shm.h"

static const char *mode = "loop";
static volatile sig_atomic_t stop;
static volatile int kept_fd = -1;

__attribute__((noinline)) long tick(long i)
{
	__asm__ volatile("" ::: "memory");
	return i * 3 + 1;
}

/* A function whose first instruction writes an argument register and is
 * shorter than a jump: the process engine refuses it (a kernel uprobe on
 * it could not be survived). Returns x + 1. */
__asm__(".text\n"
	".globl argmove\n.type argmove,@function\n"
	"argmove:\n"
	"  mov %rdi, %rsi\n  lea 1(%rsi), %rax\n  ret\n"
	".size argmove, .-argmove\n");
long argmove(long x);

/* The agent gets the region's memfd in a recvmsg: keep a copy. */
ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
	static ssize_t (*real)(int, struct msghdr *, int);
	if (!real)
		real = (ssize_t (*)(int, struct msghdr *, int))dlsym(RTLD_NEXT,
								     "recvmsg");
	ssize_t n = real(fd, msg, flags);
	if (n > 0 && strcmp(mode, "truncate") == 0 && kept_fd < 0)
		for (struct cmsghdr *c = CMSG_FIRSTHDR(msg); c; c = CMSG_NXTHDR(msg, c))
			if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
				int got;
				memcpy(&got, CMSG_DATA(c), sizeof(got));
				kept_fd = dup(got);
			}
	return n;
}

int connect(int fd, const struct sockaddr *a, socklen_t len)
{
	static int (*real)(int, const struct sockaddr *, socklen_t);
	if (!real)
		real = (int (*)(int, const struct sockaddr *, socklen_t))dlsym(
			RTLD_NEXT, "connect");
	if (strcmp(mode, "slowconnect") == 0)
		sleep(60);
	return real(fd, a, len);
}

static void on_term(int sig)
{
	stop = 1;
}

/* The region as the agent maps it (its first mapping, offset 0). */
static uint8_t *region(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	uint8_t *base = NULL;
	while (f && !base && fgets(line, sizeof(line), f)) {
		unsigned long start, end, off;
		if (strstr(line, "sonde-region") &&
		    sscanf(line, "%lx-%lx %*s %lx", &start, &end, &off) == 3 &&
		    off == 0)
			base = (uint8_t *)start;
	}
	if (f)
		fclose(f);
	return base;
}

static uint64_t rng = 88172645463325252ull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* A record in the ring as a producer writes it (this is the only one
 * writing records now: its probes make none). */
static void put_record(uint8_t *base, const void *data, uint32_t len)
{
	struct rt_header *h = (struct rt_header *)base;
	uint8_t *ring = base + h->ring_off;
	uint64_t p = __atomic_load_n(&h->ring_prod, __ATOMIC_ACQUIRE);
	uint64_t total = (len + RT_RING_HDR + 7) & ~7ull;
	uint32_t *hdr = (uint32_t *)(ring + (p & (h->ring_size - 1)));
	memcpy((uint8_t *)hdr + RT_RING_HDR, data, len);
	__atomic_store_n(hdr, len, __ATOMIC_RELEASE);
	__atomic_store_n(&h->ring_prod, p + total, __ATOMIC_RELEASE);
}

static void attack(uint8_t *base)
{
	struct rt_header *h = (struct rt_header *)base;
	if (strcmp(mode, "garbage") == 0) {
		/* the ring's positions and records, and what follows the
		 * header, over and over */
		for (size_t i = offsetof(struct rt_header, ring_prod);
		     i < sizeof(*h); i += 8)
			*(uint64_t *)(base + i) = next();
		for (size_t i = 0; i < 4096; i += 8)
			*(uint64_t *)(base + h->ring_off + i) = next();
	} else if (strcmp(mode, "ringlen") == 0) {
		uint64_t c = h->ring_cons;
		uint32_t *hdr = (uint32_t *)(base + h->ring_off +
					     (c & (h->ring_size - 1)));
		*hdr = 0x3ffffff0;
		h->ring_prod = c + 64;
	} else if (strcmp(mode, "forge") == 0) {
		uint64_t rec[2] = { 0, 666 };
		put_record(base, rec, sizeof(rec));
	}
}

/* What the agent would say, said by the program itself on a connection
 * of its own (it is the traced process: sonde lets it in). */
static void say(void)
{
	FILE *f = fopen("/proc/net/unix", "r");
	char line[512], name[128] = "";
	while (f && fgets(line, sizeof(line), f)) {
		char *at = strstr(line, "@sonde-");
		if (at) {
			sscanf(at + 1, "%100s", name);
			break;
		}
	}
	if (f)
		fclose(f);
	if (!name[0])
		return;
	int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	size_t n = strlen(name);
	memcpy(a.sun_path + 1, name, n);
	if (connect(fd, (struct sockaddr *)&a,
		    (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n)) < 0)
		return;
	struct proto_hello hello = { .type = PROTO_HELLO, .version = PROTO_VERSION };
	send(fd, &hello, sizeof(hello), MSG_NOSIGNAL);
	char buf[256];
	recv(fd, buf, sizeof(buf), 0);    /* its setup (or inert) */
	struct proto_attached r = { .type = PROTO_ATTACHED, .failed = 1 };
	snprintf(r.text, sizeof(r.text), "owned\033]0;pwned\007\033[2J\033[31mred");
	send(fd, &r, sizeof(r), MSG_NOSIGNAL);
	sleep(1);
	close(fd);
}

/* The agent's channel: the SOCK_SEQPACKET socket the agent moved up
 * past descriptor 512 (agent.c's FD_HIGH). */
static int agent_socket(void)
{
	for (int fd = 512; fd < 1024; fd++) {
		int type = 0;
		socklen_t len = sizeof(type);
		if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0 &&
		    type == SOCK_SEQPACKET)
			return fd;
	}
	return -1;
}

static void say_mapped(void)
{
	int fd = agent_socket(), sent = 0;
	for (int k = 0; fd >= 0 && k < 5000; k++) {
		struct proto_mapped m = { .type = PROTO_MAPPED, .seq = (uint32_t)k,
					  .patched = 7, .failed = 7 };
		sent += send(fd, &m, sizeof(m), MSG_NOSIGNAL) == sizeof(m);
	}
	static char big[4096];
	struct proto_mapped *m = (struct proto_mapped *)big;
	m->type = PROTO_MAPPED;
	memset(big + sizeof(*m), 0x41, sizeof(big) - sizeof(*m));
	if (fd >= 0)
		sent += send(fd, big, sizeof(big), MSG_NOSIGNAL) == sizeof(big);
	printf("mapped: %d sent\n", sent);
	fflush(stdout);
}

static void fifo_trap(const char *dir)
{
	char path[512], fifo[600];
	snprintf(path, sizeof(path), "%s/libc-evil.so", dir);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || ftruncate(fd, 4096) < 0)
		return;
	void *p = mmap((void *)0x10000000, 4096, PROT_READ, MAP_PRIVATE | MAP_FIXED,
		       fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return;
	unlink(path);
	snprintf(fifo, sizeof(fifo), "%s (deleted)", path);
	mkfifo(fifo, 0644);
}

int main(int argc, char **argv)
{
	if (argc > 1)
		mode = argv[1];
	struct sigaction sa = { .sa_handler = on_term };
	sigaction(SIGTERM, &sa, NULL);
	if (strcmp(mode, "fifo") == 0 && argc > 2)
		fifo_trap(argv[2]);
	if (strcmp(mode, "mapped") == 0 && argc > 2) {
		char lib[512];
		snprintf(lib, sizeof(lib), "%s/libstock.so", argv[2]);
		if (!dlopen(lib, RTLD_NOW))
			printf("mapped: %s\n", dlerror());
	}
	printf("ready\n");
	fflush(stdout);
	int bad = 0, attacked = 0;
	for (long i = 0; !stop; i++) {
		if (tick(i) != i * 3 + 1 || argmove(i) != i + 1)
			bad = 1;
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL);
		if (i % 20 || strcmp(mode, "loop") == 0)
			continue;
		uint8_t *base = region();
		if (!base)
			continue;
		if (strcmp(mode, "truncate") == 0 && kept_fd >= 0 && !attacked) {
			int r = ftruncate(kept_fd, 0);
			printf("truncate: %s\n", r < 0 ? strerror(errno) : "done");
			fflush(stdout);
			attacked = 1;
		} else if (strcmp(mode, "say") == 0 && !attacked) {
			say();
			attacked = 1;
		} else if (strcmp(mode, "mapped") == 0 && !attacked) {
			say_mapped();
			attacked = 1;
		} else if (strcmp(mode, "forge") == 0 && !attacked) {
			attack(base);
			attacked = 1;
		} else if (strcmp(mode, "garbage") == 0 || strcmp(mode, "ringlen") == 0) {
			attack(base);
		}
	}
	printf("stopped %s\n", bad ? "bad" : "well");
	return bad ? 3 : 0;
}
