/* fentry.c - fentry:FUNC and fexit:FUNC (bpftrace's kfunc/kretfunc):
 * kernel function entry and return through BTF trampolines, with the
 * arguments by name (args->name) and the return value (retval). */

/*
 * This kernel has no kprobes; BTF trampolines are how sonde sees kernel
 * functions. A probe's program is of type BPF_PROG_TYPE_TRACING, loaded
 * for one function (its BTF id) and attached with a BPF link. Its
 * context is the function's arguments as u64 slots (host/btf.h), so
 * `args` is a record of those slots: each argument at 8 * slot, and for
 * fexit "retval" after them.
 *
 * Which functions can be traced is the kernel's call: BTF lists every
 * function, tracefs's available_filter_functions the ones ftrace can
 * patch. When that file is readable, wildcards and -l use it to leave
 * out the others; when it is not (as here: a locked-down tracefs), every
 * BTF function is offered, and a wildcard probe the kernel then refuses
 * is skipped with a warning (the attach request says "optional"; expand
 * marks such probes with freq = 1, a field fentry has no other use for).
 * A function named without wildcards must attach or the run fails.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/log.h"
#include "../host/btf.h"
#include "probe_util.h"
#include "../base/glob.h"

extern const struct provider provider_fentry, provider_fexit;

static bool is_exit(const struct provider *pv)
{
	return pv == &provider_fexit;
}

/* ---- hooks ------------------------------------------------------------ */

/* fentry:FUNC */
static int fentry_parse(struct attach_point *attach, struct expand_ctx *ctx)
{
	struct ap_parts parts;
	ap_split(ctx->arena, attach->text, &parts);
	const char *kind = attach->provider;
	if ((parts.n != 2 && parts.n != 3) || !parts.v[parts.n - 1][0])
		return ap_error(attach, ctx, "%s probe type requires 1 or 2 "
				"arguments: '%s:[MODULE:]FUNCTION' (got '%s')",
				kind, kind, attach->text);
	const struct provider *pv = provider_find(kind);
	const char *module = parts.n == 3 ? parts.v[1] : NULL;
	/* kfunc:MODULE:FUNCTION, as bpftrace 0.17 writes it: the kernel
	 * itself is "vmlinux" (a wildcard may match it); the functions of
	 * loadable modules are not attached (their BTF ids live in the
	 * module's BTF object, which sonde does not load programs for) */
	if (module && !glob_match(module, "vmlinux"))
		return ap_error(attach, ctx, "%s: the functions of kernel "
				"module '%s' cannot be traced with fentry/fexit "
				"(only vmlinux's); a kprobe reaches them",
				attach->text, module);
	ap_set(attach, pv ? pv->name : kind, module ? "vmlinux" : NULL,
	       parts.v[parts.n - 1], 0);
	return 0;
}

struct expand_state {
	int (*emit)(void *, const char *, const char *, uint64_t);
	void *arg;
	const struct kfuncs *traceable;
	int err;
};

static int expand_one(void *arg, const char *name)
{
	struct expand_state *st = arg;
	if (!kfuncs_has(st->traceable, name))
		return 0;
	int r = st->emit(st->arg, NULL, name, 1);
	return r < 0 ? r : 0;
}

static int no_btf(const struct attach_point *attach, struct expand_ctx *ctx, int r)
{
	if (r == -EOPNOTSUPP)
		return ap_error((struct attach_point *)attach, ctx, "%s: the kernel has "
				"no BTF (/sys/kernel/btf/vmlinux), which fentry "
				"and fexit need", attach->text);
	return ap_error((struct attach_point *)attach, ctx, "%s: cannot read the "
			"kernel's BTF: %s", attach->text, strerror(-r));
}

static int fentry_expand(const struct attach_point *attach, struct expand_ctx *ctx,
			 int (*emit)(void *arg, const char *target,
				     const char *func, uint64_t freq),
			 void *arg)
{
	const char *func = attach->func;
	if (!ap_has_wildcard(func)) {
		struct kfunc_info fi;
		int r = kbtf_func(func, &fi);
		if (r == -ENOENT && ctx->dialect >= DIALECT_024)
			return ap_missing(attach, ctx, "NO_SYMBOL", "%s: no "
					  "kernel function '%s' (not in the "
					  "kernel's BTF)", attach->text, func);
		if (r == -ENOENT)
			return ap_error((struct attach_point *)attach, ctx, "%s: no "
					"kernel function '%s' (not in the "
					"kernel's BTF)", attach->text,
					func);
		if (r == -E2BIG)
			return ap_error((struct attach_point *)attach, ctx, "%s: '%s' "
					"takes more arguments than a trampoline "
					"can pass", attach->text, func);
		if (r < 0)
			return no_btf(attach, ctx, r);
		return emit(arg, NULL, func, 0);
	}
	struct kfuncs t;
	kfuncs_load(&t);
	struct expand_state st = { emit, arg, &t, 0 };
	int r = kbtf_funcs_each(func, expand_one, &st);
	kfuncs_free(&t);
	if (r < 0 && r != -ENOMEM && r != -EINVAL)
		return no_btf(attach, ctx, r);
	return r;
}

