/* iter.c - iter:OBJECT[:PIN] (bpftrace 0.17's iterator probes): a BPF
 * iterator program run once over every task (iter:task) or every open
 * file of every task (iter:task_file), its context `ctx` a pointer to
 * the kernel's struct bpf_iter__OBJECT (ctx->task, ctx->fd, ctx->file).
 *
 * The program is of type BPF_PROG_TYPE_TRACING with expected attach type
 * BPF_TRACE_ITER, loaded against the BTF function bpf_iter_OBJECT and
 * attached with a BPF link; reading an iterator made from the link runs
 * it (kernel/engine.c), once per object and once more at the end with
 * the object NULL, which codegen skips (PROBE_ITER: the object is the
 * context's second word). What the program prints goes through the ring
 * like any probe's, so the output is what bpftrace prints; then the run
 * ends, as bpftrace's does.
 *
 * A pinned iterator (iter:task:PIN, PIN absolute or under /sys/fs/bpf)
 * is not run: its link is pinned there and sonde ends, saying so; its
 * printf writes into the iterator's seq file (codegen's cg_seq.c), so
 * whoever reads the pin file gets the text, as with bpftrace. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "../base/log.h"
#include "../host/btf.h"
#include "probe_util.h"

extern const struct provider provider_iter;

/* The iterators bpftrace 0.17 offers, with their fields as -lv shows
 * them (the kernel's struct bpf_iter__OBJECT less its meta pointer). */
static const struct iter_kind {
	const char *name;
	const char *fields;
} iters[] = {
	{ "task", "    struct task_struct * task\n" },
	{ "task_file", "    struct task_struct * task\n    int fd\n"
		       "    struct file * file\n" },
};

static const struct iter_kind *iter_find(const char *name)
{
	for (size_t i = 0; i < sizeof(iters) / sizeof(*iters); i++)
		if (name && strcmp(iters[i].name, name) == 0)
			return &iters[i];
	return NULL;
}

/* iter:OBJECT or iter:OBJECT:PIN */
static int iter_parse(struct attach_point *attach, struct expand_ctx *ctx)
{
	struct ap_parts parts;
	ap_split(ctx->arena, attach->text, &parts);
	if (parts.n != 2 && parts.n != 3)
		return ap_error(attach, ctx, "iter probes take an iterator and "
				"an optional pin file: 'iter:task[:PIN]' (got "
				"'%s')", attach->text);
	const char *obj = parts.v[1];
	if (ap_has_wildcard(obj))
		return ap_error(attach, ctx, "%s: iter probes take no "
				"wildcards", attach->text);
	if (!iter_find(obj))
		return ap_error(attach, ctx, "%s: no iterator '%s' (iter:task "
				"and iter:task_file)", attach->text,
				obj);
	const char *pin = NULL;
	if (parts.n == 3) {
		pin = parts.v[2];
		if (!pin[0] || strstr(pin, "..") || strlen(pin) > 200)
			return ap_error(attach, ctx, "%s: not a pin file name",
					attach->text);
		if (pin[0] != '/')
			pin = arena_printf(ctx->arena, "/sys/fs/bpf/%s", pin);
	}
	ap_set(attach, provider_iter.name, obj, pin, 0);
	return 0;
}

static int iter_expand(const struct attach_point *attach, struct expand_ctx *ctx,
		       int (*emit)(void *arg, const char *target,
				   const char *func, uint64_t freq),
		       void *arg)
{
	return emit(arg, attach->target, attach->func, 0);
}

static int iter_attach(const struct probe *p, struct attach_req *req)
{
	char fn[64];
	snprintf(fn, sizeof(fn), "bpf_iter_%s", p->target);
	struct kfunc_info fi;
	int r = kbtf_func(fn, &fi);
	if (r < 0)
		return r;
	req->how = ATTACH_ITER;
	req->btf_id = fi.btf_id;
	req->symbol = p->func;      /* the pin file, or NULL */
	return 1;
}

/* `ctx`: struct bpf_iter__OBJECT, from the kernel's BTF */
static const char *iter_ctx_struct(const struct probe *p, struct arena *a)
{
	return arena_printf(a, "bpf_iter__%s", p->target);
}

static int iter_list(const char *pattern, int pid, FILE *out)
{
	if (!provider_list_wants(&provider_iter, pattern))
		return 0;
	int n = 0;
	for (size_t i = 0; i < sizeof(iters) / sizeof(*iters); i++) {
		char name[64];
		snprintf(name, sizeof(name), "iter:%s", iters[i].name);
		if (!provider_list_match(&provider_iter, pattern, name))
			continue;
		fprintf(out, "%s\n", name);
		if (log_verbose)
			fputs(iters[i].fields, out);
		n++;
	}
	return n;
}

const struct provider provider_iter = {
	.name = "iter",
	.parse = iter_parse,
	.expand = iter_expand,
	.prog_type = BPF_PROG_TYPE_TRACING,
	.expected_attach_type = BPF_TRACE_ITER,
	.caps = PROBE_KERNEL_MEM | PROBE_TRACING | PROBE_ITER,
	.attach = iter_attach,
	.ctx_struct = iter_ctx_struct,
	.list = iter_list,
	.fires_newest_first = true,
};
