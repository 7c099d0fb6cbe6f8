/* procexit.c - how a process that is not sonde's child ended (-p).
 *
 * A parent learns it from wait(); anyone else only while the process is
 * a zombie (/proc/PID/stat's exit_code, field 52), which a parent that
 * reaps at once leaves no time for. So as root sonde also listens to the
 * kernel's process events (the netlink proc connector, which wants
 * CAP_NET_ADMIN): every exit in the system comes with its wait status,
 * and the one of the watched process is kept. Without the connector,
 * the zombie's status when sonde sees it, else nothing. */
#include "procexit.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "file.h"

/* Messages read at each look, at most: the events of the whole system
 * come through, most of them someone else's. */
#define DRAIN_MAX 4096

struct procexit {
	int pid;
	int fd;                 /* the connector, or -1 */
	bool known;
	int status;             /* wait(2) format */
};

struct cn_msg_proc {
	struct nlmsghdr nl;
	struct cn_msg cn;
	union {
		enum proc_cn_mcast_op op;
		struct proc_event ev;
	};
} __attribute__((packed));

static int connector_open(void)
{
	int fd = socket(PF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
			NETLINK_CONNECTOR);
	if (fd < 0)
		return -1;
	struct sockaddr_nl a = { .nl_family = AF_NETLINK, .nl_groups = CN_IDX_PROC,
				 .nl_pid = 0 };
	struct cn_msg_proc m;
	memset(&m, 0, sizeof(m));
	m.nl.nlmsg_len = sizeof(m.nl) + sizeof(m.cn) + sizeof(m.op);
	m.nl.nlmsg_type = NLMSG_DONE;
	m.cn.id.idx = CN_IDX_PROC;
	m.cn.id.val = CN_VAL_PROC;
	m.cn.len = sizeof(m.op);
	m.op = PROC_CN_MCAST_LISTEN;
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    send(fd, &m, m.nl.nlmsg_len, 0) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

struct procexit *procexit_watch(int pid)
{
	struct procexit *w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->pid = pid;
	w->fd = connector_open();
	return w;
}

/* The events that came: the watched process's exit, if among them. */
static void drain(struct procexit *w)
{
	char buf[8192] __attribute__((aligned(8)));
	for (int k = 0; w->fd >= 0 && !w->known && k < DRAIN_MAX; k++) {
		ssize_t got = recv(w->fd, buf, sizeof(buf), 0);
		if (got <= 0)
			return;
		int n = (int)got;
		for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, n);
		     h = NLMSG_NEXT(h, n)) {
			struct cn_msg *cn = NLMSG_DATA(h);
			if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*cn) +
						       sizeof(struct proc_event)))
				continue;
			/* the event follows the 20-byte cn_msg: not aligned */
			struct proc_event ev;
			memcpy(&ev, cn->data, sizeof(ev));
			/* the whole process: its leader's exit, with the
			 * group's status */
			if (ev.what != PROC_EVENT_EXIT ||
			    ev.event_data.exit.process_tgid != w->pid ||
			    ev.event_data.exit.process_pid != w->pid)
				continue;
			w->status = (int)ev.event_data.exit.exit_code;
			w->known = true;
		}
	}
}

/* A zombie's status: field 52 of /proc/PID/stat (Linux 3.5). */
static void zombie(struct procexit *w)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/stat", w->pid);
	char *s = file_read(path, NULL);
	char *p = s ? strrchr(s, ')') : NULL;
	if (p && p[1] == ' ' && p[2] == 'Z') {
		int field = 2;
		for (char *q = p + 1; *q; q++) {
			if (*q != ' ')
				continue;
			if (++field == 52) {
				w->status = atoi(q + 1);
				w->known = true;
				break;
			}
		}
	}
	free(s);
}

bool procexit_status(struct procexit *w, int *status)
{
	if (!w)
		return false;
	if (!w->known)
		drain(w);
	if (!w->known)
		zombie(w);
	if (w->known)
		*status = w->status;
	return w->known;
}

void procexit_free(struct procexit *w)
{
	if (!w)
		return;
	if (w->fd >= 0)
		close(w->fd);
	free(w);
}
