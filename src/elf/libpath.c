/* libpath.c - where a probe target lives: library names resolved like the
 * dynamic loader (ld.so.cache, then default directories), $PATH for
 * executables, and what a running process maps (/proc/PID/maps), with
 * paths taken through /proc/PID/root so a process in another mount
 * namespace (a container) is traced by its own paths.
 *
 * /etc/ld.so.cache is read directly (the "glibc-ld.so.cache1.1" format
 * that ldconfig has written since glibc 2.32, possibly after an old-format
 * block); every offset in it is checked against the file size, as the
 * cache is as untrusted as any other file. */
#include "elf.h"

#include "../base/file.h"
#include "../base/log.h"
#include "../base/proc.h"
#include "../base/vec.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define LD_CACHE_PATH "/etc/ld.so.cache"
#define LD_CACHE_MAGIC "glibc-ld.so.cache1.1"
#define LD_CACHE_HDR 48        /* struct cache_file_new */
#define LD_CACHE_ENTRY 24      /* struct file_entry_new */
#define FLAG_ELF_LIBC6 0x0003
#define FLAG_X8664_LIB64 0x0300

static const char *const default_dirs[] = {
	"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
	"/lib64", "/usr/lib64", "/lib", "/usr/lib",
};

static int copy_out(char *out, size_t len, const char *s)
{
	size_t n = strlen(s);
	if (n >= len)
		return -ENAMETOOLONG;
	memcpy(out, s, n + 1);
	return 0;
}

/* Does a cache key / file name `key` name the library `want`?
 * want is normalized ("libc", "libc.so", "libc.so.6"): a key matches if
 * it equals want, or (when want has no version) is want + ".so" or
 * want + ".so." + version. */
static bool lib_name_match(const char *want, const char *key)
{
	size_t n = strlen(want);
	if (strncmp(key, want, n) != 0)
		return false;
	const char *rest = key + n;
	if (!*rest)
		return true;
	if (strstr(want, ".so"))
		return rest[0] == '.' && isdigit((unsigned char)rest[1]);
	/* a versioned soname: "libruby" is libruby-3.1.so.3.1 */
	if (rest[0] == '-' && isdigit((unsigned char)rest[1])) {
		rest++;
		while (isdigit((unsigned char)*rest) || *rest == '.')
			rest++;
		if (rest[-1] != '.' || strncmp(rest, "so", 2) != 0)
			return false;
		return rest[2] == '\0' || rest[2] == '.';
	}
	return strncmp(rest, ".so", 3) == 0 && (rest[3] == '\0' || rest[3] == '.');
}

static char *normalize_libname(const char *name)
{
	char *s = NULL;
	if (strncmp(name, "lib", 3) == 0)
		s = strdup(name);
	else if (asprintf(&s, "lib%s", name) < 0)
		s = NULL;
	return s;
}

/* Search ROOT/etc/ld.so.cache. 0 and the path (as seen inside root), or
 * -ENOENT. */
static int ld_cache_find(const char *root, const char *want, char *out, size_t len)
{
	char fn[4096];
	snprintf(fn, sizeof(fn), "%s%s", root, LD_CACHE_PATH);
	int fd = file_open_regular(fn, false);   /* the process's own */
	if (fd < 0)
		return -ENOENT;
	struct stat st;
	char *buf = NULL;
	int err = -ENOENT;
	if (fstat(fd, &st) < 0 || st.st_size < LD_CACHE_HDR ||
	    st.st_size > (64 << 20))
		goto out;
	size_t size = (size_t)st.st_size;
	buf = malloc(size + 1);
	if (!buf) {
		err = -ENOMEM;
		goto out;
	}
	size_t got = 0;
	while (got < size) {
		ssize_t r = read(fd, buf + got, size - got);
		if (r <= 0)
			goto out;
		got += (size_t)r;
	}
	buf[size] = '\0';
	/* The new-format header is at 0, or after an old-format block;
	 * find its magic on an 8-byte boundary. */
	size_t hdr = SIZE_MAX;
	for (size_t at = 0; at + LD_CACHE_HDR <= size; at += 8)
		if (memcmp(buf + at, LD_CACHE_MAGIC, sizeof(LD_CACHE_MAGIC) - 1) == 0) {
			hdr = at;
			break;
		}
	if (hdr == SIZE_MAX)
		goto out;
	uint32_t nlibs;
	memcpy(&nlibs, buf + hdr + 20, 4);
	if (nlibs > (size - hdr - LD_CACHE_HDR) / LD_CACHE_ENTRY)
		goto out;
	for (uint32_t i = 0; i < nlibs; i++) {
		const char *e = buf + hdr + LD_CACHE_HDR + (size_t)i * LD_CACHE_ENTRY;
		int32_t flags;
		uint32_t key, value;
		memcpy(&flags, e, 4);
		memcpy(&key, e + 4, 4);
		memcpy(&value, e + 8, 4);
		if ((flags & 0xff) != FLAG_ELF_LIBC6 ||
		    (flags & 0xff00) != FLAG_X8664_LIB64)
			continue;
		/* offsets are relative to the new header; the buffer has a
		 * NUL at size, so a string running off the end stops there */
		if (key >= size - hdr || value >= size - hdr)
			continue;
		if (lib_name_match(want, buf + hdr + key)) {
			err = copy_out(out, len, buf + hdr + value);
			goto out;
		}
	}
out:
	free(buf);
	close(fd);
	return err;
}

