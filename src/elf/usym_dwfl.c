/* usym_dwfl.c - how libdwfl reads the files of a remembered process:
 * modules come with their descriptors (nothing is looked up by name),
 * separate debug files are found by debugfile.c, and a mapping's load
 * bias comes from the file's program headers. */
#include <errno.h>
#include <gelf.h>

#include "usym_internal.h"

static int no_find_elf(Dwfl_Module *mod, void **userdata, const char *modname,
		       Dwarf_Addr base, char **file_name, Elf **elfp)
{
	return -1;      /* every module is reported with its fd */
}

int elf__debug_open(Elf *e, const char *path, int *fd, Elf **out);

/* A module's separate debug file, as symbols.c finds it (build-id under
 * /usr/lib/debug, else the debug link, CRC checked), opened the way
 * files a traced process could have planted are (a FIFO named as the
 * link next to the file would block libdwfl's own search for good). */
static int find_debuginfo(Dwfl_Module *mod, void **userdata,
			  const char *modname, Dwarf_Addr base,
			  const char *file_name, const char *debuglink_file,
			  GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	Dwarf_Addr bias;
	Elf *main_elf = dwfl_module_getelf(mod, &bias);
	Elf *dbg = NULL;
	int fd = -1;

	if (!main_elf || !file_name ||
	    elf__debug_open(main_elf, file_name, &fd, &dbg) < 0)
		return -1;
	elf_end(dbg);         /* libdwfl opens its own from the fd */
	return fd;
}

const Dwfl_Callbacks usym_callbacks = {
	.find_elf = no_find_elf,
	.find_debuginfo = find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

/* The load bias of FD mapped at M: the PT_LOAD holding file offset
 * M->pgoff gives bias = start - pgoff - p_vaddr + p_offset. */
int umap_bias(int fd, const struct umap *m, uint64_t *bias)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	size_t i, phnum;
	int err = -ENOEXEC;

	if (!elf)
		return -ENOEXEC;
	if (elf_kind(elf) == ELF_K_ELF && elf_getphdrnum(elf, &phnum) == 0) {
		for (i = 0; i < phnum; i++) {
			GElf_Phdr ph;
			uint64_t align, lo;

			if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
				continue;
			align = ph.p_align > 1 ? ph.p_align : 1;
			if (align < 4096)
				align = 4096;
			lo = ph.p_offset & ~(align - 1);
			if (m->pgoff >= lo && m->pgoff < ph.p_offset + ph.p_filesz) {
				*bias = m->start - m->pgoff - ph.p_vaddr + ph.p_offset;
				err = 0;
				break;
			}
		}
	}
	elf_end(elf);
	return err;
}
