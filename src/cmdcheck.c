/* cmdcheck.c - what a -c command ran, against the files its probes name.
 *
 * A command whose program on $PATH is a script that execs another one
 * (pyenv's and asdf's shims: `python3.11` is a bash script that ends in
 * a python of its own choosing) runs a program the probes may not name,
 * and they count nothing, in silence. bpftrace 0.17 refuses a -c name
 * that $PATH resolves twice; sonde runs it and, when the probes' files
 * were never loaded, says at its end what it ran instead: the engine
 * that knows (the process engine from its agents, the kernel engine from
 * the command's exit stop, main.c) calls cmdcheck_report. */
#include "cmdcheck.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <wordexp.h>

#include "base/log.h"
#include "program.h"

/* The file execvp would run for name: a name with '/' as it is, else the
 * first executable regular file in $PATH. 0 or -ENOENT. */
static int path_lookup(const char *name, char *out, size_t len)
{
	struct stat st;
	if (strchr(name, '/')) {
		snprintf(out, len, "%s", name);
		return 0;
	}
	const char *path = getenv("PATH");
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (const char *p = path; *p;) {
		size_t n = strcspn(p, ":");
		if (snprintf(out, len, "%.*s/%s", (int)(n ? n : 1),
			     n ? p : ".", name) < (int)len &&
		    stat(out, &st) == 0 && S_ISREG(st.st_mode) &&
		    access(out, X_OK) == 0)
			return 0;
		p += n;
		if (*p)
			p++;
	}
	return -ENOENT;
}

int cmdcheck_script(const char *cmd, char *name, size_t namelen,
		    char *path, size_t pathlen)
{
	wordexp_t w;
	if (wordexp(cmd, &w, WRDE_NOCMD) != 0)
		return -EINVAL;
	int r = w.we_wordc ? path_lookup(w.we_wordv[0], path, pathlen) : -EINVAL;
	if (r == 0)
		snprintf(name, namelen, "%s", w.we_wordv[0]);
	wordfree(&w);
	if (r < 0)
		return r;
	char head[2];
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	struct stat st;
	bool script = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
		      read(fd, head, 2) == 2 && head[0] == '#' && head[1] == '!';
	close(fd);
	return script;
}

/* Does the program probe user-space files (uprobe, uretprobe, usdt)? */
static bool probes_files(const struct program *prog)
{
	for (uint32_t i = 0; i < prog->nprobes; i++)
		if (prog->probes[i].uprobe && prog->probes[i].uprobe->path)
			return true;
	return false;
}

bool cmdcheck_wanted(const struct program *prog, const char *script)
{
	struct stat s, f;
	if (!probes_files(prog) || stat(script, &s) < 0)
		return false;
	/* probes on the script itself (a bash with USDT probes) are no shim */
	for (uint32_t i = 0; i < prog->nprobes; i++) {
		const struct uprobe_info *u = prog->probes[i].uprobe;
		if (u && u->path && stat(u->path, &f) == 0 &&
		    f.st_dev == s.st_dev && f.st_ino == s.st_ino)
			return false;
	}
	return true;
}

bool cmdcheck_maps_probed(int pid, const struct program *prog)
{
	char path[64], line[PATH_MAX + 256];
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return true;      /* cannot tell: say nothing */
	bool found = false;
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned maj, min;
		unsigned long long ino;
		if (sscanf(line, "%*x-%*x %*s %*x %x:%x %llu", &maj, &min, &ino) != 3 ||
		    !ino)
			continue;
		for (uint32_t i = 0; i < prog->nprobes && !found; i++) {
			const struct uprobe_info *u = prog->probes[i].uprobe;
			struct stat st;
			found = u && u->path && stat(u->path, &st) == 0 &&
				st.st_ino == ino;
		}
	}
	fclose(f);
	return found;
}

void cmdcheck_report(const struct program *prog, const char *name,
		     const char *script, const char *ran)
{
	const char *file = NULL;
	for (uint32_t i = 0; i < prog->nprobes && !file; i++)
		if (prog->probes[i].uprobe && prog->probes[i].uprobe->path)
			file = prog->probes[i].uprobe->path;
	log_warn("-c: '%s' is %s, a script (a shim, as pyenv's and asdf's "
		 "are) that ran %s: it never loaded %s, which the probes name, "
		 "so they did not fire in it (name that program in -c, or "
		 "probe the file it runs)", name, script,
		 ran && *ran ? ran : "another program", file ? file : "?");
}
