/* test_uprobes.c - the user-space providers and their code, without a
 * kernel: attach-point splitting; uprobe/uretprobe/usdt expansion on
 * this very test binary (it carries sonde/sdt.h probes), with the
 * locations, semaphore offsets and argument specs the probes get; the
 * error tags and messages; the uprobe PMU request; and USDT argument
 * loading and uaddr() run in the interpreter against fake registers and
 * memory, the load bias taken from ip as at a real probe hit. */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include <sonde/sdt.h>

#include "cg_fixture.h"
#include "elf/elf.h"
#include "probes/probe_util.h"
#include "probes/provider.h"
#include "probes/user.h"
#include "unit.h"

/* ---- things in this binary to probe ---- */

long uprobes_test_global = 7;

__attribute__((noinline)) int uprobes_test_fn(int a, int b)
{
	SONDE_PROBE(utest, hit, a, b);
	return a + b;
}

__attribute__((noinline)) int uprobes_test_other(int a)
{
	SONDE_PROBE(utest, hit, a, 0);
	SONDE_PROBE(utest, miss);
	return a;
}

/* ---- expansion harness ---- */

#define MAXP 16

struct got {
	int r;
	int n;
	const char *target[MAXP], *func[MAXP];
	const struct uprobe_info *u[MAXP];
	struct diags d;
	const char *msg, *tag;
};

static struct arena A;
static struct diag_source S = { .name = "test", .text = "" };
static struct expand_ctx *cur_ctx;

static int emit(void *arg, const char *target, const char *func, uint64_t freq)
{
	struct got *g = arg;
	(void)freq;
	if (g->n < MAXP) {
		/* valid during the call only, as compile.c knows */
		g->target[g->n] = target ? arena_strdup(&A, target) : NULL;
		g->func[g->n] = func ? arena_strdup(&A, func) : NULL;
		g->u[g->n] = cur_ctx->emit_uprobe;
	}
	g->n++;
	return 0;
}

static struct got expand(const char *text, int pid)
{
	struct got g = { 0 };
	diags_init(&g.d, &S);
	struct expand_ctx ctx = { .arena = &A, .diags = &g.d, .pid = pid };
	cur_ctx = &ctx;
	struct attach_point *n = arena_new(&A, struct attach_point);
	n->text = arena_strdup(&A, text);
	n->provider = arena_strndup(&A, text, strcspn(text, ":"));
	const struct provider *pv = provider_find(n->provider);
	g.r = pv ? pv->parse(n, &ctx) : -ENOENT;
	if (g.r == 0)
		g.r = pv->expand(n, &ctx, emit, &g);
	if (g.d.list.n) {
		/* Copied: the diagnostics are freed here, the arena lives on. */
		g.msg = arena_strdup(&A, g.d.list.v[0].msg);
		g.tag = g.d.list.v[0].tag;
	}
	diags_free(&g.d);
	return g;
}

static void test_split(void)
{
	struct ap_parts p;
	user_split(&A, "uprobe:/bin/x:\"ns::f(int)\"", &p);
	CHECK(p.n == 2 && !strcmp(p.v[0], "/bin/x") && !strcmp(p.v[1], "ns::f(int)"),
	      "split: a quoted C++ name is one part, quotes removed");
	user_split(&A, "usdt:\"/a b/c\":p:n", &p);
	CHECK(p.n == 3 && !strcmp(p.v[0], "/a b/c"), "split: a quoted path");
	user_split(&A, "u:x:a:b:c:d:e:f:g:h:i", &p);
	CHECK(p.n == AP_MAX_PARTS && !strcmp(p.v[AP_MAX_PARTS - 1], "g:h:i"),
	      "split: the last part keeps the rest");
	CHECK(user_split(&A, "u:x:\"open", &p) < 0, "split: an unterminated quote");
}

