/* test_stacks_gc.c - bounded on long runs: what output remembers about
 * user stacks and processes is let go once nothing refers to it (a
 * process that exited once its last stack is printed and cleared, a
 * stack no map holds), files are closed with the last process mapping
 * them, and at most USYM_DWFL_MAX processes keep a built Dwfl. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "elf/symbolize.h"
#include "elf/usym_internal.h"
#include "fake_maps.h"
#include "output/output_int.h"
#include "unit.h"

#define S(n) (USTACK_ID_SAMPLE | (n))

static int count_fds(void)
{
	int n = 0;
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	while (d && (e = readdir(d)))
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

/* A child that waits (a copy of this process: same mappings) until it
 * is killed. */
static pid_t idle_child(void)
{
	pid_t p = fork();
	if (p == 0) {
		for (;;)
			pause();
	}
	return p;
}

static void end_child(pid_t p)
{
	kill(p, SIGKILL);
	waitpid(p, NULL, 0);
}

static const struct type *t_ustack(struct fake *f)
{
	struct type *t = arena_new(&f->arena, struct type);
	t->kind = TYPE_USTACK;
	t->size = 16;
	t->stack_limit = 127;
	return t;
}

/* An EV_USTACK sample of PID in user mode at this program's main(): it
 * remembers the process (its mappings and files). */
static int send_sample(struct output *o, uint64_t ev, uint64_t id, int pid)
{
	struct sonde_ustack_record r = {
		.event_id = ev, .id = id,
		.pid_tgid = ((uint64_t)pid << 32) | (uint32_t)pid,
		.limit = 127, .stack_len = 0,
	};
	extern int main(void);
	r.regs[USTACK_REG_IP] = (uint64_t)(uintptr_t)&main;
	r.regs[USTACK_REG_CS] = 0x33;
	return output_event(o, &r, sizeof(r));
}

static struct kb ukey(uint64_t id, uint64_t pid)
{
	struct kb k = { .n = 0 };
	kb_int(&k, (int64_t)id);
	kb_int(&k, (int64_t)pid);
	return k;
}

static void t_forget_exited(void)
{
	struct fake fk, *f = &fk;
	fake_init(f);
	f->prog.ustack_copy = 8192;
	uint64_t ev = ev_simple(f, EV_USTACK, NULL, NULL, -1);
	struct fmap *m = fake_map(f, "@", t_ustack(f),
				  t_agg(f, TYPE_COUNT, false));
	char *text = NULL;
	size_t text_len = 0;
	FILE *mem = open_memstream(&text, &text_len);
	struct output_opts oo = { .format = "text", .out = mem };
	struct output *o = output_new(&f->prog, &oo, &f->reader);
	output_stacks_init(o);
	stacks_set_grace(o->stacks, 0);
	int fds0 = count_fds();

	pid_t a = idle_child(), b = idle_child();
	CHECK(send_sample(o, ev, S(1), a) == 0 &&
	      send_sample(o, ev, S(2), b) == 0, "gc: samples of two processes");
	op_count(f, m, ukey(S(1), (uint64_t)a));
	op_count(f, m, ukey(S(2), (uint64_t)b));
	output_compact(o);
	output_compact(o);          /* now keyed by canonical stacks */
	struct usyms *u = stacks_usyms(o->stacks);
	CHECK(stacks_nprocs(o->stacks) == 2 && usyms_nprocs(u) == 2 &&
	      stacks_ncanon(o->stacks) == 2 && usyms_ndwfl(u) == 2,
	      "gc: both remembered, their files read to unwind");
	CHECK(count_fds() > fds0, "gc: their files are open");

	/* a has exited, but the map still holds its stack: kept */
	end_child(a);
	output_sweep(o, true);
	CHECK(stacks_nprocs(o->stacks) == 2 && stacks_ncanon(o->stacks) == 2,
	      "gc: an exited process is kept while a map holds its stack");
	CHECK(usyms_ndwfl(u) == 1,
	      "gc: but what was read of its files to unwind is dropped");
	CHECK(usyms_nfrozen(u) == 1 && usyms_proc(u, a)->nmaps == 0 &&
	      !usyms_proc(u, a)->maps_text,
	      "gc: frozen: named for its stack, its mappings let go");
	output_print_maps(o);
	fflush(mem);
	size_t mains = 0;
	for (const char *t = text; (t = strstr(t, "main+")); t++)
		mains++;
	CHECK(mains == 2, "gc: and its stack still prints, symbolized");

	/* clear(@): nothing refers to a any more once its samples are a
	 * generation old (compaction prunes them); b still runs */
	fake_clear(f, m->id);
	output_compact(o);
	output_compact(o);
	output_sweep(o, true);
	CHECK(stacks_ncanon(o->stacks) == 0,
	      "gc: stacks no map holds are let go");
	CHECK(stacks_nprocs(o->stacks) == 1 && usyms_nprocs(u) == 1,
	      "gc: the exited process is forgotten, the running one kept");
	end_child(b);
	output_compact(o);
	output_sweep(o, true);
	CHECK(stacks_nprocs(o->stacks) == 0 && usyms_nprocs(u) == 0,
	      "gc: forgotten once it has exited too");
	/* all but the one copy of the vDSO every process shares */
	CHECK(count_fds() <= fds0 + 1, "gc: every file it opened is closed");

	/* slots are reused, and a reused slot prints its own stack */
	pid_t c = idle_child();
	CHECK(send_sample(o, ev, S(3), c) == 0, "gc: a new sample after");
	op_count(f, m, ukey(S(3), (uint64_t)c));
	output_compact(o);
	output_compact(o);
	CHECK(stacks_ncanon(o->stacks) == 1 && m->n == 1,
	      "gc: a new stack takes a freed slot");
	output_sweep(o, true);
	CHECK(stacks_ncanon(o->stacks) == 1 && stacks_nprocs(o->stacks) == 1,
	      "gc: what a map holds survives a sweep");
	end_child(c);
	output_free(o);
	fclose(mem);
	free(text);
	fake_fini(f);
}

