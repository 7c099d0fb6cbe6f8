/* inject.c - dlopen inside a running process.
 *
 * The loader is called, never imitated: the process's own dlopen maps the
 * object, resolves its symbols, runs its constructors and registers it,
 * so the object is as well-formed as any dlopen'ed library (a second
 * dlopen of the same path finds it, threads created later get its TLS).
 *
 * The functions are found where the process has them: the C library it
 * maps (glibc 2.34 and later define dlopen, dlsym and dlerror there;
 * older ones offer __libc_dlopen_mode and __libc_dlsym), read from its
 * ELF symbols through src/elf/ at the load bias of its mapping. A process
 * that maps no C library with a loader is a static program: nothing can
 * be loaded into it. */
#include "inject.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../elf/elf.h"
#include "tracee.h"

#define CALL_TIMEOUT_MS 5000
#define RTLD_DLOPEN_INTERNAL 0x80000000   /* glibc's __RTLD_DLOPEN */

/* Is this mapped file a C library ("libc.so.6", "libc-2.31.so",
 * "ld-musl-x86_64.so.1", "libc.musl-x86_64.so.1")? */
static bool is_libc(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	return strncmp(base, "libc.so", 7) == 0 || strncmp(base, "libc-", 5) == 0 ||
	       strncmp(base, "libc.musl", 9) == 0 || strncmp(base, "ld-musl", 7) == 0;
}

static uint64_t sym_at(const struct elf_file *ef, uint64_t bias, const char *name)
{
	const struct elf_sym *s = elf_find_sym(ef, name);
	return s && s->addr ? s->addr + bias : 0;
}

int inject_find_libc(int pid, struct inject_libc *out, char *why, size_t whylen)
{
	memset(out, 0, sizeof(*out));
	struct elf_map *maps;
	size_t nm;
	int r = elf_proc_maps(pid, &maps, &nm);
	if (r < 0) {
		snprintf(why, whylen, "cannot read the mappings of process %d: %s",
			 pid, strerror(-r));
		return r;
	}
	r = -ENOEXEC;
	for (size_t i = 0; i < nm && r == -ENOEXEC; i++) {
		if (maps[i].path[0] != '/' || !is_libc(maps[i].path))
			continue;
		char file[4096];
		struct elf_file *ef;
		if (elf_proc_path(pid, maps[i].path, file, sizeof(file)) < 0 ||
		    elf_open_own(file, &ef) < 0)
			continue;
		uint64_t bias;
		if (elf_map_bias(ef, &maps[i], &bias) == 0) {
			out->dlopen = sym_at(ef, bias, "dlopen");
			out->dlsym = sym_at(ef, bias, "dlsym");
			out->dlerror = sym_at(ef, bias, "dlerror");
			if (!out->dlopen) {   /* glibc before 2.34 */
				out->dlopen = sym_at(ef, bias, "__libc_dlopen_mode");
				out->dlsym = sym_at(ef, bias, "__libc_dlsym");
				out->dlopen_flags_extra = (int)RTLD_DLOPEN_INTERNAL;
			}
			out->mmap = sym_at(ef, bias, "mmap");
			out->munmap = sym_at(ef, bias, "munmap");
			out->pthread_create = sym_at(ef, bias, "pthread_create");
			snprintf(out->path, sizeof(out->path), "%s", maps[i].path);
			if (out->dlopen && out->dlsym)
				r = 0;
		}
		elf_close(ef);
	}
	elf_maps_free(maps, nm);
	if (r == -ENOEXEC)
		snprintf(why, whylen, "process %d maps no C library with a "
			 "dynamic loader (a statically linked program?): the "
			 "process engine loads its agent with dlopen, which such "
			 "a program lacks; trace it with the kernel engine "
			 "instead", pid);
	return r;
}

int inject_dlopen(struct tracee *t, const struct inject_libc *lc,
		  const char *path, uint64_t *handle, char *why, size_t whylen)
{
	*handle = 0;
	uint64_t args[2] = { TRACEE_ARG_DATA,
			     (uint64_t)(RTLD_NOW | lc->dlopen_flags_extra) };
	int r = tracee_call(t, lc->dlopen, args, 2, path, strlen(path) + 1,
			    CALL_TIMEOUT_MS, handle);
	if (r < 0) {
		snprintf(why, whylen, "dlopen in process %d: %s", t->pid, t->why);
		return r;
	}
	if (*handle)
		return 0;
	char msg[512] = "";
	uint64_t err = 0;
	if (lc->dlerror &&
	    tracee_call(t, lc->dlerror, NULL, 0, NULL, 0, CALL_TIMEOUT_MS, &err) == 0 &&
	    err)
		tracee_read_str(t, err, msg, sizeof(msg));
	snprintf(why, whylen, "process %d could not load %s: %s", t->pid, path,
		 msg[0] ? msg : "dlopen failed");
	return -ENOENT;
}

int inject_dlsym(struct tracee *t, const struct inject_libc *lc,
		 uint64_t handle, const char *name, uint64_t *addr)
{
	uint64_t args[2] = { handle, TRACEE_ARG_DATA };
	int r = tracee_call(t, lc->dlsym, args, 2, name, strlen(name) + 1,
			    CALL_TIMEOUT_MS, addr);
	if (r < 0)
		return r;
	return *addr ? 0 : -ENOENT;
}