static void test_uprobe_expand(void)
{
	struct elf_file *ef;
	CHECK(elf_open("/proc/self/exe", &ef) == 0, "uprobe: the test binary opens");
	const struct elf_sym *sym = ef ? elf_find_sym(ef, "uprobes_test_fn") : NULL;

	struct got g = expand("uprobe:/proc/self/exe:uprobes_test_fn", 0);
	CHECK(g.r == 0 && g.n == 1, "uprobe: one probe for one function");
	CHECK(g.n == 1 && !strcmp(g.target[0], "/proc/self/exe") &&
	      !strcmp(g.func[0], "uprobes_test_fn"), "uprobe: target and func as named");
	CHECK(g.n == 1 && g.u[0] && sym && g.u[0]->vaddr == sym->addr &&
	      g.u[0]->offset == sym->offset && !g.u[0]->retprobe && !g.u[0]->usdt,
	      "uprobe: the symbol's address and file offset");
	CHECK(g.n == 1 && g.u[0] && g.u[0]->is_dyn && !g.u[0]->bias_known,
	      "uprobe: PIE, bias read at run time without -p");

	g = expand("ur:/proc/self/exe:uprobes_test_fn", 0);
	CHECK(g.n == 1 && g.u[0] && g.u[0]->retprobe, "uretprobe: retprobe set (alias ur)");

	g = expand("uprobe:/proc/self/exe:uprobes_test_*", 0);
	CHECK(g.r == 0 && g.n == 2, "uprobe: a wildcard expands to each match");

	g = expand("uprobe:/proc/self/exe:uprobes_test_fn+4", 0);
	CHECK(g.n == 1 && g.u[0] && sym && g.u[0]->vaddr == sym->addr + 4,
	      "uprobe: SYMBOL+OFFSET");

	char addr[32];
	snprintf(addr, sizeof(addr), "0x%llx", sym ? (unsigned long long)sym->addr : 0ull);
	char spec[96];
	snprintf(spec, sizeof(spec), "uprobe:/proc/self/exe:%s", addr);
	g = expand(spec, 0);
	CHECK(g.n == 1 && g.u[0] && sym && g.u[0]->vaddr == sym->addr, "uprobe: 0xADDR");

	g = expand("uprobe:/proc/self/exe:uprobes_test_fm", 0);
	CHECK(g.r < 0 && g.tag && !strcmp(g.tag, "NO_SYMBOL") &&
	      strstr(g.msg, "did you mean: uprobes_test_fn"),
	      "uprobe: no such symbol, near names suggested");
	g = expand("uprobe:/nonexistent/x:f", 0);
	CHECK(g.r < 0 && g.tag && !strcmp(g.tag, "NO_FILE") &&
	      strstr(g.msg, "'/nonexistent/x' does not exist"), "uprobe: missing file");
	g = expand("uprobe:/etc/hostname:f", 0);
	CHECK(g.r < 0 && g.tag && !strcmp(g.tag, "NOT_ELF"), "uprobe: not an ELF file");
	g = expand("uprobe:/proc:f", 0);
	CHECK(g.r < 0 && g.tag && !strcmp(g.tag, "NOT_ELF") && strstr(g.msg, "directory"),
	      "uprobe: a directory");
	g = expand("uprobe:libnosuchlib:f", 0);
	CHECK(g.r < 0 && g.tag && !strcmp(g.tag, "NO_FILE"), "uprobe: no such library");
	g = expand("uprobe:uprobes_test_fn", 0);
	CHECK(g.r < 0 && g.tag && !strcmp(g.tag, "BAD_PROBE"),
	      "uprobe: no path needs -p");
	g = expand("uprobe:uprobes_test_fn", getpid());
	CHECK(g.r == 0 && g.n == 1 && g.u[0] && g.u[0]->bias_known,
	      "uprobe -p: the process's executable, bias from its maps");
	if (g.n == 1 && g.u[0] && g.u[0]->bias_known)
		CHECK(g.u[0]->vaddr + g.u[0]->bias == (uint64_t)(uintptr_t)uprobes_test_fn,
		      "uprobe -p: vaddr + bias is where the function runs");
	g = expand("uprobe:libc:getpid", getpid());
	CHECK(g.r == 0 && g.n >= 1 && g.target[0] && strstr(g.target[0], "libc.so") &&
	      !strstr(g.target[0], "/proc/"),
	      "uprobe -p: a library by name, shown by its path in the process");
	elf_close(ef);
}

