/* usdt_note.c - the .note.stapsdt section parser, on a memory buffer.
 *
 * A stapsdt note is an ELF note (namesz, descsz, type = 3, name
 * "stapsdt") whose descriptor holds three addresses - the probe site, the
 * address of .stapsdt.base at link time, the semaphore (0 if none) - and
 * then three NUL-terminated strings: provider, name, argument specs. The
 * section comes straight from the file, so every size is checked before
 * anything is read and every string must end inside its descriptor (the
 * same discipline as libbpf's usdt.c). No libelf here: the fuzzer feeds
 * this function arbitrary bytes. */
#include "elf.h"

#include <errno.h>
#include <string.h>

#define STAPSDT_TYPE 3

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static uint64_t le_addr(const unsigned char *p, unsigned size)
{
	uint64_t v = 0;
	for (unsigned i = size; i-- > 0;)
		v = v << 8 | p[i];
	return v;
}

/* Bytes from p up to its NUL inside [p, end), or -1 if unterminated. */
static const char *take_string(const unsigned char **p, const unsigned char *end)
{
	const unsigned char *s = *p;
	const unsigned char *nul = memchr(s, '\0', (size_t)(end - s));
	if (!nul)
		return NULL;
	*p = nul + 1;
	return (const char *)s;
}

int usdt_notes_parse(const void *buf, size_t len, unsigned addr_size,
		     int (*fn)(void *arg, const struct usdt_note *note), void *arg)
{
	if (addr_size != 4 && addr_size != 8)
		return -EINVAL;
	const unsigned char *b = buf;
	size_t off = 0;
	int count = 0;
	while (off < len) {
		if (len - off < 12)
			return -EINVAL;
		uint32_t namesz = le32(b + off);
		uint32_t descsz = le32(b + off + 4);
		uint32_t type = le32(b + off + 8);
		off += 12;
		/* sizes are checked against what is left before aligning,
		 * so the arithmetic below cannot wrap */
		if (namesz > len - off)
			return -EINVAL;
		size_t name_off = off;
		size_t desc_off = off + (((size_t)namesz + 3) & ~(size_t)3);
		if (desc_off > len || descsz > len - desc_off)
			return -EINVAL;
		size_t next = desc_off + (((size_t)descsz + 3) & ~(size_t)3);
		off = next > len ? len : next;

		if (type != STAPSDT_TYPE || namesz != sizeof("stapsdt") ||
		    memcmp(b + name_off, "stapsdt", sizeof("stapsdt")) != 0)
			continue;
		if (descsz < 3 * addr_size + 2)
			return -EINVAL;
		const unsigned char *d = b + desc_off, *dend = d + descsz;
		struct usdt_note n = {
			.pc = le_addr(d, addr_size),
			.base = le_addr(d + addr_size, addr_size),
			.sema = le_addr(d + 2 * addr_size, addr_size),
		};
		const unsigned char *p = d + 3 * addr_size;
		if (!(n.provider = take_string(&p, dend)) ||
		    !(n.name = take_string(&p, dend)))
			return -EINVAL;
		/* Very old sdt.h versions wrote no argument string at all. */
		n.args = p < dend ? take_string(&p, dend) : "";
		if (!n.args || !n.provider[0] || !n.name[0])
			return -EINVAL;
		count++;
		if (fn) {
			int r = fn(arg, &n);
			if (r)
				return r;
		}
	}
	return count;
}
