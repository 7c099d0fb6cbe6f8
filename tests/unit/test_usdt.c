/* test_usdt.c - .note.stapsdt parsing on real binaries (the sdt_demo test
 * program built with sonde/sdt.h at -O0 and -O2, Debian's python3.11 and
 * libstdc++), the in-memory note parser on hand-made sections, and every
 * argument-spec form, table-driven. */
#include "elf/elf.h"
#include "unit.h"
#include "elf_testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>

#define PYTHON "/usr/bin/python3.11"
#define LIBSTDCXX "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"

/* n bytes of the file at a file offset */
static int file_bytes(const char *path, uint64_t off, unsigned char *buf, size_t n)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	ssize_t r = pread(fd, buf, n, (off_t)off);
	close(fd);
	return r == (ssize_t)n ? 0 : -1;
}

static const struct usdt_probe *find_probe(const struct usdt_probe *p, size_t n,
					   const char *prov, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (usdt_probe_match(&p[i], prov, name))
			return &p[i];
	return NULL;
}

static void test_sdt_demo(const char *label, const char *cc, const char *cflags)
{
	char buf[512], name[160];
	const char *path = test_prog("sdt_demo", cc, cflags, buf, sizeof(buf));
	struct elf_file *ef;
	snprintf(name, sizeof(name), "%s: open sdt_demo", label);
	int err = path ? elf_open(path, &ef) : -ENOENT;
	CHECK(err == 0, name);
	if (err)
		return;
	struct usdt_probe *p;
	size_t n;
	err = usdt_probes(ef, &p, &n);
	snprintf(name, sizeof(name), "%s: notes parse, at least 9 sites", label);
	CHECK(err == 0 && n >= 9, name);
	static const char *const names[] = { "tick", "small", "wide", "consts", "strs",
		"globals", "twelve", "expensive", "order" };
	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++) {
		snprintf(name, sizeof(name), "%s: probe demo:%s present", label, names[i]);
		CHECK(find_probe(p, n, "demo", names[i]) != NULL, name);
	}
	bool nop5 = true, sema0 = true, args_ok = true, sema_distinct = true;
	for (size_t i = 0; i < n; i++) {
		unsigned char b[5] = {0};
		static const unsigned char want[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };
		if (file_bytes(path, p[i].pc_offset, b, 5) || memcmp(b, want, 5))
			nop5 = false;
		unsigned char s[2] = { 1, 1 };
		if (!p[i].sema || file_bytes(path, p[i].sema_offset, s, 2) || s[0] || s[1])
			sema0 = false;
		struct usdt_arg a[USDT_MAX_ARGS];
		int na = usdt_args_parse(p[i].args, a, USDT_MAX_ARGS);
		if (na < 0) {
			printf("#   cannot parse '%s': %d\n", p[i].args, na);
			args_ok = false;
		}
		for (size_t k = 0; k < n; k++)
			if (strcmp(p[i].name, p[k].name) && p[i].sema == p[k].sema)
				sema_distinct = false;
	}
	snprintf(name, sizeof(name), "%s: every site's file offset holds the 5-byte nop", label);
	CHECK(nop5, name);
	snprintf(name, sizeof(name), "%s: every probe has a zeroed semaphore at its file offset", label);
	CHECK(sema0, name);
	snprintf(name, sizeof(name), "%s: each probe name has its own semaphore", label);
	CHECK(sema_distinct, name);
	snprintf(name, sizeof(name), "%s: every argument spec parses", label);
	CHECK(args_ok, name);

	const struct usdt_probe *c = find_probe(p, n, "demo", "consts");
	struct usdt_arg a[USDT_MAX_ARGS];
	int na = c ? usdt_args_parse(c->args, a, USDT_MAX_ARGS) : -1;
	snprintf(name, sizeof(name), "%s: consts are 42 -1 -2 7 with sizes/signs", label);
	CHECK(na == 4 && a[0].kind == USDT_ARG_CONST && a[0].val == 42 && a[0].size == 4 &&
	      a[0].is_signed && a[1].val == -1 && a[2].val == -2 && a[2].size == 2 &&
	      a[3].val == 7 && a[3].size == 8 && !a[3].is_signed, name);
	const struct usdt_probe *t = find_probe(p, n, "demo", "twelve");
	snprintf(name, sizeof(name), "%s: twelve has 12 signed 4-byte args", label);
	na = t ? usdt_args_parse(t->args, a, USDT_MAX_ARGS) : -1;
	bool all4 = na == 12;
	for (int i = 0; i < na; i++)
		all4 &= a[i].size == 4 && a[i].is_signed;
	CHECK(all4, name);
	const struct usdt_probe *s = find_probe(p, n, "demo", "small");
	na = s ? usdt_args_parse(s->args, a, USDT_MAX_ARGS) : -1;
	snprintf(name, sizeof(name), "%s: small has sizes -1 1 -2 2 -4 4", label);
	CHECK(na == 6 && a[0].size == 1 && a[0].is_signed && a[1].size == 1 && !a[1].is_signed &&
	      a[2].size == 2 && a[2].is_signed && a[3].size == 2 && !a[3].is_signed &&
	      a[4].size == 4 && a[4].is_signed && a[5].size == 4 && !a[5].is_signed, name);
	/* rip-relative globals resolve to the global's address */
	const struct usdt_probe *g = find_probe(p, n, "demo", "globals");
	na = g ? usdt_args_parse(g->args, a, USDT_MAX_ARGS) : -1;
	if (na >= 1 && a[0].kind == USDT_ARG_MEM && a[0].rip) {
		uint64_t va;
		snprintf(name, sizeof(name), "%s: %s names g_counter", label, g->args);
		CHECK(strcmp(a[0].symbol, "g_counter") == 0 &&
		      elf_symbol_addr(ef, a[0].symbol, &va) == 0 && va != 0, name);
	}
	snprintf(name, sizeof(name), "%s: wildcards on provider and name", label);
	/* names ending in 'e': wide, twelve, expensive (a site may repeat) */
	const char *seen[8];
	size_t wild = 0;
	for (size_t i = 0; i < n; i++) {
		if (!usdt_probe_match(&p[i], "de*", "*e"))
			continue;
		bool dup = false;
		for (size_t k = 0; k < wild; k++)
			dup |= strcmp(seen[k], p[i].name) == 0;
		if (!dup && wild < 8)
			seen[wild++] = p[i].name;
	}
	CHECK(wild == 3 && !find_probe(p, n, "nodemo", "*") &&
	      find_probe(p, n, NULL, "o?der"), name);
	usdt_probes_free(p, n);
	elf_close(ef);
	if (cflags)
		unlink(path);
}

