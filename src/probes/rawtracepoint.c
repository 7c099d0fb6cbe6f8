/* rawtracepoint.c - rawtracepoint:EVENT [rt:]: a kernel tracepoint's raw
 * arguments (arg0..argN: the tracepoint function's parameters, before the
 * event record is built), attached with BPF_RAW_TRACEPOINT_OPEN. Cheaper
 * than tracepoint: (no record), but the arguments are untyped words.
 * Wildcards match the events of tracefs's available_events. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe_util.h"
#include "../base/glob.h"

extern const struct provider provider_rawtracepoint;

/* rawtracepoint -> EVENT | MODULE ':' EVENT (the module is not needed to
 * find the event, and is dropped) */
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
};

static int expand_one(void *arg, const char *event)
{
	struct rawtp_expand *x = arg;
	return x->emit(x->arg, NULL, event, 0);
}

static int rawtp_expand(const struct attach_point *attach, struct expand_ctx *ctx,
			int (*emit)(void *arg, const char *target,
				    const char *func, uint64_t freq),
			void *arg)
{
	const char *event = attach->func;
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

static int rawtp_attach(const struct probe *p, struct attach_req *req)
{
	req->how = ATTACH_RAW_TRACEPOINT;
	req->symbol = p->func;
	return 1;
}

struct rawtp_list {
	const char *pattern;
	FILE *out;
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

static int rawtp_list(const char *pattern, int pid, FILE *out)
{
	if (!provider_list_wants(&provider_rawtracepoint, pattern))
		return 0;
	struct rawtp_list l = { pattern, out };
	int r = events_each("*", list_one, &l);
	return r < 0 ? 0 : r;
}

const struct provider provider_rawtracepoint = {
	.name = "rawtracepoint",
	.alias = "rt",
	.parse = rawtp_parse,
	.expand = rawtp_expand,
	.prog_type = BPF_PROG_TYPE_RAW_TRACEPOINT,
	.caps = PROBE_ARGN | PROBE_KSTACK | PROBE_USTACK | PROBE_KERNEL_MEM,
	.attach = rawtp_attach,
	.list = rawtp_list,
};
