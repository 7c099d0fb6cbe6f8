/* rawtracepoint.c - rawtracepoint:EVENT [rt:]: a kernel tracepoint's raw
 * arguments (arg0..argN: the tracepoint function's parameters, before the
 * event record is built), attached with BPF_RAW_TRACEPOINT_OPEN. Cheaper
 * than tracepoint: (no record), but the arguments are untyped words.
 * Wildcards match the events of tracefs's available_events. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/log.h"
#include "../host/btf.h"
#include "probe_util.h"
#include "../base/glob.h"

extern const struct provider provider_rawtracepoint;

/* rawtracepoint -> EVENT | MODULE ':' EVENT. In 0.17's dialect the
 * module is not needed to find the event, and is dropped; from 0.24
 * (bpftrace's rawtracepoint[:module]:event, from BTF) it is kept in
 * `extra` for expansion: the kernel's own events are "vmlinux"'s. */
static int rawtp_parse(struct attach_point *attach, struct expand_ctx *ctx)
{
	struct ap_parts parts;
	ap_split(ctx->arena, attach->text, &parts);
	if ((parts.n != 2 && parts.n != 3) || !parts.v[parts.n - 1][0])
		return ap_error(attach, ctx, "rawtracepoint probes take one "
				"tracepoint event: 'rawtracepoint:EVENT' (got "
				"'%s')", attach->text);
	const char *event = parts.v[parts.n - 1];
	if (strchr(event, '/'))
		return ap_error(attach, ctx, "%s: not an event name",
				attach->text);
	ap_set(attach, provider_rawtracepoint.name, NULL, event, 0);
	if (parts.n == 3)
		attach->extra = parts.v[1];
	return 0;
}

/* The event names of available_events ("category:event" lines) matching
 * `pattern`, sorted and unique, for fn. */
static int events_each(const char *pattern,
		       int (*fn)(void *arg, const char *event), void *arg)
{
	const char *dir = tracefs_dir();
	if (!dir)
		return -errno;
	char path[512];
	snprintf(path, sizeof(path), "%s/available_events", dir);
	char *text = probe_read_file(path);
	if (!text)
		return -errno;
	/* "cat:event" -> "event", then the same sorted unique list as the
	 * kernel function names (kfuncs.c reads word 0 of each line) */
	for (char *p = text; *p; ) {
		char *nl = strchr(p, '\n');
		char *colon = strchr(p, ':');
		if (colon && (!nl || colon < nl))
			memset(p, ' ', (size_t)(colon - p + 1));
		if (!nl)
			break;
		p = nl + 1;
	}
	struct kfuncs ev;
	kfuncs_parse_text(&ev, text, 0);
	int r = 0, n = 0;
	for (size_t i = 0; i < ev.n && r >= 0; i++) {
		if (!glob_match(pattern, ev.v[i]))
			continue;
		r = fn(arg, ev.v[i]);
		n++;
	}
	kfuncs_free(&ev);
	return r < 0 ? r : n;
}

struct rawtp_expand {
	int (*emit)(void *, const char *, const char *, uint64_t);
	void *arg;
	const char *module;      /* the probes' (0.24's expansion) */
	int n;
};

static int expand_one(void *arg, const char *event)
{
	struct rawtp_expand *x = arg;
	return x->emit(x->arg, NULL, event, 0);
}

static int expand_btf_one(void *arg, const char *event)
{
	struct rawtp_expand *x = arg;
	x->n++;
	return x->emit(x->arg, x->module, event, 0);
}

/* bpftrace 0.24: the raw tracepoints are those vmlinux BTF declares
 * (btf_trace_EVENT); without a module the module is a wildcard, so an
 * event no module has leaves the probe without attach points. The
 * modules' own BTF is not read: their events are not offered. */
static int rawtp_expand_btf(const struct attach_point *attach,
			    struct expand_ctx *ctx, struct rawtp_expand *x)
{
	const char *event = attach->func, *module = attach->extra;
	if (!module)
		ctx->matched_as_wildcard = true;
	if (module && !glob_match(module, "vmlinux"))
		return ap_missing(attach, ctx, "NO_MATCH", "%s: no raw "
				  "tracepoint of module '%s' (only vmlinux's "
				  "are read)", attach->text, module);
	x->module = module ? "vmlinux" : NULL;
	int r = kbtf_rawtps_each(event, expand_btf_one, x);
	if (r == -EOPNOTSUPP)
		return ap_error((struct attach_point *)attach, ctx, "%s: raw "
				"tracepoints need the kernel's BTF "
				"(/sys/kernel/btf/vmlinux)", attach->text);
	if (r < 0)
		return ap_error((struct attach_point *)attach, ctx, "%s: cannot "
				"read the kernel's BTF: %s", attach->text,
				strerror(-r));
	if (x->n == 0)
		return ap_missing(attach, ctx, "NO_MATCH", "%s: no raw "
				  "tracepoint matches '%s'", attach->text,
				  event);
	return 0;
}

