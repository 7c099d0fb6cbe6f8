/* usym_jit.c - names of JIT code from /tmp/perf-PID.map, the symbol file
 * perf defined: re-read when it grows, trusted only when the process's own
 * user (or root) owns it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../base/file.h"
#include "../base/vec.h"
#include "usym_internal.h"

static int jit_cmp(const void *a, const void *b)
{
	const struct jitsym *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* (Re)read /tmp/perf-PID.map when its size changed since the last read:
 * JITs append to it while they run. At most PERF_MAP_MAX symbols. */
#define PERF_MAP_MAX (1u << 21)
static void uproc_load_perf_map(struct usyms *u, struct uproc *p)
{
	char path[64], line[4096];
	struct stat st;
	size_t cap = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)p->pid);
	if (stat(path, &st) < 0 || (long long)st.st_size == p->jit_size)
		return;
	/* anyone can write in /tmp: only a regular file (not a FIFO, not
	 * a link to somebody else's file) that the process's own user (or
	 * root) owns, as perf accepts it */
	struct stat owner;
	char proc[32];
	int fd = file_open_regular(path, true);
	snprintf(proc, sizeof(proc), "/proc/%d", (int)p->pid);
	if (fd < 0)
		return;
	if (fstat(fd, &st) < 0 || stat(proc, &owner) < 0 ||
	    (st.st_uid != owner.st_uid && st.st_uid != 0) ||
	    !(f = fdopen(fd, "r"))) {
		close(fd);
		return;
	}
	free(p->jit);
	p->jit = NULL;
	p->njit = 0;
	p->jit_size = (long long)st.st_size;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, size;
		int name_at = 0;
		size_t len;

		if (sscanf(line, "%llx %llx %n", &start, &size, &name_at) < 2 ||
		    !name_at)
			continue;
		len = strlen(line);
		while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		if (p->njit >= PERF_MAP_MAX)
			break;       /* a JIT's map is not this long */
		if (vec_reserve_arr(p->jit, cap, p->njit + 1))
			break;
		p->jit[p->njit].start = start;
		p->jit[p->njit].size = size;
		p->jit[p->njit].name = usyms_name(u, line + name_at);
		if (p->jit[p->njit].name)
			p->njit++;
	}
	fclose(f);
	qsort(p->jit, p->njit, sizeof(*p->jit), jit_cmp);
}

int uproc_jit_lookup(struct usyms *u, struct uproc *p, uint64_t addr,
			    struct sym *out)
{
	size_t lo = 0, hi;
	char path[64];

	uproc_load_perf_map(u, p);
	hi = p->njit;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->jit[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* the latest entry at or below addr that covers it (JITs may
	 * re-emit code at a recycled address; the last wins) */
	while (lo > 0) {
		const struct jitsym *j = &p->jit[--lo];

		if (addr < j->start + j->size) {
			snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)p->pid);
			out->name = j->name;
			out->start = j->start;
			out->offset = addr - j->start;
			out->module = usyms_intern(u, path);
			return 0;
		}
		if (lo > 0 && p->jit[lo - 1].start + p->jit[lo - 1].size <= j->start)
			break;
	}
	return -ENOENT;
}
