/* attach.c - function probes in a running process: the steps of
 * attach.h over tracee (ptrace), inject (dlopen), livepatch (patches)
 * and the ELF symbols of what the process maps.
 *
 * Where a site may be patched comes from the symbol tables: the
 * function's size (its body is scanned for branches back into its first
 * bytes), the next symbol (a patch may not reach into it) and the end of
 * the previous one (the padding in between can take a jump when the
 * entry itself only has room for a short one).
 *
 * Return probes change return addresses on the stack, which a C++
 * unwinder reads; so when there are any, the unwinder's entry points
 * (_Unwind_RaiseException, _Unwind_Resume, _Unwind_Resume_or_Rethrow,
 * _Unwind_ForcedUnwind) and __cxa_begin_catch are patched as well, in
 * whatever object the process maps them from (libgcc_s, libstdc++, or a
 * program linked with them statically), to call the agent's unhook and
 * rehook (src/agent/fprobe.c). A script's probes may be on the same
 * functions (the site does both), but not a return probe on an entry
 * point, which would stop every exception. */
#include "attach.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "../agent/fprobe.h"
#include "../elf/elf.h"
#include "inject.h"
#include "livepatch.h"
#include "tracee.h"

#define MAX_FILES 64
#define PAD_MAX 64
/* how long a process just started may take to initialize its C library */
#define STARTING_MS 2000

struct pfile {
	char *path;              /* as given */
	struct elf_file *ef;
	uint64_t bias;
	int err;                 /* -errno: cannot be opened or is not mapped */
	/* its USDT sites' addresses, sorted (read when first needed) */
	uint64_t *usdt_pcs;
	size_t nusdt;
	bool usdt_read;
};

struct pattach {
	int pid;
	struct tracee *t;        /* NULL while the process runs */
	struct inject_libc lc;   /* found when first needed */
	bool have_lc;
	struct elf_file *agent_ef;
	uint64_t agent_bias;
	struct lp_agent agent;
	struct livepatch *lp;
	struct pfile files[MAX_FILES];
	size_t nfiles;
	bool unwind_hooked;
	bool committed;
	uint32_t site_flags;
	/* pattach_late_begin: the mappings, and /proc/PID/mem to read */
	struct elf_map *lmaps;
	size_t nlmaps;
	int lmem;
};

int pattach_pid(const struct pattach *pa) { return pa->pid; }
void pattach_set_flags(struct pattach *pa, uint32_t f) { pa->site_flags = f; }

static int libc_of(struct pattach *pa, char *why, size_t whylen)
{
	if (pa->have_lc)
		return 0;
	int r = inject_find_libc(pa->pid, &pa->lc, why, whylen);
	pa->have_lc = r == 0;
	return r;
}
size_t pattach_nsites(const struct pattach *pa) { return lp_nsites(pa->lp); }

/* The agent as the process maps it: its path there and load bias.
 * -ENOENT if it is not loaded. */
static int agent_mapping(int pid, const char *agent_path, struct elf_file *ef,
			 uint64_t *bias)
{
	struct stat st;
	char real[PATH_MAX];
	if (stat(agent_path, &st) < 0 || !realpath(agent_path, real))
		return -errno;
	struct elf_map *maps;
	size_t n;
	int r = elf_proc_maps(pid, &maps, &n);
	if (r < 0)
		return r;
	r = -ENOENT;
	/* the same file: by device and inode, or (an overlay file system
	 * shows another device in maps than stat does) by its path */
	for (size_t i = 0; i < n && r < 0; i++)
		if (((maps[i].inode == st.st_ino &&
		      maps[i].dev_major == major(st.st_dev) &&
		      maps[i].dev_minor == minor(st.st_dev)) ||
		     strcmp(maps[i].path, real) == 0) &&
		    elf_map_bias(ef, &maps[i], bias) == 0)
			r = 0;
	elf_maps_free(maps, n);
	return r;
}

/* Does the process map an earlier agent from this path, replaced on disk
 * since (a rebuilt or upgraded sonde)? Its dlopen of the path would
 * return that one. */