/* A full map: compaction moves each sample entry into its canonical
 * entry all the same (the sample's slot makes room for it), so rounds
 * keep succeeding and the samples are pruned. A failed round used to
 * stop both for the rest of the run, and the samples, their stacks and
 * their processes grew with every sample. */
static void t_compact_full(void)
{
	struct fake fk, *f = &fk;
	fake_init(f);
	f->prog.ustack_copy = 8192;
	uint64_t ev = ev_simple(f, EV_USTACK, NULL, NULL, -1);
	struct fmap *m = fake_map(f, "@", t_ustack(f),
				  t_agg(f, TYPE_COUNT, false));
	struct output_opts oo = { .format = "text", .out = stderr };
	struct output *o = output_new(&f->prog, &oo, &f->reader);
	output_stacks_init(o);
	stacks_set_grace(o->stacks, 0);
	pid_t a = idle_child(), b = idle_child();
	CHECK(send_sample(o, ev, S(1), a) == 0 &&
	      send_sample(o, ev, S(2), b) == 0, "full: samples of two processes");
	op_count(f, m, ukey(S(1), (uint64_t)a));
	op_count(f, m, ukey(S(2), (uint64_t)b));
	m->limit = 2;                   /* full */
	int r = 0;
	for (int i = 0; i < 3; i++)
		r |= output_compact(o);
	uint64_t canon;
	bool all_canon = m->n == 2;
	for (size_t i = 0; i < m->n; i++) {
		uint64_t id;
		memcpy(&id, m->keys + i * m->ksize, 8);
		all_canon = all_canon && (id & USTACK_ID_CANON);
	}
	CHECK(r == 0 && all_canon,
	      "full: a full map's sample entries are folded all the same");
	CHECK(stacks_canon_of(o->stacks, S(1), &canon, NULL) == -ENOENT &&
	      stacks_canon_of(o->stacks, S(2), &canon, NULL) == -ENOENT,
	      "full: and their samples pruned");
	CHECK(o->compact_lost == 0, "full: nothing lost to the full map");
	end_child(a);
	end_child(b);
	output_free(o);
	fake_fini(f);
}

/* The maps line of this process's mapping holding ADDR, its file
 * replaced by PATH (device and inode as PATH's). */
