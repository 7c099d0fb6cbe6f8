/* tracepoint.c - tracepoint:CATEGORY:EVENT: the kernel's static trace
 * events, wildcards expanded over tracefs, `args` read from the event's
 * format file, attached as a perf tracepoint event. */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../base/log.h"
#include "../base/privilege.h"
#include "probe_util.h"
#include "tracepoint_format.h"
#include "../base/glob.h"

extern const struct provider provider_tracepoint;

static int tracepoint_parse(struct attach_point *attach, struct expand_ctx *ctx)
{
	struct ap_parts parts;
	ap_split(ctx->arena, attach->text, &parts);
	const char *cat, *event;
	if (parts.n == 2 && strcmp(parts.v[1], "*") == 0) {
		cat = event = parts.v[1];    /* tracepoint:* is every event */
	} else if (parts.n == 3) {
		cat = parts.v[1];
		event = parts.v[2];
	} else {
		return ap_error(attach, ctx,
				"tracepoint probe type requires 2 arguments");
	}
	ap_set(attach, "tracepoint", cat, event, 0);
	return 0;
}

/* Every "category:event" tracefs knows, one per line (malloc'd), read
 * from available_events. */
static char *events_list(void)
{
	const char *dir = tracefs_dir();
	if (!dir)
		return NULL;
	char path[512];
	snprintf(path, sizeof(path), "%s/available_events", dir);
	return probe_read_file(path);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The "category:event" lines of the list that match cat:event, sorted
 * and unique, in a malloc'd array of pointers into `text`. */
static int events_match(char *text, const char *cat, const char *event,
			const char ***out, size_t *nout)
{
	VEC(const char *) m = { 0 };
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		char *colon = strchr(line, ':');
		if (!colon)
			continue;
		*colon = '\0';
		bool hit = glob_match(cat, line) &&
			   glob_match(event, colon + 1);
		*colon = ':';
		if (hit && vec_push(&m, line) < 0) {
			vec_free(&m);
			return -ENOMEM;
		}
	}
	if (m.n)
		qsort(m.v, m.n, sizeof(*m.v), cmp_str);
	size_t n = 0;
	for (size_t i = 0; i < m.n; i++)
		if (!n || strcmp(m.v[n - 1], m.v[i]) != 0)
			m.v[n++] = m.v[i];
	*out = m.v;
	*nout = n;
	return 0;
}

static int tracepoint_expand(const struct attach_point *attach, struct expand_ctx *ctx,
			     int (*emit)(void *arg, const char *target,
					 const char *func, uint64_t freq),
			     void *arg)
{
	const char *cat = attach->target;
	const char *event = attach->func;
	struct attach_point *ap = (struct attach_point *)attach;
	const char *dir = tracefs_dir();
	if (!dir && errno == EACCES && !privilege_can_trace()) {
		diag_error(ctx->diags, attach->pos, "NO_PERMISSION",
			   "cannot read tracefs (/sys/kernel/tracing): %s; "
			   PRIVILEGE_NEEDED, strerror(errno));
		return -EACCES;
	}
	if (!dir)
		return ap_error(ap, ctx, "cannot find tracefs (mount it with "
				"'mount -t tracefs nodev /sys/kernel/tracing'): %s",
				strerror(errno));

	if (!ap_has_wildcard(cat) && !ap_has_wildcard(event)) {
		/* Look at the event itself: available_events leaves some out. */
		char path[512];
		snprintf(path, sizeof(path), "%s/events/%s/%s/id", dir, cat,
			 event);
		if (*cat && *event && !strchr(cat, '/') && !strchr(event, '/') &&
		    access(path, F_OK) == 0)
			return emit(arg, cat, event, 0);
		if (ctx->zdefs)
			return ap_missing(attach, ctx, "NO_MATCH", "tracepoint "
					  "not found: %s:%s", cat, event);
		/* from 0.24 missing_probes decides (compile.c), said in
		 * 0.26's words */
		if (ctx->dialect >= DIALECT_024)
			return ap_missing(attach, ctx, "NO_MATCH", "No matches "
					  "for tracepoint %s:%s", cat, event);
		diag_error(ctx->diags, attach->pos, "NO_MATCH",
			   "tracepoint not found: %s:%s", cat, event);
		return -ENOENT;
	}

	char *text = events_list();
	if (!text)
		return ap_error(ap, ctx, "cannot read %s/available_events: %s",
				dir, strerror(errno));
	const char **m;
	size_t n;
	int r = events_match(text, cat, event, &m, &n);
	for (size_t i = 0; r >= 0 && i < n; i++) {
		char *colon = strchr(m[i], ':');
		char *c = arena_strndup(ctx->arena, m[i],
					(size_t)(colon - m[i]));
		r = emit(arg, c, colon + 1, 0);
	}
	if (r >= 0 && n == 0 && (ctx->zdefs || ctx->dialect >= DIALECT_024)) {
		r = ap_missing(attach, ctx, "NO_MATCH", "tracepoints not "
			       "found: %s:%s", cat, event);
	} else if (r >= 0 && n == 0) {
		diag_error(ctx->diags, attach->pos, "NO_MATCH",
			   "tracepoints not found: %s:%s", cat, event);
		r = -ENOENT;
	}
	free(m);
	free(text);
	return r < 0 ? r : 0;
}

