/* begin_end.c - the BEGIN and END probes: run once, in sonde's own
 * context, before the first event and after the last.
 *
 * They are loaded as raw tracepoint programs because that type can be
 * run on demand with BPF_PROG_TEST_RUN and still has every tracing helper
 * (ring buffer, current pid/comm, ktime, stack ids). The run happens in
 * sonde's own task, so `pid` and `comm` are sonde's, as in bpftrace. */
#include <errno.h>
#include <string.h>
#include <strings.h>

#include "probe_util.h"

/* BEGIN and END, or begin and end as bpftrace 0.2x spells them (the
 * probe keeps the spelling it was given: `probe` says "begin"). */
static int once_parse(struct attach_point *attach, struct expand_ctx *ctx,
		      const char *name)
{
	struct ap_parts parts;
	ap_split(ctx->arena, attach->text, &parts);
	if (parts.n != 1 || strcasecmp(parts.v[0], name) != 0)
		return ap_error(attach, ctx,
				"%s probe type requires 0 arguments", parts.v[0]);
	ap_set(attach, parts.v[0], NULL, NULL, 0);
	return 0;
}

static int begin_parse(struct attach_point *attach, struct expand_ctx *ctx)
{
	return once_parse(attach, ctx, "BEGIN");
}

static int end_parse(struct attach_point *attach, struct expand_ctx *ctx)
{
	return once_parse(attach, ctx, "END");
}

/* D's dtrace:::ERROR (lang/d.c makes it): run by sonde when a clause
 * faults, its arguments the fault's (output_on_fault) */
static int error_parse(struct attach_point *attach, struct expand_ctx *ctx)
{
	return once_parse(attach, ctx, "ERROR");
}

static int once_expand(const struct attach_point *attach, struct expand_ctx *ctx,
		       int (*emit)(void *arg, const char *target,
				   const char *func, uint64_t freq),
		       void *arg)
{
	return emit(arg, NULL, NULL, 0);
}

static int begin_attach(const struct probe *p, struct attach_req *req)
{
	req->how = ATTACH_TEST_RUN;
	req->at_end = false;
	return 1;
}

static int end_attach(const struct probe *p, struct attach_req *req)
{
	req->how = ATTACH_TEST_RUN;
	req->at_end = true;
	return 1;
}

static int error_attach(const struct probe *p, struct attach_req *req)
{
	req->how = ATTACH_TEST_RUN;
	req->on_fault = true;
	return 1;
}

static int error_process(const struct probe *p, struct process_req *req)
{
	req->how = PROCESS_FAULT;
	return 0;
}

static int begin_process(const struct probe *p, struct process_req *req)
{
	req->how = PROCESS_BEGIN;
	return 0;
}

static int end_process(const struct probe *p, struct process_req *req)
{
	req->how = PROCESS_END;
	return 0;
}

const struct provider provider_begin = {
	.name = "BEGIN",
	.alias = "begin",
	.keep_spelling = true,
	.parse = begin_parse,
	.expand = once_expand,
	.prog_type = BPF_PROG_TYPE_RAW_TRACEPOINT,
	.caps = PROBE_RUNS_ONCE | PROBE_USTACK,
	.attach = begin_attach,
	.process = begin_process,
};

const struct provider provider_end = {
	.name = "END",
	.alias = "end",
	.keep_spelling = true,
	.parse = end_parse,
	.expand = once_expand,
	.prog_type = BPF_PROG_TYPE_RAW_TRACEPOINT,
	.caps = PROBE_RUNS_ONCE | PROBE_USTACK,
	.attach = end_attach,
	.process = end_process,
};

/* bench:NAME (bpftrace 0.26, language.md "bench"): run over and over by
 * `--mode bench` to time it, after BEGIN; ignored otherwise. */
static int bench_parse(struct attach_point *attach, struct expand_ctx *ctx)
{
	struct ap_parts parts;
	ap_split(ctx->arena, attach->text, &parts);
	if (parts.n != 2 || !*parts.v[1])
		return ap_error(attach, ctx, "bench probe type requires 1 "
				"argument: bench:NAME");
	if (ap_has_wildcard(parts.v[1]))
		return ap_error(attach, ctx, "wildcards are not allowed for "
				"bench probe type");
	ap_set(attach, "bench", NULL, parts.v[1], 0);
	return 0;
}

static int bench_expand(const struct attach_point *attach,
			struct expand_ctx *ctx,
			int (*emit)(void *arg, const char *target,
				    const char *func, uint64_t freq),
			void *arg)
{
	return emit(arg, NULL, attach->func, 0);
}

static int bench_attach(const struct probe *p, struct attach_req *req)
{
	req->how = ATTACH_TEST_RUN;
	req->bench = true;
	return 1;
}

const struct provider provider_bench = {
	.name = "bench",
	.parse = bench_parse,
	.expand = bench_expand,
	.prog_type = BPF_PROG_TYPE_RAW_TRACEPOINT,
	.caps = PROBE_RUNS_ONCE | PROBE_USTACK,
	.attach = bench_attach,
};

/* arg0..arg5 are the context's words, as a raw tracepoint's */
const struct provider provider_error = {
	.name = "ERROR",
	.keep_spelling = true,
	.d_only = true,
	.parse = error_parse,
	.expand = once_expand,
	.prog_type = BPF_PROG_TYPE_RAW_TRACEPOINT,
	.caps = PROBE_RUNS_ONCE | PROBE_ARGN | PROBE_USTACK,
	.attach = error_attach,
	.process = error_process,
};
