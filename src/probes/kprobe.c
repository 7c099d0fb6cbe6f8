/* kprobe.c - kprobe:FUNC[+OFFSET] [k:] and kretprobe:FUNC [kr:]: entry
 * (or an instruction inside) and return of a kernel function, attached
 * as events of the kprobe PMU, or many at once with one kprobe_multi
 * link where the kernel has it (the engine decides, kernel/multi.c).
 *
 * Wildcards match the functions ftrace can patch (tracefs's
 * available_filter_functions) less kprobes' blacklist and the parts the
 * compiler split off (foo.part.0), which do not follow the calling
 * convention. -l lists what bpftrace 0.17 lists, under kprobe and
 * kretprobe both: available functions
 * without the split parts, sorted, with the blacklisted ones (bpftrace
 * does not read the blacklist). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../base/log.h"
#include "../elf/symbolize.h"
#include "../host/btf.h"
#include "probe_util.h"
#include "../base/glob.h"

extern const struct provider provider_kprobe, provider_kretprobe;

#define KPROBE_PMU "kprobe"
#define NO_KPROBES "this kernel has no kprobes (no kprobe PMU in " \
	"/sys/bus/event_source/devices: CONFIG_KPROBES is off); fentry/fexit " \
	"or tracepoints may reach the same functions"

static bool split_part(const char *name)
{
	return strstr(name, ".part.") != NULL;
}

/* Whether a kernel module of that name is loaded (sysfs lists built-in
 * ones with parameters too, as bpftrace's check does). */
static bool module_loaded(const char *module)
{
	if (strcmp(module, "vmlinux") == 0)
		return true;
	if (!module[0] || strchr(module, '/') || strcmp(module, ".") == 0 ||
	    strcmp(module, "..") == 0)
		return false;
	char path[256];
	snprintf(path, sizeof(path), "/sys/module/%s", module);
	return access(path, F_OK) == 0;
}

/* A module part that names the kernel itself (or a wildcard matching it
 * and nothing else is not assumed: "vmlinu*" matches modules too) */
static bool names_vmlinux(const char *module)
{
	return module && strcmp(module, "vmlinux") == 0;
}

/* kprobe -> [MODULE ':'] FUNC | FUNC '+' OFFSET ; kretprobe -> [MODULE ':']
 * FUNC. MODULE (bpftrace 0.2x) is "vmlinux" for the kernel's own
 * functions or a loaded module's name, and may be a wildcard. */
static int kprobe_parse(struct attach_point *attach, struct expand_ctx *ctx)
{
	const struct provider *pv = provider_find(attach->provider);
	const char *kind = pv ? pv->name : attach->provider;
	bool ret = pv == &provider_kretprobe;
	struct ap_parts parts;
	ap_split(ctx->arena, attach->text, &parts);
	bool old = ctx->dialect < DIALECT_024;
	const char *module = parts.n == 3 ? parts.v[1] : NULL;
	/* 0.17 knew one form, and its words stay its dialect's where the
	 * module form cannot be meant (no such module loaded) */
	if (old && (parts.n != 2 || !parts.v[1][0]) &&
	    !(parts.n == 3 && parts.v[1][0] && parts.v[2][0] &&
	      (ap_has_wildcard(parts.v[1]) || module_loaded(parts.v[1]))))
		return ap_error(attach, ctx, "%s probe type requires 1 argument: "
				"'%s:FUNCTION%s' (got '%s')", kind, kind,
				ret ? "" : "[+OFFSET]", attach->text);
	if ((parts.n != 2 && parts.n != 3) || !parts.v[parts.n - 1][0] ||
	    (parts.n == 3 && !parts.v[1][0]))
		return ap_error(attach, ctx, "%s probe type requires 1 or 2 "
				"arguments: '%s:[MODULE:]FUNCTION%s' (got '%s')",
				kind, kind, ret ? "" : "[+OFFSET]", attach->text);
	if (module && !ap_has_wildcard(module) && !module_loaded(module))
		return ap_error(attach, ctx, "specified module %s in probe %s "
				"is not loaded.", module, attach->text);
	const char *func = parts.v[parts.n - 1];
	/* kprobe:ADDRESS (0.25): named by the address in decimal, as
	 * bpftrace names it (kprobe:305419896), which no function's name
	 * can be; kprobe_attach attaches at it */
	uint64_t kaddr;
	const char *kwhy = NULL;
	if (ctx->dialect >= DIALECT_025 && !module && func[0] >= '0' &&
	    func[0] <= '9' && ap_parse_u64(func, &kaddr, &kwhy) == 0) {
		ap_set(attach, kind, NULL, arena_printf(ctx->arena, "%llu",
			(unsigned long long)kaddr), 0);
		return 0;
	}
	const char *plus = strchr(func, '+');
	uint64_t off = 0;
	if (plus) {
		const char *why = NULL;
		if (ret)
			return ap_error(attach, ctx, "%s: a kretprobe cannot take "
					"an offset ('%s')", attach->text,
					func);
		if (ap_has_wildcard(func))
			return ap_error(attach, ctx, "%s: an offset cannot follow "
					"a wildcard", attach->text);
		if (plus == func || ap_parse_u64(plus + 1, &off, &why) < 0)
			return ap_error(attach, ctx, "%s: the offset '%s' %s",
					attach->text, plus + 1,
					why ? why : "has no function before it");
		func = arena_strndup(ctx->arena, func, (size_t)(plus - func));
	}
	/* the offset rides in freq, which kprobes have no other use for */
	ap_set(attach, kind, module, func, off);
	return 0;
}