static void test_python(void)
{
	struct elf_file *ef;
	if (access(PYTHON, R_OK) != 0) {
		printf("ok - python3.11 probes # SKIP no %s\n", PYTHON);
		return;
	}
	int err = elf_open(PYTHON, &ef);
	CHECK(err == 0, "open python3.11");
	if (err)
		return;
	struct usdt_probe *p;
	size_t n;
	CHECK(usdt_probes(ef, &p, &n) == 0 && n == 8, "python3.11 has its 8 USDT probes");
	const struct usdt_probe *fe = find_probe(p, n, "python", "function__entry");
	CHECK(fe != NULL, "python:function__entry present");
	if (fe) {
		CHECK(fe->sema != 0 && fe->sema_offset != 0, "function__entry has a semaphore");
		uint64_t back;
		CHECK(elf_offset_to_vaddr(ef, fe->sema_offset, &back) == 0 && back == fe->sema,
		      "semaphore offset maps back to its vaddr");
		unsigned char b = 0;
		CHECK(file_bytes(PYTHON, fe->pc_offset, &b, 1) == 0 && b == 0x90,
		      "function__entry site is sys/sdt.h's nop");
		struct usdt_arg a[USDT_MAX_ARGS];
		CHECK(usdt_args_parse(fe->args, a, USDT_MAX_ARGS) == 3, "function__entry has 3 args");
	}
	bool all = true;
	for (size_t i = 0; i < n; i++) {
		struct usdt_arg a[USDT_MAX_ARGS];
		all &= usdt_args_parse(p[i].args, a, USDT_MAX_ARGS) >= 0;
	}
	CHECK(all, "every python3.11 argument spec parses");
	usdt_probes_free(p, n);
	elf_close(ef);
}