static void test_usdt_expand(void)
{
	struct got g = expand("usdt:/proc/self/exe:utest:hit", 0);
	CHECK(g.r == 0 && g.n == 2, "usdt: every site of a probe is a probe");
	CHECK(g.n >= 1 && !strcmp(g.func[0], "utest:hit"), "usdt: func is provider:name");
	bool good = g.n == 2;
	for (int i = 0; i < g.n && i < MAXP && good; i++)
		good = g.u[i] && g.u[i]->usdt && g.u[i]->nargs == 2 &&
		       !g.u[i]->args_error && g.u[i]->ref_ctr_offset != 0;
	CHECK(good, "usdt: two arguments and a semaphore offset at each site");
	CHECK(g.n == 2 && g.u[0] && g.u[1] && g.u[0]->vaddr != g.u[1]->vaddr &&
	      g.u[0]->ref_ctr_offset == g.u[1]->ref_ctr_offset,
	      "usdt: sites differ, the semaphore is shared");
	g = expand("usdt:/proc/self/exe:hit", 0);
	CHECK(g.n == 2 && !strcmp(g.func[0], "utest:hit"),
	      "usdt: PATH:NAME finds the provider");
	g = expand("usdt:/proc/self/exe:utest:*", 0);
	CHECK(g.n == 3, "usdt: a wildcard over names");
	g = expand("usdt:/proc/self/exe:utest:hti", 0);
	CHECK(g.r < 0 && g.tag && !strcmp(g.tag, "NO_PROBE") &&
	      strstr(g.msg, "did you mean: utest:hit"), "usdt: no such probe, near name");
	g = expand("usdt:/proc/self/exe", 0);
	CHECK(g.r < 0 && g.tag && !strcmp(g.tag, "BAD_PROBE"), "usdt: a probe name is needed");
	g = expand("usdt:utest:hit", getpid());
	CHECK(g.r == 0 && g.n == 2, "usdt -p: NAME over everything the process maps");
	if (g.msg)
		printf("# %s\n", g.msg);
}

static void test_attach_req(void)
{
	struct got g = expand("usdt:/proc/self/exe:utest:hit", 0);
	if (g.n < 1 || !g.u[0])
		return;
	struct probe p = { .uprobe = g.u[0], .name = "usdt",
			   .caps = provider_find("usdt")->caps };
	struct attach_req req = { 0 };
	int r = user_attach(&p, &req);
	char *type = probe_read_file("/sys/bus/event_source/devices/uprobe/type");
	if (!type) {
		CHECK(r < 0, "attach: no uprobe PMU, an error");
		return;
	}
	CHECK(r == 1 && req.how == ATTACH_PERF_EVENT &&
	      req.perf_type == (uint32_t)atoi(type), "attach: the uprobe PMU's type");
	free(type);
	CHECK(req.perf_config1 == (uint64_t)(uintptr_t)g.u[0]->path &&
	      req.perf_config2 == g.u[0]->offset, "attach: config1 path, config2 offset");
	CHECK(req.perf_config >> 32 == g.u[0]->ref_ctr_offset && !(req.perf_config & 1),
	      "attach: ref_ctr_offset in config[32:63], not a retprobe");
	g = expand("uretprobe:/proc/self/exe:uprobes_test_fn", 0);
	p.uprobe = g.u[0];
	memset(&req, 0, sizeof(req));
	CHECK(user_attach(&p, &req) == 1 && (req.perf_config & 1) &&
	      req.retprobe && req.path, "attach: a retprobe sets config bit 0");
}

static void test_env_tags(void)
{
	struct diags d;
	diags_init(&d, &S);
	struct pos at = { 1, 1, 1 };
	diag_error(&d, at, "NO_SYMBOL", "x");
	diag_error(&d, at, "NO_FILE", "x");
	CHECK(provider_env_errors(&d), "exit 2: only errors about the system");
	diag_error(&d, at, "SYNTAX", "x");
	CHECK(!provider_env_errors(&d), "exit 1: a script error too");
	diags_free(&d);
	diags_init(&d, &S);
	CHECK(!provider_env_errors(&d), "no errors: not an environment failure");
	diags_free(&d);
}

