/* test_cdecl.c - the declaration parser's layouts against gcc's. For a
 * corpus of declarations (tests/data/cdecl/tricky.h, written to be hard,
 * and real headers: glibc's and the kernel's UAPI), it preprocesses and
 * parses them as a script's #include would, then writes a C program that
 * includes the same headers and prints, for every struct and union
 * defined there, sizeof, _Alignof, each member's offsetof and each
 * bitfield's first bit and width (found by setting it to all ones in a
 * zeroed object); gcc compiles and runs it, and every line must equal
 * what sonde computed. Then declarations a script gets wrong, each with
 * its error and position. */
#include <stdlib.h>
#include <unistd.h>

#include "base/arena.h"
#include "lang/cdecl.h"
#include "lang/pp.h"
#include "types.h"
#include "unit.h"

static char tmp[64];

struct names {
	char **v;
	size_t n, cap;
};

static void names_add(struct names *ns, const char *kind, const char *s,
		      size_t len)
{
	char buf[300];
	snprintf(buf, sizeof(buf), "%s%s%.*s", kind, *kind ? " " : "",
		 (int)len, s);
	for (size_t i = 0; i < ns->n; i++)
		if (!strcmp(ns->v[i], buf))
			return;
	if (ns->n == ns->cap) {
		ns->cap = ns->cap ? ns->cap * 2 : 64;
		ns->v = realloc(ns->v, ns->cap * sizeof(*ns->v));
	}
	ns->v[ns->n++] = strdup(buf);
}

/* Struct and union definitions in the preprocessed tokens: tags, and
 * typedef names of untagged ones (typedef struct { } NAME;). */
static void collect(const struct ptok *t, size_t n, struct names *ns)
{
	for (size_t i = 0; i + 2 < n; i++) {
		bool su = t[i].kind == PT_IDENT &&
			(ptok_is(&t[i], "struct") || ptok_is(&t[i], "union"));
		if (!su)
			continue;
		size_t j = i + 1;
		/* struct __attribute__((packed)) name { */
		while (j < n && t[j].kind == PT_IDENT &&
		       ptok_is(&t[j], "__attribute__")) {
			int depth = 0;
			for (j++; j < n; j++) {
				if (ptok_is(&t[j], "("))
					depth++;
				else if (ptok_is(&t[j], ")") && --depth == 0)
					break;
			}
			j++;
		}
		if (j + 1 < n && t[j].kind == PT_IDENT && ptok_is(&t[j + 1], "{")) {
			names_add(ns, ptok_is(&t[i], "struct") ? "struct" :
				  "union", t[j].text, t[j].len);
			continue;
		}
		if (!ptok_is(&t[j], "{") || i == 0 ||
		    !ptok_is(&t[i - 1], "typedef"))
			continue;
		int depth = 0;
		for (; j < n; j++) {
			if (ptok_is(&t[j], "{"))
				depth++;
			else if (ptok_is(&t[j], "}") && --depth == 0)
				break;
		}
		if (j + 2 < n && t[j + 1].kind == PT_IDENT &&
		    (ptok_is(&t[j + 2], ";") || ptok_is(&t[j + 2], ",")))
			names_add(ns, "", t[j + 1].text, t[j + 1].len);
	}
}

static const struct ctype *lookup(struct ctypes *reg, const char *name)
{
	if (!strncmp(name, "struct ", 7))
		return ctypes_declared_tag(reg, CT_STRUCT, name + 7);
	if (!strncmp(name, "union ", 6))
		return ctypes_declared_tag(reg, CT_UNION, name + 6);
	return ctypes_declared_typedef(reg, name);
}

/* One line per type and member: the same from sonde (out) and, as C to
 * print it, for gcc (gen). */
static struct pp *cur_pp;