static int rawtp_expand(const struct attach_point *attach, struct expand_ctx *ctx,
			int (*emit)(void *arg, const char *target,
				    const char *func, uint64_t freq),
			void *arg)
{
	const char *event = attach->func;
	if (ctx->dialect >= DIALECT_024) {
		struct rawtp_expand x = { emit, arg, NULL, 0 };
		return rawtp_expand_btf(attach, ctx, &x);
	}
	if (!ap_has_wildcard(event))
		return emit(arg, NULL, event, 0);     /* the kernel judges */
	struct rawtp_expand x = { emit, arg };
	int r = events_each(event, expand_one, &x);
	if (r == 0) {
		diag_error(ctx->diags, attach->pos, "NO_MATCH", "%s: no "
			   "tracepoint event matches '%s'",
			   attach->text, event);
		return -ENOENT;
	}
	if (r < 0)
		return ap_error((struct attach_point *)attach, ctx, "%s: cannot read "
				"the tracepoint events: %s",
				attach->text, strerror(-r));
	return 0;
}

/* `args` (bpftrace 0.24): the tracepoint's parameters from BTF, one u64
 * slot each in the context, as fentry's (a record, probes/fentry.c). */
static const struct type *rawtp_args_type(const struct probe *p,
					  struct expand_ctx *ctx)
{
	struct kfunc_info fi;
	if (!p->func || kbtf_rawtp(p->func, &fi) < 0)
		return NULL;
	struct record_field *f = arena_array(ctx->arena, struct record_field,
					     fi.nargs ? fi.nargs : 1);
	uint32_t k = 0;
	for (uint32_t i = 0; i < fi.nargs; i++) {
		const struct kfunc_arg *a = &fi.args[i];
		if (!a->name)
			continue;
		f[k++] = (struct record_field){
			.name = arena_strdup(ctx->arena, a->name),
			.offset = 8 * a->slot,
			.size = a->size > 8 ? 8 : a->size,
			.is_signed = a->is_signed,
			.is_ptr = a->is_ptr,
			.decl = arena_printf(ctx->arena, "%s %s", a->decl,
					     a->name),
			.space = AS_KERNEL,
		};
	}
	struct type *t = arena_new(ctx->arena, struct type);
	t->kind = TYPE_RECORD;
	t->nfields = k;
	t->rfields = f;
	return t;
}

static int rawtp_attach(const struct probe *p, struct attach_req *req)
{
	req->how = ATTACH_RAW_TRACEPOINT;
	req->symbol = p->func;
	return 1;
}

struct rawtp_list {
	const char *pattern;
	FILE *out;
	int n;
};

static int list_one(void *arg, const char *event)
{
	struct rawtp_list *l = arg;
	char name[512];
	snprintf(name, sizeof(name), "rawtracepoint:%s", event);
	if (provider_list_match(&provider_rawtracepoint, l->pattern, name))
		fprintf(l->out, "%s\n", name);
	return 0;
}

/* 0.24: vmlinux BTF's events, rawtracepoint:vmlinux:EVENT, with -lv
 * their parameters (not the first, the tracepoint's data) */
static int list_btf_one(void *arg, const char *event)
{
	struct rawtp_list *l = arg;
	char name[512], plain[512];
	snprintf(name, sizeof(name), "rawtracepoint:vmlinux:%s", event);
	snprintf(plain, sizeof(plain), "rawtracepoint:%s", event);
	if (!provider_list_match(&provider_rawtracepoint, l->pattern, name) &&
	    !provider_list_match(&provider_rawtracepoint, l->pattern, plain))
		return 0;
	fprintf(l->out, "%s\n", name);
	struct kfunc_info fi;
	if (log_verbose && kbtf_rawtp(event, &fi) == 0)
		for (uint32_t i = 0; i < fi.nargs; i++)
			if (fi.args[i].name)
				fprintf(l->out, "    %s %s\n", fi.args[i].decl,
					fi.args[i].name);
	l->n++;
	return 0;
}

static int rawtp_list(const char *pattern, int pid, FILE *out)
{
	if (!provider_list_wants(&provider_rawtracepoint, pattern))
		return 0;
	struct rawtp_list l = { pattern, out, 0 };
	if (provider_list_dialect() >= DIALECT_024) {
		int r = kbtf_rawtps_each(NULL, list_btf_one, &l);
		return r < 0 ? 0 : l.n;
	}
	int r = events_each("*", list_one, &l);
	return r < 0 ? 0 : r;
}

const struct provider provider_rawtracepoint = {
	.name = "rawtracepoint",
	.alias = "rt",
	.parse = rawtp_parse,
	.expand = rawtp_expand,
	.args_type = rawtp_args_type,
	.prog_type = BPF_PROG_TYPE_RAW_TRACEPOINT,
	.caps = PROBE_ARGN | PROBE_KSTACK | PROBE_USTACK | PROBE_KERNEL_MEM,
	.attach = rawtp_attach,
	.list = rawtp_list,
};
