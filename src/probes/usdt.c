/* usdt.c - usdt:PATH:[PROVIDER:]NAME [U:]: the static probe sites
 * (.note.stapsdt) of a program or library, every site of a probe one
 * probe of its own (each has its own argument locations), wildcards on
 * provider and name, the semaphore raised by the kernel through the
 * uprobe PMU's ref_ctr_offset. With -p and no PATH (or a PATH with
 * wildcards), every object the process maps; with USDT_EVERY_PROCESS
 * as PATH ("/proc/" "*", D's `prov*:::name` without -p), every object
 * any running process maps. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../base/log.h"
#include "user.h"
#include "../base/glob.h"

extern const struct provider provider_usdt;

/* usdt -> PATH ':' [PROVIDER ':'] NAME | NAME (with -p)
 * As bpftrace 0.17 reads them: an empty PROVIDER is any provider
 * (`usdt:./prog::*probe2`), and with -p an empty PATH is every object
 * the process maps (`usdt::tracetest:testprobe -p PID`). */
static int usdt_parse(struct attach_point *attach, struct expand_ctx *ctx)
{
	struct ap_parts parts;
	if (user_split(ctx->arena, attach->text, &parts) < 0)
		return ap_error(attach, ctx, "unterminated quote in '%s'",
				attach->text);
	const char *target = NULL, *prov = "", *name;
	if (parts.n == 1 && ctx->pid > 0)
		name = parts.v[0];
	else if (parts.n == 2)
		target = parts.v[0], name = parts.v[1];
	else if (parts.n == 3)
		target = parts.v[0], prov = parts.v[1], name = parts.v[2];
	else
		return ap_error(attach, ctx,
				"usdt probe type requires 2 or 3 arguments");
	if (target && !*target) {
		if (ctx->pid <= 0)
			return ap_error(attach, ctx,
					"usdt probe has an empty path");
		target = NULL;
	}
	if (!*name)
		return ap_error(attach, ctx, "usdt probe has no probe name");
	const char *func = *prov ? arena_printf(ctx->arena, "%s:%s", prov,
						name) : name;
	ap_set(attach, "usdt", target, func, 0);
	return 0;
}

/* func is "PROVIDER:NAME" or "NAME" (any provider). */
static void split_func(const char *func, char *prov, size_t len,
		       const char **name)
{
	const char *colon = strchr(func, ':');
	if (!colon) {
		prov[0] = '\0';
		*name = func;
		return;
	}
	size_t n = (size_t)(colon - func);
	if (n >= len)
		n = len - 1;
	memcpy(prov, func, n);
	prov[n] = '\0';
	*name = colon + 1;
}

struct usdt_expand {
	const struct attach_point *attach;
	struct expand_ctx *ctx;
	const char *prov;       /* NULL: any */
	const char *name;
	int (*emit)(void *arg, const char *target, const char *func,
		    uint64_t freq);
	void *arg;
	int found;
	/* for "did you mean": the closest probe seen */
	char near[256];
	unsigned near_dist;
};

/* Parse a site's argument specs; symbols are folded into val (their
 * link-time address, the code generator adds the load bias). */
static void site_args(struct expand_ctx *ctx, const struct elf_file *ef,
		      const struct usdt_probe *s, struct uprobe_info *u)
{
	struct usdt_arg *args = arena_array(ctx->arena, struct usdt_arg,
					    USDT_MAX_ARGS);
	int n = usdt_args_parse(s->args, args, USDT_MAX_ARGS);
	u->args_text = arena_strdup(ctx->arena, s->args);
	if (n < 0) {
		u->args_error = n;
		return;
	}
	for (int i = 0; i < n; i++) {
		if (!args[i].symbol[0])
			continue;
		uint64_t addr;
		if (elf_symbol_addr(ef, args[i].symbol, &addr) < 0) {
			u->args_error = -ENOENT;
			return;
		}
		args[i].val = (int64_t)((uint64_t)args[i].val + addr);
	}
	u->args = args;
	u->nargs = (uint32_t)n;
}