static int dir_find(const char *root, const char *dir, const char *want,
		    char *out, size_t len)
{
	char fn[4096];
	snprintf(fn, sizeof(fn), "%s%s", root, dir);
	DIR *d = opendir(fn);
	if (!d)
		return -ENOENT;
	char best[256] = "";
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!lib_name_match(want, de->d_name))
			continue;
		/* prefer the exact name, then the shortest (libc.so.6 over
		 * libc.so.6.debug-like names) */
		if (!best[0] || strcmp(de->d_name, want) == 0 ||
		    (strcmp(best, want) != 0 && strlen(de->d_name) < strlen(best)))
			snprintf(best, sizeof(best), "%s", de->d_name);
	}
	closedir(d);
	if (!best[0])
		return -ENOENT;
	if ((size_t)snprintf(out, len, "%s/%s", dir, best) >= len)
		return -ENAMETOOLONG;
	return 0;
}

/* The loader's search inside root ("" or "/proc/PID/root"); the path
 * written to out is as seen inside root. */
static int find_library_in(const char *root, const char *name, char *out, size_t len)
{
	if (!name[0] || strchr(name, '/'))
		return -ENOENT;
	char *want = normalize_libname(name);
	if (!want)
		return -ENOMEM;
	int err = ld_cache_find(root, want, out, len);
	for (size_t i = 0; err == -ENOENT && i < sizeof(default_dirs) / sizeof(*default_dirs); i++)
		err = dir_find(root, default_dirs[i], want, out, len);
	free(want);
	return err;
}

int elf_find_library(const char *name, char *out, size_t len)
{
	return find_library_in("", name, out, len);
}

/* An ELF file (its magic), not a script: the shims of pyenv, rbenv and
 * asdf are shell scripts named like the program they run. */
static bool is_elf(const char *path)
{
	unsigned char magic[4];
	int fd = file_open_regular(path, false);
	if (fd < 0)
		return false;
	bool elf = read(fd, magic, sizeof(magic)) == (ssize_t)sizeof(magic) &&
		memcmp(magic, "\x7f" "ELF", 4) == 0;
	close(fd);
	return elf;
}

/* The first executable ELF file called name in $PATH's directories, as
 * bpftrace 0.17 chooses it: matches that are not ELF files are skipped,
 * and the file chosen over them is named on stderr. */
static int path_find(const char *root, const char *name, char *out, size_t len)
{
	const char *path = getenv("PATH");
	char skipped[4096] = "";
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		const char *colon = strchr(path, ':');
		size_t dl = colon ? (size_t)(colon - path) : strlen(path);
		char cand[4096], full[4096 + 64];
		if (dl && (size_t)snprintf(cand, sizeof(cand), "%.*s/%s", (int)dl, path, name) < sizeof(cand)) {
			struct stat st;
			snprintf(full, sizeof(full), "%s%s", root, cand);
			if (access(full, X_OK) == 0 && stat(full, &st) == 0 &&
			    S_ISREG(st.st_mode)) {
				if (is_elf(full)) {
					if (skipped[0])
						log_warn("'%s': %s is not an ELF file (a shim?); using %s",
							 name, skipped, cand);
					return copy_out(out, len, cand);
				}
				if (!skipped[0])
					snprintf(skipped, sizeof(skipped), "%s", cand);
			}
		}
		path += dl + (colon ? 1 : 0);
	}
	return -ENOENT;
}

int elf_proc_path(int pid, const char *path, char *out, size_t len)
{
	if (pid <= 0)
		return copy_out(out, len, path);
	if ((size_t)snprintf(out, len, "/proc/%d/root%s", proc_live_tid(pid),
			     path) >= len)
		return -ENAMETOOLONG;
	return 0;
}

void elf_maps_free(struct elf_map *maps, size_t n)
{
	if (!maps)
		return;
	for (size_t i = 0; i < n; i++)
		free(maps[i].path);
	free(maps);
}