struct kexpand {
	int (*emit)(void *, const char *, const char *, uint64_t);
	void *arg;
};

/* The kernel's traceable functions (tracefs available_filter_functions,
 * tens of thousands of lines), read once per run however many probes,
 * wildcards and listings ask; .known is false when it cannot be read. */
static const struct kfuncs *traceable(void)
{
	static struct kfuncs avail;
	static bool loaded;
	if (!loaded) {
		kfuncs_load(&avail);
		loaded = true;
	}
	return &avail;
}

/* bpftrace 0.17's warning for a named function tracefs does not list,
 * given before anything attaches. Only a warning: the kernel is the judge
 * (a function absent from tracefs may be probeable at an offset), and
 * attaching says what it thinks. */
static void warn_untraceable(const struct attach_point *attach, struct expand_ctx *ctx,
			     const char *func)
{
	uint32_t type;
	if (pmu_type(KPROBE_PMU, &type) == -EOPNOTSUPP)
		return;    /* said at attach: no kprobes at all */
	const struct kfuncs *avail = traceable();
	if (avail->known && !kfuncs_has(avail, func))
		diag_warning(ctx->diags, attach->pos, "UNTRACEABLE",
			     "%s is not traceable (either non-existing, inlined, "
			     "or marked as \"notrace\"); attaching to it will "
			     "likely fail", func);
}

/* Whether the kernel has a function of that name at all: tracefs lists
 * it, or /proc/kallsyms (read only when tracefs does not say) has it. A
 * function it lacks is skipped with a warning while other probes remain
 * (ap_missing), as bpftrace 0.17 drops `kprobe:zzzzz` when it expands
 * it; so a script naming a function of another kernel still runs. */
static bool kernel_has(const char *func)
{
	const struct kfuncs *avail = traceable();
	if (avail->known && kfuncs_has(avail, func))
		return true;
	struct ksyms *k = ksyms_new(NULL);
	uint64_t addr;
	bool has = !k || ksyms_count(k) == 0 || ksyms_addr(k, func, &addr) == 0;
	ksyms_free(k);
	return has;
}

/* The kretprobes bpftrace 0.17 refuses: a return probe on a spinlock
 * function runs its program with the lock held (and interrupts off, for
 * the _irqsave ones) and its own entry probe takes locks of its own, so
 * on some kernels the system can lock up. Named alone it is an error, as
 * in bpftrace (exit 1); in a wildcard each is skipped with a warning. */
