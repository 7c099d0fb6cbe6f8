/* usdt.c - the USDT probes of an opened ELF file: its .note.stapsdt
 * section parsed (usdt_note.c), each site's address adjusted for
 * prelinking through .stapsdt.base, and both the site and the semaphore
 * turned into the file offsets the uprobe PMU wants (config2 and
 * ref_ctr_offset). */
#include "elf.h"
#include "../base/glob.h"
#include "../base/vec.h"

#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>

/* private accessors of symbols.c */
Elf *elf__handle(const struct elf_file *ef);
int elf__vaddr_to_offset_mem(const struct elf_file *ef, uint64_t vaddr, uint64_t *off);

struct collect {
	const struct elf_file *ef;
	uint64_t base_addr;   /* sh_addr of .stapsdt.base, 0 if absent */
	struct usdt_probe *v;
	size_t n, cap;
};

void usdt_probes_free(struct usdt_probe *p, size_t n)
{
	if (!p)
		return;
	for (size_t i = 0; i < n; i++) {
		free(p[i].provider);
		free(p[i].name);
		free(p[i].args);
	}
	free(p);
}

static int collect_note(void *arg, const struct usdt_note *note)
{
	struct collect *c = arg;
	struct usdt_probe p = {0};
	/* If the file was prelinked after linking, .stapsdt.base moved by
	 * the same amount as the code; the note still holds the old value. */
	p.pc = note->pc;
	if (c->base_addr && note->base)
		p.pc = note->pc + (c->base_addr - note->base);
	if (elf_vaddr_to_offset(c->ef, p.pc, &p.pc_offset) < 0)
		return -EINVAL; /* a site outside every segment: corrupt note */
	p.sema = note->sema;
	if (p.sema && elf__vaddr_to_offset_mem(c->ef, p.sema, &p.sema_offset) < 0)
		return -EINVAL;
	if (vec_reserve_arr(c->v, c->cap, c->n + 1))
		return -ENOMEM;
	p.provider = strdup(note->provider);
	p.name = strdup(note->name);
	p.args = strdup(note->args);
	if (!p.provider || !p.name || !p.args) {
		free(p.provider);
		free(p.name);
		free(p.args);
		return -ENOMEM;
	}
	c->v[c->n++] = p;
	return 0;
}

int usdt_probes(const struct elf_file *ef, struct usdt_probe **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	Elf *e = elf__handle(ef);
	size_t shstrndx;
	if (elf_getshdrstrndx(e, &shstrndx) != 0)
		return -EINVAL;
	GElf_Ehdr eh;
	if (!gelf_getehdr(e, &eh))
		return -EINVAL;
	unsigned addr_size = eh.e_ident[EI_CLASS] == ELFCLASS32 ? 4 : 8;
	struct collect c = { .ef = ef };
	Elf_Scn *scn = NULL, *notes[64];
	size_t nnotes = 0;
	uint64_t bytes = 0;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			return -EINVAL;
		const char *name = elf_strptr(e, shstrndx, sh.sh_name);
		if (!name)
			continue;
		if (sh.sh_type == SHT_NOTE && strcmp(name, ".note.stapsdt") == 0 &&
		    nnotes < sizeof(notes) / sizeof(*notes)) {
			/* checked before a byte of it is read */
			if (sh.sh_size > ((uint64_t)USDT_NOTES_MAX_MIB << 20) - bytes)
				return -EFBIG;
			bytes += sh.sh_size;
			notes[nnotes++] = scn;
		}
		else if (strcmp(name, ".stapsdt.base") == 0)
			c.base_addr = sh.sh_addr;
	}
	for (size_t i = 0; i < nnotes; i++) {
		/* raw bytes: the parser decodes little-endian itself */
		Elf_Data *d = elf_rawdata(notes[i], NULL);
		if (!d || !d->d_buf)
			continue;
		int r = usdt_notes_parse(d->d_buf, d->d_size, addr_size, collect_note, &c);
		if (r < 0) {
			usdt_probes_free(c.v, c.n);
			return r;
		}
	}
	*out = c.v;
	*n = c.n;
	return 0;
}

bool usdt_probe_match(const struct usdt_probe *p, const char *provider_pat,
		      const char *name_pat)
{
	if (provider_pat && !glob_match(provider_pat, p->provider))
		return false;
	return !name_pat || glob_match(name_pat, p->name);
}