static bool stale_agent(int pid, const char *agent_path)
{
	char real[PATH_MAX], gone[PATH_MAX + 16];
	struct elf_map *maps;
	size_t n;
	if (!realpath(agent_path, real) || elf_proc_maps(pid, &maps, &n) < 0)
		return false;
	snprintf(gone, sizeof(gone), "%s (deleted)", real);
	bool found = false;
	for (size_t i = 0; i < n && !found; i++)
		found = strcmp(maps[i].path, gone) == 0;
	elf_maps_free(maps, n);
	return found;
}

/* An exported symbol of the agent, at its run-time address. */
static uint64_t agent_sym(const struct pattach *pa, const char *sym)
{
	uint64_t v;
	return elf_symbol_addr(pa->agent_ef, sym, &v) == 0 ? v + pa->agent_bias : 0;
}

int pattach_open(int pid, const char *agent_path, struct pattach **out,
		 char *why, size_t whylen)
{
	*out = NULL;
	why[0] = 0;
	struct pattach *pa = calloc(1, sizeof(*pa));
	if (!pa)
		return -ENOMEM;
	pa->pid = pid;
	pa->lmem = -1;
	int r = elf_open(agent_path, &pa->agent_ef);
	if (r < 0) {
		snprintf(why, whylen, "the agent library %s: %s", agent_path,
		    strerror(-r));
		goto fail;
	}
	/* a process named right after it started: its C library first */
	r = inject_wait_started(pid, STARTING_MS, &pa->lc, why, whylen);
	if (r < 0 && r != -ENOEXEC)
		goto fail;
	pa->have_lc = r == 0;      /* found once, for the dlopen below */
	if ((r = tracee_attach(pid, &pa->t, why, whylen)) < 0)
		goto fail;
	/* loaded already (LD_PRELOAD, an earlier sonde): nothing to call */
	r = agent_mapping(pid, agent_path, pa->agent_ef, &pa->agent_bias);
	if (r == -ENOENT && stale_agent(pid, agent_path)) {
		snprintf(why, whylen, "process %d has an earlier build of sonde's agent "
		    "loaded from %s, replaced on disk since: a process loads one "
		    "library per path, so it cannot load this one (restart the "
		    "process, or trace it with the kernel engine)", pid, agent_path);
		r = -EEXIST;
		goto fail;
	}
	if (r == -ENOENT) {
		uint64_t handle;
		if ((r = libc_of(pa, why, whylen)) < 0 ||
		    (r = inject_dlopen(pa->t, &pa->lc, agent_path, &handle, why,
				       whylen)) < 0)
			goto fail;
		r = agent_mapping(pid, agent_path, pa->agent_ef, &pa->agent_bias);
	}
	if (r < 0) {
		snprintf(why, whylen, "cannot find the agent library %s in process "
		    "%d: %s", agent_path, pid, strerror(-r));
		goto fail;
	}
	pa->agent.entry = agent_sym(pa, FPROBE_SYM_ENTRY);
	pa->agent.registry = agent_sym(pa, FPROBE_SYM_REGISTRY);
	pa->agent.return_tramp = agent_sym(pa, FPROBE_SYM_RETURN_TRAMP);
	if (!pa->agent.entry || !pa->agent.registry || !pa->agent.return_tramp) {
		r = -ENOENT;
		snprintf(why, whylen, "%s lacks the function-probe entry points (%s, "
		    "%s, %s): not sonde's agent, or another version's", agent_path,
		    FPROBE_SYM_ENTRY, FPROBE_SYM_REGISTRY, FPROBE_SYM_RETURN_TRAMP);
		goto fail;
	}
	if ((r = lp_begin(pa->t, &pa->agent, &pa->lp, why, whylen)) < 0)
		goto fail;
	*out = pa;
	return 0;
fail:
	pattach_free(pa);
	return r;
}

