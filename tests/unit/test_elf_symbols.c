/* test_elf_symbols.c - symbols, file offsets, spec resolution, wildcards,
 * demangling and suggestions, checked against readelf's view of real
 * binaries (libc, libstdc++, a PIE and a non-PIE test program). */
#include "elf/elf.h"
#include "unit.h"
#include "elf_testutil.h"
#include "base/glob.h"

#include <errno.h>
#include <inttypes.h>

#define LIBC "/usr/lib/x86_64-linux-gnu/libc.so.6"
#define LIBSTDCXX "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"

/* malloc's file offset computed from readelf -s and -l, independently of
 * the code under test. */
static int readelf_offset(const char *path, const char *sym, uint64_t *off)
{
	char cmd[512], out[65536];
	snprintf(cmd, sizeof(cmd),
		 "readelf -sW %s | awk '$8==\"%s\" || $8 ~ /^%s@/ {print $2; exit}'",
		 path, sym, sym);
	if (run_capture(cmd, out, sizeof(out)) != 0 || !out[0])
		return -1;
	uint64_t vaddr = strtoull(out, NULL, 16);
	snprintf(cmd, sizeof(cmd), "readelf -lW %s | awk '$1==\"LOAD\" {print $2, $3, $5}'", path);
	if (run_capture(cmd, out, sizeof(out)) != 0)
		return -1;
	char *line = strtok(out, "\n");
	for (; line; line = strtok(NULL, "\n")) {
		unsigned long long o, v, fsz;
		if (sscanf(line, "%llx %llx %llx", &o, &v, &fsz) == 3 &&
		    vaddr >= v && vaddr < v + fsz) {
			*off = vaddr - v + o;
			return 0;
		}
	}
	return -1;
}

static int count_cb(void *arg, const struct elf_sym *s)
{
	int *n = arg;
	(*n)++;
	return strncmp(s->name, "mallo", 5) == 0 ? 0 : 1;
}

static void test_glob(void)
{
	static const struct { const char *p, *s; bool m; } t[] = {
		{ "malloc", "malloc", true }, { "malloc", "malloc2", false },
		{ "mall*", "malloc", true }, { "*loc", "malloc", true },
		{ "*", "", true }, { "", "", true }, { "", "a", false },
		{ "m?lloc", "malloc", true }, { "m?lloc", "mlloc", false },
		{ "*a*b*c", "xxaxxbxxc", true }, { "*a*b*c", "xxaxxbxxcx", false },
		{ "a**", "a", true }, { "?", "", false },
		{ "*ab", "aab", true }, { "ns::*::m*", "ns::Class::method(int)", true },
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(*t); i++) {
		char name[128];
		snprintf(name, sizeof(name), "glob '%s' vs '%s'", t[i].p, t[i].s);
		CHECK(glob_match(t[i].p, t[i].s) == t[i].m, name);
	}
}