static void test_libstdcxx(void)
{
	struct elf_file *ef;
	int err = elf_open(LIBSTDCXX, &ef);
	CHECK(err == 0, "open libstdc++");
	if (err)
		return;
	struct usdt_probe *p;
	size_t n;
	CHECK(usdt_probes(ef, &p, &n) == 0 && n >= 3, "libstdc++ has USDT notes");
	const struct usdt_probe *th = find_probe(p, n, "libstdcxx", "throw");
	const struct usdt_probe *ca = find_probe(p, n, "libstdcxx", "catch");
	CHECK(th && ca, "libstdcxx:throw and catch present");
	if (th) {
		CHECK(th->sema == 0 && th->sema_offset == 0, "throw has no semaphore");
		unsigned char b = 0;
		CHECK(file_bytes(LIBSTDCXX, th->pc_offset, &b, 1) == 0 && b == 0x90,
		      "throw site offset holds a nop");
	}
	if (ca) {
		struct usdt_arg a[USDT_MAX_ARGS];
		int na = usdt_args_parse(ca->args, a, USDT_MAX_ARGS);
		CHECK(na == 2 && a[1].kind == USDT_ARG_MEM && a[1].size == 8,
		      "catch args: a register and a memory operand");
	}
	usdt_probes_free(p, n);
	elf_close(ef);
}

#define RAX 80
#define RBX 40
#define RCX 88
#define RDX 96
#define RSI 104
#define RDI 112
#define RBP 32
#define RSP 152
#define R8 72
#define R15 0
#define NONE USDT_REG_NONE

