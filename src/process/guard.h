/* guard.h - sonde's mappings of a shared region that another process may
 * truncate: a SIGBUS inside one becomes zeroed memory and a flag to
 * report (guard.c). Private to src/process/. */
#ifndef SONDE_PROCESS_GUARD_H
#define SONDE_PROCESS_GUARD_H

#include <stdbool.h>
#include <stddef.h>

/* Guard [start, start + len) (a mapping of the region); the handler is
 * installed with the first range. 0 or -errno. */
int guard_add(void *start, size_t len);
/* Stop guarding the range that starts there (before unmapping it). */
void guard_remove(void *start);
/* Has a guarded mapping faulted (and been replaced with zeros)? */
bool guard_tripped(void);
void guard_reset(void);

#endif