static int expand_file(struct usdt_expand *x, const struct user_target *t,
		       const struct elf_file *ef)
{
	struct usdt_probe *v;
	size_t n;
	int r = usdt_probes(ef, &v, &n);
	if (r == -EFBIG) {
		diag_error(x->ctx->diags, x->attach->pos, "NOT_ELF",
			   "usdt: the .note.stapsdt of '%s' is larger than "
			   "sonde reads (%d MiB)", t->shown, USDT_NOTES_MAX_MIB);
		return r;
	}
	if (r < 0) {
		diag_error(x->ctx->diags, x->attach->pos, "NOT_ELF",
			   "usdt: malformed .note.stapsdt in '%s'", t->shown);
		return r;
	}
	const char *want = x->prov ? arena_printf(x->ctx->arena, "%s:%s",
						  x->prov, x->name) : x->name;
	bool wild = ap_has_wildcard(want);
	for (size_t i = 0; i < n && r == 0; i++) {
		if (!usdt_probe_match(&v[i], x->prov, x->name)) {
			char full[256];
			snprintf(full, sizeof(full), "%s:%s", v[i].provider,
				 v[i].name);
			unsigned d = wild ? ~0u : elf_edit_distance(
				x->prov ? full : v[i].name, want, x->near_dist);
			if (d < x->near_dist) {
				x->near_dist = d;
				snprintf(x->near, sizeof(x->near), "%s", full);
			}
			continue;
		}
		struct uprobe_info *u = user_info(x->ctx, t, ef, v[i].pc,
						  v[i].pc_offset);
		u->usdt = true;
		u->ref_ctr_offset = v[i].sema_offset;
		site_args(x->ctx, ef, &v[i], u);
		const char *func = arena_printf(x->ctx->arena, "%s:%s",
						v[i].provider, v[i].name);
		x->ctx->emit_uprobe = u;
		r = x->emit(x->arg, t->shown, func, 0);
		x->ctx->emit_uprobe = NULL;
		x->found++;
	}
	usdt_probes_free(v, n);
	return r < 0 ? r : 0;
}

/* user_list_files callback for the expansion over a process. */
static int expand_object(void *arg, struct elf_file *ef, const char *shown)
{
	struct usdt_expand *x = arg;
	struct user_target *t = arena_new(x->ctx->arena, struct user_target);
	snprintf(t->path, sizeof(t->path), "%s", elf_path(ef));
	t->shown = arena_strdup(x->ctx->arena, shown);
	int r = expand_file(x, t, ef);
	return r < 0 ? r : 0;
}

static int usdt_expand(const struct attach_point *attach, struct expand_ctx *ctx,
		       int (*emit)(void *arg, const char *target,
				   const char *func, uint64_t freq),
		       void *arg)
{
	const char *target = attach->target;
	char prov[128];
	struct usdt_expand x = { .attach = attach, .ctx = ctx, .emit = emit,
				 .arg = arg, .near_dist = 4 };
	split_func(attach->func, prov, sizeof(prov), &x.name);
	x.prov = prov[0] ? prov : NULL;
	/* -p PID with usdt:A:B where A is no file: PROVIDER:NAME over the
	 * process, as bpftrace reads it */
	char path[PATH_MAX];
	if (ctx->pid > 0 && target && !x.prov && !strchr(target, '/') &&
	    elf_resolve_target(target, ctx->pid, path, sizeof(path)) == -ENOENT) {
		x.prov = target;
		target = NULL;
	}
	int r;
	const char *where;
	if (target && ctx->pid <= 0 && strcmp(target, USDT_EVERY_PROCESS) == 0) {
		/* sonde's spelling for the objects of every process (D's
		 * `prov*:::name` without -p) */
		r = user_every_process(expand_object, &x);
		where = "the objects of every running process";
	} else if (target && ctx->pid <= 0 && ap_has_wildcard(target)) {
		/* the files the pattern matches, as bpftrace globs them */
		r = user_glob_files(target, expand_object, &x);
		where = arena_printf(ctx->arena, "the files matching '%s'",
				     target);
	} else if (!target || (ctx->pid > 0 && ap_has_wildcard(target))) {
		/* every object the process maps (user.c checks the pid) */
		r = user_list_files("usdt", target, ctx->pid, false,
				    expand_object, &x);
		if (r == -ESRCH) {
			diag_error(ctx->diags, attach->pos, "NO_PROCESS",
				   "process %d does not exist", ctx->pid);
			return r;
		}
		where = arena_printf(ctx->arena, "the files process %d maps",
				     ctx->pid);
	} else {
		struct user_target *t = arena_new(ctx->arena, struct user_target);
		struct elf_file *ef;
		r = user_open(attach, ctx, "usdt", target, t, &ef);
		if (r < 0)
			return r;
		r = expand_file(&x, t, ef);
		elf_close(ef);
		where = arena_printf(ctx->arena, "'%s'", t->shown);
	}
	if (r < 0)
		return r;
	if (!x.found) {
		return ap_missing(attach, ctx, "NO_PROBE",
				  "usdt: no probe '%s' in %s%s%s%s",
				  attach->func, where,
				  x.near[0] ? "; did you mean: " : "", x.near,
				  x.near[0] ? "?" : "");
	}
	return 0;
}

