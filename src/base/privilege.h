/* privilege.h - whether this process may trace with the kernel: load
 * tracing BPF programs and open perf events. As a non-root user without
 * the capabilities every such step fails with EPERM or EACCES, and the
 * first step to fail (finding tracefs, creating a map) would otherwise
 * be what the error talks about. */
#ifndef SONDE_PRIVILEGE_H
#define SONDE_PRIVILEGE_H

#include <stdbool.h>

/* The sentence errors end with when privilege is missing. */
#define PRIVILEGE_NEEDED \
	"tracing with the kernel needs root, or the capabilities CAP_BPF " \
	"and CAP_PERFMON"

/* Root (effective uid 0), CAP_BPF with CAP_PERFMON, or CAP_SYS_ADMIN in
 * the effective set. */
bool privilege_can_trace(void);

#endif
