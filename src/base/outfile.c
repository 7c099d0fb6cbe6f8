/* outfile.c - see outfile.h.
 *
 * The path is walked one component at a time, as the kernel walks it,
 * but with every symlink handled here: each component is opened with
 * O_PATH | O_NOFOLLOW relative to the directory reached so far, a
 * directory becomes the next starting point, and a symlink is checked
 * against the rule of the directory that holds it before its target
 * (read from the opened link itself, readlinkat(fd, "")) is spliced in
 * front of what is left of the path. Checking only the last component
 * let `-o /tmp/link/out.txt` through a stranger's /tmp/link -> /root/dir.
 *
 * Every check is made on descriptors, not on names looked up twice: the
 * ownership read is that of what was opened, and in a sticky directory
 * an attacker cannot replace a name someone else owns, so swapping
 * names between the check and the use gains nothing. */
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

/* the kernel's MAXSYMLINKS: more links than this in one walk is ELOOP */
#define LINKS_MAX 40

static bool sticky_world_writable(const struct stat *dir)
{
	return (dir->st_mode & S_ISVTX) && (dir->st_mode & S_IWOTH);
}

/* Whether the kernel's protected_* rules let us use an object owned by
 * OWNER in directory DIR: anything outside a sticky world-writable
 * directory, and there what we or the directory's owner own. */
static bool allowed(uid_t owner, const struct stat *dir)
{
	return !sticky_world_writable(dir) || owner == geteuid() ||
	       owner == dir->st_uid;
}

struct walk {
	char rest[2 * PATH_MAX];    /* what is left to resolve */
	size_t pos;                 /* where it starts in rest */
	char shown[PATH_MAX];       /* the directory reached, for messages */
	int dfd;                    /* ... and opened (O_PATH) */
	struct stat dst;            /* ... and its owner and mode */
	unsigned links;
	char *why;
	size_t whylen;
};

/* Refuse the object ST named NAME in the directory reached. */
static int refuse(struct walk *w, const char *name, const struct stat *st)
{
	const char *what, *rule;
	if (S_ISLNK(st->st_mode)) {
		what = "a symlink";
		rule = "protected_symlinks";
	} else if (S_ISREG(st->st_mode)) {
		what = "a file";
		rule = "protected_regular";
	} else {
		what = "a FIFO or device";
		rule = "protected_fifos";
	}
	if (w->why)
		snprintf(w->why, w->whylen, "'%s%s%s' is %s that another user "
			 "owns (uid %u), in a sticky world-writable directory "
			 "(the kernel's %s rule): remove it, or write elsewhere",
			 w->shown, *w->shown && strcmp(w->shown, "/") ? "/" : "",
			 name, what, (unsigned)st->st_uid, rule);
	return -EPERM;
}

/* Make directory FD (named NAME in the one reached) the one reached. */
static int enter(struct walk *w, int fd, const char *name)
{
	size_t n = strlen(w->shown);
	if (n + strlen(name) + 2 > sizeof(w->shown)) {
		close(fd);
		return -ENAMETOOLONG;
	}
	if (n && strcmp(w->shown, "/") != 0)
		w->shown[n++] = '/';
	strcpy(w->shown + n, name);
	close(w->dfd);
	w->dfd = fd;
	return fstat(fd, &w->dst) < 0 ? -errno : 0;
}

/* Go back to the root directory (an absolute path or symlink target). */
static int restart_at_root(struct walk *w)
{
	int fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (w->dfd >= 0)
		close(w->dfd);
	w->dfd = fd;
	strcpy(w->shown, "/");
	return fstat(fd, &w->dst) < 0 ? -errno : 0;
}

/* Whether the directory reached is in procfs, whose symlinks are the
 * kernel's own: /proc/self, and the magic links of /proc/PID/fd and
 * cwd, which name open files ("pipe:[1234]") rather than paths and only
 * the kernel can follow (-o /dev/stdout goes through one). */
static bool in_procfs(const struct walk *w)
{
	struct statfs sf;
	return fstatfs(w->dfd, &sf) == 0 && sf.f_type == PROC_SUPER_MAGIC;
}

/* The symlink LFD (stat ST, named NAME in the directory reached): check
 * it against that directory's rule, then resolve its target in place of
 * its name. 2 when it is procfs's, for the kernel to follow. */
static int follow(struct walk *w, int lfd, const struct stat *st,
		  const char *name)
{
	if (in_procfs(w))
		return 2;
	if (!allowed(st->st_uid, &w->dst))
		return refuse(w, name, st);
	if (++w->links > LINKS_MAX)
		return -ELOOP;
	char target[PATH_MAX];
	ssize_t n = readlinkat(lfd, "", target, sizeof(target));
	if (n < 0)
		return -errno;
	if (n == 0)
		return -ENOENT;
	if ((size_t)n >= sizeof(target))
		return -ENAMETOOLONG;
	const char *left = w->rest + w->pos;
	size_t nleft = strlen(left);
	if ((size_t)n + 1 + nleft + 1 > sizeof(w->rest))
		return -ENAMETOOLONG;
	/* target, then what followed the link ("/more/path" or "") */
	memmove(w->rest + n, left, nleft + 1);
	memcpy(w->rest, target, (size_t)n);
	w->pos = 0;
	return target[0] == '/' ? restart_at_root(w) : 0;
}