static char *maps_line_as(uint64_t addr, const char *path)
{
	FILE *m = fopen("/proc/self/maps", "r");
	char line[4096], *out = NULL;
	struct stat st;
	while (m && fgets(line, sizeof(line), m) && stat(path, &st) == 0) {
		unsigned long long lo, hi, off;
		char perms[8];
		if (sscanf(line, "%llx-%llx %7s %llx", &lo, &hi, perms, &off) != 4 ||
		    addr < lo || addr >= hi)
			continue;
		if (asprintf(&out, "%llx-%llx %s %llx %02x:%02x %llu    %s\n",
			     lo, hi, perms, off, major(st.st_dev),
			     minor(st.st_dev), (unsigned long long)st.st_ino,
			     path) < 0)
			out = NULL;
		break;
	}
	if (m)
		fclose(m);
	return out;
}

/* Names are kept per file, not per process: every process that maps a
 * file (live or frozen, or a fresh copy of it with the same build ID)
 * shares one table, released with the last of them. */
static void t_shared_names(void)
{
	extern int main(void);
	uint64_t addr = (uint64_t)(uintptr_t)&main + 3;
	struct usyms *u = usyms_new();
	struct usyms_stats st0, st1, st2;
	pid_t a = idle_child(), b = idle_child();
	struct sym sa, sb, sc;
	CHECK(usyms_lookup(u, a, addr, &sa) == 0 && usyms_ndwfl(u) == 1,
	      "names: the first process reads its file");
	usyms_stats(u, &st0);
	CHECK(usyms_lookup(u, b, addr, &sb) == 0 && usyms_ndwfl(u) == 1 &&
	      sb.name == sa.name && sb.offset == 3 && sb.start == addr - 3 &&
	      sb.module && strcmp(sb.module, sa.module) == 0,
	      "names: another process mapping the file is answered from its "
	      "table, reading nothing");
	usyms_stats(u, &st1);
	CHECK(st1.tables == st0.tables && st1.answers == st0.answers &&
	      st1.procs == 2 && st1.bytes > 0,
	      "names: one table per file, however many processes");
	end_child(a);
	end_child(b);
	uint64_t addrs[] = { addr };
	CHECK(usym_process_freeze(u, a, addrs, 1) == 1 &&
	      usym_process_freeze(u, b, addrs, 1) == 1, "names: both frozen");
	usyms_stats(u, &st2);
	struct uproc *pa = usyms_find(u, a);
	CHECK(st2.frozen == 2 && st2.answers == st0.answers && st2.files <= 1 &&
	      pa && pa->nfmaps == 1 && pa->nextra == 0 && !pa->maps,
	      "names: a frozen process keeps its mapping, not its names");
	CHECK(usyms_lookup(u, b, addr, &sb) == 0 && sb.name == sa.name &&
	      sb.offset == 3 && strcmp(sb.module, sa.module) == 0,
	      "names: and is answered from the file's table");

	/* a fresh copy of the binary: another file, the same build ID */
	char copy[] = "/tmp/sonde-test-names.XXXXXX";
	int fd = mkstemp(copy);
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "cp /proc/%d/exe %s", (int)getpid(), copy);
	char *line = fd >= 0 && system(cmd) == 0 ? maps_line_as(addr, copy) :
						    NULL;
	struct umapping um;
	CHECK(line && usym_process_remember_maps(u, 2000001, line,
						 strlen(line)) == 0 &&
	      usyms_lookup(u, 2000001, addr, &sc) == 0 && sc.name == sa.name &&
	      sc.module && strcmp(sc.module, copy) == 0 &&
	      usyms_ndwfl(u) == 0 &&
	      usyms_mapping(u, 2000001, addr, &um) == 0 && um.build_id_len,
	      "names: a copy of the file with its build ID shares its table");
	usyms_stats(u, &st1);
	CHECK(st1.tables == st2.tables, "names: no table of its own");
	free(line);
	if (fd >= 0) {
		close(fd);
		unlink(copy);
	}

	/* ... but not a copy another user owns: a build ID is only what a
	 * file claims, and another user's must not name root's code */
	char other[] = "/tmp/sonde-test-names.XXXXXX";
	fd = mkstemp(other);
	snprintf(cmd, sizeof(cmd), "cp /proc/%d/exe %s", (int)getpid(), other);
	if (fd >= 0 && geteuid() == 0 && system(cmd) == 0 &&
	    fchown(fd, 65534, 65534) == 0) {
		line = maps_line_as(addr, other);
		struct sym sd;
		CHECK(line && usym_process_remember_maps(u, 2000002, line,
							 strlen(line)) == 0 &&
		      usyms_lookup(u, 2000002, addr, &sd) == 0 && sd.name &&
		      strcmp(sd.name, sa.name) == 0,
		      "names: a copy another user owns is read for itself");
		struct usyms_stats st3;
		usyms_stats(u, &st3);
		CHECK(st3.tables == st2.tables + 1,
		      "names: ... into a table of its own");
		free(line);
		usym_process_forget(u, 2000002);
	} else {
		printf("ok - names: a copy another user owns # SKIP needs root\n");
	}
	if (fd >= 0) {
		close(fd);
		unlink(other);
	}
	usym_process_forget(u, 2000001);
	usym_process_forget(u, a);
	CHECK(usyms_lookup(u, b, addr, &sb) == 0 && sb.name == sa.name,
	      "names: the table stays while a frozen process refers to it");
	usym_process_forget(u, b);
	usyms_stats(u, &st1);
	CHECK(st1.procs == 0 && st1.tables == 0 && st1.answers == 0 &&
	      st1.files == 0, "names: released with the last process");
	usyms_free(u);
}

