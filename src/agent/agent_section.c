/* agent_section.c - the program section sonde wrote in the shared
 * region (proto.h), checked once before anything in it is used, and the
 * places in this process's mappings its sites' file offsets name. */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "agent_int.h"
#include "proto.h"

/* ---- the program section (proto.h), checked ---- */

static bool span_ok(uint64_t off, uint64_t len, uint64_t size)
{
	return off <= size && len <= size - off;
}

int agent_section_read(struct section *sec, const uint8_t *base,
			uint64_t size)
{
	if (size < sizeof(sec->h))
		return -EINVAL;
	memcpy(&sec->h, base, sizeof(sec->h));
	const struct proto_prog *h = &sec->h;
	if (h->magic != PROTO_PROG_MAGIC || h->nprobes > (1u << 16) ||
	    h->nsites > (1u << 20) || h->nfiles > (1u << 16) ||
	    h->probes_off % 8 || h->sites_off % 8 || h->files_off % 8 ||
	    !span_ok(h->probes_off, (uint64_t)h->nprobes * sizeof(struct proto_probe), size) ||
	    !span_ok(h->sites_off, (uint64_t)h->nsites * sizeof(struct proto_site), size) ||
	    !span_ok(h->files_off, (uint64_t)h->nfiles * sizeof(struct proto_file), size) ||
	    !span_ok(h->strings_off, h->strings_size, size) ||
	    (h->strings_size && base[h->strings_off + h->strings_size - 1]))
		return -EINVAL;
	sec->base = base;
	sec->size = size;
	sec->probes = (const void *)(base + h->probes_off);
	sec->sites = (const void *)(base + h->sites_off);
	sec->files = (const void *)(base + h->files_off);
	sec->strings = (const char *)base + h->strings_off;
	for (uint32_t i = 0; i < h->nprobes; i++) {
		const struct proto_probe *p = &sec->probes[i];
		if (p->insns_off % 8 || p->name_off >= h->strings_size ||
		    !span_ok(p->insns_off, (uint64_t)p->ninsns * 8, size))
			return -EINVAL;
	}
	for (uint32_t i = 0; i < h->nfiles; i++)
		if (sec->files[i].path_off >= h->strings_size)
			return -EINVAL;
	for (uint32_t i = 0; i < h->nsites; i++) {
		const struct proto_site *t = &sec->sites[i];
		if (t->probe >= h->nprobes || t->file >= h->nfiles ||
		    t->len == 0 || t->len > sizeof(t->expect) ||
		    (t->kind == PROTO_SITE_USDT && t->len != 1 && t->len != 5))
			return -EINVAL;
	}
	return 0;
}

/* ---- finding sites in the mappings ---- */

/* Is mapping m of this file? Its device and inode, or (on overlay file
 * systems, where /proc/self/maps shows another device) a stat of its
 * path. */
static bool same_file(const struct agent_map *m, const struct proto_file *f)
{
	if (m->inode != f->ino || !m->path[0])
		return false;
	if (makedev(m->dev_major, m->dev_minor) == f->dev)
		return true;
	struct stat st;
	return stat(m->path, &st) == 0 && st.st_dev == f->dev &&
	       st.st_ino == f->ino;
}

/* The address where this process maps file offset `off` of f, in a
 * mapping with all of `prot`; 0 if none. */
uint64_t agent_address_of(const struct agent_maps *maps,
			   const struct proto_file *f, uint64_t off, int prot)
{
	for (size_t i = 0; i < maps->n; i++) {
		const struct agent_map *m = &maps->v[i];
		if ((m->prot & prot) != prot || off < m->offset ||
		    off - m->offset >= m->end - m->start || !same_file(m, f))
			continue;
		return m->start + (off - m->offset);
	}
	return 0;
}

char *agent_hexbytes(char *out, const uint8_t *b, uint32_t n)
{
	static const char digits[] = "0123456789abcdef";
	char *p = out;
	for (uint32_t i = 0; i < n; i++) {
		if (i)
			*p++ = ' ';
		*p++ = digits[b[i] >> 4];
		*p++ = digits[b[i] & 15];
	}
	*p = '\0';
	return out;
}
