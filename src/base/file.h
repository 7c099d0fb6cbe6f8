/* file.h - reading a whole file into memory (proc and tracefs files have
 * no useful size, so it reads until EOF). */
#ifndef SONDE_FILE_H
#define SONDE_FILE_H

#include <stddef.h>

/* The contents, NUL-terminated, in a malloc'd buffer; the length (without
 * the NUL) in *len if len is not NULL. NULL with errno set on failure. */
char *file_read_fd(int fd, size_t *len);
char *file_read(const char *path, size_t *len);

#endif