/* The last component: open (create) it for writing, in the directory
 * reached. 1 when it was a symlink, now spliced into w->rest; 0 with
 * *FD open; or -errno. */
static int open_last(struct walk *w, const char *name, int *fd)
{
	/* O_NONBLOCK: a FIFO planted here must not hang the open */
	const int flags = O_WRONLY | O_CREAT | O_NONBLOCK | O_CLOEXEC |
			  O_NOFOLLOW;
	struct stat st;
	*fd = openat(w->dfd, name, flags, 0666);
	if (*fd < 0) {
		int e = errno;
		/* What is there decides: a symlink (ELOOP) is resolved
		 * here; our own FIFO without a reader yet (ENXIO) is
		 * waited for, as fopen would. */
		int pfd = openat(w->dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (pfd < 0)
			return -e;
		if (fstat(pfd, &st) < 0) {
			e = errno;
			close(pfd);
			return -e;
		}
		if (S_ISLNK(st.st_mode)) {
			int r = follow(w, pfd, &st, name);
			close(pfd);
			if (r != 2)
				return r < 0 ? r : 1;
			/* the kernel's own link: it follows it */
			*fd = openat(w->dfd, name, flags & ~O_NOFOLLOW, 0666);
			if (*fd < 0)
				return -errno;
			goto opened;
		}
		close(pfd);
		if (!allowed(st.st_uid, &w->dst))
			return refuse(w, name, &st);
		if (!S_ISFIFO(st.st_mode) || e != ENXIO)
			return -e;
		*fd = openat(w->dfd, name, flags & ~O_NONBLOCK, 0666);
		if (*fd < 0)
			return -errno;
	}
	/* What the name held before we came (ours if we just created it):
	 * another user's file or FIFO would receive the trace. */
opened:;
	int r = 0;
	if (fstat(*fd, &st) < 0)
		r = -errno;
	else if (!allowed(st.st_uid, &w->dst))
		r = refuse(w, name, &st);
	/* truncated only now that it is known to be ours to write */
	else if ((S_ISREG(st.st_mode) && ftruncate(*fd, 0) < 0) ||
		 fcntl(*fd, F_SETFL, O_WRONLY) < 0)
		r = -errno;
	if (r < 0) {
		close(*fd);
		*fd = -1;
	}
	return r;
}

/* Walk w->rest from the directory reached; the output file's fd, or
 * -errno. */
static int walk(struct walk *w)
{
	for (;;) {
		char *p = w->rest + w->pos;
		p += strspn(p, "/");
		size_t len = strcspn(p, "/");
		if (len == 0)   /* "/", or a trailing slash: a directory */
			return -EISDIR;
		if (len > NAME_MAX)
			return -ENAMETOOLONG;
		char name[NAME_MAX + 1];
		memcpy(name, p, len);
		name[len] = '\0';
		w->pos = (size_t)(p + len - w->rest);
		bool last = p[len + strspn(p + len, "/")] == '\0';
		int fd, r;
		if (last) {
			r = open_last(w, name, &fd);
			if (r == 0)
				return fd;
			if (r < 0)
				return r;
			continue;   /* a symlink, resolved */
		}
		fd = openat(w->dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		struct stat st;
		if (fstat(fd, &st) < 0)
			r = -errno;
		else if (S_ISLNK(st.st_mode) &&
			 (r = follow(w, fd, &st, name)) == 2) {
			/* procfs's (/proc/self/cwd): the kernel follows */
			close(fd);
			fd = openat(w->dfd, name, O_PATH | O_DIRECTORY | O_CLOEXEC);
			r = fd < 0 ? -errno : enter(w, fd, name);
			fd = -1;
		} else if (S_ISLNK(st.st_mode))
			;       /* followed: its target is in w->rest */
		else if (S_ISDIR(st.st_mode))
			r = enter(w, fd, name), fd = -1;
		else
			r = -ENOTDIR;
		if (fd >= 0)
			close(fd);
		if (r < 0)
			return r;
	}
}

FILE *outfile_open(const char *path, char *why, size_t whylen)
{
	if (why && whylen)
		why[0] = '\0';
	size_t n = strlen(path);
	if (n == 0 || n >= PATH_MAX) {
		errno = n ? ENAMETOOLONG : ENOENT;
		return NULL;
	}
	struct walk *w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->why = whylen ? why : NULL;
	w->whylen = whylen;
	w->dfd = -1;
	memcpy(w->rest, path, n + 1);
	int r;
	if (path[0] == '/') {
		r = restart_at_root(w);
	} else {
		w->dfd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
		r = w->dfd < 0 || fstat(w->dfd, &w->dst) < 0 ? -errno : 0;
	}
	int fd = r < 0 ? r : walk(w);
	if (w->dfd >= 0)
		close(w->dfd);
	if (w->why && fd != -EPERM)
		w->why[0] = '\0';
	free(w);
	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	FILE *f = fdopen(fd, "w");
	if (!f) {
		int e = errno;
		close(fd);
		errno = e;
	}
	return f;
}