static void test_argspec(void)
{
	static const struct {
		const char *spec;
		int err;
		enum usdt_arg_kind kind;
		int size, sign;
		int64_t val;
		int reg, index, scale, shift, rsize;
		const char *sym;
	} t[] = {
		{ "-4@%edi", 0, USDT_ARG_REG, 4, 1, 0, RDI, NONE, 1, 0, 4, "" },
		{ "8@%rax", 0, USDT_ARG_REG, 8, 0, 0, RAX, NONE, 1, 0, 8, "" },
		{ "-4@-4(%rbp)", 0, USDT_ARG_MEM, 4, 1, -4, RBP, NONE, 1, 0, 8, "" },
		{ "8@16(%rsp)", 0, USDT_ARG_MEM, 8, 0, 16, RSP, NONE, 1, 0, 8, "" },
		{ "4@$42", 0, USDT_ARG_CONST, 4, 0, 42, NONE, NONE, 1, 0, 0, "" },
		{ "-8@$-1", 0, USDT_ARG_CONST, 8, 1, -1, NONE, NONE, 1, 0, 0, "" },
		{ "2@$-1", 0, USDT_ARG_CONST, 2, 0, 0xffff, NONE, NONE, 1, 0, 0, "" },
		{ "-1@$255", 0, USDT_ARG_CONST, 1, 1, -1, NONE, NONE, 1, 0, 0, "" },
		{ "8@$0x10", 0, USDT_ARG_CONST, 8, 0, 16, NONE, NONE, 1, 0, 0, "" },
		{ "8@(%rdx,%rax,8)", 0, USDT_ARG_MEM, 8, 0, 0, RDX, RAX, 8, 0, 8, "" },
		{ "4@8(%rbx,%rcx,4)", 0, USDT_ARG_MEM, 4, 0, 8, RBX, RCX, 4, 0, 8, "" },
		{ "2@(%r12,%r13,2)", 0, USDT_ARG_MEM, 2, 0, 0, 24, 16, 2, 0, 8, "" },
		{ "8@(%rax,%rbx)", 0, USDT_ARG_MEM, 8, 0, 0, RAX, RBX, 1, 0, 8, "" },
		{ "4@(,%rcx,4)", 0, USDT_ARG_MEM, 4, 0, 0, NONE, RCX, 4, 0, 0, "" },
		{ "-8@g_counter(%rip)", 0, USDT_ARG_MEM, 8, 1, 0, NONE, NONE, 1, 0, 8, "g_counter" },
		{ "8@foo+8(%rip)", 0, USDT_ARG_MEM, 8, 0, 8, NONE, NONE, 1, 0, 8, "foo" },
		{ "4@arr(,%rax,4)", 0, USDT_ARG_MEM, 4, 0, 0, NONE, RAX, 4, 0, 0, "arr" },
		{ "8@0x601040", 0, USDT_ARG_MEM, 8, 0, 0x601040, NONE, NONE, 1, 0, 0, "" },
		{ "1@%al", 0, USDT_ARG_REG, 1, 0, 0, RAX, NONE, 1, 0, 1, "" },
		{ "1@%ah", 0, USDT_ARG_REG, 1, 0, 0, RAX, NONE, 1, 8, 1, "" },
		{ "2@%ax", 0, USDT_ARG_REG, 2, 0, 0, RAX, NONE, 1, 0, 2, "" },
		{ "-1@%sil", 0, USDT_ARG_REG, 1, 1, 0, RSI, NONE, 1, 0, 1, "" },
		{ "1@%dil", 0, USDT_ARG_REG, 1, 0, 0, RDI, NONE, 1, 0, 1, "" },
		{ "-4@%r8d", 0, USDT_ARG_REG, 4, 1, 0, R8, NONE, 1, 0, 4, "" },
		{ "2@%r8w", 0, USDT_ARG_REG, 2, 0, 0, R8, NONE, 1, 0, 2, "" },
		{ "1@%r8b", 0, USDT_ARG_REG, 1, 0, 0, R8, NONE, 1, 0, 1, "" },
		{ "8@%r15", 0, USDT_ARG_REG, 8, 0, 0, R15, NONE, 1, 0, 8, "" },
		{ "-2@%r15w", 0, USDT_ARG_REG, 2, 1, 0, R15, NONE, 1, 0, 2, "" },
		{ "1@%bpl", 0, USDT_ARG_REG, 1, 0, 0, RBP, NONE, 1, 0, 1, "" },
		{ "8@-80(%rbx)", 0, USDT_ARG_MEM, 8, 0, -80, RBX, NONE, 1, 0, 8, "" },
		{ "8@0x10(%rsp)", 0, USDT_ARG_MEM, 8, 0, 16, RSP, NONE, 1, 0, 8, "" },
		{ "-4@-1092(%rbp)", 0, USDT_ARG_MEM, 4, 1, -1092, RBP, NONE, 1, 0, 8, "" },
		{ "4@(%esp)", 0, USDT_ARG_MEM, 4, 0, 0, RSP, NONE, 1, 0, 4, "" },
		{ "8f@%rax", 0, USDT_ARG_REG, 8, 0, 0, RAX, NONE, 1, 0, 8, "" },
		{ "%rdi", 0, USDT_ARG_REG, 8, 0, 0, RDI, NONE, 1, 0, 8, "" },
		/* errors */
		{ "3@%rax", -EINVAL }, { "16@%rax", -EINVAL }, { "8@", -EINVAL },
		{ "8@%", -EINVAL }, { "8@%xmm0", -ENOTSUP }, { "8@%fs:0x28", -ENOTSUP },
		{ "8@%rip", -EINVAL }, { "8@16(%rip)", -ENOTSUP }, { "8@()", -EINVAL },
		{ "8@(%rax", -EINVAL }, { "8@(%rax,%rsp,2)", -EINVAL },
		{ "8@(%rax,%rbx,3)", -EINVAL }, { "8@(%al)", -EINVAL },
		{ "8@$", -EINVAL }, { "8@$--1", -EINVAL }, { "8@%rax)", -EINVAL },
		{ "8@0x", -EINVAL }, { "8@99999999999999999999", -EINVAL },
		{ "", -EINVAL }, { "@%rax", -EINVAL }, { "-@%rax", -EINVAL },
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(*t); i++) {
		struct usdt_arg a;
		char name[128];
		int err = usdt_arg_parse(t[i].spec, &a, NULL);
		snprintf(name, sizeof(name), "argspec '%s'", t[i].spec);
		bool ok = err == t[i].err;
		if (ok && !err)
			ok = a.kind == t[i].kind && a.size == t[i].size &&
			     a.is_signed == (t[i].sign != 0) && a.val == t[i].val &&
			     a.reg == t[i].reg && strcmp(a.symbol, t[i].sym) == 0 &&
			     (t[i].kind != USDT_ARG_MEM ||
			      (a.index == t[i].index && a.scale == t[i].scale)) &&
			     (t[i].kind != USDT_ARG_REG ||
			      (a.reg_shift == t[i].shift && a.reg_size == t[i].rsize));
		CHECK(ok, name);
		if (!ok)
			printf("#   err %d kind %d size %d signed %d val %" PRId64 " reg %d index %d scale %d shift %d sym %s\n",
			       err, a.kind, a.size, a.is_signed, a.val, a.reg, a.index, a.scale,
			       a.reg_shift, a.symbol);
	}
	struct usdt_arg a[USDT_MAX_ARGS];
	CHECK(usdt_args_parse("8@%rbx 8@%r15", a, USDT_MAX_ARGS) == 2 && a[0].reg == RBX &&
	      a[1].reg == R15, "two args");
	CHECK(usdt_args_parse("", a, USDT_MAX_ARGS) == 0, "no args");
	CHECK(usdt_args_parse("  -4@%edi  ", a, USDT_MAX_ARGS) == 1, "blanks around");
	CHECK(usdt_args_parse("8@%rax 8@%rax", a, 1) == -E2BIG, "too many args");
	CHECK(usdt_args_parse("8@%rax 8@%zz", a, USDT_MAX_ARGS) == -ENOTSUP, "one bad arg fails all");
	CHECK(strcmp(usdt_reg_name(RDI), "rdi") == 0 && usdt_reg_name(7) == NULL, "reg names");
}

