/* resolve.c - values that BPF records as numbers and user space turns
 * into text when it prints them, as bpftrace 0.17 does: strftime()
 * timestamps, strerror() messages, cgroup_path() paths and macaddr()
 * addresses (types.h TIMESTAMP, ERRNO, CGROUP_PATH, MACADDR).
 *
 * cgroup_path() is the costly one: like bpftrace, it looks the cgroup id
 * up as an inode number under every cgroup mount whose name matches the
 * filter (cgroup v2 is "unified", a v1 hierarchy is named by its mount
 * directory: "cpu", "memory", "systemd"), walking the hierarchy. Walks
 * are bounded (depth and entries), and found paths are remembered (a
 * few, checked again before use, as bpftrace does). */
#include "output_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static uint64_t load64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

/* A literal of the program (strftime format, cgroup_path filter). */
static const char *prog_string(const struct output *o, uint64_t i)
{
	if (!o || !o->prog || i >= o->prog->nstrings)
		return NULL;
	return o->prog->strings[i];
}

static void report(struct output *o, const char *msg)
{
	if (o && o->fmt)
		o->fmt->error_stderr(o, msg);
	else
		fprintf(stderr, "ERROR: %s\n", msg);
}

/* ---- strftime ----------------------------------------------------------- */

/* The wall-clock time at which the nsecs clock (CLOCK_MONOTONIC, what
 * bpf_ktime_get_ns reads) was zero. */
int resolve_boot_time(struct timespec *bt)
{
	struct timespec mono, real;
	if (clock_gettime(CLOCK_MONOTONIC, &mono) < 0 ||
	    clock_gettime(CLOCK_REALTIME, &real) < 0)
		return -errno;
	bt->tv_sec = real.tv_sec - mono.tv_sec;
	bt->tv_nsec = real.tv_nsec - mono.tv_nsec;
	if (bt->tv_nsec < 0) {
		bt->tv_sec--;
		bt->tv_nsec += 1000000000L;
	}
	return 0;
}

int output_boot_time(const struct output *o, struct timespec *bt)
{
	if (o && o->boottime_ok) {
		*bt = o->boottime;
		return 0;
	}
	return resolve_boot_time(bt);
}

/* bpftrace formats into 64 bytes and replaces every "%f" of the format,
 * scanning left to right, with the microseconds: "%%f" is "%" then the
 * microseconds too. A result that does not fit is an error, "(?)". */
void resolve_timestamp(struct output *o, struct sbuf *out,
		       const uint8_t *data)
{
	const char *fmt = prog_string(o, load64(data));
	uint64_t nsecs = load64(data + 8);
	struct timespec bt;
	if (!fmt)
		fmt = "";
	if (output_boot_time(o, &bt) < 0) {
		report(o, "cannot resolve timestamp: the boot time is unknown");
		sbuf_puts(out, "(?)");
		return;
	}
	time_t sec = bt.tv_sec + (time_t)(nsecs / 1000000000u);
	long nsec = bt.tv_nsec + (long)(nsecs % 1000000000u);
	if (nsec >= 1000000000L) {
		sec++;
		nsec -= 1000000000L;
	}
	char usecs[24];
	snprintf(usecs, sizeof(usecs), "%06ld", nsec / 1000);
	struct sbuf f = { 0 };
	for (const char *p = fmt; *p; p++) {
		if (p[0] == '%' && p[1] == 'f') {
			sbuf_puts(&f, usecs);
			p++;
		} else {
			sbuf_putc(&f, *p);
		}
	}
	struct tm tm;
	char text[64];
	size_t n = 0;
	if (!localtime_r(&sec, &tm))
		report(o, "localtime_r failed");
	else if (!f.oom && (n = strftime(text, sizeof(text), f.s ? f.s : "",
					  &tm)) == 0)
		report(o, "strftime returned 0");
	if (n)
		sbuf_put(out, text, n);
	else
		sbuf_puts(out, "(?)");
	sbuf_free(&f);
}

/* ---- strerror, macaddr ---------------------------------------------------- */

void resolve_errno(struct sbuf *out, const uint8_t *data)
{
	char buf[128];
	int64_t e = (int64_t)load64(data);
	if (e < INT32_MIN || e > INT32_MAX) {
		sbuf_printf(out, "Unknown error %lld", (long long)e);
		return;
	}
	sbuf_puts(out, strerror_r((int)e, buf, sizeof(buf)));
}

void resolve_macaddr(struct sbuf *out, const uint8_t *d)
{
	sbuf_printf(out, "%02X:%02X:%02X:%02X:%02X:%02X",
		    d[0], d[1], d[2], d[3], d[4], d[5]);
}

/* ---- cgroup_path ---------------------------------------------------------- */

#define CGROUP_ROOTS_MAX 64       /* cgroup mounts considered */
#define CGROUP_WALK_DEPTH 64      /* directory levels below a root */
#define CGROUP_WALK_ENTRIES 200000 /* entries read per hierarchy */
#define CGROUP_CACHE 64

struct cgroup_root {
	char name[64];            /* "unified", or the v1 mount's directory */
	char *path;               /* its mount point */
};

struct cgroup_cache {
	struct {
		uint64_t id;
		char *path;       /* full path of the cgroup directory */
		size_t root_len;  /* bytes of it that are the mount point */
	} e[CGROUP_CACHE];
	unsigned next;
};

void resolve_cache_free(struct cgroup_cache *c)
{
	if (!c)
		return;
	for (unsigned i = 0; i < CGROUP_CACHE; i++)
		free(c->e[i].path);
	free(c);
}

