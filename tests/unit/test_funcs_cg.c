/* test_funcs_cg.c - the code of the functions added as records beyond
 * the first ones (bswap, pton, macaddr, strftime, strerror, cgroup_path,
 * numaid), run in the VM (interpreter and JIT) against the emulated
 * kernel of cg_fixture.h: what each writes into its event record. */
#include <stddef.h>
#include <stdlib.h>

#include "cg_fixture.h"
#include "unit.h"

static struct cgfx F;
static struct emu E;

static int run(const char *text)
{
	cgfx_free(&F);
	emu_free(&E);
	memset(&E, 0, sizeof(E));
	if (cgfx_compile(&F, text)) {
		diags_print(&F.d, stdout);
		memset(&E, 0, sizeof(E));
		return -1;
	}
	emu_init(&E, &F.prog);
	for (uint32_t i = 0; i < F.prog.nprobes; i++)
		if (emu_run(&E, i) < 0) {
			printf("# probe %u: %s\n", i, E.in.error);
			return -1;
		}
	return 0;
}

/* Byte offset in record r of argument i. */
static uint32_t argoff(uint32_t r, uint32_t i)
{
	uint64_t id = rec_u64(&E, r, 0);
	if (id >= F.prog.nevents || !F.prog.events[id].args ||
	    i >= F.prog.events[id].args->nfields)
		return 1u << 30;
	return 8 + F.prog.events[id].args->offsets[i];
}

static uint64_t arg(uint32_t r, uint32_t i)
{
	return rec_u64(&E, r, argoff(r, i));
}

static const struct type *argtype(uint32_t r, uint32_t i)
{
	uint64_t id = rec_u64(&E, r, 0);
	return F.prog.events[id].args->fields[i];
}

static const uint8_t *argbytes(uint32_t r, uint32_t i)
{
	return (const uint8_t *)rec_str(&E, r, argoff(r, i));
}

int main(void)
{
	CHECK(run("BEGIN { $a = (int8)-2; $b = (int16)-2; $c = (int32)1; "
		  "$d = (uint32)0x12345678; printf(\"%d %d %d %d %d %d\", "
		  "bswap($a), bswap($b), bswap($c), bswap($d), bswap(0x12), "
		  "bswap((uint64)0x0102030405060708)); }") == 0,
	      "bswap compiles and runs");
	CHECK(arg(0, 0) == 254 && arg(0, 1) == 0xfeff && arg(0, 2) == 0x01000000 &&
	      arg(0, 3) == 0x78563412 && arg(0, 4) == 0x1200000000000000ull &&
	      arg(0, 5) == 0x0807060504030201ull,
	      "bswap: 8 bits unchanged (unsigned), 16, 32 and 64 reversed");
	CHECK(argtype(0, 1)->bits == 16 && !argtype(0, 1)->is_signed,
	      "bswap: an unsigned integer of the argument's width");

	CHECK(run("BEGIN { print(pton(\"10.1.2.3\")); "
		  "print(pton(\"fe80::1:2\")); "
		  "printf(\"%d\", pton(\"10.1.2.3\")[2]); }") == 0,
	      "pton compiles and runs");
	const uint8_t v4[4] = { 10, 1, 2, 3 };
	const uint8_t v6[16] = { 0xfe, 0x80, 0, 0, 0, 0, 0, 0,
				 0, 0, 0, 0, 0, 1, 0, 2 };
	CHECK(!memcmp(argbytes(0, 0), v4, 4) && argtype(0, 0)->size == 4,
	      "pton: IPv4 as 4 bytes");
	CHECK(!memcmp(argbytes(1, 0), v6, 16) && argtype(1, 0)->size == 16,
	      "pton: IPv6 as 16 bytes");
	CHECK(arg(2, 0) == 2, "pton: indexed");

	static const uint8_t mac[8] = { 0x18, 0xc0, 0x4d, 0x08, 0x2e, 0xbb,
					0x77, 0x77 };
	char text[256];
	snprintf(text, sizeof(text), "BEGIN { print(macaddr(%llu)); }",
		 (unsigned long long)(uintptr_t)mac);
	CHECK(run(text) == 0 && !memcmp(argbytes(0, 0), mac, 6) &&
	      argtype(0, 0)->kind == TYPE_MACADDR && argtype(0, 0)->size == 6,
	      "macaddr: six bytes read through a pointer");
	CHECK(run("tracepoint:a:b { print(macaddr(args->comm)); }") < 0 &&
	      diags_has(&F.d, "ARG_TYPE"), "macaddr: 16 bytes are refused");

	E.ktime = 0;
	CHECK(run("BEGIN { print(strftime(\"%H:%M\", 1234)); "
		  "print(strftime(\"%f\", nsecs)); "
		  "print(strftime(\"%H:%M\", 5)); }") == 0,
	      "strftime compiles and runs");
	CHECK(F.prog.nstrings == 2 && !strcmp(F.prog.strings[0], "%H:%M") &&
	      !strcmp(F.prog.strings[1], "%f"),
	      "strftime: formats in the program's strings, once each");
	CHECK(arg(0, 0) == 0 && rec_u64(&E, 0, argoff(0, 0) + 8) == 1234 &&
	      arg(2, 0) == 0 && rec_u64(&E, 2, argoff(2, 0) + 8) == 5 &&
	      arg(1, 0) == 1, "strftime: format index, then nsecs");
	CHECK(run("BEGIN { print(strftime(\"%H\", \"a\")); }") < 0 &&
	      diags_has(&F.d, "ARG_TYPE"), "strftime: nsecs must be an integer");
	CHECK(run("BEGIN { $f = \"%H\"; print(strftime($f, 1)); }") < 0 &&
	      diags_has(&F.d, "ARG_TYPE"), "strftime: the format a literal");

	CHECK(run("BEGIN { print(strerror(13)); @e = strerror(2); }") == 0 &&
	      arg(0, 0) == 13 && argtype(0, 0)->kind == TYPE_ERRNO,
	      "strerror: the error number");

	CHECK(run("BEGIN { print(cgroup_path(77)); "
		  "print(cgroup_path(78, \"mem*\")); }") == 0,
	      "cgroup_path compiles and runs");
	CHECK(arg(0, 0) == 77 && rec_u64(&E, 0, argoff(0, 0) + 8) == 0 &&
	      arg(1, 0) == 78 && rec_u64(&E, 1, argoff(1, 0) + 8) == 1 &&
	      F.prog.nstrings == 1 && !strcmp(F.prog.strings[0], "mem*"),
	      "cgroup_path: id, then the filter's index + 1 (0: none)");

	bool numa = false;
	CHECK(run("BEGIN { printf(\"%d\", numaid); }") == 0,
	      "numaid compiles and runs");
	for (uint32_t i = 0; i < E.ncalls && i < EMU_MAX_CALLS; i++)
		numa |= E.call_id[i] == BPF_FUNC_get_numa_node_id;
	CHECK(numa, "numaid: bpf_get_numa_node_id");
	cgfx_free(&F);
	emu_free(&E);
	return UNIT_DONE();
}