/* ---- USDT arguments in the interpreter ---- */

static struct cgfx F;
static struct emu E;

enum { R15 = 0, R14, R13, R12, RBP, RBX, R11, R10, R9, R8, RAX, RCX, RDX,
       RSI, RDI, ORIG, RIP, CS, FLAGS, RSP, SS, NREGS };

static void test_usdt_args(void)
{
	static const char *specs[] = {
		"-4@%edi", "8@8(%rbp)", "-8@sym(%rip)", "2@(%r12,%r13,2)",
		"-2@$-2", "1@%ah", "-1@-1(%rbp)", "4@sym+12(%rip)", "8@$sym",
	};
	enum { N = sizeof(specs) / sizeof(*specs) };
	static struct usdt_arg args[N];
	const uint64_t site = 0x1000, sym = 0x3000;
	static int64_t global[2] = { -123456789012LL, 0 };
	static uint16_t arr[8] = { 10, 11, 12, 13, 14, 15, 16, 17 };
	static uint8_t mem[32];
	for (int i = 0; i < N; i++) {
		CHECK(usdt_arg_parse(specs[i], &args[i], NULL) == 0, specs[i]);
		if (args[i].symbol[0])   /* as the provider folds it */
			args[i].val += (int64_t)sym;
	}
	uint32_t hi = 0x89abcdef;
	memcpy((uint8_t *)global + 8 + 4, &hi, 4);
	memset(mem, 0, sizeof(mem));
	uint64_t v8 = 0x1122334455667788ull;
	memcpy(mem + 24, &v8, 8);
	mem[15] = 0xfe;                          /* -1(%rbp) = -2 */
	uint64_t bias = (uint64_t)(uintptr_t)global - sym;

	struct uprobe_info u = { .path = "/x", .vaddr = site, .usdt = true,
				 .is_dyn = true, .args = args, .nargs = N };
	cgfx_uprobe = &u;
	int rc = cgfx_compile(&F, "usdt:/x:p:n { printf(\"%d %d %d %d %d %d %d %d %d\", "
			      "arg0, arg1, arg2, arg3, arg4, arg5, arg6, arg7, arg8); }");
	cgfx_uprobe = NULL;
	CHECK(rc == 0, "usdt args: compile");
	if (rc) {
		diags_print(&F.d, stdout);
		return;
	}
	static uint64_t regs[NREGS];
	regs[RDI] = 0xffffffff00000000ull | (uint32_t)-5;   /* -5 in edi, junk above */
	regs[RBP] = (uint64_t)(uintptr_t)(mem + 16);
	regs[R12] = (uint64_t)(uintptr_t)arr;
	regs[R13] = 3;
	regs[RAX] = 0x1234abcd;                            /* ah = 0xab */
	regs[RIP] = site + bias;                           /* the site, where it runs */
	emu_init(&E, &F.prog);
	E.tp_record = (const uint8_t *)regs;
	CHECK(emu_run(&E, 0) >= 0 && E.nrecords == 1, "usdt args: run");
	int64_t want[N] = { -5, (int64_t)v8, -123456789012LL, 13, -2, 0xab, -2,
			    (int64_t)hi, (int64_t)(sym + bias) };
	const struct type *t = F.prog.nevents ? F.prog.events[0].args : NULL;
	for (int i = 0; i < N && t && E.nrecords == 1; i++) {
		char name[96];
		snprintf(name, sizeof(name), "usdt args: %s", specs[i]);
		int64_t got = (int64_t)rec_u64(&E, 0, 8 + t->offsets[i]);
		CHECK(got == want[i], name);
		if (got != want[i])
			printf("#   got %lld want %lld\n", (long long)got, (long long)want[i]);
	}
	emu_free(&E);
	cgfx_free(&F);
	memset(&E, 0, sizeof(E));

	/* the same with the bias known from -p: ip is not read */
	u.bias_known = true;
	u.bias = bias;
	cgfx_uprobe = &u;
	rc = cgfx_compile(&F, "usdt:/x:p:n { printf(\"%d\", arg2); }");
	cgfx_uprobe = NULL;
	regs[RIP] = 0;
	emu_init(&E, &F.prog);
	E.tp_record = (const uint8_t *)regs;
	CHECK(rc == 0 && emu_run(&E, 0) >= 0 && E.nrecords == 1 &&
	      (int64_t)rec_u64(&E, 0, 8) == -123456789012LL,
	      "usdt args: a rip-relative global with the bias from -p");
	emu_free(&E);
	cgfx_free(&F);
	memset(&E, 0, sizeof(E));

	rc = cgfx_compile(&F, "BEGIN { printf(\"%d\", 1); }");
	cgfx_free(&F);
	u.bias_known = false;
	cgfx_uprobe = &u;
	rc = cgfx_compile(&F, "usdt:/x:p:n { printf(\"%d\", arg9); }");
	cgfx_uprobe = NULL;
	CHECK(rc != 0 && F.d.list.n && strstr(F.d.list.v[0].msg, "arg9 does not exist") &&
	      strstr(F.d.list.v[0].msg, "has 9 arguments"),
	      "usdt args: past the last one, an error naming the count");
	cgfx_free(&F);
}

