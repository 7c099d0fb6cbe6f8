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
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

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

/* A data symbol's address in the process, or 0. */
static uint64_t data_at(const struct elf_file *ef, uint64_t bias,
			const char *name)
{
	uint64_t v;
	return elf_symbol_addr(ef, name, &v) == 0 && v ? v + bias : 0;
}

/* Open the file of mapping m of process pid: the very file mapped there
 * (map_files, for root), else the path inside the process's root; either
 * without blocking, and only a regular file: the process names it, and
 * could have put a FIFO there. */
static int open_mapped(int pid, const struct elf_map *m, struct elf_file **ef)
{
	char file[4096];
	snprintf(file, sizeof(file), "/proc/%d/map_files/%llx-%llx", pid,
		 (unsigned long long)m->start, (unsigned long long)m->end);
	if (elf_open_own(file, ef) == 0)
		return 0;
	if (elf_proc_path(pid, m->path, file, sizeof(file)) < 0)
		return -ENOENT;
	return elf_open_own(file, ef);
}

/* A program that reads `environ` itself has the variable copied into its
 * own data (a copy relocation): the C library then sets and reads that
 * copy, and its own stays NULL. The program's, if it defines one. */
static uint64_t program_environ(int pid, const struct elf_map *maps,
				size_t nm)
{
	char link[64], exe[4096];
	snprintf(link, sizeof(link), "/proc/%d/exe", pid);
	ssize_t n = readlink(link, exe, sizeof(exe) - 1);
	if (n <= 0)
		return 0;
	exe[n] = 0;
	uint64_t at = 0;
	for (size_t i = 0; i < nm && !at; i++) {
		if (strcmp(maps[i].path, exe) != 0)
			continue;
		struct elf_file *ef;
		uint64_t bias;
		if (open_mapped(pid, &maps[i], &ef) < 0)
			return 0;
		if (elf_map_bias(ef, &maps[i], &bias) == 0) {
			at = data_at(ef, bias, "environ");
			if (!at)
				at = data_at(ef, bias, "__environ");
		}
		elf_close(ef);
		break;
	}
	return at;
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
		struct elf_file *ef;
		if (open_mapped(pid, &maps[i], &ef) < 0)
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
			out->environ_at = data_at(ef, bias, "__environ");
			if (out->dlopen && out->dlsym)
				r = 0;
		}
		elf_close(ef);
	}
	if (r == 0) {
		uint64_t own = program_environ(pid, maps, nm);
		if (own)
			out->environ_at = own;
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

/* ---- a process that is still starting ----
 *
 * Right after exec a process maps its C library before its dynamic
 * loader has relocated and initialized it; a dlopen called then runs
 * through an unrelocated GOT, and the traced program dies of SIGSEGV
 * (seen when -p named a program a millisecond after it started). The C
 * library sets `environ` as it initializes (glibc's _init_first, run by
 * the loader once every object is relocated; musl's __init_libc), so a
 * NULL `environ` means "not yet". */

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Does the process map glibc's dynamic loader (ld-linux-x86-64.so.2)? */
static bool maps_loader(int pid)
{
	struct elf_map *maps;
	size_t nm;
	if (elf_proc_maps(pid, &maps, &nm) < 0)
		return false;
	bool found = false;
	for (size_t i = 0; i < nm && !found; i++) {
		const char *base = strrchr(maps[i].path, '/');
		base = base ? base + 1 : maps[i].path;
		found = strncmp(base, "ld-linux", 8) == 0 ||
			strncmp(base, "ld-2.", 5) == 0;
	}
	elf_maps_free(maps, nm);
	return found;
}

int inject_wait_started(int pid, unsigned timeout_ms,
			struct inject_libc *lc, char *why, size_t whylen)
{
	uint64_t deadline = now_ms() + timeout_ms;
	bool found = false;
	for (;;) {
		/* the C library's symbols are read once it is mapped; after
		 * that only `environ` is read again */
		int r = found ? 0 : inject_find_libc(pid, lc, why, whylen);
		if (r == 0) {
			found = true;
			uint64_t v = 0;
			struct iovec l = { &v, sizeof(v) };
			struct iovec rem = { (void *)(uintptr_t)lc->environ_at,
					     sizeof(v) };
			/* unknown, or unreadable: the attach says what fails */
			if (!lc->environ_at ||
			    process_vm_readv(pid, &l, 1, &rem, 1, 0) !=
			    (ssize_t)sizeof(v) || v)
				return 0;
		} else if (r != -ENOEXEC || !maps_loader(pid)) {
			return r;       /* a static program, or no process */
		}
		if (now_ms() >= deadline) {
			snprintf(why, whylen, "process %d has not finished "
				 "starting within %u ms: its dynamic loader has "
				 "not yet initialized the C library, whose "
				 "dlopen loads sonde's agent", pid, timeout_ms);
			return -EAGAIN;
		}
		usleep(2000);
	}
}

/* ---- where calls return to ----
 *
 * tracee_call needs code in the process that ends a call with
 * rt_sigreturn (tracee.h says why). The C library has one, its signal
 * restorer (`mov $15, %rax; syscall`, glibc's and musl's alike), which
 * loses the call's result; so the first call, through it, maps a page
 * for sonde's own:
 *     mov %rax, %rdi; mov $15, %eax; syscall; ud2
 * and every later call returns there, its result in rdi. The page stays
 * (read and execute only) and is found again by its signature by the
 * next sonde that attaches, so a process gets one in its life. */
static const uint8_t restorer_code[] = {
	0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05,
};
static const uint8_t return_code[] = {
	0x48, 0x89, 0xc7, 0xb8, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05, 0x0f, 0x0b,
};
#define RETURN_END 10           /* the syscall instruction's end */
#define RETURN_SIG_AT 32
static const char return_sig[] = "sonde: calls return here, v1";
#define PAGE 4096u
#define SCAN_CHUNK (64u << 10)
#define MAP_TRIES 4

/* A page of the process holding sonde's return code already. */
static uint64_t return_page_found(struct tracee *t, const struct elf_map *maps,
				  size_t n)
{
	uint8_t buf[RETURN_SIG_AT + sizeof(return_sig)];
	for (size_t i = 0; i < n; i++) {
		const struct elf_map *m = &maps[i];
		if (m->end - m->start != PAGE || m->inode || m->path[0] ||
		    strcmp(m->perms, "r-xp") != 0 ||
		    tracee_read(t, m->start, buf, sizeof(buf)) < 0)
			continue;
		if (memcmp(buf, return_code, sizeof(return_code)) == 0 &&
		    memcmp(buf + RETURN_SIG_AT, return_sig, sizeof(return_sig)) == 0)
			return m->start;
	}
	return 0;
}

/* The C library's signal restorer, in its executable mappings. */
static uint64_t restorer_of(struct tracee *t, const struct inject_libc *lc,
			    const struct elf_map *maps, size_t n)
{
	uint8_t *buf = malloc(SCAN_CHUNK + sizeof(restorer_code));
	uint64_t found = 0;
	for (size_t i = 0; buf && i < n && !found; i++) {
		const struct elf_map *m = &maps[i];
		if (m->perms[2] != 'x' || strcmp(m->path, lc->path) != 0)
			continue;
		for (uint64_t at = m->start; at < m->end && !found; at += SCAN_CHUNK) {
			uint64_t len = m->end - at;
			if (len > SCAN_CHUNK + sizeof(restorer_code))
				len = SCAN_CHUNK + sizeof(restorer_code);
			if (len < sizeof(restorer_code) ||
			    tracee_read(t, at, buf, len) < 0)
				continue;
			void *p = memmem(buf, len, restorer_code, sizeof(restorer_code));
			if (p)
				found = at + (uint64_t)((uint8_t *)p - buf);
		}
	}
	free(buf);
	return found;
}

/* Free address space for one page: the nearest below the C library,
 * where mmap puts what comes next anyway (away from the stack's room to
 * grow and the heap's). */
static uint64_t free_page(const struct inject_libc *lc,
			  const struct elf_map *maps, size_t n)
{
	size_t first = n;
	for (size_t i = 0; i < n && first == n; i++)
		if (strcmp(maps[i].path, lc->path) == 0)
			first = i;
	for (size_t i = first < n ? first : n - 1; i > 0; i--) {
		uint64_t lo = maps[i - 1].end, hi = maps[i].start;
		if (hi > lo && hi - lo >= 2 * PAGE && lo >= (1u << 20))
			return hi - PAGE;
	}
	return 0;
}

int inject_prepare_calls(struct tracee *t, const struct inject_libc *lc,
			 char *why, size_t whylen)
{
	if (t->ret_value)
		return 0;
	struct elf_map *maps;
	size_t n;
	int r = elf_proc_maps(t->pid, &maps, &n);
	if (r < 0) {
		snprintf(why, whylen, "cannot read the mappings of process %d: %s",
			 t->pid, strerror(-r));
		return r;
	}
	uint64_t page = return_page_found(t, maps, n);
	if (page) {
		elf_maps_free(maps, n);
		tracee_set_return(t, page, page + RETURN_END, true);
		return 0;
	}
	uint64_t restorer = restorer_of(t, lc, maps, n);
	uint64_t hint = n ? free_page(lc, maps, n) : 0;
	elf_maps_free(maps, n);
	if (!restorer || !hint || !lc->mmap) {
		snprintf(why, whylen, "process %d: %s", t->pid, !restorer ?
			 "no signal restorer (mov $15, %rax; syscall) in its C "
			 "library, for calls to return through" :
			 "no free page for sonde's calls to return to");
		return -ENOEXEC;
	}
	/* the process's other threads run during the call, and may map
	 * something there first: a few tries, each at the page free then */
	for (int tries = 0; tries < MAP_TRIES && hint; tries++) {
		tracee_set_return(t, restorer, restorer + sizeof(restorer_code),
				  false);
		uint64_t args[6] = { hint, PAGE, PROT_READ | PROT_EXEC,
				     MAP_PRIVATE | MAP_ANONYMOUS |
				     MAP_FIXED_NOREPLACE, (uint64_t)-1, 0 };
		uint64_t ret;
		r = tracee_call(t, lc->mmap, args, 6, NULL, 0, CALL_TIMEOUT_MS, &ret);
		tracee_set_return(t, 0, 0, false);
		if (r < 0) {
			snprintf(why, whylen, "mmap in process %d: %s", t->pid, t->why);
			return r;
		}
		/* the result is not known: the page is there, anonymous and
		 * executable (alone, or merged with a neighbour), or not */
		bool mapped = false;
		uint64_t next = 0;
		if (elf_proc_maps(t->pid, &maps, &n) == 0) {
			for (size_t i = 0; i < n; i++)
				mapped |= maps[i].start <= hint &&
					  maps[i].end >= hint + PAGE &&
					  !maps[i].inode && !maps[i].path[0] &&
					  strcmp(maps[i].perms, "r-xp") == 0;
			next = mapped || !n ? 0 : free_page(lc, maps, n);
			elf_maps_free(maps, n);
		}
		if (mapped) {
			uint8_t code[RETURN_SIG_AT + sizeof(return_sig)];
			memset(code, 0xcc, sizeof(code));
			memcpy(code, return_code, sizeof(return_code));
			memcpy(code + RETURN_SIG_AT, return_sig, sizeof(return_sig));
			if ((r = tracee_write(t, hint, code, sizeof(code))) < 0)
				break;
			tracee_set_return(t, hint, hint + RETURN_END, true);
			return 0;
		}
		hint = next;
	}
	snprintf(why, whylen, "process %d: could not map a page for sonde's "
		 "calls to return to", t->pid);
	return -ENOMEM;
}

int inject_call(struct tracee *t, const struct inject_libc *lc, uint64_t fn,
		const uint64_t *args, int nargs, const void *data,
		size_t datalen, unsigned timeout_ms, uint64_t *ret, char *why,
		size_t whylen)
{
	int r = inject_prepare_calls(t, lc, why, whylen);
	if (r < 0)
		return r;
	r = tracee_call(t, fn, args, nargs, data, datalen, timeout_ms, ret);
	if (r < 0)
		snprintf(why, whylen, "%s", t->why);
	return r;
}

int inject_dlopen(struct tracee *t, const struct inject_libc *lc,
		  const char *path, uint64_t *handle, char *why, size_t whylen)
{
	*handle = 0;
	uint64_t args[2] = { TRACEE_ARG_DATA,
			     (uint64_t)(RTLD_NOW | lc->dlopen_flags_extra) };
	int r = inject_prepare_calls(t, lc, why, whylen);
	if (r < 0)
		return r;
	r = tracee_call(t, lc->dlopen, args, 2, path, strlen(path) + 1,
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
	char why[256];
	int r = inject_call(t, lc, lc->dlsym, args, 2, name, strlen(name) + 1,
			    CALL_TIMEOUT_MS, addr, why, sizeof(why));
	if (r < 0)
		return r;
	return *addr ? 0 : -ENOENT;
}
