/* outfile.c - see outfile.h. The checks are made on descriptors, not
 * on names looked up twice: the directory is opened once, the file is
 * opened in it with O_NOFOLLOW, and ownership is read from what was
 * opened, so swapping names between the check and the open gains an
 * attacker nothing. */
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool sticky_world_writable(const struct stat *dir)
{
	return (dir->st_mode & S_ISVTX) && (dir->st_mode & S_IWOTH);
}

/* Whether the kernel's protected_* rules let us use an object owned by
 * OWNER in a sticky world-writable directory DIR. */
static bool trusted_owner(uid_t owner, const struct stat *dir)
{
	return owner == geteuid() || owner == dir->st_uid;
}

/* Why an object owned by another user is not ours to write. */
static const char *refusal(const struct stat *st)
{
	if (S_ISLNK(st->st_mode))
		return "it is a symlink that another user owns, in a sticky "
		       "world-writable directory (the kernel's "
		       "protected_symlinks rule): remove it, or write elsewhere";
	if (S_ISREG(st->st_mode))
		return "it is a file that another user owns, in a sticky "
		       "world-writable directory (the kernel's "
		       "protected_regular rule): remove it, or write elsewhere";
	return "it is a FIFO or device that another user owns, in a sticky "
	       "world-writable directory (the kernel's protected_fifos "
	       "rule): remove it, or write elsewhere";
}

FILE *outfile_open(const char *path, const char **why)
{
	if (why)
		*why = NULL;
	char *copy_dir = strdup(path), *copy_base = strdup(path);
	if (!copy_dir || !copy_base) {
		free(copy_dir);
		free(copy_base);
		errno = ENOMEM;
		return NULL;
	}
	const char *dname = dirname(copy_dir), *bname = basename(copy_base);
	FILE *f = NULL;
	int fd = -1, e = 0;
	const char *refused = NULL;
	struct stat dst, st;
	int dfd = open(dname, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || fstat(dfd, &dst) < 0 || !sticky_world_writable(&dst)) {
		/* the ordinary case: no stranger can plant names here */
		if (dfd >= 0)
			close(dfd);
		free(copy_dir);
		free(copy_base);
		return fopen(path, "we");
	}
	/* O_NONBLOCK: a FIFO planted here must not hang the open */
	int flags = O_WRONLY | O_CREAT | O_NONBLOCK | O_CLOEXEC;
	bool via_link = false;
	fd = openat(dfd, bname, flags | O_NOFOLLOW, 0666);
	e = errno;
	if (fd < 0) {
		/* What is there decides. A symlink (ELOOP, or EACCES on
		 * some kernels) is followed only if its owner may be
		 * trusted; our own FIFO without a reader yet (ENXIO) is
		 * waited for, as fopen would. */
		if (fstatat(dfd, bname, &st, AT_SYMLINK_NOFOLLOW) < 0)
			goto out;
		if (!trusted_owner(st.st_uid, &dst)) {
			refused = refusal(&st);
			goto out;
		}
		if (S_ISLNK(st.st_mode)) {
			via_link = true;
			fd = openat(dfd, bname, flags, 0666);
		} else if (S_ISFIFO(st.st_mode) && e == ENXIO) {
			fd = openat(dfd, bname, (flags & ~O_NONBLOCK) |
				    O_NOFOLLOW, 0666);
		}
		e = errno;
		if (fd < 0)
			goto out;
	}
	if (fstat(fd, &st) < 0) {
		e = errno;
		goto out;
	}
	/* What the name held before we came (ours if we just created it):
	 * another user's file or FIFO would receive the trace. */
	if (!via_link && !trusted_owner(st.st_uid, &dst)) {
		refused = refusal(&st);
		goto out;
	}
	/* truncated only now that it is known to be ours to write */
	if ((S_ISREG(st.st_mode) && ftruncate(fd, 0) < 0) ||
	    fcntl(fd, F_SETFL, O_WRONLY) < 0) {
		e = errno;
		goto out;
	}
	f = fdopen(fd, "w");
	if (f)
		fd = -1;
	else
		e = errno;
out:
	if (fd >= 0)
		close(fd);
	close(dfd);
	free(copy_dir);
	free(copy_base);
	if (refused) {
		if (why)
			*why = refused;
		e = EPERM;
	}
	if (!f)
		errno = e ? e : EIO;
	return f;
}
