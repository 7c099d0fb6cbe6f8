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

/* The state letter of /proc/PID[/task/TID]/stat ('R', 'S', 'Z'...), or
 * 0 when it cannot be read. The command name may hold ')' and spaces:
 * the state follows the last ')'. */
static char proc_state(const char *stat_path)
{
	char buf[512];
	int fd = open(stat_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	const char *paren = strrchr(buf, ')');
	return paren && paren[1] == ' ' ? paren[2] : 0;
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
