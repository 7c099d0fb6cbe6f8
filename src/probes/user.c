/* user.c - the parts the user-space providers share: attach-point
 * splitting, target files (paths, library names, -p processes and their
 * mount namespaces), the names probes show, load biases, the uprobe PMU
 * and the file walk of -l.
 *
 * Names. bpftrace shows a probe's target the way it found it: a path as
 * the script wrote it, a library name as the path the loader (or, with
 * -p, the process's maps) gave, and a missing target under -p as
 * /proc/PID/root/EXE. sonde does the same, so `probe` prints alike. */
#include "user.h"

#include <dirent.h>
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "../base/file.h"
#include "../base/log.h"
#include "../base/proc.h"
#include "../base/glob.h"
#include "../base/vec.h"


int user_split(struct arena *a, const char *text, struct ap_parts *out)
{
	out->n = 0;
	const char *p = strchr(text, ':');
	if (!p)
		return 0;
	p++;
	char *buf = arena_alloc(a, strlen(p) + 1);
	size_t len = 0;
	bool quoted = false;
	for (;; p++) {
		if (*p == '"') {
			quoted = !quoted;
			continue;
		}
		/* in quotes, a backslash takes the next byte as it is, as
		 * bpftrace reads test:"\"probe1\"" */
		if (quoted && *p == '\\' && p[1]) {
			buf[len++] = *++p;
			continue;
		}
		/* the last part takes the rest, colons and all */
		bool last = out->n == AP_MAX_PARTS - 1;
		if (*p == '\0' || (*p == ':' && !quoted && !last)) {
			buf[len] = '\0';
			if (out->n < AP_MAX_PARTS)
				out->v[out->n] = arena_strdup(a, buf);
			out->n++;
			len = 0;
			if (*p == '\0')
				break;
			continue;
		}
		buf[len++] = *p;
	}
	return quoted ? -EINVAL : 0;
}