static const struct type *fentry_args_type(const struct probe *p,
					   struct expand_ctx *ctx)
{
	struct kfunc_info fi;
	if (!p->func || kbtf_func(p->func, &fi) < 0)
		return NULL;
	bool ret = is_exit(p->provider) && fi.has_ret;
	uint32_t n = fi.nargs + (ret ? 1 : 0);
	struct record_field *f = arena_array(ctx->arena, struct record_field,
					     n ? n : 1);
	uint32_t k = 0;
	for (uint32_t i = 0; i <= fi.nargs; i++) {
		const struct kfunc_arg *a = i < fi.nargs ? &fi.args[i] :
			ret ? &fi.ret : NULL;
		if (!a || !a->name)
			continue;
		f[k++] = (struct record_field){
			.name = arena_strdup(ctx->arena, a->name),
			.offset = 8 * a->slot,
			.size = a->size,
			.is_signed = a->is_signed,
			.is_ptr = a->is_ptr,
			.decl = arena_printf(ctx->arena, "%s %s", a->decl,
					     a->name),
			/* kernel function arguments point into the kernel */
			.space = AS_KERNEL,
		};
	}
	struct type *t = arena_new(ctx->arena, struct type);
	t->kind = TYPE_RECORD;
	t->nfields = k;
	t->rfields = f;
	return t;
}

static int fentry_attach(const struct probe *p, struct attach_req *req)
{
	struct kfunc_info fi;
	int r = kbtf_func(p->func, &fi);
	if (r < 0)
		return r;
	req->how = ATTACH_TRACING;
	req->btf_id = fi.btf_id;
	req->optional = p->freq == 1;
	return 1;
}

/* ---- -l ---------------------------------------------------------------- */

/* Listed as bpftrace lists them (0.17's kfunc: and 0.26's fentry: alike,
 * on Debian 12's kernel): PROVIDER:vmlinux:FUNCTION, the module named. */

struct list_state {
	const char *prefix;      /* as the pattern spells it */
	const struct kfuncs *traceable;
	FILE *out;
	int n;
};

static void list_args(const char *name, FILE *out)
{
	struct kfunc_info fi;
	if (kbtf_func(name, &fi) < 0)
		return;
	for (uint32_t i = 0; i < fi.nargs; i++)
		if (fi.args[i].name)
			fprintf(out, "    %s %s\n", fi.args[i].decl,
				fi.args[i].name);
	if (fi.has_ret)
		fprintf(out, "    %s retval\n", fi.ret.decl);
}

static int list_one(void *arg, const char *name)
{
	struct list_state *st = arg;
	if (!kfuncs_has(st->traceable, name))
		return 0;
	fprintf(st->out, "%s:vmlinux:%s\n", st->prefix, name);
	if (log_verbose)
		list_args(name, st->out);
	st->n++;
	return 0;
}

static int fentry_list_common(const struct provider *pv, const char *pattern,
			      FILE *out)
{
	if (!provider_list_wants(pv, pattern))
		return 0;
	const char *prefix = pv->name, *func = "*";
	if (pattern) {
		const char *colon = strchr(pattern, ':');
		func = colon ? colon + 1 : pattern;
		/* PROVIDER:MODULE:FUNC: only vmlinux's are read */
		const char *colon2 = colon ? strchr(func, ':') : NULL;
		if (colon2) {
			char mod[128];
			size_t n = (size_t)(colon2 - func);
			if (n >= sizeof(mod))
				return 0;
			memcpy(mod, func, n);
			mod[n] = '\0';
			if (!glob_match(mod, "vmlinux"))
				return 0;
			func = colon2 + 1;
		}
		if (colon) {
			for (const char *const *a = pv->aliases; a && *a; a++)
				if (strlen(*a) == (size_t)(colon - pattern) &&
				    strncmp(*a, pattern, strlen(*a)) == 0)
					prefix = *a;
		}
	}
	struct kfuncs t;
	kfuncs_load(&t);
	struct list_state st = { prefix, &t, out, 0 };
	int r = kbtf_funcs_each(func, list_one, &st);
	kfuncs_free(&t);
	if (r < 0 && r != -EOPNOTSUPP)
		log_warn("%s: cannot list kernel functions: %s", pv->name,
			 strerror(-r));
	return st.n;
}

static int fentry_list(const char *pattern, int pid, FILE *out)
{
	return fentry_list_common(&provider_fentry, pattern, out);
}

static int fexit_list(const char *pattern, int pid, FILE *out)
{
	return fentry_list_common(&provider_fexit, pattern, out);
}

static const char *const fentry_aliases[] = { "kfunc", NULL };
static const char *const fexit_aliases[] = { "kretfunc", NULL };

const struct provider provider_fentry = {
	.name = "fentry",
	.aliases = fentry_aliases,
	.parse = fentry_parse,
	.expand = fentry_expand,
	.args_type = fentry_args_type,
	.prog_type = BPF_PROG_TYPE_TRACING,
	.caps = PROBE_FUNC | PROBE_ARGS | PROBE_KSTACK | PROBE_USTACK |
		PROBE_KERNEL_MEM | PROBE_TRACING,
	.expected_attach_type = BPF_TRACE_FENTRY,
	.keep_spelling = true,
	.attach = fentry_attach,
	.list = fentry_list,
	.fires_newest_first = true,
};

const struct provider provider_fexit = {
	.name = "fexit",
	.aliases = fexit_aliases,
	.parse = fentry_parse,
	.expand = fentry_expand,
	.args_type = fentry_args_type,
	.prog_type = BPF_PROG_TYPE_TRACING,
	.caps = PROBE_FUNC | PROBE_ARGS | PROBE_RETVAL | PROBE_TYPED_RET |
		PROBE_KSTACK | PROBE_USTACK | PROBE_KERNEL_MEM | PROBE_TRACING,
	.expected_attach_type = BPF_TRACE_FEXIT,
	.keep_spelling = true,
	.attach = fentry_attach,
	.list = fexit_list,
	/* a trampoline runs its fexit programs newest first too */
	.fires_newest_first = true,
};