static void walk(FILE *out, FILE *gen, const char *type, const char *path,
		 const struct ctype *t, uint32_t base_bits, int depth)
{
	if (depth > 8)
		return;
	for (uint32_t i = 0; i < t->nfields; i++) {
		const struct ctype_field *f = &t->fields[i];
		uint32_t bits = base_bits + f->bit_offset;
		char p[512];
		if (!f->name) { /* anonymous: its members are the parent's */
			walk(out, gen, type, path, f->type, bits, depth + 1);
			continue;
		}
		/* glibc names members with macros (si_pid is
		 * _sifields._kill.si_pid): C cannot name those */
		if (pp_object_macro(cur_pp, f->name, strlen(f->name)))
			continue;
		snprintf(p, sizeof(p), "%s%s%s", path, *path ? "." : "",
			 f->name);
		if (f->bit_size) {
			fprintf(out, "%s %s bits %u %u\n", type, p, bits,
				f->bit_size);
			fprintf(gen, "\t{ %s v; memset(&v, 0, sizeof(v)); "
				"v.%s = ~0ull; bits(\"%s %s\", &v, sizeof(v)); }\n",
				type, p, type, p);
			continue;
		}
		fprintf(out, "%s %s at %u\n", type, p, bits / 8);
		fprintf(gen, "\tprintf(\"%s %s at %%zu\\n\", offsetof(%s, %s));\n",
			type, p, type, p);
		if (ctype_is_aggregate(f->type))
			walk(out, gen, type, p, f->type, bits, depth + 1);
	}
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	char chunk[4096];
	size_t n;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		fwrite(chunk, 1, n, m);
	fclose(m);
	fclose(f);
	return buf;
}

/* Lay out every struct the headers define and compare with gcc. */
static void compare_with_gcc(const char *label, const char *includes,
			     const char *idir, size_t min_types)
{
	char script[4096];
	snprintf(script, sizeof(script), "%s", includes);
	struct arena a;
	arena_init(&a);
	struct ctypes *reg = ctypes_new(&a);
	struct diag_source src = { .name = "corpus", .text = script };
	struct diags d;
	diags_init(&d, &src);
	struct pp *pp = pp_new();
	const char *dirs[] = { idir };
	struct pp_opts o = { .name = "corpus", .text = script,
			     .len = strlen(script), .include_dirs = dirs,
			     .ninclude_dirs = idir ? 1 : 0, .have_btf = true };
	int err = pp_run(pp, &o, &d);
	size_t n;
	const struct ptok *toks = pp_tokens(pp, &n);
	if (!err)
		err = cdecl_parse(pp, toks, n, reg, &d);
	char name[256];
	snprintf(name, sizeof(name), "%s: preprocessed and parsed", label);
	CHECK(err == 0 && d.nerrors == 0, name);
	if (d.nerrors)
		diags_print(&d, stdout);
	struct names ns = { 0 };
	collect(toks, n, &ns);
	cur_pp = pp;

	char gen_c[128], gen_bin[128], want[128], got[128], cmd[2048];
	snprintf(gen_c, sizeof(gen_c), "%s/gen.c", tmp);
	snprintf(gen_bin, sizeof(gen_bin), "%s/gen", tmp);
	snprintf(want, sizeof(want), "%s/gcc.out", tmp);
	snprintf(got, sizeof(got), "%s/sonde.out", tmp);
	FILE *gen = fopen(gen_c, "w"), *out = fopen(got, "w");
	fprintf(gen, "#include <stdio.h>\n#include <string.h>\n"
		"#include <stddef.h>\n%s\n"
		"static void bits(const char *what, const void *p, size_t n)\n"
		"{\n\tconst unsigned char *b = p;\n\tint first = -1, w = 0;\n"
		"\tfor (size_t i = 0; i < n * 8; i++)\n"
		"\t\tif (b[i / 8] >> (i %% 8) & 1) { if (first < 0) first = i; w++; }\n"
		"\tprintf(\"%%s bits %%d %%d\\n\", what, first, w);\n}\n"
		"int main(void)\n{\n", includes);
	size_t laid = 0, missing = 0;
	for (size_t i = 0; i < ns.n; i++) {
		const struct ctype *t = lookup(reg, ns.v[i]);
		if (!t || !t->complete) {
			printf("#   %s: %s not laid out\n", label, ns.v[i]);
			missing++;
			continue;
		}
		laid++;
		fprintf(out, "%s size %u align %u\n", ns.v[i], t->size,
			t->align);
		fprintf(gen, "\tprintf(\"%s size %%zu align %%zu\\n\", "
			"sizeof(%s), _Alignof(%s));\n", ns.v[i], ns.v[i],
			ns.v[i]);
		walk(out, gen, ns.v[i], "", t, 0, 0);
	}
	fprintf(gen, "\treturn 0;\n}\n");
	fclose(gen);
	fclose(out);
	snprintf(name, sizeof(name), "%s: every struct laid out (%zu of %zu)",
		 label, laid, ns.n);
	CHECK(missing == 0 && laid >= min_types, name);
	snprintf(cmd, sizeof(cmd), "gcc -std=gnu11 -w %s%s -o %s %s && %s > %s",
		 idir ? "-I" : "", idir ? idir : "", gen_bin, gen_c, gen_bin,
		 want);
	int rc = system(cmd);
	snprintf(name, sizeof(name), "%s: gcc compiles the same declarations",
		 label);
	CHECK(rc == 0, name);
	char *w = slurp(want), *g = slurp(got);
	snprintf(name, sizeof(name), "%s: sizes, alignments, offsets and "
		 "bitfields equal gcc's", label);
	bool same = w && g && !strcmp(w, g);
	CHECK(same, name);
	if (!same && w && g) {
		/* show the first lines that differ */
		char *wl = w, *gl = g;
		int shown = 0;
		while (*wl && *gl && shown < 8) {
			char *we = strchr(wl, '\n'), *ge = strchr(gl, '\n');
			if (!we || !ge)
				break;
			if (we - wl != ge - gl || memcmp(wl, gl, (size_t)(we - wl))) {
				printf("#   gcc:   %.*s\n#   sonde: %.*s\n",
				       (int)(we - wl), wl, (int)(ge - gl), gl);
				shown++;
			}
			wl = we + 1;
			gl = ge + 1;
		}
	}
	free(w);
	free(g);
	for (size_t i = 0; i < ns.n; i++)
		free(ns.v[i]);
	free(ns.v);
	pp_free(pp);
	diags_free(&d);
	arena_free(&a);
}