static char *fake_maps_text(size_t n, const char *prefix, uint64_t base);

/* A process frozen answers for the addresses it was frozen with as it
 * did before, and knows nothing else; its files are closed. */
static void t_freeze(void)
{
	extern int main(void);
	uint64_t addr = (uint64_t)(uintptr_t)&main + 4;
	uint64_t other = (uint64_t)(uintptr_t)&t_freeze;
	int fds0 = count_fds();
	struct usyms *u = usyms_new();
	pid_t a = idle_child();
	struct sym s0, s1;
	struct umapping m0, m1;
	CHECK(usyms_lookup(u, a, addr, &s0) == 0 && s0.name &&
	      strcmp(s0.name, "main") == 0 && s0.offset == 4 &&
	      usyms_mapping(u, a, addr, &m0) == 0,
	      "freeze: a running process names main");
	char *name = strdup(s0.name), *path = strdup(m0.path);
	uint8_t bid[USYM_BUILD_ID_MAX];
	size_t bid_len = m0.build_id_len;
	if (bid_len)
		memcpy(bid, m0.build_id, bid_len);
	CHECK(count_fds() > fds0, "freeze: its files are open");
	end_child(a);
	uint64_t addrs[] = { addr, addr, 0x10 };
	CHECK(usym_process_freeze(u, a, addrs, 3) == 1 && usyms_nfrozen(u) == 1,
	      "freeze: an exited process is frozen");
	CHECK(usym_process_freeze(u, a, addrs, 3) == 0,
	      "freeze: again with the same addresses changes nothing");
	CHECK(count_fds() <= fds0 + 1 && usyms_ndwfl(u) == 0,
	      "freeze: its files are closed, its Dwfl dropped");
	CHECK(usyms_lookup(u, a, addr, &s1) == 0 && s1.name &&
	      strcmp(s1.name, name) == 0 && s1.offset == 4 &&
	      s1.start == addr - 4 && s1.module &&
	      strcmp(s1.module, path) == 0,
	      "freeze: its address is named as before");
	CHECK(usyms_module(u, a, addr) &&
	      strcmp(usyms_module(u, a, addr), path) == 0 &&
	      usyms_mapping(u, a, addr, &m1) == 0 && m1.start == m0.start &&
	      m1.end == m0.end && m1.pgoff == m0.pgoff &&
	      strcmp(m1.path, path) == 0 && m1.build_id_len == bid_len &&
	      (!bid_len || memcmp(m1.build_id, bid, bid_len) == 0),
	      "freeze: its mapping and build ID as before");
	CHECK(usyms_lookup(u, a, 0x10, &s1) == -ENOENT && !s1.module &&
	      !usyms_module(u, a, 0x10),
	      "freeze: an address in nothing mapped stays unnamed");
	CHECK(usyms_lookup(u, a, other, &s1) == -ENOENT &&
	      usyms_mapping(u, a, other, &m1) == -ENOENT,
	      "freeze: an address it was not frozen with is unknown");
	char *gone = fake_maps_text(5000, "/gone/lib", 0x100000);
	usym_process_remember_maps(u, 1000001, gone, strlen(gone));
	usym_process_forget(u, 1000001);
	free(gone);
	CHECK(usyms_trim(u) >= 5000 && usyms_lookup(u, a, addr, &s1) == 0 &&
	      strcmp(s1.name, name) == 0 && strcmp(s1.module, path) == 0 &&
	      usyms_mapping(u, a, addr, &m1) == 0 &&
	      strcmp(m1.path, path) == 0,
	      "freeze: its names survive a trim");
	CHECK(usym_process_freeze(u, a, NULL, 0) == 1 &&
	      usyms_lookup(u, a, addr, &s1) == -ENOENT,
	      "freeze: again with fewer addresses keeps only those");
	usym_process_forget(u, a);
	CHECK(usyms_nprocs(u) == 0 && usyms_nfrozen(u) == 0,
	      "freeze: then forgotten");
	free(name);
	free(path);
	usyms_free(u);
}

