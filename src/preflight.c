/* preflight.c - see preflight.h. */
#include "preflight.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <wordexp.h>

#include "base/log.h"

unsigned preflight_std_fds(void)
{
	unsigned closed = 0;
	for (int fd = 0; fd <= 2; fd++) {
		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		closed |= 1u << fd;
		/* open() takes the lowest free number: this one */
		int n = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
		if (n >= 0 && n != fd)
			close(n);       /* a lower one was free after all */
	}
	return closed;
}

int preflight_pid(int pid)
{
	if (kill(pid, 0) == 0 || errno == EPERM)
		return 0;
	log_error("-p %d: no such process", pid);
	return -ESRCH;
}

/* 0 when PATH names an executable regular file, else -errno. */
static int executable(const char *path)
{
	struct stat st;
	if (stat(path, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EACCES;
	return access(path, X_OK) == 0 ? 0 : -errno;
}

/* execvp's search: the first executable PROG in $PATH (its default when
 * unset), its path in FOUND. -ENOENT when none is, or the error of the
 * first that exists. */
static int search_path(const char *prog, char *found, size_t foundlen)
{
	const char *path = getenv("PATH");
	if (!path)
		path = "/usr/local/bin:/bin:/usr/bin";
	int first_err = -ENOENT;
	for (const char *p = path;; p++) {
		const char *end = strchr(p, ':');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		char full[4096];
		/* an empty entry is the current directory */
		int n = len ? snprintf(full, sizeof(full), "%.*s/%s", (int)len,
				       p, prog) :
			      snprintf(full, sizeof(full), "./%s", prog);
		if (n > 0 && n < (int)sizeof(full)) {
			int r = executable(full);
			if (r == 0) {
				snprintf(found, foundlen, "%s", full);
				return 0;
			}
			if (r != -ENOENT && r != -ENOTDIR && first_err == -ENOENT)
				first_err = r;
		}
		if (!end)
			break;
		p = end;
	}
	return first_err;
}

/* What the kernel reads of a file to choose how to run it, and how
 * many `#!` interpreters it runs one inside another (BINPRM_BUF_SIZE,
 * and the depth fs/exec.c allows). */
#define BINPRM_BUF 256
#define INTERP_DEPTH 4
/* program headers read looking for PT_INTERP (the kernel reads 64 KiB) */
#define PHDRS_MAX 1024

/* The interpreter an ELF file (its first bytes in BUF, N of them) asks
 * for: 1 with its path in INTERP, 0 when it has none (static, or
 * unreadable: the kernel says the rest), -ENOEXEC when the header is
 * malformed as the kernel would find it. */
static int elf_interpreter(int fd, const unsigned char *buf, size_t n,
			   char *interp, size_t len)
{
	bool is64 = n > EI_CLASS && buf[EI_CLASS] == ELFCLASS64;
	uint64_t phoff;
	unsigned phnum, phentsize;
	if (is64 ? n < sizeof(Elf64_Ehdr) : n < sizeof(Elf32_Ehdr))
		return -ENOEXEC;
	if (is64) {
		const Elf64_Ehdr *eh = (const Elf64_Ehdr *)buf;
		phoff = eh->e_phoff;
		phnum = eh->e_phnum;
		phentsize = eh->e_phentsize;
	} else {
		const Elf32_Ehdr *eh = (const Elf32_Ehdr *)buf;
		phoff = eh->e_phoff;
		phnum = eh->e_phnum;
		phentsize = eh->e_phentsize;
	}
	if (phentsize != (is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr)) ||
	    phnum == 0 || phnum > PHDRS_MAX)
		return -ENOEXEC;
	for (unsigned i = 0; i < phnum; i++) {
		Elf64_Phdr ph;
		Elf32_Phdr ph32;
		void *dst = is64 ? (void *)&ph : (void *)&ph32;
		if (pread(fd, dst, phentsize, (off_t)(phoff + (uint64_t)i * phentsize)) !=
		    (ssize_t)phentsize)
			return -ENOEXEC;
		if (!is64) {
			ph.p_type = ph32.p_type;
			ph.p_offset = ph32.p_offset;
			ph.p_filesz = ph32.p_filesz;
		}
		if (ph.p_type != PT_INTERP)
			continue;
		/* the kernel's checks: 2..PATH_MAX bytes, NUL-terminated */
		if (ph.p_filesz < 2 || ph.p_filesz > PATH_MAX ||
		    ph.p_filesz > len)
			return -ENOEXEC;
		if (pread(fd, interp, ph.p_filesz, (off_t)ph.p_offset) !=
		    (ssize_t)ph.p_filesz || interp[ph.p_filesz - 1] != '\0')
			return -ENOEXEC;
		return 1;
	}
	return 0;
}

/* The program at PATH (executable, checked) can be started: its `#!`
 * interpreter, or its ELF interpreter, is there and executable. 0, or
 * -errno with the reason printed (NAME is what the user wrote). */
static int check_interpreters(const char *name, const char *path, int depth)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return 0;     /* execute-only, say: exec itself will tell */
	unsigned char buf[BINPRM_BUF + 1];
	ssize_t n = pread(fd, buf, BINPRM_BUF, 0);
	char interp[PATH_MAX];
	int r = 0;
	if (n >= 2 && buf[0] == '#' && buf[1] == '!') {
		/* "#! /path/interp [arg]\n", as fs/binfmt_script.c reads it */
		buf[n] = '\0';
		char *p = (char *)buf + 2;
		p += strspn(p, " \t");
		size_t len = strcspn(p, " \t\n");
		if (len == 0 || len >= sizeof(interp)) {
			close(fd);
			return 0;   /* execvp runs it with /bin/sh */
		}
		memcpy(interp, p, len);
		interp[len] = '\0';
		close(fd);
		if (depth >= INTERP_DEPTH) {
			log_error("-c: cannot run '%s': its #! interpreters "
				  "nest more than %d deep", name, INTERP_DEPTH);
			return -ELOOP;
		}
		r = executable(interp);
		if (r < 0) {
			log_error("-c: cannot run '%s': its interpreter '%s' "
				  "(the #! line of %s): %s", name, interp, path,
				  strerror(-r));
			return r;
		}
		return check_interpreters(name, interp, depth + 1);
	}
	if (n >= SELFMAG && memcmp(buf, ELFMAG, SELFMAG) == 0) {
		r = elf_interpreter(fd, buf, (size_t)n, interp, sizeof(interp));
		close(fd);
		if (r == -ENOEXEC) {
			log_error("-c: cannot run '%s': %s is a malformed ELF "
				  "file", name, path);
			return r;
		}
		if (r == 1 && (r = executable(interp)) < 0) {
			log_error("-c: cannot run '%s': its ELF interpreter '%s' "
				  "(PT_INTERP of %s): %s", name, interp, path,
				  strerror(-r));
			return r;
		}
		return 0;
	}
	close(fd);
	return 0;
}

int preflight_command(const char *cmd)
{
	wordexp_t w;
	if (wordexp(cmd, &w, WRDE_NOCMD) != 0 || w.we_wordc == 0) {
		log_error("-c: cannot parse command '%s'", cmd);
		return -EINVAL;
	}
	const char *prog = w.we_wordv[0];
	char path[4096];
	snprintf(path, sizeof(path), "%s", prog);
	int r = strchr(prog, '/') ? executable(prog) :
		search_path(prog, path, sizeof(path));
	if (r == -ENOENT && !strchr(prog, '/'))
		log_error("-c: cannot run '%s': no such command in $PATH", prog);
	else if (r < 0)
		log_error("-c: cannot run '%s': %s", prog, strerror(-r));
	else
		r = check_interpreters(prog, path, 0);
	wordfree(&w);
	return r;
}
