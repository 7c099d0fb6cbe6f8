/* procexit.h - how a process sonde watches but did not start ended (-p):
 * its wait status, from the kernel's process events (as root) or from
 * its zombie. */
#ifndef SONDE_PROCEXIT_H
#define SONDE_PROCEXIT_H

#include <stdbool.h>

struct procexit;

/* Start listening for pid's end (before it can end unseen). NULL only
 * when out of memory; without the kernel's events it still reads the
 * zombie. */
struct procexit *procexit_watch(int pid);
/* Once the process is gone: its wait(2) status, if known. */
bool procexit_status(struct procexit *w, int *status);
void procexit_free(struct procexit *w);

#endif