/* Build a stapsdt note: header, "stapsdt\0", desc (3 addrs + strings). */
static size_t make_note(unsigned char *b, uint32_t descsz_override, const char *strs, size_t slen)
{
	size_t descsz = 24 + slen;
	uint32_t h[3] = { 8, descsz_override ? descsz_override : (uint32_t)descsz, 3 };
	memcpy(b, h, 12);
	memcpy(b + 12, "stapsdt", 8);
	uint64_t addrs[3] = { 0x1234, 0x2000, 0x4010 };
	memcpy(b + 20, addrs, 24);
	memcpy(b + 44, strs, slen);
	size_t len = 20 + descsz;
	while (len % 4)
		b[len++] = 0;
	return len;
}

static int note_cb(void *arg, const struct usdt_note *n)
{
	struct usdt_note *out = arg;
	*out = *n;
	return 0;
}

static void test_note_parser(void)
{
	unsigned char b[256];
	struct usdt_note n;
	size_t len = make_note(b, 0, "prov\0name\0-4@%edi", 18);
	CHECK(usdt_notes_parse(b, len, 8, note_cb, &n) == 1 && n.pc == 0x1234 &&
	      n.base == 0x2000 && n.sema == 0x4010 && strcmp(n.provider, "prov") == 0 &&
	      strcmp(n.name, "name") == 0 && strcmp(n.args, "-4@%edi") == 0, "parse one note");
	unsigned char two[512];
	memcpy(two, b, len);
	memcpy(two + len, b, len);
	CHECK(usdt_notes_parse(two, 2 * len, 8, NULL, NULL) == 2, "two notes");
	CHECK(usdt_notes_parse(b, 0, 8, NULL, NULL) == 0, "empty section");
	CHECK(usdt_notes_parse(b, 11, 8, NULL, NULL) == -EINVAL, "truncated header");
	CHECK(usdt_notes_parse(b, len - 8, 8, NULL, NULL) == -EINVAL, "truncated desc");
	len = make_note(b, 0, "prov\0name", 9);
	CHECK(usdt_notes_parse(b, len, 8, NULL, NULL) == -EINVAL, "unterminated name");
	len = make_note(b, 0, "prov\0name\0", 10);
	CHECK(usdt_notes_parse(b, len, 8, note_cb, &n) == 1 && n.args[0] == '\0',
	      "note without an argument string");
	len = make_note(b, 0xfffffff0u, "prov\0name\0\0", 11);
	CHECK(usdt_notes_parse(b, len, 8, NULL, NULL) == -EINVAL, "huge descsz");
	len = make_note(b, 10, "prov\0name\0\0", 11);
	CHECK(usdt_notes_parse(b, len, 8, NULL, NULL) == -EINVAL, "descsz below the addresses");
	len = make_note(b, 0, "\0name\0\0", 7);
	CHECK(usdt_notes_parse(b, len, 8, NULL, NULL) == -EINVAL, "empty provider");
	len = make_note(b, 0, "prov\0name\0\0", 11);
	b[8] = 1; /* other note type: skipped */
	CHECK(usdt_notes_parse(b, len, 8, NULL, NULL) == 0, "other note types skipped");
	CHECK(usdt_notes_parse(b, len, 3, NULL, NULL) == -EINVAL, "bad address size");
}