int pattach_cleanup(int pid, const char *agent_path, size_t *restored,
		    char *why, size_t whylen)
{
	*restored = 0;
	why[0] = 0;
	struct elf_file *ef;
	uint64_t bias;
	int r = elf_open(agent_path, &ef);
	if (r < 0) {
		snprintf(why, whylen, "the agent library %s: %s", agent_path,
		    strerror(-r));
		return r;
	}
	if (agent_mapping(pid, agent_path, ef, &bias) < 0) {
		elf_close(ef);
		return 0;        /* never traced by the process engine */
	}
	struct lp_agent agent = { 0 };
	uint64_t v;
	if (elf_symbol_addr(ef, FPROBE_SYM_ENTRY, &v) == 0)
		agent.entry = v + bias;
	if (elf_symbol_addr(ef, FPROBE_SYM_REGISTRY, &v) == 0)
		agent.registry = v + bias;
	if (elf_symbol_addr(ef, FPROBE_SYM_RETURN_TRAMP, &v) == 0)
		agent.return_tramp = v + bias;
	elf_close(ef);
	if (!agent.registry)
		return 0;
	struct tracee *t;
	if ((r = tracee_attach(pid, &t, why, whylen)) < 0)
		return r;
	struct livepatch *lp;
	if ((r = lp_begin(t, &agent, &lp, why, whylen)) == 0) {
		*restored = lp_stale_restored(lp);
		r = lp_restore(lp, t, why, whylen);
		lp_free(lp);
	}
	tracee_detach(t);
	return r;
}

const char *pattach_site_name(const struct pattach *pa, uint64_t addr)
{
	return pa ? lp_site_name(pa->lp, addr) : NULL;
}

uint64_t pattach_agent_sym(struct pattach *pa, const char *sym)
{
	return agent_sym(pa, sym);
}

int pattach_call(struct pattach *pa, const char *sym, const uint64_t *args,
		 int nargs, const void *data, size_t datalen, uint64_t *ret,
		 char *why, size_t whylen)
{
	if (!pa->t) {
		snprintf(why, whylen, "process %d is not held", pa->pid);
		return -EINVAL;
	}
	uint64_t fn = agent_sym(pa, sym);
	if (!fn) {
		snprintf(why, whylen, "the agent in process %d has no %s", pa->pid, sym);
		return -ENOENT;
	}
	char cwhy[256];
	int r = libc_of(pa, why, whylen);
	if (r < 0)
		return r;
	r = inject_call(pa->t, &pa->lc, fn, args, nargs, data, datalen, 5000,
			ret, cwhy, sizeof(cwhy));
	if (r < 0)
		snprintf(why, whylen, "%s in process %d: %s", sym, pa->pid, cwhy);
	return r;
}

int pattach_start(struct pattach *pa, const char *sym, const char *arg,
		  char *why, size_t whylen)
{
	if (!pa->t) {
		snprintf(why, whylen, "process %d is not held", pa->pid);
		return -EINVAL;
	}
	uint64_t fn = agent_sym(pa, sym), at;
	if (!fn) {
		snprintf(why, whylen, "the agent in process %d has no %s", pa->pid, sym);
		return -ENOENT;
	}
	int r = libc_of(pa, why, whylen);
	if (r < 0)
		return r;
	if (!pa->lc.pthread_create) {
		snprintf(why, whylen, "process %d: no pthread_create in %s", pa->pid,
		    pa->lc.path);
		return -ENOENT;
	}
	/* the argument must outlive the call: kept with the trampolines */
	if ((r = lp_put_data(pa->lp, pa->t, fn, arg, strlen(arg) + 1, &at, why,
			     whylen)) < 0)
		return r;
	uint64_t thread_id = 0, ret = 0;
	uint64_t args[4] = { TRACEE_ARG_DATA, 0, fn, at };
	char cwhy[256];
	r = inject_call(pa->t, &pa->lc, pa->lc.pthread_create, args, 4, &thread_id,
			sizeof(thread_id), 5000, &ret, cwhy, sizeof(cwhy));
	if (r < 0 || ret) {
		snprintf(why, whylen, "pthread_create in process %d: %s", pa->pid,
		    r < 0 ? cwhy : strerror((int)ret));
		return r < 0 ? r : -(int)ret;
	}
	return 0;
}

