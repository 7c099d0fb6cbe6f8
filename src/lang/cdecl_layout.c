/* cdecl_layout.c - struct and union layout as gcc does it on x86-64 (the
 * System V psABI):
 *  - a member goes at the next multiple of its alignment; the struct's
 *    alignment is its members' largest, its size rounded up to it;
 *  - a bitfield goes at the next free bit unless it would cross a
 *    boundary of its declared type's alignment, then at that boundary;
 *    named bitfields give the struct their type's alignment, unnamed ones
 *    do not; a zero-width one moves the next member to its type's
 *    alignment;
 *  - packed (on the struct or a member) makes members 1-aligned and lets
 *    bitfields straddle; aligned(N) raises a member's or the struct's
 *    alignment (never lowers it, packed or not);
 *  - union members all start at 0; the size is the largest rounded up;
 *  - a flexible array member takes no space but its alignment.
 * tests/unit/test_cdecl.c checks all of it against gcc itself. */
#include "cdecl_int.h"

#include <string.h>

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return a ? (v + a - 1) / a * a : v;
}

int cd_layout(struct cdecl *c, struct ctype *s, const struct member *m,
	      uint32_t n, const struct attrs *sa)
{
	bool is_union = s->kind == CT_UNION;
	uint64_t bits = 0, max_bits = 0;
	uint32_t align = 1;
	for (uint32_t k = 0; k < n; k++) {
		const struct member *f = &m[k];
		const struct ctype *t = f->type;
		uint32_t talign = t->align ? t->align : 1;
		bool packed = sa->packed || f->attrs.packed;
		uint32_t falign = packed ? 1 : talign;
		if (f->attrs.aligned > falign)
			falign = f->attrs.aligned;
		uint64_t off;
		if (f->bits >= 0) {
			uint64_t w = (uint64_t)f->bits;
			if (w == 0) {
				if (!is_union)
					bits = align_up(bits, (uint64_t)talign * 8);
				continue;
			}
			if (is_union) {
				off = 0;
			} else {
				off = bits;
				uint64_t unit = (uint64_t)talign * 8;
				if (!packed && off / unit != (off + w - 1) / unit)
					off = align_up(off, unit);
				if (f->attrs.aligned)
					off = align_up(off, (uint64_t)f->attrs.aligned * 8);
			}
			if (f->name && ctype_add_field(c->a, s, f->name, t,
						       (uint32_t)off,
						       (uint8_t)w) < 0)
				return -1;
			if (f->name && falign > align)
				align = falign;
			if (is_union) {
				if (w > max_bits)
					max_bits = w;
			} else {
				bits = off + w;
			}
		} else {
			off = is_union ? 0 : align_up(bits, (uint64_t)falign * 8);
			if (off > UINT32_MAX)
				goto too_large;
			if (ctype_add_field(c->a, s, f->name, t, (uint32_t)off,
					    0) < 0)
				return -1;
			uint64_t size = (uint64_t)t->size * 8;
			if (is_union) {
				if (size > max_bits)
					max_bits = size;
			} else {
				bits = off + size;
			}
			if (falign > align)
				align = falign;
		}
		if (bits > (uint64_t)UINT32_MAX * 4)
			goto too_large;
	}
	if (sa->aligned > align)
		align = sa->aligned;
	uint64_t bytes = align_up(((is_union ? max_bits : bits) + 7) / 8, align);
	if (bytes > UINT32_MAX / 2)
		goto too_large;
	s->size = (uint32_t)bytes;
	s->align = align;
	s->complete = true;
	return 0;
too_large:
	cd_error(c, n ? m[0].at : NULL, "BAD_DECL", "%s %s is too large",
		 is_union ? "union" : "struct", s->name ? s->name : "");
	return -1;
}

const struct ctype *cd_with_align(struct cdecl *c, const struct ctype *t,
				  uint32_t align)
{
	struct ctype *copy = arena_new(c->a, struct ctype);
	*copy = *t;
	copy->align = align;
	return copy;
}