/* bpftrace's wildcards: '*' matches any run; nothing else is special. */
static bool wild_match(const char *p, const char *s)
{
	const char *star = NULL, *resume = NULL;
	while (*s) {
		if (*p == '*') {
			star = p++;
			resume = s;
		} else if (*p == *s) {
			p++;
			s++;
		} else if (star) {
			p = star + 1;
			s = ++resume;
		} else {
			return false;
		}
	}
	while (*p == '*')
		p++;
	return !*p;
}

/* The cgroup mounts of /proc/mounts whose first field says "cgroup" or
 * "cgroup2" (as bpftrace reads them), named, filtered, and sorted: the
 * unified hierarchy first, then v1 by name. */
static int cgroup_roots(const char *filter, struct cgroup_root *r)
{
	FILE *f = fopen("/proc/mounts", "re");
	if (!f)
		return 0;
	int n = 0;
	char line[4096];
	unsigned lines = 0;
	while (n < CGROUP_ROOTS_MAX && lines++ < 100000 &&
	       fgets(line, sizeof(line), f)) {
		char dev[16], mnt[2048];
		if (sscanf(line, "%15s %2047s", dev, mnt) != 2)
			continue;
		bool v2 = strcmp(dev, "cgroup2") == 0;
		if (!v2 && strcmp(dev, "cgroup") != 0)
			continue;
		const char *base = strrchr(mnt, '/');
		snprintf(r[n].name, sizeof(r[n].name), "%.63s",
			 v2 ? "unified" : base ? base + 1 : mnt);
		if (!wild_match(filter, r[n].name))
			continue;
		if (!(r[n].path = strdup(mnt)))
			break;
		n++;
	}
	fclose(f);
	/* insertion sort: a handful of entries */
	for (int i = 1; i < n; i++) {
		struct cgroup_root k = r[i];
		int j = i - 1;
		for (; j >= 0; j--) {
			bool ku = strcmp(k.name, "unified") == 0;
			bool ju = strcmp(r[j].name, "unified") == 0;
			if (ju || (!ku && strcmp(r[j].name, k.name) <= 0))
				break;
			r[j + 1] = r[j];
		}
		r[j + 1] = k;
	}
	return n;
}

struct walk {
	uint64_t id;
	unsigned entries;
	struct sbuf path;         /* the directory being read */
};

/* Depth-first under w->path for an entry whose inode number is the
 * cgroup id; true (w->path names it) when found. */
static bool walk_dir(struct walk *w, int depth)
{
	if (depth > CGROUP_WALK_DEPTH || w->path.oom)
		return false;
	DIR *d = opendir(w->path.s);
	if (!d)
		return false;
	size_t len = w->path.n;
	bool found = false;
	struct dirent *e;
	while (!found && (e = readdir(d))) {
		if (++w->entries > CGROUP_WALK_ENTRIES)
			break;
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		sbuf_truncate(&w->path, len);
		sbuf_putc(&w->path, '/');
		sbuf_puts(&w->path, e->d_name);
		if (e->d_ino == w->id) {
			found = true;
			break;
		}
		if (e->d_type == DT_DIR)
			found = walk_dir(w, depth + 1);
	}
	closedir(d);
	if (!found)
		sbuf_truncate(&w->path, len);
	return found;
}

/* The path of cgroup `id` below the mount point `root` ("/" for the root
 * itself), appended to out; false if it is not in that hierarchy. */
static bool path_in(struct output *o, struct sbuf *out, uint64_t id,
		    const char *root)
{
	struct cgroup_cache *c = o ? o->cgroups : NULL;
	size_t rlen = strlen(root);
	struct stat st;
	if (c) {
		for (unsigned i = 0; i < CGROUP_CACHE; i++) {
			const char *p = c->e[i].path;
			if (p && c->e[i].id == id && c->e[i].root_len == rlen &&
			    !strncmp(p, root, rlen) && stat(p, &st) == 0 &&
			    st.st_ino == id) {
				sbuf_puts(out, p[rlen] ? p + rlen : "/");
				return true;
			}
		}
	}
	if (stat(root, &st) == 0 && st.st_ino == id) {
		sbuf_putc(out, '/');
		return true;
	}
	struct walk w = { .id = id };
	sbuf_puts(&w.path, root);
	bool found = walk_dir(&w, 0) && !w.path.oom;
	if (found) {
		sbuf_puts(out, w.path.s + rlen);
		if (c) {
			free(c->e[c->next].path);
			c->e[c->next].id = id;
			c->e[c->next].root_len = rlen;
			c->e[c->next].path = w.path.s;
			w.path.s = NULL;
			c->next = (c->next + 1) % CGROUP_CACHE;
		}
	}
	sbuf_free(&w.path);
	return found;
}

/* "unified:/a/b,memory:/a" - the hierarchies in which the id is found. */
void resolve_cgroup_path(struct output *o, struct sbuf *out,
			 const uint8_t *data)
{
	uint64_t id = load64(data), filter = load64(data + 8);
	const char *f = filter ? prog_string(o, filter - 1) : NULL;
	struct cgroup_root roots[CGROUP_ROOTS_MAX];
	if (o && !o->cgroups)
		o->cgroups = calloc(1, sizeof(*o->cgroups));
	int n = cgroup_roots(f ? f : "*", roots);
	bool first = true;
	for (int i = 0; i < n; i++) {
		size_t mark = out->n;
		if (!first)
			sbuf_putc(out, ',');
		sbuf_printf(out, "%s:", roots[i].name);
		if (path_in(o, out, id, roots[i].path))
			first = false;
		else
			sbuf_truncate(out, mark);
		free(roots[i].path);
	}
}
