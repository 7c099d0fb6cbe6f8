/* file.h - reading a whole file into memory (proc and tracefs files have
 * no useful size, so it reads until EOF). */
#ifndef SONDE_FILE_H
#define SONDE_FILE_H

#include <stdbool.h>
#include <stddef.h>

/* The contents, NUL-terminated, in a malloc'd buffer; the length (without
 * the NUL) in *len if len is not NULL. NULL with errno set on failure. */
char *file_read_fd(int fd, size_t *len);
char *file_read(const char *path, size_t *len);

/* Open, for reading, a file that another process named or could have
 * replaced (a path in a traced process's mappings or under its root, a
 * debug link, a JIT's symbol file): without blocking (O_NONBLOCK: a FIFO
 * or a device would block open() or read()) and only if it is a regular
 * file (fstat). A path under /proc/PID/root/ is resolved inside that
 * root (openat2 RESOLVE_IN_ROOT: a symbolic link the process planted
 * cannot lead out of its file system); nofollow refuses a symbolic link
 * as the last component of any path. An fd, or -1 with errno (EINVAL:
 * not a regular file). */
int file_open_regular(const char *path, bool nofollow);

#endif
