/* user.h - what the user-space providers (uprobe.c: uprobe/uretprobe,
 * usdt.c) share: splitting their attach points, finding the file a target
 * names (-p aware, containers included), the name a probe shows, the
 * load bias from /proc/PID/maps, the uprobe PMU, and the objects a
 * process maps for -l. Private to src/probes/. */
#ifndef SONDE_PROBES_USER_H
#define SONDE_PROBES_USER_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "../elf/elf.h"
#include "probe_util.h"

/* An attach point's parts after the provider, split at ':' outside
 * double quotes, quotes removed. Parts are arena copies. */
int user_split(struct arena *a, const char *text, struct ap_parts *out);

/* A probe target made concrete. */
struct user_target {
	char path[PATH_MAX];    /* the file to open */
	const char *shown;      /* arena: the path as probe names show it */
	const char *written;    /* the target as the script wrote it */
};

/* Resolve a target (NULL: the -p process's executable) to a file and
 * open it. On failure a diagnostic at the attach point names the target
 * and what is wrong, with one of the tags NO_FILE, NOT_ELF, NO_PROCESS,
 * NO_PERMISSION; returns -errno. `kind` is "uprobe" or "usdt". */
int user_open(const struct attach_point *attach, struct expand_ctx *ctx,
	      const char *kind, const char *target, struct user_target *t,
	      struct elf_file **ef);

/* Fill a probe's uprobe_info (arena) for the instruction at vaddr/offset:
 * the load bias is read from the -p process's maps when it maps the
 * file. */
struct uprobe_info *user_info(struct expand_ctx *ctx, const struct user_target *t,
			      const struct elf_file *ef, uint64_t vaddr,
			      uint64_t offset);

/* The attach hook both providers use: an event of the uprobe PMU. */
int user_attach(const struct probe *p, struct attach_req *req);

/* -l: the files to list for a target pattern. target NULL: the -p
 * process's executable when only_exe, else every object it maps. A
 * target with wildcards matches the objects the process maps. Calls fn
 * with each opened file and its shown path. Returns the sum of what fn
 * returned, or -errno (a message printed). */
/* The ELF objects every running process maps, each file once. */
int user_every_process(int (*fn)(void *arg, struct elf_file *ef,
				 const char *shown),
		       void *arg);
int user_list_files(const char *kind, const char *target, int pid,
		    bool only_exe,
		    int (*fn)(void *arg, struct elf_file *ef, const char *shown),
		    void *arg);

/* The files a wildcard file pattern names without -p, as bpftrace 0.17
 * expands one: the pattern, and with no '/' in it the pattern in each
 * directory of $PATH too (`usdt_test*`, `./testprogs/uprobe*`), matched
 * by glob(3); fn is called with each ELF file and the path glob gave. */
int user_glob_files(const char *target,
		    int (*fn)(void *arg, struct elf_file *ef,
			      const char *shown),
		    void *arg);

/* The usdt target that means every object any running process maps */
#define USDT_EVERY_PROCESS "/proc/*"

#endif
