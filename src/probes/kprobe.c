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

#include "../elf/symbolize.h"
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

/* kprobe -> FUNC | FUNC '+' OFFSET ; kretprobe -> FUNC */
static int kprobe_parse(struct attach_point *attach, struct expand_ctx *ctx)
{
	const struct provider *pv = provider_find(attach->provider);
	const char *kind = pv ? pv->name : attach->provider;
	bool ret = pv == &provider_kretprobe;
	struct ap_parts parts;
	ap_split(ctx->arena, attach->text, &parts);
	if (parts.n != 2 || !parts.v[1][0])
		return ap_error(attach, ctx, "%s probe type requires 1 argument: "
				"'%s:FUNCTION%s' (got '%s')", kind, kind,
				ret ? "" : "[+OFFSET]", attach->text);
	const char *func = parts.v[1];
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
	ap_set(attach, kind, NULL, func, off);
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

static int kprobe_expand(const struct attach_point *attach, struct expand_ctx *ctx,
			 int (*emit)(void *arg, const char *target,
				     const char *func, uint64_t freq),
			 void *arg)
{
	const char *func = attach->func;
	bool ret = provider_find(attach->provider) == &provider_kretprobe;
	if (!ap_has_wildcard(func)) {
		if (ret && banned_kretprobe(func))
			return ap_error((struct attach_point *)attach, ctx, "error: "
					"kretprobe:%s can't be used as it might "
					"lock up your system.%s", func,
					BANNED_WHY);
		if (!kernel_has(func))
			return ap_missing(attach, ctx, "NO_SYMBOL",
					  "%s: the kernel has no function '%s'",
					  attach->text, func);
		warn_untraceable(attach, ctx, func);
		return emit(arg, NULL, func, attach->freq);
	}
	uint32_t type;
	if (pmu_type(KPROBE_PMU, &type) == -EOPNOTSUPP) {
		diag_error(ctx->diags, attach->pos, "NO_KPROBES", "%s: %s",
			   attach->text, NO_KPROBES);
		return -EOPNOTSUPP;
	}
	const struct kfuncs *avail = traceable();
	if (!avail->known) {
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
		if (split_part(name) || !glob_match(func, name) ||
		    (black.known && kfuncs_has(&black, name)))
			continue;
		if (ret && banned_kretprobe(name)) {
			diag_warning(ctx->diags, attach->pos, "BANNED",
				     "kretprobe:%s can't be used as it might "
				     "lock up your system; skipped", name);
			continue;
		}
		r = emit(arg, NULL, name, 0);
		n++;
	}
	kfuncs_free(&black);
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
	req->perf_config1 = (uint64_t)(uintptr_t)p->func;
	req->perf_config2 = p->freq;          /* the offset */
	req->sample_period = 1;
	req->all_cpus = false;
	req->pid = -1;
	req->retprobe = ret;
	req->symbol = p->func;
	req->multi = p->freq == 0 ? MULTI_KPROBE : MULTI_NONE;
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