static int user_error(const struct attach_point *attach, struct expand_ctx *ctx,
		      const char *tag, int err, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static int user_error(const struct attach_point *attach, struct expand_ctx *ctx,
		      const char *tag, int err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	diag_vadd(ctx->diags, DIAG_ERROR, attach->pos, tag, fmt, ap);
	va_end(ap);
	return err;
}

/* "/proc/PID/root/usr/lib/x" -> "/usr/lib/x" (or /proc/TID/root of the
 * thread that speaks for PID); other paths unchanged. */
static const char *strip_root(const char *path, int pid)
{
	if (pid <= 0)
		return path;
	int ids[2] = { pid, proc_live_tid(pid) };
	for (int i = 0; i < 2; i++) {
		char prefix[64];
		int n = snprintf(prefix, sizeof(prefix), "/proc/%d/root", ids[i]);
		if (strncmp(path, prefix, (size_t)n) == 0 && path[n] == '/')
			return path + n;
	}
	return path;
}

/* The executable of a process, as a path under /proc/PID/root. */
static int proc_exe(int pid, char *out, size_t len)
{
	char link[64], exe[PATH_MAX];
	snprintf(link, sizeof(link), "/proc/%d/exe", proc_live_tid(pid));
	ssize_t n = readlink(link, exe, sizeof(exe) - 1);
	if (n < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	exe[n] = '\0';
	return elf_proc_path(pid, exe, out, len);
}

/* The files of the -p process could not be reached (through
 * /proc/PID/root or /proc/PID/exe): say why when the process is the
 * reason, a zombie or another user's. Returns the diagnostic's -errno,
 * or 0 when the process is not the reason. */
static int proc_unreachable(const struct attach_point *attach, struct expand_ctx *ctx,
			    int err)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/status", proc_live_tid(ctx->pid));
	char *st = file_read(path, NULL);
	if (!st && kill(ctx->pid, 0) < 0 && errno == ESRCH)
		return user_error(attach, ctx, "NO_PROCESS", -ESRCH,
				  "process %d exited while sonde was starting",
				  ctx->pid);
	if (!st)
		return 0;
	const char *state = strstr(st, "\nState:");
	const char *uidl = strstr(st, "\nUid:");
	char z = state ? state[strspn(state + 7, " \t") + 7] : '?';
	long uid = uidl ? strtol(uidl + 5, NULL, 10) : -1;
	free(st);
	if (z == 'Z' || z == 'X')
		return user_error(attach, ctx, "NO_PROCESS", -ESRCH,
				  "process %d has exited (a zombie waiting for "
				  "its parent): there is nothing left to trace",
				  ctx->pid);
	if ((err == -EACCES || err == -EPERM) && uid >= 0 &&
	    (uid_t)uid != geteuid() && geteuid() != 0)
		return user_error(attach, ctx, "NO_PERMISSION", err,
				  "cannot read the files of process %d: it "
				  "belongs to uid %ld, not to you (uid %u): trace "
				  "your own processes, or run sonde as root",
				  ctx->pid, uid, (unsigned)geteuid());
	return 0;
}

/* Find the file; fill t->path and t->shown. */
static int user_locate(const struct attach_point *attach, struct expand_ctx *ctx,
		       const char *kind, const char *target,
		       struct user_target *t)
{
	int pid = ctx->pid, r;
	t->written = target;
	if (!target) {
		if (pid <= 0)
			return user_error(attach, ctx, "BAD_PROBE", -EINVAL,
					  "%s probe type requires 2 arguments "
					  "(a path, or -p PID)", kind);
		r = proc_exe(pid, t->path, sizeof(t->path));
		if (r == -ESRCH)
			return user_error(attach, ctx, "NO_PROCESS", r,
					  "process %d does not exist", pid);
		int why = r < 0 ? proc_unreachable(attach, ctx, r) : 0;
		if (why < 0)
			return why;
		if (r < 0)
			return user_error(attach, ctx, "NO_PERMISSION", r,
					  "cannot read the executable of process "
					  "%d: %s", pid, strerror(-r));
		t->shown = arena_strdup(ctx->arena, t->path);
		return 0;
	}
	if (strncmp(target, "/proc/", 6) == 0) {
		/* already a path in some process's namespace */
		if (strlen(target) >= sizeof(t->path))
			return user_error(attach, ctx, "NO_FILE", -ENAMETOOLONG,
					  "%s target '%s': path too long", kind,
					  target);
		strcpy(t->path, target);
		r = 0;
	} else {
		r = elf_resolve_target(target, pid, t->path, sizeof(t->path));
	}
	if (r == -ESRCH)
		return user_error(attach, ctx, "NO_PROCESS", r,
				  "process %d does not exist", pid);
	if (r == -ENOENT && !strchr(target, '/') && pid > 0)
		return user_error(attach, ctx, "NO_FILE", r,
				  "%s target '%s' is neither mapped by process "
				  "%d nor found as a library or program", kind,
				  target, pid);
	if (r == -ENOENT && !strchr(target, '/'))
		return user_error(attach, ctx, "NO_FILE", r,
				  "%s target '%s' is neither a library nor a "
				  "program on $PATH", kind, target);
	if (r < 0)
		return user_error(attach, ctx, "NO_FILE", r,
				  "%s target '%s': %s", kind, target,
				  strerror(-r));
	t->shown = strchr(target, '/') ? target :
		arena_strdup(ctx->arena, strip_root(t->path, pid));
	return 0;
}

int user_open(const struct attach_point *attach, struct expand_ctx *ctx,
	      const char *kind, const char *target, struct user_target *t,
	      struct elf_file **ef)
{
	*ef = NULL;
	int r = user_locate(attach, ctx, kind, target, t);
	if (r < 0)
		return r;
	const char *name = t->written ? t->written : t->shown;
	struct stat st;
	if (stat(t->path, &st) < 0) {
		r = -errno;
		int why = ctx->pid > 0 ? proc_unreachable(attach, ctx, r) : 0;
		if (why < 0)
			return why;
		if (r == -EACCES || r == -EPERM)
			return user_error(attach, ctx, "NO_PERMISSION", r,
					  "%s target file '%s': permission denied",
					  kind, name);
		return user_error(attach, ctx, "NO_FILE", r,
				  "%s target file '%s' does not exist%s", kind,
				  name, r == -ENOENT ? "" : " or cannot be reached");
	}
	if (S_ISDIR(st.st_mode))
		return user_error(attach, ctx, "NOT_ELF", -EISDIR,
				  "%s target '%s' is a directory, not an ELF file",
				  kind, name);
	r = elf_open(t->path, ef);
	int why = r < 0 && ctx->pid > 0 ? proc_unreachable(attach, ctx, r) : 0;
	if (why < 0)
		return why;     /* the process went while sonde was starting */
	switch (r) {
	case 0:
		break;
	case -ENOENT:
		return user_error(attach, ctx, "NO_FILE", r,
				  "%s target file '%s' does not exist", kind, name);
	case -EACCES:
	case -EPERM:
		return user_error(attach, ctx, "NO_PERMISSION", r,
				  "%s target file '%s': permission denied", kind,
				  name);
	case -ENOEXEC:
		return user_error(attach, ctx, "NOT_ELF", r,
				  "%s target file '%s' is not an ELF file", kind,
				  name);
	case -EINVAL:
		return user_error(attach, ctx, "NOT_ELF", r,
				  "%s target file '%s' is a malformed ELF file",
				  kind, name);
	default:
		return user_error(attach, ctx, "NOT_ELF", r,
				  "%s target file '%s' cannot be read: %s", kind,
				  name, strerror(-r));
	}
	if (elf_machine(*ef) != 62 /* EM_X86_64 */) {
		elf_close(*ef);
		*ef = NULL;
		return user_error(attach, ctx, "NOT_ELF", -ENOEXEC,
				  "%s target file '%s' is not an x86-64 ELF file",
				  kind, name);
	}
	return 0;
}

/* The load bias of the file at `path` in process pid: found by device
 * and inode among its mappings (the path in maps may differ from ours,
 * e.g. under /proc/PID/root). */
static int proc_bias(int pid, const char *path, const struct elf_file *ef,
		     uint64_t *bias)
{
	struct stat st;
	if (stat(path, &st) < 0)
		return -errno;
	struct elf_map *maps;
	size_t n;
	int r = elf_proc_maps(pid, &maps, &n);
	if (r < 0)
		return r;
	r = -ENOENT;
	for (int pass = 0; pass < 2 && r < 0; pass++) {
		for (size_t i = 0; i < n && r < 0; i++) {
			const struct elf_map *m = &maps[i];
			if (m->inode != st.st_ino || m->path[0] != '/')
				continue;
			/* pass 0 wants the device to agree too; overlay
			 * file systems may show another one */
			if (pass == 0 && (m->dev_major != major(st.st_dev) ||
					  m->dev_minor != minor(st.st_dev)))
				continue;
			r = elf_map_bias(ef, m, bias);
		}
	}
	elf_maps_free(maps, n);
	return r;
}

struct uprobe_info *user_info(struct expand_ctx *ctx, const struct user_target *t,
			      const struct elf_file *ef, uint64_t vaddr,
			      uint64_t offset)
{
	struct uprobe_info *u = arena_new(ctx->arena, struct uprobe_info);
	u->path = arena_strdup(ctx->arena, t->path);
	u->vaddr = vaddr;
	u->offset = offset;
	u->is_dyn = elf_is_dyn(ef);
	if (!u->is_dyn) {
		u->bias_known = true;
	} else if (ctx->pid > 0) {
		uint64_t b;
		if (proc_bias(ctx->pid, t->path, ef, &b) == 0) {
			u->bias = b;
			u->bias_known = true;
		}
	}
	return u;
}

/* "config:0" or "config:32-63": the first bit of a config field. */
int user_attach(const struct probe *p, struct attach_req *req)
{
	const struct uprobe_info *u = p->uprobe;
	if (!u)
		return -EINVAL;
	uint32_t type;
	int bit, r = pmu_type("uprobe", &type);
	if (r < 0)
		return r;
	uint64_t config = 0;
	if (u->retprobe) {
		if ((r = pmu_format_bit("uprobe", "retprobe", &bit)) < 0)
			return r;
		config |= 1ull << bit;
	}
	if (u->ref_ctr_offset) {
		/* no such format: the kernel cannot raise semaphores */
		if ((r = pmu_format_bit("uprobe", "ref_ctr_offset", &bit)) < 0)
			return r == -ENOENT ? -EOPNOTSUPP : r;
		config |= u->ref_ctr_offset << bit;
	}
	req->how = ATTACH_PERF_EVENT;
	req->perf_type = type;
	req->perf_config = config;
	req->perf_config1 = (uint64_t)(uintptr_t)u->path;
	req->perf_config2 = u->offset;
	req->sample_period = 1;
	req->sample_freq = 0;
	req->all_cpus = false;
	req->pid = -1;
	req->path = u->path;
	req->offset = u->offset;
	req->ref_ctr_offset = u->ref_ctr_offset;
	req->retprobe = u->retprobe;
	req->child_only = u->usdt;
	req->multi = MULTI_UPROBE;
	return 1;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

int user_list_files(const char *kind, const char *target, int pid,
		    bool only_exe,
		    int (*fn)(void *arg, struct elf_file *ef, const char *shown),
		    void *arg)
{
	char path[PATH_MAX];
	struct elf_file *ef;
	int r, total = 0;
	bool wild = target && ap_has_wildcard(target);

	if (target && !wild) {
		if (strncmp(target, "/proc/", 6) == 0)
			r = strlen(target) < sizeof(path) ?
				(strcpy(path, target), 0) : -ENAMETOOLONG;
		else
			r = elf_resolve_target(target, pid, path, sizeof(path));
		if (r == -ESRCH) {
			log_error("-p %d: no such process", pid);
			return r;
		}
		if (r < 0 || (r = elf_open(path, &ef)) < 0) {
			log_error("%s target '%s': %s", kind, target,
				  r == -ENOEXEC ? "not an ELF file" : strerror(-r));
			return r;
		}
		const char *shown = strchr(target, '/') ? target :
			strip_root(path, pid);
		r = fn(arg, ef, shown);
		elf_close(ef);
		return r;
	}
	if (pid <= 0)
		return 0;    /* nothing to list without a file or a process */
	if (!target && only_exe) {
		if ((r = proc_exe(pid, path, sizeof(path))) < 0) {
			log_error("-p %d: %s", pid, r == -ESRCH ?
				  "no such process" : strerror(-r));
			return r;
		}
		if ((r = elf_open(path, &ef)) < 0) {
			log_error("%s: %s", path, strerror(-r));
			return r;
		}
		r = fn(arg, ef, path);
		elf_close(ef);
		return r;
	}
	char **objs;
	size_t n;
	if ((r = elf_proc_objects(pid, &objs, &n)) < 0) {
		log_error("-p %d: %s", pid, r == -ESRCH ? "no such process" :
			  strerror(-r));
		return r;
	}
	for (size_t i = 0; i < n; i++) {
		if (wild && !glob_match(target, objs[i]) &&
		    !glob_match(target, base_name(objs[i])))
			continue;
		if (elf_proc_path(pid, objs[i], path, sizeof(path)) < 0 ||
		    elf_open(path, &ef) < 0)
			continue;   /* a mapping that is not an ELF file */
		r = fn(arg, ef, path);
		elf_close(ef);
		if (r < 0) {
			total = r;
			break;
		}
		total += r;
	}
	elf_strings_free(objs, n);
	return total;
}

/* A file pattern is expanded as bpftrace 0.17 expands one: the pattern
 * itself and, when it has no '/', the pattern in each directory of
 * $PATH, each through glob(3); of what matches, the regular files that
 * are ELF objects. Bounded: patterns matching many big directories stop
 * at USER_GLOB_FILES_MAX files. */
#define USER_GLOB_FILES_MAX 20000

static int glob_one(const char *target, const char *pattern, unsigned *seen,
		    int (*fn)(void *arg, struct elf_file *ef,
			      const char *shown),
		    void *arg)
{
	glob_t g;
	int total = 0;
	if (glob(pattern, 0, NULL, &g) != 0)
		return 0;     /* no match, or an unreadable directory */
	for (size_t i = 0; i < g.gl_pathc && *seen < USER_GLOB_FILES_MAX; i++) {
		struct stat st;
		struct elf_file *ef;
		/* bpftrace then matches its lines against the pattern as
		 * written: a file found in $PATH is listed only if the
		 * target matches its whole path (`*`, not `p*`) */
		if (!glob_match(target, g.gl_pathv[i]))
			continue;
		/* stat first: a FIFO must not be opened */
		if (stat(g.gl_pathv[i], &st) < 0 || !S_ISREG(st.st_mode))
			continue;
		++*seen;
		if (elf_open(g.gl_pathv[i], &ef) < 0)
			continue;    /* a script, not an ELF file */
		int r = fn(arg, ef, g.gl_pathv[i]);
		elf_close(ef);
		if (r < 0) {
			total = r;
			break;
		}
		total += r;
	}
	globfree(&g);
	return total;
}

int user_glob_files(const char *target,
		    int (*fn)(void *arg, struct elf_file *ef,
			      const char *shown),
		    void *arg)
{
	unsigned seen = 0;
	int total = glob_one(target, target, &seen, fn, arg);
	const char *env = getenv("PATH");
	if (total < 0 || strchr(target, '/') || !env)
		return total;
	char *dirs = strdup(env);
	if (!dirs)
		return -ENOMEM;
	char path[PATH_MAX], *save = NULL;
	for (char *dir = strtok_r(dirs, ":", &save); dir && total >= 0;
	     dir = strtok_r(NULL, ":", &save)) {
		int len = snprintf(path, sizeof(path), "%s/%s", dir, target);
		if (len < 0 || (size_t)len >= sizeof(path))
			continue;
		int r = glob_one(target, path, &seen, fn, arg);
		total = r < 0 ? r : total + r;
	}
	free(dirs);
	return total;
}

/* The ELF objects every running process maps, each file once (by device
 * and inode, whichever process shows it first): what D's `prov*:::name`
 * looks in without -p. Bounded: at most USER_EVERY_PIDS processes and
 * USER_GLOB_FILES_MAX files. */
#define USER_EVERY_PIDS 65536

struct seen_file {
	dev_t dev;
	ino_t ino;
};

int user_every_process(int (*fn)(void *arg, struct elf_file *ef,
				 const char *shown),
		       void *arg)
{
	DIR *proc = opendir("/proc");
	if (!proc)
		return -errno;
	struct seen_file *seen = NULL;
	size_t nseen = 0, cap = 0;
	unsigned npids = 0;
	int total = 0;
	struct dirent *de;
	while ((de = readdir(proc)) && npids < USER_EVERY_PIDS &&
	       nseen < USER_GLOB_FILES_MAX) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		if (*end || pid <= 0 || pid == getpid())
			continue;
		npids++;
		char **objs;
		size_t n;
		if (elf_proc_objects((int)pid, &objs, &n) < 0)
			continue;   /* gone, or a kernel thread */
		for (size_t i = 0; i < n && total >= 0; i++) {
			char path[PATH_MAX];
			struct stat st;
			if (elf_proc_path((int)pid, objs[i], path,
					  sizeof(path)) < 0 ||
			    stat(path, &st) < 0 || !S_ISREG(st.st_mode))
				continue;
			size_t k = 0;
			while (k < nseen && (seen[k].dev != st.st_dev ||
					     seen[k].ino != st.st_ino))
				k++;
			if (k < nseen)
				continue;
			if (vec_reserve_arr(seen, cap, nseen + 1)) {
				total = -ENOMEM;
				break;
			}
			seen[nseen++] = (struct seen_file){ st.st_dev,
							    st.st_ino };
			struct elf_file *ef;
			if (elf_open(path, &ef) < 0)
				continue;
			int r = fn(arg, ef, strip_root(path, (int)pid));
			elf_close(ef);
			total = r < 0 ? r : total + r;
		}
		elf_strings_free(objs, n);
		if (total < 0)
			break;
	}
	closedir(proc);
	free(seen);
	return total;
}
