/* host.h - read-only facts about the machine sonde runs on, which the
 * compiler may ask: the tracing file system and its files, dynamic perf
 * PMUs, the system call table, the CPU count, whether the kernel has
 * BTF (and, in btf.h, what its BTF says). Nothing here loads, attaches
 * or changes anything: that is the loader's (src/kernel/). A script that
 * asks none of these compiles to the same bytecode on every machine. */
#ifndef SONDE_HOST_H
#define SONDE_HOST_H

#include <stdbool.h>
#include <stdint.h>

/* The tracefs directory (mounting tracefs at /sys/kernel/tracing when
 * nothing is mounted there), or NULL with errno set. */
const char *tracefs_dir(void);
/* A whole (small, text) file, NUL-terminated and malloc'd, or NULL with
 * errno set. */
char *probe_read_file(const char *path);

/* Dynamic perf PMUs (host/pmu.c): the type number of PMU `pmu` ("kprobe",
 * "uprobe", "breakpoint"; -EOPNOTSUPP when the kernel has none), and the
 * config bit of one of its formats ("retprobe"). */
int pmu_type(const char *pmu, uint32_t *type);
int pmu_format_bit(const char *pmu, const char *name, int *bit);

/* The x86-64 number of the system call whose syscalls: tracepoints are
 * sys_enter_NAME/sys_exit_NAME, or -1 (host/syscall_nr.c). */
int syscall_nr(const char *name);

/* The CPUs the kernel may ever bring online (/sys/devices/system/cpu/
 * possible, as libbpf_num_possible_cpus counts them; read once), or
 * -errno. */
int host_possible_cpus(void);

/* Whether the kernel has BTF for bpftrace's purposes: $BPFTRACE_BTF
 * names a readable file, or /sys/kernel/btf/vmlinux is readable (no BTF
 * is read). */
bool host_have_btf(void);

#endif