/* A script's own declaration that is wrong: its tag and position. */
static void expect_error(const char *text, const char *tag, unsigned line,
			 unsigned col, const char *name)
{
	struct arena a;
	arena_init(&a);
	struct ctypes *reg = ctypes_new(&a);
	struct diag_source src = { .name = "s.bt", .text = text };
	struct diags d;
	diags_init(&d, &src);
	struct pp *pp = pp_new();
	struct pp_opts o = { .name = "s.bt", .text = text, .len = strlen(text) };
	size_t n;
	int err = pp_run(pp, &o, &d);
	if (!err) {
		const struct ptok *toks = pp_tokens(pp, &n);
		err = cdecl_parse(pp, toks, n, reg, &d);
	}
	bool ok = err < 0 && d.list.n && !strcmp(d.list.v[0].tag, tag) &&
		d.list.v[0].pos.line == line && d.list.v[0].pos.col == col;
	CHECK(ok, name);
	if (!ok)
		diags_print(&d, stdout);
	pp_free(pp);
	diags_free(&d);
	arena_free(&a);
}

static void test_errors(void)
{
	expect_error("struct s { int a; int a b; };", "BAD_DECL", 1, 25,
		     "missing ';'");
	expect_error("struct s { int a; }; struct s { int b; };", "BAD_DECL",
		     1, 29, "redefinition");
	expect_error("struct s {\n  struct nope_t n;\n};", "UNKNOWN_TYPE", 2,
		     17, "member of an undefined struct");
	expect_error("struct s { unknown_t x; };", "UNKNOWN_TYPE", 1, 12,
		     "unknown type name");
	expect_error("struct s { int x : 33; };", "BAD_DECL", 1, 20,
		     "bitfield too wide");
	expect_error("struct s { char *p : 3; };", "BAD_DECL", 1, 18,
		     "bitfield of a pointer");
	expect_error("struct s { int a[-1]; };", "BAD_DECL", 1, 17,
		     "negative array size");
	expect_error("struct s { int a[1/0]; };", "BAD_DECL", 1, 21,
		     "division by zero");
	expect_error("struct s { int a[NOPE]; };", "UNKNOWN_TYPE", 1, 18,
		     "unknown constant");
	expect_error("struct s { int a; } __attribute__((aligned(3)));",
		     "BAD_DECL", 1, 36, "alignment not a power of two");
	expect_error("struct s { char a[0x7fffffff][0x7fffffff]; };", "BAD_DECL",
		     1, 18, "array too large");
	expect_error("union u { int a; }; struct u { int b; };", "BAD_DECL", 1,
		     28, "tag of another kind");
	expect_error("struct s { void v; };", "BAD_DECL", 1, 17, "void member");
	char deep[4096] = "struct s { int ";
	for (int i = 0; i < 200; i++)
		strcat(deep, "(");
	strcat(deep, "x");
	expect_error(deep, "BAD_DECL", 1, 217, "nesting is bounded");
}