/* "/proc/PID/root/usr/lib/x.so" names "/usr/lib/x.so" in the process. */
static const char *in_process(const char *path, int pid)
{
	char pre[64];
	int n = snprintf(pre, sizeof(pre), "/proc/%d/root/", pid);
	return strncmp(path, pre, (size_t)n) == 0 ? path + n - 1 : path;
}

/* The load bias of a file in these mappings of process pid. */
static int map_bias_in(const struct elf_map *maps, size_t n, int pid,
		       const struct elf_file *ef, const char *path, uint64_t *bias)
{
	struct stat st;
	bool have_st = stat(path, &st) == 0;
	const char *want = in_process(path, pid);
	for (size_t i = 0; i < n; i++) {
		bool same = strcmp(maps[i].path, want) == 0 ||
			    (have_st && maps[i].inode == st.st_ino &&
			     maps[i].path[0] == '/');
		if (same && elf_map_bias(ef, &maps[i], bias) == 0)
			return 0;
	}
	return -ENOENT;
}

/* The load bias of a file as the process maps it. */
static int map_bias(int pid, const struct elf_file *ef, const char *path,
		    uint64_t *bias)
{
	struct elf_map *maps;
	size_t n;
	int r = elf_proc_maps(pid, &maps, &n);
	if (r < 0)
		return r;
	r = map_bias_in(maps, n, pid, ef, path, bias);
	elf_maps_free(maps, n);
	return r;
}