/* Other tools read sonde/sdt.h's notes: readelf -n and gdb's info probes. */
static void test_tools(void)
{
	char buf[512], cmd[1024], out[16384];
	const char *path = test_prog("sdt_demo", NULL, NULL, buf, sizeof(buf));
	if (!path)
		return;
	snprintf(cmd, sizeof(cmd), "readelf -n %s", path);
	bool ok = run_capture(cmd, out, sizeof(out)) == 0;
	CHECK(ok && strstr(out, "NT_STAPSDT") && strstr(out, "Provider: demo") &&
	      strstr(out, "Name: twelve") && strstr(out, "Arguments: -4@$42 -4@$-1 -2@$-2 8@$7"),
	      "readelf -n shows the stapsdt notes");
	if (access("/usr/bin/gdb", X_OK) != 0) {
		printf("ok - gdb info probes # SKIP no gdb\n");
		return;
	}
	snprintf(cmd, sizeof(cmd), "gdb -nx -batch -ex 'info probes' %s 2>/dev/null", path);
	ok = run_capture(cmd, out, sizeof(out)) == 0;
	size_t lines = 0;
	for (char *l = strstr(out, "stap demo"); l; l = strstr(l + 1, "stap demo"))
		lines++;
	CHECK(ok && lines >= 9 && strstr(out, "expensive"), "gdb info probes lists every demo probe");
}

int main(void)
{
	test_tools();
	test_argspec();
	test_note_parser();
	test_sdt_demo("sdt_demo -O0", NULL, NULL);
	test_sdt_demo("sdt_demo gcc -O2", "gcc", "-O2");
	test_sdt_demo("sdt_demo clang -O2", "clang", "-O2");
	test_sdt_demo("sdt_demo clang -O0", "clang", "-O0");
	test_python();
	test_libstdcxx();
	return UNIT_DONE();
}
