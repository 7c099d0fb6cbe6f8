/* cmdcheck.h - what a -c command ran, against the files its probes name
 * (a shim on $PATH runs another program than the probes name). */
#ifndef SONDE_CMDCHECK_H
#define SONDE_CMDCHECK_H

#include <stdbool.h>
#include <stddef.h>

struct program;

/* Is the -c command's program (its first word, found on $PATH as execvp
 * finds it) a script ("#!")? 1 (name and path filled), 0, or -errno. */
int cmdcheck_script(const char *cmd, char *name, size_t namelen,
		    char *path, size_t pathlen);
/* Should a command running that script be checked: the program probes
 * user-space files, and not the script itself? */
bool cmdcheck_wanted(const struct program *prog, const char *script);
/* Does process pid map any file the probes name (true when unknown)? */
bool cmdcheck_maps_probed(int pid, const struct program *prog);
/* Say that the command, `name` on $PATH being the script `script`, ran
 * `ran` (NULL: unknown) and never loaded the probes' files. */
void cmdcheck_report(const struct program *prog, const char *name,
		     const char *script, const char *ran);

#endif
