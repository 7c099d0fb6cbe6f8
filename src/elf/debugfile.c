/* debugfile.c - the separate debug file of a stripped ELF file, found as
 * gdb and bcc (so bpftrace) find it: by build-id under
 * /usr/lib/debug/.build-id/xx/yyyy.debug, else by .gnu_debuglink (next
 * to the file, in its .debug/ directory, or under /usr/lib/debug), the
 * link's CRC checked. Its .symtab gives the local and hidden functions a
 * distribution strips (libc6-dbg for libc), so they can be listed and
 * probed like bpftrace does. */
#include "elf.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "../base/file.h"

#define DEBUG_DIR "/usr/lib/debug"

int elf__debug_open(Elf *e, const char *path, int *fd, Elf **out);

static int try_open(const char *cand, int *fd, Elf **out)
{
	int f = file_open_regular(cand, false);
	if (f < 0)
		return -errno;
	Elf *d = elf_begin(f, ELF_C_READ_MMAP, NULL);
	if (!d || elf_kind(d) != ELF_K_ELF) {
		if (d)
			elf_end(d);
		close(f);
		return -ENOEXEC;
	}
	*fd = f;
	*out = d;
	return 0;
}

/* The bytes of the first section of this type and name, or NULL. */
static Elf_Data *section(Elf *e, unsigned type, const char *name)
{
	size_t shstrndx;
	if (elf_getshdrstrndx(e, &shstrndx) != 0)
		return NULL;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != type)
			continue;
		const char *n = elf_strptr(e, shstrndx, sh.sh_name);
		if (n && strcmp(n, name) == 0)
			return elf_getdata(scn, NULL);
	}
	return NULL;
}

/* e's GNU build ID: its length (2..64), or 0 when it has none. */
static size_t build_id(Elf *e, unsigned char id[64])
{
	Elf_Data *d = section(e, SHT_NOTE, ".note.gnu.build-id");
	if (!d)
		return 0;
	GElf_Nhdr nh;
	size_t off = 0, name_off, desc_off;
	while ((off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
		if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
		    memcmp((char *)d->d_buf + name_off, "GNU", 4) != 0 ||
		    nh.n_descsz < 2 || nh.n_descsz > 64)
			continue;
		memcpy(id, (const char *)d->d_buf + desc_off, nh.n_descsz);
		return nh.n_descsz;
	}
	return 0;
}

static const char *const *extra_dirs;
static size_t nextra_dirs;

void elf_debuginfo_dirs(const char *const *dirs, size_t n)
{
	extra_dirs = dirs;
	nextra_dirs = n;
}

/* Regular files of one --debuginfo directory looked at, at most: the
 * directory is the user's, but may be large (/usr/lib/debug). */
#define DEBUGINFO_SCAN_MAX 4096

/* In dir, a file with e's build ID: FILE.debug and FILE first (FILE the
 * stripped file's name), then the directory's other files. */
static int in_dir(const char *dir, const char *base, const unsigned char *id,
		  size_t idlen, int *fd, Elf **out)
{
	char cand[PATH_MAX];
	const char *firsts[] = { "%s/%s.debug", "%s/%s" };
	for (size_t i = 0; i < 2; i++) {
		if ((size_t)snprintf(cand, sizeof(cand), firsts[i], dir, base) >=
		    sizeof(cand) || try_open(cand, fd, out) < 0)
			continue;
		unsigned char got[64];
		if (build_id(*out, got) == idlen && !memcmp(got, id, idlen))
			return 0;
		elf_end(*out);
		close(*fd);
	}
	DIR *dp = opendir(dir);
	if (!dp)
		return -ENOENT;
	struct dirent *de;
	unsigned seen = 0;
	while ((de = readdir(dp)) && seen < DEBUGINFO_SCAN_MAX) {
		if (de->d_type != DT_REG && de->d_type != DT_UNKNOWN)
			continue;
		seen++;
		if ((size_t)snprintf(cand, sizeof(cand), "%s/%s", dir,
				     de->d_name) >= sizeof(cand) ||
		    try_open(cand, fd, out) < 0)
			continue;
		unsigned char got[64];
		if (build_id(*out, got) == idlen && !memcmp(got, id, idlen)) {
			closedir(dp);
			return 0;
		}
		elf_end(*out);
		close(*fd);
	}
	closedir(dp);
	return -ENOENT;
}

