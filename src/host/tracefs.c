/* tracefs.c - where the tracing file system is, and reading its files. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include "../base/file.h"
#include "host.h"

#define TRACEFS "/sys/kernel/tracing"
#define DEBUGFS_TRACING "/sys/kernel/debug/tracing"

static bool has_events(const char *dir)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/events", dir);
	return access(path, F_OK) == 0;
}

const char *tracefs_dir(void)
{
	/* Process-wide cache: the answer does not change during a run. */
	static const char *dir;

	if (dir)
		return dir;
	if (has_events(TRACEFS))
		return dir = TRACEFS;
	/* Not mounted (or not ours to read: /sys/kernel/tracing is root's):
	 * mount it where the kernel expects it, as perf and bpftrace users
	 * would. Failing that, try the debugfs path. */
	bool denied = errno == EACCES || errno == EPERM;
	if (mount("nodev", TRACEFS, "tracefs", 0, NULL) == 0 &&
	    has_events(TRACEFS))
		return dir = TRACEFS;
	denied = denied || errno == EACCES || errno == EPERM;
	if (has_events(DEBUGFS_TRACING))
		return dir = DEBUGFS_TRACING;
	/* Say which: not there, or there but not for us. */
	errno = denied || errno == EACCES ? EACCES : ENOENT;
	return NULL;
}

char *probe_read_file(const char *path)
{
	return file_read(path, NULL);
}