static void test_libc(void)
{
	struct elf_file *ef;
	int err = elf_open(LIBC, &ef);
	CHECK(err == 0, "open libc.so.6");
	if (err)
		return;
	CHECK(elf_is_dyn(ef), "libc is ET_DYN");
	CHECK(elf_machine(ef) == 62, "libc is x86-64");
	const struct elf_sym *m = elf_find_sym(ef, "malloc");
	CHECK(m != NULL, "find malloc");
	uint64_t want = 0;
	int rr = readelf_offset(LIBC, "malloc", &want);
	CHECK(rr == 0, "readelf finds malloc");
	if (m && rr == 0) {
		CHECK(m->offset == want, "malloc offset matches readelf -s + PT_LOAD");
		if (m->offset != want)
			printf("#   got 0x%" PRIx64 " want 0x%" PRIx64 "\n", m->offset, want);
		CHECK(m->flags & ELF_SYM_DYNAMIC, "malloc is from .dynsym");
	}
	/* SYMBOL+OFF, 0xADDR, errors */
	struct elf_loc loc;
	CHECK(elf_resolve(ef, "malloc", &loc) == 0 && m && loc.offset == m->offset,
	      "resolve malloc");
	CHECK(elf_resolve(ef, "malloc+4", &loc) == 0 && m && loc.offset == m->offset + 4 &&
	      loc.sym == m, "resolve malloc+4");
	CHECK(elf_resolve(ef, "malloc+0x10", &loc) == 0 && m && loc.addr == m->addr + 16,
	      "resolve malloc+0x10");
	CHECK(m && elf_resolve(ef, "malloc+100000", &loc) == -ERANGE,
	      "malloc+100000 is past the function");
	char spec[64];
	if (m) {
		snprintf(spec, sizeof(spec), "0x%" PRIx64, m->addr + 8);
		CHECK(elf_resolve(ef, spec, &loc) == 0 && loc.sym == m &&
		      loc.offset == m->offset + 8, "resolve 0xADDR inside malloc");
		CHECK(elf_sym_at(ef, m->addr + 8) == m, "sym_at inside malloc");
	}
	CHECK(elf_resolve(ef, "no_such_function_xyz", &loc) == -ENOENT, "missing symbol is ENOENT");
	CHECK(elf_resolve(ef, "0xffffffffffff0000", &loc) == -ENOENT, "address outside segments is ENOENT");
	CHECK(elf_resolve(ef, "0xzz", &loc) == -EINVAL, "bad address is EINVAL");
	uint64_t off = 0, va = 0;
	CHECK(m && elf_vaddr_to_offset(ef, m->addr, &off) == 0 &&
	      elf_offset_to_vaddr(ef, off, &va) == 0 && va == m->addr,
	      "vaddr -> offset -> vaddr round trip");

	/* wildcards */
	int n = elf_match(ef, "mallo*", NULL, NULL);
	CHECK(n >= 3, "mallo* matches several symbols");
	int seen = 0;
	CHECK(elf_match(ef, "mallo*", count_cb, &seen) == n && seen == n,
	      "every mallo* match starts with mallo");
	CHECK(elf_match(ef, "*alloc", NULL, NULL) > n / 2, "*alloc matches");
	CHECK(elf_match(ef, "zzz*qqq", NULL, NULL) == 0, "no match is 0");
	size_t ns;
	const struct elf_sym *all = elf_syms(ef, &ns);
	bool sorted = true;
	for (size_t i = 1; i < ns; i++)
		sorted &= strcmp(all[i - 1].name, all[i].name) <= 0;
	CHECK(ns > 1000 && sorted, "libc symbols listed in name order");
	bool ifunc = false, weak = false;
	for (size_t i = 0; i < ns; i++) {
		ifunc |= (all[i].flags & ELF_SYM_IFUNC) != 0;
		weak |= (all[i].flags & ELF_SYM_WEAK) != 0;
	}
	CHECK(ifunc, "libc has IFUNC symbols (memcpy...)");
	CHECK(weak, "libc has weak symbols");
	const struct elf_sym *mc = elf_find_sym(ef, "memcpy");
	CHECK(mc && (mc->flags & ELF_SYM_IFUNC), "memcpy is an IFUNC");

	/* suggestions */
	const char *sugg[3];
	size_t k = elf_suggest(ef, "mallco", sugg, 3);
	CHECK(k >= 1 && strcmp(sugg[0], "malloc") == 0, "suggest malloc for mallco");
	k = elf_suggest(ef, "prinft", sugg, 3);
	bool printf_found = false;
	for (size_t i = 0; i < k; i++)
		printf_found |= strcmp(sugg[i], "printf") == 0;
	CHECK(printf_found, "suggest printf for prinft");
	CHECK(elf_suggest(ef, "qqqqqqqqqqqqqqqqqqqqqq", sugg, 3) == 0, "no suggestion for nonsense");
	elf_close(ef);
}

