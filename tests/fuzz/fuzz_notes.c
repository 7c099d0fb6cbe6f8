/* fuzz_notes.c - libFuzzer target: the GNU build-ID note walker
 * (elf/buildid.c) on arbitrary note bytes, as an ELF file anyone wrote
 * may hold them; an ID found lies within the buffer and fits. */
#include "elf/elf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	uint8_t id[64];
	/* an exact-size copy, so reading past the end is caught */
	unsigned char *buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	int n = elf_notes_build_id(buf, size, id, sizeof(id));
	if (n > (int)sizeof(id) || (n <= 0 && n != -ENOENT && n != -EINVAL &&
				    n != -ENOSPC))
		abort();
	free(buf);
	return 0;
}