/* The format file of one event (malloc'd), or NULL. */
static char *event_format(const char *cat, const char *event)
{
	const char *dir = tracefs_dir();
	if (!dir)
		return NULL;
	char path[512];
	snprintf(path, sizeof(path), "%s/events/%s/%s/format", dir, cat, event);
	return probe_read_file(path);
}

static const struct type *tracepoint_args(const struct probe *p,
					  struct expand_ctx *ctx)
{
	char *text = event_format(p->target, p->func);
	if (!text)
		return NULL;
	const struct type *t = tp_format_type(ctx->arena, text);
	free(text);
	return t;
}

/* The perf config (id) of tracepoint CATEGORY:EVENT. */
static int tracepoint_id(const char *category, const char *event,
			 uint64_t *id)
{
	const char *dir = tracefs_dir();
	if (!dir)
		return -errno;
	char path[512];
	snprintf(path, sizeof(path), "%s/events/%s/%s/id", dir, category,
		 event);
	char *text = probe_read_file(path);
	if (!text)
		return -errno;
	char *end;
	unsigned long long v = strtoull(text, &end, 10);
	bool bad = end == text;
	free(text);
	if (bad)
		return -EINVAL;
	*id = v;
	return 0;
}

/* syscalls:sys_enter_NAME and sys_exit_NAME have the record layout of
 * raw_syscalls:sys_enter and sys_exit (the number at 8, then the six
 * arguments or the return value from 16), so one program there can
 * serve them all, dispatching on the number (kernel/syscalls.c):
 * hundreds of probes attach and detach as one. */
static void syscall_dispatch(const struct probe *p, struct attach_req *req)
{
	bool enter = strncmp(p->func, "sys_enter_", 10) == 0;
	bool exit_ = strncmp(p->func, "sys_exit_", 9) == 0;
	if (strcmp(p->target, "syscalls") != 0 || (!enter && !exit_))
		return;
	int nr = syscall_nr(p->func + (enter ? 10 : 9));
	uint64_t raw;
	if (nr < 0 || tracepoint_id("raw_syscalls", enter ? "sys_enter" :
				    "sys_exit", &raw) < 0)
		return;
	req->multi = MULTI_SYSCALL;
	req->syscall_nr = nr;
	req->retprobe = exit_;
	req->dispatch_config = raw;
}

static int tracepoint_attach(const struct probe *p, struct attach_req *req)
{
	uint64_t id;
	int r = tracepoint_id(p->target, p->func, &id);
	if (r < 0)
		return r;
	/* One event on one CPU is enough: the program runs on every CPU
	 * for a tracepoint, whatever the perf event's CPU. */
	req->how = ATTACH_PERF_EVENT;
	req->perf_type = PERF_TYPE_TRACEPOINT;
	req->perf_config = id;
	req->sample_period = 1;
	req->sample_freq = 0;
	req->all_cpus = false;
	req->pid = -1;
	syscall_dispatch(p, req);
	return 1;
}

/* -lv: the fields of `args`, as bpftrace prints them. */
static void list_fields(const char *cat, const char *event, FILE *out)
{
	char *text = event_format(cat, event);
	if (!text)
		return;
	struct arena a;
	arena_init(&a);
	struct record_field *f;
	uint32_t n, size;
	if (tp_format_parse(&a, text, &f, &n, &size) == 0)
		for (uint32_t i = 0; i < n; i++)
			fprintf(out, "    %s\n", f[i].decl);
	arena_free(&a);
	free(text);
}

static int tracepoint_list(const char *pattern, int pid, FILE *out)
{
	if (!provider_list_wants(&provider_tracepoint, pattern))
		return 0;
	char *text = events_list();
	if (!text) {
		log_warn("tracepoint: cannot list events: %s", strerror(errno));
		return 0;
	}
	const char **m;
	size_t n;
	int found = 0;
	if (events_match(text, "*", "*", &m, &n) < 0) {
		free(text);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		char name[512];
		snprintf(name, sizeof(name), "tracepoint:%s", m[i]);
		if (!provider_list_match(&provider_tracepoint, pattern, name))
			continue;
		fprintf(out, "%s\n", name);
		found++;
		if (log_verbose) {
			char *colon = strchr(m[i], ':');
			*colon = '\0';
			list_fields(m[i], colon + 1, out);
			*colon = ':';
		}
	}
	free(m);
	free(text);
	return found;
}

/* A syscall's tracepoint holds its arguments (sys_enter_*: after the
 * common fields and the syscall number, args[6]) or its return value
 * (sys_exit_*: ret) as 8-byte slots from offset 16, as the kernel lays
 * out struct syscall_trace_enter/exit: what D's arg0.. read. */
static uint32_t tracepoint_ctx_args(const struct probe *p, uint16_t *off)
{
	if (!p->target || strcmp(p->target, "syscalls") != 0 || !p->func)
		return 0;
	*off = 16;
	if (strncmp(p->func, "sys_enter_", 10) == 0)
		return 6;
	return strncmp(p->func, "sys_exit_", 9) == 0 ? 1 : 0;
}

const struct provider provider_tracepoint = {
	.name = "tracepoint",
	.alias = "t",
	.parse = tracepoint_parse,
	.expand = tracepoint_expand,
	.args_type = tracepoint_args,
	.ctx_args = tracepoint_ctx_args,
	.prog_type = BPF_PROG_TYPE_TRACEPOINT,
	.caps = PROBE_ARGS | PROBE_KSTACK | PROBE_USTACK | PROBE_KERNEL_MEM,
	.attach = tracepoint_attach,
	.list = tracepoint_list,
};
