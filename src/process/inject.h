/* inject.h - loading a shared object into a running process from inside:
 * the process calls the dynamic loader's dlopen on one of its own threads
 * (over ptrace, as gdb and bpftime do), so the object is loaded, relocated
 * and its constructors run exactly as for any dlopen. */
#ifndef SONDE_PROCESS_INJECT_H
#define SONDE_PROCESS_INJECT_H

#include <stddef.h>
#include <stdint.h>

struct tracee;

/* The loader functions found in a process's C library, at their run-time
 * addresses. */
struct inject_libc {
	uint64_t dlopen, dlsym, dlerror;   /* 0 if absent */
	uint64_t mmap, munmap;
	uint64_t pthread_create;           /* 0 if absent (glibc < 2.34) */
	int dlopen_flags_extra;            /* __RTLD_DLOPEN for __libc_dlopen_mode */
	char path[512];                    /* the C library, as the process maps it */
	/* the `environ` the C library reads (its own, or the program's copy
	 * of it): NULL until the C library is initialized; 0 if unknown */
	uint64_t environ_at;
};

/* Find them through the process's mappings and the ELF symbols of what it
 * maps. Returns 0, or -ENOEXEC with why filled when the process has no
 * dynamic loader to call (a static program), -errno otherwise. */
int inject_find_libc(int pid, struct inject_libc *out, char *why, size_t whylen);

/* Wait (up to timeout_ms) until the process has finished starting: its
 * dynamic loader has mapped, relocated and initialized the C library,
 * whose dlopen sonde calls. 0 with *lc filled (inject_find_libc's);
 * -ENOEXEC (a static program) or -EAGAIN (still starting at the
 * deadline) with why filled; -errno. */
int inject_wait_started(int pid, unsigned timeout_ms,
			struct inject_libc *lc, char *why, size_t whylen);

/* Make the held process ready for calls (tracee_set_return): find the
 * page of code sonde's calls return to, or map it (through the C
 * library's signal restorer, then mmap). 0 or -errno with why. */
int inject_prepare_calls(struct tracee *t, const struct inject_libc *lc,
			 char *why, size_t whylen);
/* tracee_call, the process made ready for it first; why filled on
 * failure. */
int inject_call(struct tracee *t, const struct inject_libc *lc, uint64_t fn,
		const uint64_t *args, int nargs, const void *data,
		size_t datalen, unsigned timeout_ms, uint64_t *ret, char *why,
		size_t whylen);

/* dlopen(path, RTLD_NOW) in the held process; *handle is what dlopen
 * returned. On failure returns -errno and why holds dlerror()'s words or
 * what went wrong with the call. */
int inject_dlopen(struct tracee *t, const struct inject_libc *lc,
		  const char *path, uint64_t *handle, char *why, size_t whylen);
/* dlsym(handle, name): 0 with *addr, or -ENOENT. */
int inject_dlsym(struct tracee *t, const struct inject_libc *lc,
		 uint64_t handle, const char *name, uint64_t *addr);

#endif
