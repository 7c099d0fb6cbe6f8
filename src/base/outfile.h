/* outfile.h - opening a file sonde writes (-o, --flamegraph, --folded,
 * skboutput()'s pcap files) without being turned against the system by
 * another user.
 *
 * sonde runs as root, and output files often go to /tmp. In a directory
 * that is sticky and world-writable anyone can plant a symlink named
 * like the output file (or like a directory on its way) pointing at
 * /etc or /root, or a file of their own that would receive the trace.
 * The kernel's fs.protected_symlinks and fs.protected_regular guard
 * against exactly this, when they are on; sonde applies the same rules
 * itself, whatever the sysctls say, to every component of the path and
 * of every symlink's target:
 *  - a symlink in such a directory is followed only when it belongs to
 *    the user sonde runs as or to the directory's owner;
 *  - an existing regular file, FIFO or device there is written only when
 *    it belongs to one of them too.
 * Anywhere else the file is opened as fopen(path, "w") would (symlinks
 * followed, created 0666 & ~umask, truncated). */
#ifndef SONDE_OUTFILE_H
#define SONDE_OUTFILE_H

#include <stddef.h>
#include <stdio.h>

/* Open PATH for writing. NULL on failure with errno set; when the rules
 * above refused it (errno EPERM), WHY (WHYLEN bytes, may be NULL) holds
 * a sentence naming the component and the rule, else it is "". */
FILE *outfile_open(const char *path, char *why, size_t whylen);

#endif
