/* preflight.c - see preflight.h. */
#include "preflight.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <wordexp.h>

#include "base/log.h"

void preflight_std_fds(void)
{
	for (int fd = 0; fd <= 2; fd++) {
		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		/* open() takes the lowest free number: this one */
		int n = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
		if (n >= 0 && n != fd)
			close(n);       /* a lower one was free after all */
	}
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
 * unset). -ENOENT when none is, or the error of the first that exists. */
static int search_path(const char *prog)
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
			if (r == 0)
				return 0;
			if (r != -ENOENT && r != -ENOTDIR && first_err == -ENOENT)
				first_err = r;
		}
		if (!end)
			break;
		p = end;
	}
	return first_err;
}

int preflight_command(const char *cmd)
{
	wordexp_t w;
	if (wordexp(cmd, &w, WRDE_NOCMD) != 0 || w.we_wordc == 0) {
		log_error("-c: cannot parse command '%s'", cmd);
		return -EINVAL;
	}
	const char *prog = w.we_wordv[0];
	int r = strchr(prog, '/') ? executable(prog) : search_path(prog);
	if (r == -ENOENT && !strchr(prog, '/'))
		log_error("-c: cannot run '%s': no such command in $PATH", prog);
	else if (r < 0)
		log_error("-c: cannot run '%s': %s", prog, strerror(-r));
	wordfree(&w);
	return r;
}
