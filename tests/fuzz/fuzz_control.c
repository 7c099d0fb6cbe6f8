/* fuzz_control.c - libFuzzer target: sonde's end of the agents' channel
 * (src/process/control.c, proc_control_message) on what a hostile traced
 * process sends over it.
 *
 * An engine with two USDT sites and one function probe, a connection
 * from the traced process (a socketpair: what sonde answers is read and
 * its descriptors closed), in the state the input's first byte picks;
 * then the input is messages, [length: 1 byte | the bytes], handed over
 * one by one as recv() would. Each must be taken or refused without a
 * crash or a read past the message (ASan), leave the connection in one
 * of its states, and answer 0 or -ECANCELED only; a connection ended
 * (INERT) takes nothing more. PROTO_MAPPED ("a library came", which
 * names nothing) is answered here without a look at any process: no
 * function probe was patched in one. What sonde says about a hostile
 * agent goes to stderr: run it with -close_fd_mask=2. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "process/proc_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct engine ctl_engine;
static struct proc_probe ctl_probes[3];
static struct probe ctl_progprobes[3];
static struct program ctl_prog;

static void ctl_init(void)
{
	static int done;
	if (done)
		return;
	done = 1;
	static const char *names[3] = { "usdt:/x:p:a", "usdt:/x:p:b", "uprobe:/x:f" };
	for (int i = 0; i < 3; i++) {
		ctl_progprobes[i].name = names[i];
		ctl_probes[i].probe = &ctl_progprobes[i];
		ctl_probes[i].req.how = i < 2 ? PROCESS_USDT : PROCESS_FUNC;
	}
	ctl_prog.probes = ctl_progprobes;
	ctl_prog.nprobes = 3;
	struct engine *e = &ctl_engine;
	e->prog = &ctl_prog;
	e->probes = ctl_probes;
	e->nprobes = 3;
	e->nsites = 2;
	e->nfuncs = 0;          /* a function probe's hello would ptrace */
	e->opts.pid = getpid();
	e->attached = true;
	e->memfd = memfd_create("fuzz-control", MFD_CLOEXEC);
	e->wake_fd = eventfd(0, EFD_CLOEXEC);
	e->region_size = 4096;
	e->rt.hdr.nslots = 4;
	e->listen_fd = -1;
}

/* Read what sonde answered, closing the descriptors it passed. */
static void drain_answers(int fd)
{
	for (int k = 0; k < 64; k++) {
		char buf[256], cbuf[CMSG_SPACE(4 * sizeof(int))];
		struct iovec iov = { buf, sizeof(buf) };
		struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
				      .msg_control = cbuf,
				      .msg_controllen = sizeof(cbuf) };
		if (recvmsg(fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC) <= 0)
			return;
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c;
		     c = CMSG_NXTHDR(&msg, c)) {
			if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
				continue;
			size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
			int fds[4];
			memcpy(fds, CMSG_DATA(c), (n > 4 ? 4 : n) * sizeof(int));
			for (size_t i = 0; i < n && i < 4; i++)
				close(fds[i]);
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	ctl_init();
	if (size < 1)
		return 0;
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return 0;
	struct engine *e = &ctl_engine;
	struct proc_conn c = { .fd = sv[0], .pid = getpid(),
			       .state = data[0] % 5 };
	e->failed = false;
	e->traced = 0;
	size_t i = 1;
	while (i < size) {
		size_t len = data[i++];
		if (len > size - i)
			len = size - i;
		/* as recv() hands it over: a buffer of the message's length */
		uint8_t *msg = malloc(len ? len : 1);
		if (!msg)
			break;
		memcpy(msg, data + i, len);
		bool ended = c.state == CONN_INERT;
		int r = proc_control_message(e, &c, msg, len);
		free(msg);
		i += len;
		if ((r != 0 && r != -ECANCELED) || c.state > CONN_INERT ||
		    (ended && (r != 0 || c.state != CONN_INERT)))
			abort();
		drain_answers(sv[1]);
	}
	close(sv[0]);
	close(sv[1]);
	return 0;
}