static const char *const banned_kretprobes[] = {
	"_raw_spin_lock", "_raw_spin_lock_irqsave",
	"_raw_spin_unlock_irqrestore", "queued_spin_lock_slowpath",
};
#define BANNED_WHY " (a return probe on a spinlock function can deadlock " \
	"the kernel)"

static bool banned_kretprobe(const char *func)
{
	for (size_t i = 0; i < sizeof(banned_kretprobes) /
	     sizeof(banned_kretprobes[0]); i++)
		if (strcmp(func, banned_kretprobes[i]) == 0)
			return true;
	return false;
}

/* A kprobe:ADDRESS probe's func: the address in decimal (a function's
 * name never starts with a digit). */
static bool is_address(const char *func)
{
	return func && func[0] >= '0' && func[0] <= '9';
}

/* Functions bpftrace 0.21 leaves out of kprobe wildcards (its PR 3204:
 * the kernel's kprobe_multi selftests skip them, as tracing them can
 * hang the system): RCU's own functions and the idle loop's. */
static bool unsafe_in_wildcard(const char *name)
{
	static const char *const funcs[] = {
		"arch_cpu_idle", "default_idle", "bpf_dispatcher_xdp_func",
	};
	if (strncmp(name, "rcu_", 4) == 0 ||
	    strncmp(name, "__ftrace_invalid_address__", 26) == 0)
		return true;
	for (size_t i = 0; i < sizeof(funcs) / sizeof(funcs[0]); i++)
		if (strcmp(name, funcs[i]) == 0)
			return true;
	return false;
}

/* 0.24 on: a function tracefs does not list is missing (after the
 * warning), unless --unsafe, which tries it anyway (bpftrace 0.26's PR
 * 5015); 0.17's dialect asks kallsyms too (kernel_has). */
static int kprobe_expand_named(const struct attach_point *attach,
			       struct expand_ctx *ctx, const char *func,
			       int (*emit)(void *, const char *, const char *,
					   uint64_t),
			       void *arg)
{
	const char *module = attach->target;
	const char *target = module;
	if (ctx->dialect >= DIALECT_024) {
		struct kfuncs mod;
		const struct kfuncs *avail = traceable();
		if (module && !names_vmlinux(module)) {
			kfuncs_load_module(&mod, module);
			avail = &mod;
		}
		const char *key = avail == traceable() ? func :
			arena_printf(ctx->arena, "%s:%s", module, func);
		/* tracefs unreadable: kallsyms says whether it exists */
		bool ok = avail->known ? kfuncs_has(avail, key) :
			avail != traceable() || kernel_has(func);
		if (avail != traceable())
			kfuncs_free(&mod);
		if (!ok) {
			warn_untraceable(attach, ctx, func);
			if (!ctx->unsafe)
				return ap_missing(attach, ctx, "NO_SYMBOL",
						  "%s: the kernel has no "
						  "traceable function '%s'",
						  attach->text, func);
		}
		return emit(arg, target, func, attach->freq);
	}
	if (!kernel_has(func))
		return ap_missing(attach, ctx, "NO_SYMBOL",
				  "%s: the kernel has no function '%s'",
				  attach->text, func);
	warn_untraceable(attach, ctx, func);
	return emit(arg, target, func, attach->freq);
}