static int by_extra_dirs(Elf *e, const char *path, int *fd, Elf **out)
{
	unsigned char id[64];
	size_t idlen = nextra_dirs ? build_id(e, id) : 0;
	if (!idlen)
		return -ENOENT;
	char own[PATH_MAX];
	snprintf(own, sizeof(own), "%s", path);
	char *slash = strrchr(own, '/');
	const char *base = slash ? slash + 1 : path;
	if (slash)
		*slash = '\0';
	else
		snprintf(own, sizeof(own), ".");
	for (size_t i = 0; i < nextra_dirs; i++) {
		const char *d = extra_dirs[i];
		if (*d == '+')
			d++;
		char dir[PATH_MAX];
		if ((size_t)snprintf(dir, sizeof(dir), *d == '/' ? "%s" : "%s/%s",
				     *d == '/' ? d : own, d) >= sizeof(dir))
			continue;
		if (in_dir(dir, base, id, idlen, fd, out) == 0)
			return 0;
	}
	return -ENOENT;
}

static int by_build_id(Elf *e, int *fd, Elf **out)
{
	unsigned char id[64];
	size_t len = build_id(e, id);
	if (!len)
		return -ENOENT;
	char cand[PATH_MAX];
	int n = snprintf(cand, sizeof(cand), DEBUG_DIR "/.build-id/%02x/",
			 id[0]);
	for (size_t i = 1; i < len; i++)
		n += snprintf(cand + n, sizeof(cand) - (size_t)n, "%02x", id[i]);
	snprintf(cand + n, sizeof(cand) - (size_t)n, ".debug");
	return try_open(cand, fd, out);
}

/* CRC32 of a whole file, as .gnu_debuglink records it. */
static int file_crc(const char *path, uint32_t *crc)
{
	int f = file_open_regular(path, false);
	if (f < 0)
		return -errno;
	unsigned char buf[65536];
	uLong c = crc32(0, Z_NULL, 0);
	ssize_t r;
	while ((r = read(f, buf, sizeof(buf))) > 0)
		c = crc32(c, buf, (uInt)r);
	close(f);
	if (r < 0)
		return -EIO;
	*crc = (uint32_t)c;
	return 0;
}

static int by_debuglink(Elf *e, const char *path, int *fd, Elf **out)
{
	Elf_Data *d = section(e, SHT_PROGBITS, ".gnu_debuglink");
	if (!d || !d->d_buf || d->d_size < 8)
		return -ENOENT;
	const char *name = d->d_buf;
	size_t len = strnlen(name, d->d_size);
	size_t crc_off = (len + 4) & ~(size_t)3;
	if (len == 0 || len == d->d_size || crc_off + 4 > d->d_size ||
	    strchr(name, '/'))
		return -ENOENT;
	uint32_t want;
	memcpy(&want, (const char *)d->d_buf + crc_off, 4);
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	else
		snprintf(dir, sizeof(dir), ".");
	const char *fmts[] = { "%s/%.*s", "%s/.debug/%.*s", DEBUG_DIR "%s/%.*s" };
	for (size_t i = 0; i < sizeof(fmts) / sizeof(*fmts); i++) {
		char cand[PATH_MAX];
		if ((size_t)snprintf(cand, sizeof(cand), fmts[i], dir, (int)len,
				     name) >= sizeof(cand))
			continue;
		uint32_t crc = 0;
		if (strcmp(cand, path) == 0 || file_crc(cand, &crc) < 0 ||
		    crc != want)
			continue;
		if (try_open(cand, fd, out) == 0)
			return 0;
	}
	return -ENOENT;
}

/* Open the debug file of e (the file at path). 0 with *fd and *out set,
 * or -ENOENT. */
int elf__debug_open(Elf *e, const char *path, int *fd, Elf **out)
{
	*fd = -1;
	*out = NULL;
	if (by_build_id(e, fd, out) == 0)
		return 0;
	if (by_debuglink(e, path, fd, out) == 0)
		return 0;
	return by_extra_dirs(e, path, fd, out);
}