static void test_demangle(void)
{
	char *d = elf_demangle("_ZN2ns5Class6methodEi");
	CHECK_STR(d, "ns::Class::method(int)", "demangle method");
	free(d);
	d = elf_demangle("_Z2tfIiET_S0_");
	CHECK_STR(d, "int tf<int>(int)", "demangle template");
	free(d);
	CHECK(elf_demangle("malloc") == NULL, "C name is not demangled");
	CHECK(elf_demangle("i") == NULL, "type-like C name is not demangled");
	CHECK(elf_demangle("_Zgarbage!!") == NULL, "bad mangling is NULL");

	struct elf_file *ef;
	int err = elf_open(LIBSTDCXX, &ef);
	CHECK(err == 0, "open libstdc++.so.6");
	if (err)
		return;
	const struct elf_sym *s = elf_find_sym(ef, "std::__throw_bad_alloc()");
	CHECK(s && strcmp(s->name, "_ZSt17__throw_bad_allocv") == 0,
	      "find C++ function by demangled name");
	if (s) {
		/* bpftrace 0.17 rules: exact mangled, or prefix of demangled */
		CHECK(elf_sym_match(s, "_ZSt17__throw_bad_allocv"), "match mangled exactly");
		CHECK(!elf_sym_match(s, "_ZSt17__throw_bad_al"), "mangled prefix does not match");
		CHECK(elf_sym_match(s, "std::__throw_bad_alloc"), "demangled without params matches");
		CHECK(elf_sym_match(s, "std::__throw_bad_alloc()"), "demangled with params matches");
		CHECK(elf_sym_match(s, "*throw_bad_alloc"), "demangled wildcard matches");
		CHECK(!elf_sym_match(s, "__throw_bad_alloc"), "demangled inner name alone does not");
	}
	int n = elf_match(ef, "std::__throw_*", NULL, NULL);
	CHECK(n >= 10, "std::__throw_* matches many");
	elf_close(ef);
}

/* A PIE (the test program as built) and a non-PIE build of it. */
static void test_programs(void)
{
	char pbuf[512], nbuf[512];
	const char *pie = test_prog("sdt_demo", NULL, NULL, pbuf, sizeof(pbuf));
	const char *nopie = test_prog("sdt_demo", "cc", "-O0 -g -no-pie -fno-pie", nbuf, sizeof(nbuf));
	const char *paths[2] = { pie, nopie };
	for (int i = 0; i < 2; i++) {
		const char *what = i ? "non-PIE" : "PIE";
		char name[128];
		struct elf_file *ef;
		snprintf(name, sizeof(name), "open %s test program", what);
		int err = paths[i] ? elf_open(paths[i], &ef) : -ENOENT;
		CHECK(err == 0, name);
		if (err)
			continue;
		snprintf(name, sizeof(name), "%s is %s", what, i ? "ET_EXEC" : "ET_DYN");
		CHECK(elf_is_dyn(ef) == (i == 0), name);
		const struct elf_sym *m = elf_find_sym(ef, "main");
		const struct elf_sym *e = elf_find_sym(ef, "emit");
		snprintf(name, sizeof(name), "%s: main and static emit found", what);
		CHECK(m && e && (e->flags & ELF_SYM_LOCAL), name);
		uint64_t want;
		if (m && readelf_offset(paths[i], "main", &want) == 0) {
			snprintf(name, sizeof(name), "%s: main offset matches readelf", what);
			CHECK(m->offset == want, name);
		}
		if (i == 1 && m) {
			snprintf(name, sizeof(name), "%s: offset differs from vaddr", what);
			CHECK(m->addr >= 0x400000 && m->offset < m->addr, name);
		}
		elf_close(ef);
	}
	if (nopie)
		unlink(nopie);
}

static void test_errors(void)
{
	struct elf_file *ef = (struct elf_file *)1;
	CHECK(elf_open("/nonexistent/file", &ef) == -ENOENT && ef == NULL, "missing file is ENOENT");
	CHECK(elf_open("/etc/passwd", &ef) == -ENOEXEC, "text file is ENOEXEC");
	CHECK(elf_open("/", &ef) < 0, "directory fails");
	elf_close(NULL);
	CHECK(elf_edit_distance("kitten", "sitting", 10) == 3, "edit distance kitten/sitting");
	CHECK(elf_edit_distance("abc", "abcdefgh", 2) == 3, "edit distance capped");
}

int main(void)
{
	test_glob();
	test_libc();
	test_demangle();
	test_programs();
	test_errors();
	return UNIT_DONE();
}