static int kprobe_expand(const struct attach_point *attach, struct expand_ctx *ctx,
			 int (*emit)(void *arg, const char *target,
				     const char *func, uint64_t freq),
			 void *arg)
{
	const char *func = attach->func;
	const char *module = attach->target;
	bool ret = provider_find(attach->provider) == &provider_kretprobe;
	if (is_address(func))
		return emit(arg, NULL, func, 0);    /* the kernel judges */
	if (!ap_has_wildcard(func) && !(module && ap_has_wildcard(module))) {
		if (ret && banned_kretprobe(func))
			return ap_error((struct attach_point *)attach, ctx, "error: "
					"kretprobe:%s can't be used as it might "
					"lock up your system.%s", func,
					BANNED_WHY);
		return kprobe_expand_named(attach, ctx, func, emit, arg);
	}
	uint32_t type;
	if (pmu_type(KPROBE_PMU, &type) == -EOPNOTSUPP) {
		diag_error(ctx->diags, attach->pos, "NO_KPROBES", "%s: %s",
			   attach->text, NO_KPROBES);
		return -EOPNOTSUPP;
	}
	struct kfuncs mod = { 0 };
	const struct kfuncs *avail = traceable();
	if (module && !names_vmlinux(module)) {
		kfuncs_load_module(&mod, module);
		avail = &mod;
	}
	if (!avail->known) {
		kfuncs_free(&mod);
		diag_error(ctx->diags, attach->pos, "NO_MATCH", "%s: cannot "
			   "expand the wildcard: the kernel's list of traceable "
			   "functions (tracefs available_filter_functions) "
			   "cannot be read", attach->text);
		return -ENOENT;
	}
	struct kfuncs black;
	kfuncs_load_blacklist(&black);
	int r = 0, n = 0;
	for (size_t i = 0; i < avail->n && r >= 0; i++) {
		const char *name = avail->v[i];
		const char *target = NULL;
		if (module) {     /* "mod:name", or the kernel's "name" */
			const char *colon = strchr(name, ':');
			target = colon ? arena_strndup(ctx->arena, name,
						       (size_t)(colon - name)) :
				"vmlinux";
			name = colon ? colon + 1 : name;
		}
		if (split_part(name) || !glob_match(func, name) ||
		    (black.known && kfuncs_has(&black, name)) ||
		    (ctx->dialect >= DIALECT_021 && unsafe_in_wildcard(name)))
			continue;
		if (ret && banned_kretprobe(name)) {
			diag_warning(ctx->diags, attach->pos, "BANNED",
				     "kretprobe:%s can't be used as it might "
				     "lock up your system; skipped", name);
			continue;
		}
		r = emit(arg, target, name, 0);
		n++;
	}
	kfuncs_free(&black);
	kfuncs_free(&mod);
	if (r >= 0 && n == 0) {
		return ap_missing(attach, ctx, "NO_MATCH", "%s: no traceable "
				  "kernel function matches '%s'",
				  attach->text, func);
	}
	return r < 0 ? r : 0;
}

static int kprobe_attach(const struct probe *p, struct attach_req *req)
{
	uint32_t type;
	int bit = -1, r = pmu_type(KPROBE_PMU, &type);
	if (r == -EOPNOTSUPP) {
		req->error = NO_KPROBES;
		return r;
	}
	if (r < 0)
		return r;
	bool ret = p->provider == &provider_kretprobe;
	if (ret && (r = pmu_format_bit(KPROBE_PMU, "retprobe", &bit)) < 0)
		return r;
	req->how = ATTACH_PERF_EVENT;
	req->perf_type = type;
	req->perf_config = ret ? 1ull << bit : 0;
	/* a loadable module's function as the kernel names it, MOD:FUNC */
	const char *sym = p->func;
	bool in_module = p->target && !names_vmlinux(p->target);
	if (in_module)
		sym = p->name + strlen(p->provider->name) + 1;
	if (is_address(p->func)) {
		/* no symbol: the kprobe PMU takes the address in config2 */
		req->how = ATTACH_PERF_EVENT;
		req->perf_type = type;
		req->perf_config = ret ? 1ull << bit : 0;
		req->perf_config1 = 0;
		req->perf_config2 = strtoull(p->func, NULL, 10);
		req->sample_period = 1;
		req->all_cpus = false;
		req->pid = -1;
		req->retprobe = ret;
		req->multi = MULTI_NONE;
		return 1;
	}
	req->perf_config1 = (uint64_t)(uintptr_t)sym;
	req->perf_config2 = p->freq;          /* the offset */
	req->sample_period = 1;
	req->all_cpus = false;
	req->pid = -1;
	req->retprobe = ret;
	req->symbol = sym;
	req->multi = p->freq == 0 && !in_module ? MULTI_KPROBE : MULTI_NONE;
	return 1;
}

/* override() needs the function in the kernel's error-injection list
 * (ALLOW_ERROR_INJECTION) and the probe at its entry; the kernel checks
 * both when attaching, this says which is missing first. */
#define ERROR_INJECTION_LIST "/sys/kernel/debug/error_injection/list"