static void test_uaddr(void)
{
	struct elf_file *ef;
	uint64_t vaddr = 0;
	if (elf_open("/proc/self/exe", &ef) == 0) {
		elf_symbol_addr(ef, "uprobes_test_global", &vaddr);
		elf_close(ef);
	}
	CHECK(vaddr != 0, "uaddr: the test binary has the symbol");
	const uint64_t site = 0x1100, bias = 0x555500000000ull;
	struct uprobe_info u = { .path = "/proc/self/exe", .vaddr = site,
				 .is_dyn = true };
	cgfx_uprobe = &u;
	int rc = cgfx_compile(&F, "uprobe:/x:f { printf(\"%p\", uaddr(\"uprobes_test_global\")); }");
	cgfx_uprobe = NULL;
	CHECK(rc == 0, "uaddr: compiles in a uprobe");
	static uint64_t regs[NREGS];
	regs[RIP] = site + bias;
	if (rc == 0) {
		emu_init(&E, &F.prog);
		E.tp_record = (const uint8_t *)regs;
		CHECK(emu_run(&E, 0) >= 0 && E.nrecords == 1 &&
		      rec_u64(&E, 0, 8) == vaddr + bias,
		      "uaddr: link-time address plus the bias from ip");
		emu_free(&E);
		memset(&E, 0, sizeof(E));
	}
	cgfx_free(&F);

	u.retprobe = true;
	cgfx_uprobe = &u;
	rc = cgfx_compile(&F, "uretprobe:/x:f { printf(\"%p\", uaddr(\"uprobes_test_global\")); }");
	cgfx_uprobe = NULL;
	CHECK(rc != 0 && F.d.list.n && strstr(F.d.list.v[0].msg, "-p"),
	      "uaddr: in a uretprobe of a PIE without -p, an error");
	cgfx_free(&F);

	u.retprobe = false;
	cgfx_uprobe = &u;
	rc = cgfx_compile(&F, "uprobe:/x:f { printf(\"%p\", uaddr(\"no_such_sym\")); }");
	cgfx_uprobe = NULL;
	CHECK(rc != 0 && F.d.list.n && !strcmp(F.d.list.v[0].tag, "NO_SYMBOL"),
	      "uaddr: no such symbol, tagged NO_SYMBOL");
	cgfx_free(&F);
	rc = cgfx_compile(&F, "BEGIN { printf(\"%p\", uaddr(\"x\")); }");
	CHECK(rc != 0, "uaddr: not in BEGIN");
	cgfx_free(&F);
}

int main(void)
{
	arena_init(&A);
	uprobes_test_fn(1, 2);
	uprobes_test_other(3);
	test_split();
	test_uprobe_expand();
	test_usdt_expand();
	test_attach_req();
	test_env_tags();
	test_usdt_args();
	test_uaddr();
	arena_free(&A);
	return UNIT_DONE();
}
