/* outfile.h - opening a file sonde writes (-o, --flamegraph, --folded)
 * without being turned against the system by another user.
 *
 * sonde runs as root, and output files often go to /tmp. In a directory
 * that is sticky and world-writable anyone can plant a symlink named
 * like the output file pointing at /etc/shadow, or a file of their own
 * that would receive the trace. The kernel's fs.protected_symlinks and
 * fs.protected_regular guard against exactly this, when they are on;
 * sonde applies the same rules itself, whatever the sysctls say:
 *  - a symlink in such a directory is followed only when it belongs to
 *    the user sonde runs as or to the directory's owner;
 *  - an existing regular file there is written only when it belongs to
 *    one of them too.
 * Anywhere else the file is opened as fopen(path, "w") would. */
#ifndef SONDE_OUTFILE_H
#define SONDE_OUTFILE_H

#include <stdio.h>

/* Open PATH for writing (created 0666 & ~umask, truncated). NULL on
 * failure with errno set, and *why (when not NULL) a static sentence
 * saying why it was refused when the rules above refused it (errno
 * EPERM), else NULL. */
FILE *outfile_open(const char *path, const char **why);

#endif
