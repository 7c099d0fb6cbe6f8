/* tracefs_uprobe.c - uprobes made through tracefs (uprobe_events), for
 * --follow-forks.
 *
 * A perf event opened on a task with `inherit` is copied into every
 * process the task forks from then on. A uprobe from the uprobe PMU
 * cannot be: its trace event is private to the perf event and made
 * again for each copy from a user pointer to the file's path (sonde's,
 * not the forking program's), so the copies never fire. A uprobe made
 * through tracefs is a trace event of its own, PERF_TYPE_TRACEPOINT by
 * its id: the copies share it, and the BPF program attached to it runs
 * in them too. The uprobe's filter (the tasks whose events exist) then
 * takes in each new child at its fork, before it runs: none of its hits
 * is missed.
 *
 * The events are named sonde_<pid>/p<N> and removed once their perf
 * events are closed (attach.c: engine_detach_all). A sonde that is killed
 * leaves them defined but unused (no breakpoint stays: that goes with
 * the last perf event); the next run removes the groups of sondes that
 * are gone. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../base/log.h"
#include "../host/host.h"
#include "engine_int.h"

/* Process-wide: the events this run defined, to remove at its end. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned nmade;
static bool swept;

static int write_events(const char *line)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/uprobe_events", tracefs_dir());
	int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = write(fd, line, strlen(line));
	int r = n < 0 ? -errno : 0;
	close(fd);
	return r;
}

/* Remove what sondes that are gone left (their group's pid is dead). */
static void sweep_dead(void)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/events", tracefs_dir());
	DIR *d = opendir(path);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d))) {
		int pid;
		char tail;
		if (sscanf(de->d_name, "sonde_%d%c", &pid, &tail) != 1 || pid <= 0 ||
		    pid == getpid() || kill(pid, 0) == 0 || errno != ESRCH)
			continue;
		char dir[512];
		snprintf(dir, sizeof(dir), "%s/%s", path, de->d_name);
		DIR *g = opendir(dir);
		struct dirent *ev;
		while (g && (ev = readdir(g))) {
			char line[600];
			if (ev->d_name[0] != 'p')
				continue;
			snprintf(line, sizeof(line), "-:%s/%s\n", de->d_name,
				 ev->d_name);
			write_events(line);
		}
		if (g)
			closedir(g);
	}
	closedir(d);
}

int tracefs_uprobe_open(const struct attach_req *req)
{
	if (!req->path || strpbrk(req->path, " \t\n"))
		return -EINVAL;
	pthread_mutex_lock(&lock);
	if (!swept) {
		swept = true;
		sweep_dead();
	}
	unsigned n = nmade++;
	pthread_mutex_unlock(&lock);
	char line[4400], ref[40] = "";
	if (req->ref_ctr_offset)
		snprintf(ref, sizeof(ref), "(0x%llx)",
			 (unsigned long long)req->ref_ctr_offset);
	if (snprintf(line, sizeof(line), "%c:sonde_%d/p%u %s:0x%llx%s\n",
		     req->retprobe ? 'r' : 'p', (int)getpid(), n, req->path,
		     (unsigned long long)req->offset, ref) >= (int)sizeof(line))
		return -ENAMETOOLONG;
	int r = write_events(line);
	if (r < 0)
		return r;
	char path[256], *text;
	snprintf(path, sizeof(path), "%s/events/sonde_%d/p%u/id", tracefs_dir(),
		 (int)getpid(), n);
	if (!(text = probe_read_file(path)))
		return -ENOENT;
	unsigned long long id = strtoull(text, NULL, 10);
	free(text);
	struct perf_event_attr attr = {
		.type = PERF_TYPE_TRACEPOINT, .size = sizeof(attr), .config = id,
		.sample_period = 1, .wakeup_events = 1, .inherit = 1,
	};
	int fd = (int)syscall(__NR_perf_event_open, &attr, req->pid, -1, -1,
			      PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

void tracefs_uprobe_remove_all(void)
{
	pthread_mutex_lock(&lock);
	for (unsigned i = 0; i < nmade; i++) {
		char line[128];
		snprintf(line, sizeof(line), "-:sonde_%d/p%u\n", (int)getpid(), i);
		int r = write_events(line);
		if (r < 0 && r != -ENOENT)
			log_warn("kernel engine: cannot remove the uprobe event "
				 "sonde_%d/p%u from tracefs: %s", (int)getpid(), i,
				 strerror(-r));
	}
	nmade = 0;
	pthread_mutex_unlock(&lock);
}