/* -l: one line per probe (not per site); list.c sorts the lines. */
struct list_ctx {
	const char *prov, *name;   /* patterns; NULL: any */
	const char *pattern;       /* a pattern without provider prefix */
	FILE *out;
};

static int list_file(void *arg, struct elf_file *ef, const char *shown)
{
	struct list_ctx *lc = arg;
	struct usdt_probe *v;
	size_t n;
	int r = usdt_probes(ef, &v, &n);
	if (r == -EFBIG) {
		log_warn("usdt: the .note.stapsdt of '%s' is larger than sonde "
			 "reads (%d MiB)", shown, USDT_NOTES_MAX_MIB);
		return 0;
	}
	if (r < 0) {
		log_warn("usdt: malformed .note.stapsdt in '%s'", shown);
		return 0;
	}
	int found = 0;
	for (size_t i = 0; i < n; i++) {
		if (!usdt_probe_match(&v[i], lc->prov, lc->name))
			continue;
		if (lc->pattern && !glob_match(lc->pattern, v[i].name))
			continue;
		fprintf(lc->out, "usdt:%s:%s:%s\n", shown, v[i].provider,
			v[i].name);
		found++;
	}
	usdt_probes_free(v, n);
	return found;
}

static int usdt_list(const char *pattern, int pid, FILE *out)
{
	if (!provider_list_wants(&provider_usdt, pattern))
		return 0;
	struct list_ctx lc = { .out = out };
	if (!pattern || !strchr(pattern, ':')) {
		lc.pattern = pattern;
		return user_list_files("usdt", NULL, pid, false, list_file, &lc);
	}
	struct arena a;
	arena_init(&a);
	struct ap_parts parts;
	const char *target = NULL;
	int r = user_split(&a, pattern, &parts);
	if (r == 0 && parts.n == 1) {
		if (pid > 0)
			lc.name = parts.v[0];
		else
			target = parts.v[0];
	} else if (r == 0 && parts.n == 2) {
		target = parts.v[0];
		lc.name = parts.v[1];
	} else if (r == 0 && parts.n == 3) {
		target = parts.v[0];
		lc.prov = parts.v[1];
		lc.name = parts.v[2];
	}
	if (r == 0 && target && pid <= 0 && ap_has_wildcard(target))
		r = user_glob_files(target, list_file, &lc);
	else
		r = target || pid > 0 ?
			user_list_files("usdt", target, pid, false, list_file,
					&lc) : 0;
	arena_free(&a);
	return r;
}

/* The process engine patches the site's nop in the traced process. */
static int usdt_process(const struct probe *p, struct process_req *req)
{
	if (!p->uprobe || !p->uprobe->usdt)
		return -EINVAL;
	req->how = PROCESS_USDT;
	return 0;
}

const struct provider provider_usdt = {
	.name = "usdt",
	.alias = "U",
	.parse = usdt_parse,
	.expand = usdt_expand,
	.prog_type = BPF_PROG_TYPE_KPROBE,
	.caps = PROBE_ARGN | PROBE_FUNC | PROBE_REGS | PROBE_USTACK |
		PROBE_KSTACK | PROBE_USER_MEM,
	.attach = user_attach,
	.process = usdt_process,
	.list = usdt_list,
	.fires_newest_first = true,
};
