/* file.c - whole-file reads for proc, tracefs and script files. */
#include "file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
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