static int kprobe_check_override(const struct probe *p, char *why, size_t len)
{
	if (p->provider != &provider_kprobe || p->freq) {
		snprintf(why, len, "override() works at a function's entry "
			 "only (a kprobe without an offset)");
		return -EINVAL;
	}
	char *text = probe_read_file(ERROR_INJECTION_LIST);
	if (!text) {
		int err = errno ? errno : ENOENT;
		snprintf(why, len, "this kernel cannot override returns: no "
			 "error-injection list (%s: %s; it needs "
			 "CONFIG_FUNCTION_ERROR_INJECTION and "
			 "CONFIG_BPF_KPROBE_OVERRIDE, and debugfs mounted)",
			 ERROR_INJECTION_LIST, strerror(err));
		return -err;
	}
	struct kfuncs list;
	kfuncs_parse_text(&list, text, 0);       /* "func\tERRNO" lines */
	bool ok = kfuncs_has(&list, p->func);
	kfuncs_free(&list);
	if (!ok) {
		snprintf(why, len, "%s is not in the kernel's error-injection "
			 "list (%s), so override() cannot change its return",
			 p->func, ERROR_INJECTION_LIST);
		return -EPERM;
	}
	return 0;
}

/* -lv from 0.24: the function's parameters from BTF, as fentry lists
 * them (a kretprobe its return type as retval) */
static void list_args(const struct provider *pv, const char *func, FILE *out)
{
	struct kfunc_info fi;
	if (kbtf_func(func, &fi) < 0)
		return;
	if (pv == &provider_kretprobe) {
		if (fi.has_ret)
			fprintf(out, "    %s retval\n", fi.ret.decl);
		return;
	}
	for (uint32_t i = 0; i < fi.nargs; i++)
		if (fi.args[i].name)
			fprintf(out, "    %s %s\n", fi.args[i].decl,
				fi.args[i].name);
}

/* -l: the traceable functions, as bpftrace lists them */
static int kprobe_list_common(const struct provider *pv, const char *pattern,
			      FILE *out)
{
	if (!provider_list_wants(pv, pattern))
		return 0;
	const struct kfuncs *avail = traceable();
	int n = 0;
	for (size_t i = 0; i < avail->n; i++) {
		if (split_part(avail->v[i]))
			continue;
		char name[512];
		snprintf(name, sizeof(name), "%s:%s", pv->name, avail->v[i]);
		if (!provider_list_match(pv, pattern, name))
			continue;
		fprintf(out, "%s\n", name);
		if (log_verbose && provider_list_dialect() >= DIALECT_024)
			list_args(pv, avail->v[i], out);
		n++;
	}
	return n;
}

static int kprobe_list(const char *pattern, int pid, FILE *out)
{
	return kprobe_list_common(&provider_kprobe, pattern, out);
}

static int kretprobe_list(const char *pattern, int pid, FILE *out)
{
	return kprobe_list_common(&provider_kretprobe, pattern, out);
}

const struct provider provider_kprobe = {
	.name = "kprobe",
	.alias = "k",
	.parse = kprobe_parse,
	.expand = kprobe_expand,
	.prog_type = BPF_PROG_TYPE_KPROBE,
	.caps = PROBE_ARGN | PROBE_SARGN | PROBE_FUNC | PROBE_REGS |
		PROBE_KSTACK | PROBE_USTACK | PROBE_KERNEL_MEM | PROBE_OVERRIDE,
	.attach = kprobe_attach,
	.check_override = kprobe_check_override,
	.list = kprobe_list,
	.fires_newest_first = true,
};

const struct provider provider_kretprobe = {
	.name = "kretprobe",
	.alias = "kr",
	.parse = kprobe_parse,
	.expand = kprobe_expand,
	.prog_type = BPF_PROG_TYPE_KPROBE,
	.caps = PROBE_RETVAL | PROBE_FUNC | PROBE_REGS | PROBE_KSTACK |
		PROBE_USTACK | PROBE_KERNEL_MEM,
	.attach = kprobe_attach,
	.list = kretprobe_list,
};
