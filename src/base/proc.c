/* proc.c - see proc.h. */
#include "proc.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* What follows the command name in /proc/PID[/task/TID]/stat ("S 1234
 * ..."), into buf; NULL when it cannot be read. The command name may
 * hold ')' and spaces: the fields follow the last ')'. */
static const char *stat_fields(const char *stat_path, char *buf, size_t len)
{
	int fd = open(stat_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	ssize_t n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	const char *paren = strrchr(buf, ')');
	return paren && paren[1] == ' ' ? paren + 2 : NULL;
}

/* The state letter ('R', 'S', 'Z'...), or 0 when it cannot be read. */
static char proc_state(const char *stat_path)
{
	char buf[512];
	const char *f = stat_fields(stat_path, buf, sizeof(buf));
	return f ? f[0] : 0;
}

int proc_ppid(int pid)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	const char *f = stat_fields(path, buf, sizeof(buf));
	int ppid = 0;
	char state;
	return f && sscanf(f, "%c %d", &state, &ppid) == 2 ? ppid : 0;
}

static bool state_gone(char c)
{
	return c == 'Z' || c == 'X' || c == 0;
}

int proc_live_tid(int pid)
{
	if (pid <= 0)
		return pid;
	char fn[96];
	snprintf(fn, sizeof(fn), "/proc/%d/stat", pid);
	if (!state_gone(proc_state(fn)))
		return pid;
	snprintf(fn, sizeof(fn), "/proc/%d/task", pid);
	DIR *d = opendir(fn);
	if (!d)
		return pid;
	int tid = pid;
	struct dirent *de;
	while ((de = readdir(d))) {
		char *end;
		long t = strtol(de->d_name, &end, 10);
		if (*end || t <= 0 || t == pid || t > INT32_MAX)
			continue;
		snprintf(fn, sizeof(fn), "/proc/%d/task/%ld/stat", pid, t);
		if (!state_gone(proc_state(fn))) {
			tid = (int)t;
			break;
		}
	}
	closedir(d);
	return tid;
}