int elf_proc_maps(int pid, struct elf_map **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	char fn[64];
	snprintf(fn, sizeof(fn), "/proc/%d/maps", proc_live_tid(pid));
	FILE *f = fopen(fn, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	struct elf_map *v = NULL;
	size_t cnt = 0, cap = 0;
	char *line = NULL;
	size_t lcap = 0;
	int err = 0;
	ssize_t ll;
	while ((ll = getline(&line, &lcap, f)) > 0) {
		if (line[ll - 1] == '\n')
			line[--ll] = '\0';
		struct elf_map m = {0};
		int pos = 0;
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %4s %" SCNx64 " %x:%x %" SCNu64 "%n",
			   &m.start, &m.end, m.perms, &m.offset, &m.dev_major,
			   &m.dev_minor, &m.inode, &pos) < 7)
			continue;
		const char *p = line + pos;
		while (*p == ' ')
			p++;
		m.path = strdup(p);
		if (!m.path) {
			err = -ENOMEM;
			break;
		}
		if (vec_reserve_arr(v, cap, cnt + 1)) {
			free(m.path);
			err = -ENOMEM;
			break;
		}
		v[cnt++] = m;
	}
	free(line);
	fclose(f);
	if (err) {
		elf_maps_free(v, cnt);
		return err;
	}
	/* a process that exited between open and read has no lines */
	if (!cnt) {
		free(v);
		return kill(pid, 0) == 0 || errno == EPERM ? 0 : -ESRCH;
	}
	*out = v;
	*n = cnt;
	return 0;
}

void elf_strings_free(char **v, size_t n)
{
	if (!v)
		return;
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

int elf_proc_objects(int pid, char ***out, size_t *n)
{
	*out = NULL;
	*n = 0;
	struct elf_map *maps;
	size_t nm;
	int err = elf_proc_maps(pid, &maps, &nm);
	if (err)
		return err;
	char **v = calloc(nm ? nm : 1, sizeof(*v));
	size_t cnt = 0;
	if (!v) {
		elf_maps_free(maps, nm);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nm; i++) {
		if (maps[i].perms[2] != 'x' || maps[i].path[0] != '/')
			continue;
		bool seen = false;
		for (size_t k = 0; k < cnt && !seen; k++)
			seen = strcmp(v[k], maps[i].path) == 0;
		if (seen)
			continue;
		if (!(v[cnt] = strdup(maps[i].path))) {
			err = -ENOMEM;
			break;
		}
		cnt++;
	}
	elf_maps_free(maps, nm);
	if (err) {
		elf_strings_free(v, cnt);
		return err;
	}
	*out = v;
	*n = cnt;
	return 0;
}

/* A library or executable that process maps, by name. */
static int proc_find(int pid, const char *name, char *out, size_t len)
{
	char **objs;
	size_t n;
	int err = elf_proc_objects(pid, &objs, &n);
	if (err)
		return err;
	char *want = normalize_libname(name);
	if (!want) {
		elf_strings_free(objs, n);
		return -ENOMEM;
	}
	err = -ENOENT;
	for (int pass = 0; pass < 2 && err == -ENOENT; pass++) {
		for (size_t i = 0; i < n; i++) {
			const char *base = strrchr(objs[i], '/') + 1;
			/* pass 0: the exact file name; pass 1: a library
			 * name ("libc" for libc.so.6) */
			bool hit = pass == 0 ? strcmp(base, name) == 0
					     : lib_name_match(want, base);
			if (hit) {
				err = elf_proc_path(pid, objs[i], out, len);
				break;
			}
		}
	}
	free(want);
	elf_strings_free(objs, n);
	return err;
}

int elf_resolve_target(const char *target, int pid, char *out, size_t len)
{
	if (!target[0])
		return -ENOENT;
	if (strchr(target, '/')) {
		if (pid > 0 && target[0] == '/')
			return elf_proc_path(pid, target, out, len);
		return copy_out(out, len, target);
	}
	if (pid > 0) {
		char fn[64];
		snprintf(fn, sizeof(fn), "/proc/%d", pid);
		if (access(fn, F_OK) != 0)
			return -ESRCH;
		int err = proc_find(pid, target, out, len);
		if (err != -ENOENT)
			return err;
	}
	/* Names that look like libraries go to the loader's search first;
	 * other names are executables on $PATH first. With a pid, both
	 * searches run inside that process's root. */
	char root[64] = "";
	if (pid > 0)
		snprintf(root, sizeof(root), "/proc/%d/root", proc_live_tid(pid));
	bool libish = strncmp(target, "lib", 3) == 0 || strstr(target, ".so");
	int err = libish ? find_library_in(root, target, out, len)
			 : path_find(root, target, out, len);
	if (err == -ENOENT)
		err = libish ? path_find(root, target, out, len)
			     : find_library_in(root, target, out, len);
	if (err == 0 && pid > 0) {
		char tmp[4096];
		if (copy_out(tmp, sizeof(tmp), out) == 0)
			err = elf_proc_path(pid, tmp, out, len);
	}
	return err;
}