/* Many processes symbolized in turn: at most USYM_DWFL_MAX keep a Dwfl,
 * and one whose Dwfl was dropped still resolves (rebuilt). Each asks for
 * an address of main no other asked for: an answer the file's table
 * holds already is given without a Dwfl. */
static void t_dwfl_lru(void)
{
	enum { N = USYM_DWFL_MAX + 8 };
	pid_t kids[N];
	struct usyms *u = usyms_new();
	extern int main(void);
	uint64_t addr = (uint64_t)(uintptr_t)&main;
	bool all = true;
	for (int i = 0; i < N; i++) {
		kids[i] = idle_child();
		struct sym s;
		all = all && usyms_lookup(u, kids[i], addr + i, &s) == 0 &&
		      s.name && strcmp(s.name, "main") == 0;
	}
	CHECK(all, "lru: every process resolves main");
	CHECK(usyms_ndwfl(u) == USYM_DWFL_MAX && usyms_nprocs(u) == N,
	      "lru: all remembered, at most USYM_DWFL_MAX Dwfls built");
	struct sym s;
	CHECK(usyms_lookup(u, kids[0], addr + N, &s) == 0 && s.name &&
	      strcmp(s.name, "main") == 0 && usyms_ndwfl(u) == USYM_DWFL_MAX,
	      "lru: the least recently used is rebuilt when needed");
	for (int i = 0; i < N; i++) {
		end_child(kids[i]);
		usym_process_forget(u, kids[i]);
	}
	CHECK(usyms_nprocs(u) == 0 && usyms_ndwfl(u) == 0,
	      "lru: forgetting drops the Dwfls");
	usyms_free(u);
}

/* A maps text of N executable mappings of made-up files named
 * PREFIX.i, one page each from BASE. */
static char *fake_maps_text(size_t n, const char *prefix, uint64_t base)
{
	char *t = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&t, &len);
	for (size_t i = 0; i < n; i++)
		fprintf(m, "%llx-%llx r-xp 00000000 00:00 0    %s.%zu\n",
			(unsigned long long)(base + i * 4096),
			(unsigned long long)(base + (i + 1) * 4096), prefix, i);
	fclose(m);
	return t;
}

/* Interned names of forgotten processes go once the table has doubled. */
static void t_trim_names(void)
{
	struct usyms *u = usyms_new();
	char *a = fake_maps_text(5000, "/gone/lib", 0x100000);
	char *b = fake_maps_text(10, "/kept/lib", 0x900000);
	usym_process_remember_maps(u, 1000001, a, strlen(a));
	usym_process_remember_maps(u, 1000002, b, strlen(b));
	usym_process_forget(u, 1000001);
	size_t freed = usyms_trim(u);
	CHECK(freed == 5000, "trim: a forgotten process's names are freed");
	CHECK(usyms_trim(u) == 0, "trim: then not again until it doubles");
	const char *m = usyms_module(u, 1000002, 0x900000 + 3 * 4096 + 5);
	CHECK(m && strcmp(m, "/kept/lib.3") == 0,
	      "trim: a remembered process's names stay");
	free(a);
	free(b);
	usyms_free(u);
}

int main(void)
{
	t_forget_exited();
	t_freeze();
	t_compact_full();
	t_shared_names();
	t_dwfl_lru();
	t_trim_names();
	return UNIT_DONE();
}