int main(void)
{
	snprintf(tmp, sizeof(tmp), "/tmp/sonde-cdecl-XXXXXX");
	if (!mkdtemp(tmp))
		return 1;
	const char *srcdir = getenv("SONDE_SRCDIR");
	char data[1024];
	snprintf(data, sizeof(data), "%s/tests/data/cdecl",
		 srcdir ? srcdir : ".");
	compare_with_gcc("tricky.h", "#include <tricky.h>\n", data, 50);
	compare_with_gcc("glibc", "#include <sys/socket.h>\n"
			 "#include <netinet/in.h>\n#include <sys/stat.h>\n"
			 "#include <time.h>\n#include <signal.h>\n"
			 "#include <stdio.h>\n#include <pthread.h>\n"
			 "#include <sys/epoll.h>\n#include <sys/resource.h>\n"
			 "#include <dirent.h>\n#include <sys/uio.h>\n"
			 "#include <sys/un.h>\n#include <netdb.h>\n"
			 "#include <sys/time.h>\n#include <poll.h>\n"
			 "#include <sys/utsname.h>\n#include <sys/statfs.h>\n"
			 "#include <termios.h>\n#include <ucontext.h>\n"
			 "#include <sys/sem.h>\n#include <sys/shm.h>\n"
			 "#include <sys/msg.h>\n#include <aio.h>\n"
			 "#include <glob.h>\n#include <regex.h>\n"
			 "#include <search.h>\n#include <link.h>\n"
			 "#include <elf.h>\n#include <sys/user.h>\n"
			 "#include <sys/procfs.h>\n#include <sys/inotify.h>\n"
			 "#include <mqueue.h>\n#include <spawn.h>\n"
			 "#include <sched.h>\n#include <fenv.h>\n"
			 "#include <ifaddrs.h>\n#include <net/if.h>\n"
			 "#include <netinet/tcp.h>\n#include <netinet/ip.h>\n"
			 "#include <arpa/inet.h>\n#include <grp.h>\n"
			 "#include <pwd.h>\n#include <utmp.h>\n"
			 "#include <sys/timex.h>\n#include <sys/sysinfo.h>\n"
			 "#include <sys/vfs.h>\n#include <wchar.h>\n"
			 "#include <stdlib.h>\n#include <setjmp.h>\n",
			 NULL, 190);
	compare_with_gcc("linux uapi", "#include <linux/bpf.h>\n"
			 "#include <linux/perf_event.h>\n"
			 "#include <linux/ptrace.h>\n#include <linux/tcp.h>\n"
			 "#include <linux/if_ether.h>\n#include <linux/ip.h>\n"
			 "#include <linux/ipv6.h>\n#include <linux/in6.h>\n"
			 "#include <linux/udp.h>\n#include <linux/icmp.h>\n"
			 "#include <linux/netlink.h>\n#include <linux/rtnetlink.h>\n"
			 "#include <linux/btf.h>\n#include <linux/elf.h>\n"
			 "#include <linux/sched.h>\n"
			 "#include <linux/fs.h>\n#include <linux/stat.h>\n"
			 "#include <linux/io_uring.h>\n#include <linux/input.h>\n"
			 "#include <linux/if_packet.h>\n#include <linux/virtio_net.h>\n"
			 "#include <linux/usbdevice_fs.h>\n#include <linux/fuse.h>\n"
			 "#include <linux/sctp.h>\n#include <linux/kvm.h>\n"
			 "#include <linux/seccomp.h>\n#include <linux/audit.h>\n"
			 "#include <linux/can.h>\n#include <linux/vhost.h>\n"
			 "#include <linux/videodev2.h>\n#include <linux/dm-ioctl.h>\n"
			 "#include <linux/cdrom.h>\n#include <linux/ethtool.h>\n"
			 "#include <linux/nl80211.h>\n#include <linux/if_tun.h>\n"
			 "#include <linux/userfaultfd.h>\n#include <linux/openat2.h>\n"
			 "#include <linux/fanotify.h>\n#include <linux/inotify.h>\n"
			 "#include <linux/signalfd.h>\n#include <linux/if_bridge.h>\n"
			 "#include <linux/netfilter.h>\n#include <linux/pkt_sched.h>\n"
			 "#include <linux/blktrace_api.h>\n#include <linux/cn_proc.h>\n"
			 "#include <linux/taskstats.h>\n#include <linux/vfio.h>\n"
			 "#include <linux/media.h>\n#include <linux/hidraw.h>\n"
			 "#include <linux/uinput.h>\n#include <linux/loop.h>\n"
			 "#include <linux/nbd.h>\n#include <linux/watchdog.h>\n",
			 NULL, 500);
	test_errors();
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", tmp);
	return UNIT_DONE();
}
