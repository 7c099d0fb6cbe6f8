/* file.c - whole-file reads for proc, tracefs and script files, and
 * opening what another process names without blocking or being led
 * astray. */
#include "file.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

char *file_read_fd(int fd, size_t *len)
{
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	if (len)
		*len = 0;
	while (buf) {
		if (n + 1 >= cap) {
			char *nb = realloc(buf, cap * 2);
			if (!nb) {
				free(buf);
				errno = ENOMEM;
				return NULL;
			}
			buf = nb;
			cap *= 2;
		}
		ssize_t r = read(fd, buf + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;
			free(buf);
			errno = e;
			return NULL;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	if (!buf) {
		errno = ENOMEM;
		return NULL;
	}
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

char *file_read(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	char *buf = file_read_fd(fd, len);
	int e = errno;
	close(fd);
	errno = e;
	return buf;
}

/* "/proc/N/root" at the start of path: its length, else 0. */
static size_t proc_root_prefix(const char *path)
{
	if (strncmp(path, "/proc/", 6) != 0)
		return 0;
	size_t i = 6;
	while (path[i] >= '0' && path[i] <= '9')
		i++;
	if (i == 6 || strncmp(path + i, "/root", 5) != 0 ||
	    (path[i + 5] != '/' && path[i + 5] != '\0'))
		return 0;
	return i + 5;
}

int file_open_regular(const char *path, bool nofollow)
{
	int flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY;
	int fd;
	size_t root = proc_root_prefix(path);
	if (root) {
		char dir[64];
		if (root >= sizeof(dir)) {
			errno = ENAMETOOLONG;
			return -1;
		}
		memcpy(dir, path, root);
		dir[root] = '\0';
		int rfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (rfd < 0)
			return -1;
		const char *rest = path[root] ? path + root + 1 : ".";
		struct open_how how = {
			.flags = (uint64_t)(flags | (nofollow ? O_NOFOLLOW : 0)),
			.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
		};
		fd = (int)syscall(SYS_openat2, rfd, rest, &how, sizeof(how));
		if (fd < 0 && errno == ENOSYS)   /* before Linux 5.6 */
			fd = openat(rfd, rest, flags | O_NOFOLLOW);
		int e = errno;
		close(rfd);
		errno = e;
	} else {
		fd = open(path, flags | (nofollow ? O_NOFOLLOW : 0));
	}
	if (fd < 0)
		return -1;
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	return fd;
}