/* Is path the file the process runs? */
static bool is_exe(int pid, const char *path)
{
	char exe[64];
	struct stat a, b;
	snprintf(exe, sizeof(exe), "/proc/%d/exe", pid);
	return stat(path, &a) == 0 && stat(exe, &b) == 0 && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

/* An opened file (its own symbols only, or with its debug file's). */
static struct pfile *file_get_as(struct pattach *pa, const char *path,
				 bool own_only)
{
	for (size_t i = 0; i < pa->nfiles; i++)
		if (strcmp(pa->files[i].path, path) == 0)
			return &pa->files[i];
	if (pa->nfiles == MAX_FILES)
		return NULL;
	struct pfile *f = &pa->files[pa->nfiles];
	if (!(f->path = strdup(path)))
		return NULL;
	pa->nfiles++;
	f->err = own_only ? elf_open_own(path, &f->ef) : elf_open(path, &f->ef);
	if (f->err == 0) {
		f->err = map_bias(pa->pid, f->ef, path, &f->bias);
		if (f->err < 0 && !elf_is_dyn(f->ef) && is_exe(pa->pid, path)) {
			f->bias = 0;   /* the program, at its link-time address */
			f->err = 0;
		}
		if (f->err == -ENOENT)
			f->err = -ENXIO;   /* not (yet) loaded by the process */
	}
	return f;
}

static struct pfile *file_get(struct pattach *pa, const char *path)
{
	return file_get_as(pa, path, false);
}

/* Fill an lp_site for vaddr of f: its bounds from the symbols. */
static void site_bounds(const struct pfile *f, uint64_t vaddr, struct lp_site *s)
{
	const struct elf_sym *sym = elf_sym_at(f->ef, vaddr);
	s->mid_function = !sym || sym->addr != vaddr;
	s->lead = sym && sym->addr < vaddr ? vaddr - sym->addr : 0;
	s->func_len = sym && sym->size && sym->addr + sym->size > vaddr ?
		      sym->addr + sym->size - vaddr : 0;
	uint64_t prev_end, next_start;
	elf_sym_neighbours(f->ef, vaddr, &prev_end, &next_start);
	s->room = next_start > vaddr ? next_start - vaddr : 0;
	s->pad_before = !s->mid_function && prev_end && prev_end <= vaddr &&
			vaddr - prev_end <= PAD_MAX ? vaddr - prev_end : 0;
}

/* The C++ unwinder's entry points, which walk the stack from their own
 * return address up (so they take hooked return addresses back first),
 * and the function a handler calls once it has caught an exception
 * (hooks them again). */
static const struct { const char *sym; uint32_t kind; } unwinder_hooks[] = {
	{ "_Unwind_RaiseException", FPROBE_UNWIND },
	{ "_Unwind_Resume", FPROBE_UNWIND },
	{ "_Unwind_Resume_or_Rethrow", FPROBE_UNWIND },
	{ "_Unwind_ForcedUnwind", FPROBE_UNWIND },
	{ "__cxa_begin_catch", FPROBE_CATCH },
};
#define NUNWINDER_HOOKS (sizeof(unwinder_hooks) / sizeof(unwinder_hooks[0]))

/* The function f defines under this name (not a PLT stub), or NULL. */
static const struct elf_sym *defined(const struct pfile *f, const char *name)
{
	const struct elf_sym *s = elf_find_sym(f->ef, name);
	return s && !(s->flags & ELF_SYM_PLT) ? s : NULL;
}

static bool defined_at(const struct pfile *f, const char *name, uint64_t vaddr)
{
	const struct elf_sym *s = defined(f, name);
	return s && s->addr == vaddr;
}

/* Is vaddr one of the unwinder's entry points in f? */
static const char *unwinder_entry(const struct pfile *f, uint64_t vaddr)
{
	for (size_t k = 0; k < NUNWINDER_HOOKS; k++)
		if (unwinder_hooks[k].kind == FPROBE_UNWIND &&
		    defined_at(f, unwinder_hooks[k].sym, vaddr))
			return unwinder_hooks[k].sym;
	return NULL;
}

/* Functions that return twice: the first return takes the hooked
 * frame's entry, and the second comes back to the trampoline with none
 * (a vfork child returns on its parent's stack; setjmp returns again
 * through longjmp, to the address it saved, the trampoline's). */
static const char *const returns_twice[] = {
	"vfork", "__vfork", "setjmp", "_setjmp", "__setjmp", "sigsetjmp",
	"__sigsetjmp", "getcontext", "__getcontext", "savectx",
};

static const char *returning_twice(const struct pfile *f, uint64_t vaddr)
{
	for (size_t k = 0; k < sizeof(returns_twice) / sizeof(returns_twice[0]); k++)
		if (defined_at(f, returns_twice[k], vaddr))
			return returns_twice[k];
	return NULL;
}

static int add_site(struct pattach *pa, struct pfile *f, uint64_t vaddr,
		    const char *name, uint32_t kind, bool ret, uint32_t probe,
		    char *why, size_t whylen)
{
	const char *uw = ret && kind == FPROBE_PROBES ? unwinder_entry(f, vaddr) : NULL;
	if (uw) {
		snprintf(why, whylen, "a return probe on %s, where C++ unwinding "
		    "starts, would stop every exception (the unwinder reads its "
		    "return address; it returns only when unwinding fails)", uw);
		return -EINVAL;
	}
	const char *twice = ret && kind == FPROBE_PROBES ? returning_twice(f, vaddr)
							 : NULL;
	if (twice) {
		snprintf(why, whylen, "%s returns twice (%s), which a return probe "
		    "cannot follow: its second return would find no hooked frame",
		    twice, strstr(twice, "fork") ? "in the child, on the "
		    "parent's stack, then in the parent" : "again through "
		    "longjmp or setcontext");
		return -EINVAL;
	}
	struct lp_site s = { .addr = vaddr + f->bias, .kind = kind,
			     .flags = kind == FPROBE_PROBES ? pa->site_flags : 0 };
	site_bounds(f, vaddr, &s);
	if (ret && s.mid_function) {
		snprintf(why, whylen, "%s: a return probe needs a function's entry", name);
		return -EINVAL;
	}
	/* messages name the function as the symbols do: f, f+0x10 */
	char label[256];
	const struct elf_sym *sym = elf_sym_at(f->ef, vaddr);
	const char *fn = sym ? (sym->demangled ? sym->demangled : sym->name) : NULL;
	if (!sym)
		snprintf(label, sizeof(label), "0x%" PRIx64, vaddr);
	else if (sym->addr == vaddr)
		snprintf(label, sizeof(label), "%s", fn);
	else
		snprintf(label, sizeof(label), "%s+0x%" PRIx64, fn, vaddr - sym->addr);
	s.name = label;
	if (kind == FPROBE_PROBES) {
		s.nentry = ret ? 0 : 1;
		s.nret = ret ? 1 : 0;
		s.probes = &probe;
	}
	return lp_add(pa->lp, pa->t, &s, why, whylen);
}

static bool unwinder_object(const char *path)
{
	const char *b = strrchr(path, '/');
	b = b ? b + 1 : path;
	return strncmp(b, "libgcc_s", 8) == 0 || strncmp(b, "libstdc++", 9) == 0 ||
	       strncmp(b, "libc++", 6) == 0 || strncmp(b, "libunwind", 9) == 0;
}

/* Patch the unwinder's entry points and __cxa_begin_catch wherever the
 * process has them (see the top of this file). */
static int hook_unwinders(struct pattach *pa, char *why, size_t whylen)
{
	char **objs;
	size_t n;
	int r = elf_proc_objects(pa->pid, &objs, &n);
	if (r < 0) {
		snprintf(why, whylen, "cannot read the mappings of process %d: %s",
		    pa->pid, strerror(-r));
		return r;
	}
	char exe[64];
	snprintf(exe, sizeof(exe), "/proc/%d/exe", pa->pid);
	for (size_t i = 0; i <= n && r == 0; i++) {
		char path[4096];
		if (i == n)
			snprintf(path, sizeof(path), "%s", exe);
		else if (!unwinder_object(objs[i]) ||
			 elf_proc_path(pa->pid, objs[i], path, sizeof(path)) < 0)
			continue;
		/* exported functions: the file's own symbols are enough */
		struct pfile *f = file_get_as(pa, path, i < n);
		if (!f || f->err < 0)
			continue;
		for (size_t k = 0; k < NUNWINDER_HOOKS && r == 0; k++) {
			const struct elf_sym *s = defined(f, unwinder_hooks[k].sym);
			if (s)
				r = add_site(pa, f, s->addr, unwinder_hooks[k].sym,
					     unwinder_hooks[k].kind, false, 0, why,
					     whylen);
		}
	}
	elf_strings_free(objs, n);
	return r;
}

int pattach_add(struct pattach *pa, const char *path, uint64_t vaddr,
		const char *name, bool ret, uint32_t probe, char *why,
		size_t whylen)
{
	if (!pa->t) {
		snprintf(why, whylen, "process %d is not held", pa->pid);
		return -EINVAL;
	}
	struct pfile *f = file_get(pa, path);
	if (!f) {
		snprintf(why, whylen, "%s: too many files", name);
		return -ENOMEM;
	}
	if (f->err < 0) {
		snprintf(why, whylen, "%s %s", path,
		    f->err == -ENXIO ? "is not loaded in the process yet: its "
		    "function is patched when the process loads it (dlopen)" :
		    strerror(-f->err));
		return f->err;
	}
	int r = add_site(pa, f, vaddr, name, FPROBE_PROBES, ret, probe, why, whylen);
	if (r == 0 && ret && !pa->unwind_hooked) {
		pa->unwind_hooked = true;
		char uwhy[512];
		if (hook_unwinders(pa, uwhy, sizeof(uwhy)) < 0)
			snprintf(why, whylen, "warning: %s (C++ exceptions through "
			    "functions with return probes may fail)", uwhy);
	}
	return r;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The first USDT site of f after vaddr (link-time), 0 if none. */
static uint64_t next_usdt_site(struct pfile *f, uint64_t vaddr)
{
	if (!f->usdt_read) {
		f->usdt_read = true;
		struct usdt_probe *p;
		size_t n;
		if (usdt_probes(f->ef, &p, &n) == 0) {
			f->usdt_pcs = malloc((n ? n : 1) * sizeof(*f->usdt_pcs));
			for (size_t i = 0; f->usdt_pcs && i < n; i++)
				f->usdt_pcs[f->nusdt++] = p[i].pc;
			usdt_probes_free(p, n);
			if (f->usdt_pcs)
				qsort(f->usdt_pcs, f->nusdt, sizeof(*f->usdt_pcs),
				      cmp_u64);
		}
	}
	for (size_t i = 0; i < f->nusdt; i++)
		if (f->usdt_pcs[i] > vaddr)
			return f->usdt_pcs[i];
	return 0;
}

int pattach_add_usdt(struct pattach *pa, const char *path, uint64_t vaddr,
		     const char *name, uint32_t probe, char *why, size_t whylen)
{
	if (!pa->t) {
		snprintf(why, whylen, "process %d is not held", pa->pid);
		return -EINVAL;
	}
	struct pfile *f = file_get(pa, path);
	if (!f) {
		snprintf(why, whylen, "%s: too many files", name);
		return -ENOMEM;
	}
	if (f->err < 0) {
		snprintf(why, whylen, "%s %s", path, f->err == -ENXIO ?
		    "is not loaded in the process yet" : strerror(-f->err));
		return f->err;
	}
	struct lp_site s = { .addr = vaddr + f->bias, .kind = FPROBE_PROBES,
			     .flags = pa->site_flags, .mid_function = true,
			     .usdt_nop = true, .nentry = 1, .probes = &probe };
	uint64_t start, end, prev_end, next_start;
	if (elf_code_range(f->ef, vaddr, &start, &end) == 0 && start <= vaddr) {
		s.lead = vaddr - start;
		s.func_len = end - vaddr;
	}
	elf_sym_neighbours(f->ef, vaddr, &prev_end, &next_start);
	s.room = next_start > vaddr ? next_start - vaddr : 0;
	if (s.func_len && (!s.room || s.room > s.func_len))
		s.room = s.func_len;
	char label[256];
	const struct elf_sym *sym = elf_sym_at(f->ef, vaddr);
	if (sym && sym->addr < vaddr)
		snprintf(label, sizeof(label), "%s+0x%" PRIx64,
			 sym->demangled ? sym->demangled : sym->name,
			 vaddr - sym->addr);
	else
		snprintf(label, sizeof(label), "its site at 0x%" PRIx64, vaddr);
	s.name = label;
	uint64_t next = next_usdt_site(f, vaddr);
	s.next_site = next ? next + f->bias : 0;
	return lp_add(pa->lp, pa->t, &s, why, whylen);
}

int pattach_late_begin(struct pattach *pa)
{
	pattach_late_end(pa);
	char mem[64];
	snprintf(mem, sizeof(mem), "/proc/%d/mem", pa->pid);
	int r = elf_proc_maps(pa->pid, &pa->lmaps, &pa->nlmaps);
	if (r < 0)
		return r;
	pa->lmem = open(mem, O_RDONLY | O_CLOEXEC);
	return 0;
}

void pattach_late_end(struct pattach *pa)
{
	if (pa->lmaps)
		elf_maps_free(pa->lmaps, pa->nlmaps);
	if (pa->lmem >= 0)
		close(pa->lmem);
	pa->lmaps = NULL;
	pa->nlmaps = 0;
	pa->lmem = -1;
}

bool pattach_late_wanted(struct pattach *pa, const char *path, uint64_t vaddr,
			 uint32_t probe)
{
	struct pfile *f = file_get(pa, path);
	uint64_t bias;
	if (!pa->lmaps || !f || !f->ef ||
	    map_bias_in(pa->lmaps, pa->nlmaps, pa->pid, f->ef, path, &bias) < 0)
		return false;
	return !lp_has_probe(pa->lp, vaddr + bias, probe, pa->lmem);
}

int pattach_hold(struct pattach *pa, char *why, size_t whylen)
{
	why[0] = 0;
	if (pa->t || !pa->committed) {
		snprintf(why, whylen, "process %d is held already, or was never "
		    "patched", pa->pid);
		return -EINVAL;
	}
	int r = tracee_attach(pa->pid, &pa->t, why, whylen);
	if (r < 0)
		return r;
	uint64_t bias;
	if (agent_mapping(pa->pid, elf_path(pa->agent_ef), pa->agent_ef,
			  &bias) < 0 || bias != pa->agent_bias) {
		snprintf(why, whylen, "process %d runs another program now", pa->pid);
		r = -ESRCH;
		goto fail;
	}
	if ((r = lp_refresh(pa->lp, pa->t)) < 0) {
		snprintf(why, whylen, "cannot read the mappings of process %d: %s",
		    pa->pid, strerror(-r));
		goto fail;
	}
	/* every file's place again: loaded since, or unloaded and loaded
	 * again elsewhere */
	for (size_t i = 0; i < pa->nfiles; i++) {
		struct pfile *f = &pa->files[i];
		if (!f->ef || (f->err < 0 && f->err != -ENXIO))
			continue;
		if (!elf_is_dyn(f->ef) && is_exe(pa->pid, f->path))
			continue;   /* the program, where it always is */
		f->err = map_bias(pa->pid, f->ef, f->path, &f->bias);
		if (f->err == -ENOENT)
			f->err = -ENXIO;
	}
	return 0;
fail:
	tracee_detach(pa->t);
	pa->t = NULL;
	return r;
}

int pattach_commit_more(struct pattach *pa, char *why, size_t whylen)
{
	if (!pa->t)
		return -EINVAL;
	int r = lp_commit(pa->lp, pa->t, why, whylen);
	if (r < 0)
		lp_drop_unwritten(pa->lp, pa->t);
	tracee_detach(pa->t);
	pa->t = NULL;
	return r;
}

bool pattach_unpatchable(int err)
{
	return lp_unpatchable(err);
}

int pattach_commit(struct pattach *pa, char *why, size_t whylen)
{
	if (!pa->t)
		return -EINVAL;
	int r = lp_commit(pa->lp, pa->t, why, whylen);
	if (r < 0) {
		lp_restore(pa->lp, pa->t, why + strlen(why), 0);
		return r;
	}
	pa->committed = true;
	tracee_detach(pa->t);
	pa->t = NULL;
	return 0;
}

int pattach_detach(struct pattach *pa, char *why, size_t whylen)
{
	if (!pa->t) {
		int r = tracee_attach(pa->pid, &pa->t, why, whylen);
		if (r < 0)
			return r;
	}
	/* a process that ran another program (exec) has none of what was
	 * patched: its agent is not where it was, and nothing is touched */
	uint64_t bias;
	if (agent_mapping(pa->pid, elf_path(pa->agent_ef), pa->agent_ef,
			  &bias) < 0 || bias != pa->agent_bias) {
		tracee_detach(pa->t);
		pa->t = NULL;
		snprintf(why, whylen, "process %d runs another program now", pa->pid);
		return -ESRCH;
	}
	/* sites in libraries unloaded since are gone with their code */
	lp_refresh(pa->lp, pa->t);
	int r = lp_restore(pa->lp, pa->t, why, whylen);
	tracee_detach(pa->t);
	pa->t = NULL;
	pa->committed = false;
	return r;
}

void pattach_free_gone(struct pattach *pa)
{
	if (pa && pa->t) {
		tracee_detach(pa->t);
		pa->t = NULL;
	}
	pattach_free(pa);
}

void pattach_free(struct pattach *pa)
{
	if (!pa)
		return;
	if (pa->t) {
		if (pa->lp) {
			char why[256];
			lp_restore(pa->lp, pa->t, why, sizeof(why));
		}
		tracee_detach(pa->t);
	}
	pattach_late_end(pa);
	lp_free(pa->lp);
	elf_close(pa->agent_ef);
	for (size_t i = 0; i < pa->nfiles; i++) {
		free(pa->files[i].path);
		free(pa->files[i].usdt_pcs);
		elf_close(pa->files[i].ef);
	}
	free(pa);
}
