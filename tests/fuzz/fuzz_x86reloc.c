/* fuzz_x86reloc.c - libFuzzer target: planning and relocating a patch
 * site (src/process/x86reloc.c) on arbitrary code, as a traced process
 * may hold any bytes. The input's first bytes choose the site's bounds
 * (the bytes before it padding before an entry, or the function's start
 * before a site inside it) and where the copy goes; a plan must stay within what it was given,
 * the relocated copy within its buffer, and every moved thread position
 * inside the copy. */
#include "process/x86reloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 8)
		return 0;
	size_t before = data[0] % 17, room_cut = data[1];
	uint64_t dest_off = ((uint64_t)data[2] << 24) | ((uint64_t)data[3] << 16);
	bool far = data[4] & 1, inside = data[4] & 2;
	data += 8;
	size -= 8;
	if (before > size)
		before = size;
	const uint64_t addr = 0x555555554000ull + 0x1000;
	struct x86_site s = {
		.name = "f", .addr = addr, .code = data + before,
		.len = size - before, .func_len = room_cut ? room_cut : 0,
		.room = size - before, .before = before && !inside ? data : NULL,
		.before_len = inside ? 0 : before, .lead_len = inside ? before : 0,
	};
	if (s.func_len > s.len)
		s.func_len = s.len;
	char why[256];
	struct x86_plan p;
	if (x86_plan(&s, &p, why, sizeof(why)) < 0)
		return 0;
	if (p.patch_len < X86_SHORT_JMP_LEN || p.patch_len > X86_MAX_PATCH ||
	    p.patch_len > s.room || p.displaced_len > p.patch_len ||
	    (p.via_pad && (inside || before < X86_JMP_LEN)))
		abort();
	static uint8_t out[X86_RELOC_MAX];
	uint64_t dest = far ? 0x7f0000000000ull + dest_off : addr + 0x100000 + dest_off;
	int n = x86_relocate(&p, dest, out, sizeof(out), why, sizeof(why));
	if (n > (int)sizeof(out))
		abort();
	if (n > 0)
		for (int i = 0; i < p.ninsns; i++) {
			uint64_t to;
			if (x86_moved_rip(&p, addr + p.insn_off[i], &to) < 0 ||
			    to < dest || to >= dest + (uint64_t)n)
				abort();
		}
	uint8_t at[X86_MAX_PATCH], pad[X86_JMP_LEN];
	x86_patch_bytes(&p, dest, at, pad);
	return 0;
}
