/* buildid.c - GNU build IDs: of an open ELF file (its note sections or
 * segments), of the running kernel (/sys/kernel/notes) and of a kernel
 * module (/sys/module/NAME/notes). A profile names each mapping's file by
 * its build ID, so a symbolizer elsewhere can find the very same binary
 * and its debug file.
 *
 * Notes are untrusted input (an ELF file anyone may have written): the
 * walker checks every size against the buffer before reading it, and
 * works on memory so it can be fuzzed without files. */
#include "elf.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../base/file.h"

#define NT_GNU_BUILD_ID_TYPE 3

static uint32_t ld32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

static size_t align4(size_t n)
{
	return (n + 3) & ~(size_t)3;
}

int elf_notes_build_id(const void *buf, size_t len, uint8_t *out, size_t cap)
{
	const uint8_t *p = buf;
	size_t off = 0;
	while (len - off >= 12) {
		size_t namesz = ld32(p + off), descsz = ld32(p + off + 4);
		uint32_t type = ld32(p + off + 8);
		off += 12;
		if (namesz > len - off || align4(namesz) > len - off)
			return -EINVAL;
		const uint8_t *name = p + off;
		off += align4(namesz);
		if (descsz > len - off)
			return -EINVAL;
		const uint8_t *desc = p + off;
		/* the last note's padding may be cut off */
		off += align4(descsz) <= len - off ? align4(descsz) : descsz;
		if (type == NT_GNU_BUILD_ID_TYPE && namesz == 4 &&
		    memcmp(name, "GNU", 4) == 0 && descsz > 0) {
			if (descsz > cap)
				return -ENOSPC;
			memcpy(out, desc, descsz);
			return (int)descsz;
		}
	}
	return -ENOENT;
}

int elf_build_id_fd(int fd, uint8_t *out, size_t cap)
{
	if (fd < 0)
		return -EBADF;
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e)
		return -ENOEXEC;
	int r = -ENOENT;
	/* sections first (what a linker writes), then segments (a file
	 * whose section headers were stripped) */
	Elf_Scn *scn = NULL;
	while (r == -ENOENT && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		if (d && d->d_buf)
			r = elf_notes_build_id(d->d_buf, d->d_size, out, cap);
		if (r == -EINVAL)
			r = -ENOENT;
	}
	size_t nph = 0;
	if (r == -ENOENT && elf_getphdrnum(e, &nph) == 0) {
		size_t flen = 0;
		const char *img = elf_rawfile(e, &flen);
		for (size_t i = 0; img && i < nph && r == -ENOENT; i++) {
			GElf_Phdr ph;
			if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_NOTE ||
			    ph.p_offset > flen || ph.p_filesz > flen - ph.p_offset)
				continue;
			r = elf_notes_build_id(img + ph.p_offset, ph.p_filesz,
					       out, cap);
			if (r == -EINVAL)
				r = -ENOENT;
		}
	}
	elf_end(e);
	return r;
}

/* A notes file of sysfs, small and trusted to be what the kernel wrote,
 * still read with a bound. */
static int notes_file_build_id(const char *path, uint8_t *out, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	uint8_t buf[8192];
	size_t n = 0;
	while (n < sizeof(buf)) {
		ssize_t k = read(fd, buf + n, sizeof(buf) - n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		n += (size_t)k;
	}
	close(fd);
	return elf_notes_build_id(buf, n, out, cap);
}

int kernel_build_id(const char *module, uint8_t *out, size_t cap)
{
	if (!module)
		return notes_file_build_id("/sys/kernel/notes", out, cap);
	char path[256];
	/* a module name is a plain name: nothing that walks the tree */
	if (!*module || strchr(module, '/') || strstr(module, "..") ||
	    strlen(module) > 64)
		return -EINVAL;
	snprintf(path, sizeof(path), "/sys/module/%s/notes/.note.gnu.build-id",
		 module);
	return notes_file_build_id(path, out, cap);
}
