/* compile.c - the compiler pipeline, one line per pass: parse, expand
 * probes through their providers, check, generate code. */
#include "compile.h"

#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "config.h"
#include "codegen/codegen.h"
#include "elf/elf.h"
#include "host/btf.h"
#include "host/host.h"
#include "lang/frontend.h"
#include "lang/sema.h"
#include "probes/provider.h"

struct expand_state {
	struct program *prog;
	struct expand_ctx *ctx;
	const struct provider *provider;
	const char *spelling;      /* the provider name as written */
	const char *desc;          /* the front end's spelling of the point */
	bool ctx_args;             /* the front end's (frontend.h) */
	uint32_t block;
	const regex_t *filter;     /* --probe-filter, or NULL */
	size_t filtered;           /* probes it left out */
	VEC(struct probe) probes;
};

/* "provider:target:func" with absent parts left out. */
static const char *probe_name(struct arena *a, const char *provider,
			      const char *target, const char *func)
{
	if (target && func)
		return arena_printf(a, "%s:%s:%s", provider, target, func);
	if (target)
		return arena_printf(a, "%s:%s", provider, target);
	if (func)
		return arena_printf(a, "%s:%s", provider, func);
	return arena_strdup(a, provider);
}

static int expand_emit(void *arg, const char *target, const char *func,
		       uint64_t freq)
{
	struct expand_state *st = arg;
	struct arena *a = st->prog->arena;
	const char *pname = st->provider->keep_spelling && st->spelling ?
		st->spelling : st->provider->name;
	const char *name = probe_name(a, pname, target, func);
	if (st->filter && !(st->provider->caps & PROBE_RUNS_ONCE) &&
	    regexec(st->filter, name, 0, NULL, 0) != 0) {
		st->filtered++;
		return 0;
	}
	struct probe p = {
		.provider = st->provider,
		.caps = st->provider->caps,
		.name = name,
		.target = target ? arena_strdup(a, target) : NULL,
		.func = func ? arena_strdup(a, func) : NULL,
		.freq = freq,
		.block = st->block,
		.prog_type = st->provider->prog_type,
		.expected_attach_type = st->provider->expected_attach_type,
		.uprobe = st->ctx->emit_uprobe,
		.kind = st->provider->name,
		.fires_newest_first = st->provider->fires_newest_first,
		.desc = st->desc,
	};
	/* A timer's software events (cpu-clock, task-clock: hrtimers)
	 * fire in the order they were made, not newest first: 0.26 runs
	 * their blocks in script order (its test probe "software_order"),
	 * 0.17 attached them backwards as its other probes, unchanged. */
	if (st->prog->dialect >= DIALECT_026 && target &&
	    !strcmp(st->provider->name, "software") &&
	    (!strcmp(target, "cpu-clock") || !strcmp(target, "cpu") ||
	     !strcmp(target, "task-clock")))
		p.fires_newest_first = false;
	/* what its provider says of it, as data (program.h) */
	if (st->provider->ctx_struct)
		p.ctx_struct = st->provider->ctx_struct(&p, a);
	if (st->ctx_args && st->provider->ctx_args) {
		p.ctx_nargs = (uint8_t)st->provider->ctx_args(&p,
							      &p.ctx_args_off);
		if (p.ctx_nargs)
			p.caps |= PROBE_ARGN;
	}
	p.has_setup = st->provider->setup &&
		st->provider->setup(&p, &p.setup) == 1;
	return vec_push(&st->probes, p);
}

/* Whether an attach point's text names a wildcard (after its provider,
 * so a path's characters in a uprobe are judged as the provider does). */
static bool ap_text_has_wildcard(const char *text)
{
	const char *spec = strchr(text, ':');
	return strpbrk(spec ? spec + 1 : text, "*?[") != NULL;
}

/* bpftrace 0.24's missing probes (its migration guide: "if there are
 * any attachment failures, the program will exit with an error", unless
 * config missing_probes is "warn" or "ignore", language.md). An attach
 * point naming what the system lacks: "No matches for kprobe bad."
 * (error), the same with " Skipping." (warn) or nothing (ignore); a
 * wildcard matching nothing leaves its block without attach points,
 * which is said of the block. Returns whether an error was given. */
static bool missing_026(const struct program *prog, const struct node *ap,
			const struct provider *pv, bool wildcard,
			struct diags *d)
{
	if (wildcard)
		return false;     /* said of its block (missing_block_026) */
	const char *text = ap->u.attach.text;
	const char *spec = strchr(text, ':');
	spec = spec ? spec + 1 : text;
	switch (prog->config.missing_probes) {   /* program.h's encoding */
	case 0:    /* unset: 0.24 made it an error */
	case 1:
		diag_error(d, ap->pos, "NO_MATCH", "No matches for %s %s.",
			   pv->name, spec);
		return true;
	case 2:
		diag_warning(d, ap->pos, "NO_MATCH", "No matches for %s %s. "
			     "Skipping.", pv->name, spec);
		return false;
	default:
		return false;
	}
}

/* A block left without attach points (0.24, as above): an error, a
 * warning that it is removed, or nothing, as missing_probes says. */
static void missing_block_026(const struct program *prog,
			      const struct node *probe, bool said,
			      struct diags *d)
{
	switch (prog->config.missing_probes) {   /* as missing_026 */
	case 0:
	case 1:
		if (!said)
			diag_error(d, probe->pos, "NO_MATCH", "Probe has no "
				   "valid attach points.");
		break;
	case 2:
		diag_warning(d, probe->pos, "NO_MATCH", "Probe has no valid "
			     "attach points. It is being removed which may "
			     "cause issues with program behavior.");
		break;
	default:
		break;
	}
}

/* Expand every attach point of every probe block into concrete probes. */
static int expand_probes(struct node *root, struct program *prog,
			 const struct compile_opts *o, struct diags *d)
{
	struct diags missing;
	diags_init(&missing, d->src);
	struct expand_ctx ctx = { .arena = prog->arena, .diags = d,
				  .pid = o->pid, .cmd = o->cmd,
				  .missing = &missing,
				  .dialect = prog->dialect,
				  .missing_probes = prog->config.missing_probes,
				  .zdefs = o->zdefs,
				  .unsafe = o->unsafe };
	/* 0.24's handling of what the system lacks (missing_026) */
	bool strict = prog->dialect >= DIALECT_024 && !o->zdefs &&
		(!o->frontend || o->frontend == &frontend_bpftrace);
	struct expand_state st = { .prog = prog, .ctx = &ctx,
				   .ctx_args = o->frontend &&
					       o->frontend->ctx_args };
	int err = 0;
	regex_t filter;
	if (o->probe_filter) {
		int rr = regcomp(&filter, o->probe_filter,
				 REG_EXTENDED | REG_NOSUB);
		if (rr != 0) {
			char why[128];
			regerror(rr, &filter, why, sizeof(why));
			diag_error(d, (struct pos){ 0 }, "BAD_PARAM",
				   "Invalid --probe-filter regex '%s': %s",
				   o->probe_filter, why);
			diags_free(&missing);
			return -EINVAL;
		}
		st.filter = &filter;
	}

	for (uint32_t b = 0; b < root->u.list.n; b++) {
		struct node *probe = root->u.list.v[b];
		size_t block_start = st.probes.n;
		size_t block_filtered = st.filtered;
		bool block_said = false;
		for (uint32_t i = 0; i < probe->u.probe.attach.n; i++) {
			struct node *ap = probe->u.probe.attach.v[i];
			const struct provider *pv =
				provider_find(ap->u.attach.provider);
			if (pv && pv->d_only && o->frontend != &frontend_dtrace)
				pv = NULL;
			if (!pv) {
				diag_error(d, ap->pos, "BAD_PROBE",
					   "unknown probe type '%s' in '%s'",
					   ap->u.attach.provider ?
					   ap->u.attach.provider : "",
					   ap->u.attach.text);
				err = -EINVAL;
				continue;
			}
			st.spelling = ap->u.attach.provider;
			st.desc = ap->u.attach.desc;
			/* the provider sees the attach point, not the tree */
			ap->u.attach.pos = ap->pos;
			if (pv->parse && pv->parse(&ap->u.attach, &ctx) < 0) {
				err = -EINVAL;
				continue;
			}
			st.provider = pv;
			st.block = b;
			ctx.emit_uprobe = NULL;
			size_t before = st.probes.n, filtered = st.filtered;
			unsigned nmissing = missing.nerrors;
			unsigned nerrors = d->nerrors;
			ctx.matched_as_wildcard = false;
			int r = pv->expand(&ap->u.attach, &ctx, expand_emit,
					   &st);
			/* what --probe-filter removed is not missing */
			if (strict && st.probes.n == before &&
			    st.filtered == filtered && d->nerrors == nerrors &&
			    (r >= 0 || missing.nerrors > nmissing)) {
				/* what the provider said, in 0.24's words */
				bool wild = ctx.matched_as_wildcard ||
					ap_text_has_wildcard(ap->u.attach.text);
				/* a wildcard target searched in -p's process
				 * (uprobe:*:FUNC -p) keeps the provider's words,
				 * where it looked, before its block's error */
				const char *tg = ap->u.attach.target;
				if (o->pid && tg && strpbrk(tg, "*?[") &&
				    missing.nerrors > nmissing &&
				    prog->config.missing_probes <= 1)
					diags_move(d, &missing, DIAG_ERROR, "");
				diags_free(&missing);
				diags_init(&missing, d->src);
				nmissing = 0;
				if (missing_026(prog, ap, pv, wild, d))
					block_said = true;
				continue;
			}
			if (r < 0 && missing.nerrors > nmissing &&
			    st.probes.n == before)
				continue;    /* not on this system: below */
			if (r < 0) {
				err = r;
				continue;
			}
			if (st.probes.n == before && st.filtered == filtered &&
			    o->zdefs) {
				diag_error(&missing, ap->pos, "NO_MATCH",
					   "probe '%s' matches nothing",
					   ap->u.attach.text);
			} else if (st.probes.n == before &&
				   st.filtered == filtered) {
				diag_error(d, ap->pos, "NO_MATCH",
					   "probe '%s' matches nothing",
					   ap->u.attach.text);
				err = -ENOENT;
			}
		}
		if (strict && st.probes.n == block_start && !err &&
		    st.filtered == block_filtered)
			missing_block_026(prog, probe, block_said, d);
	}
	prog->nblocks = root->u.list.n;
	if (st.filter) {
		regfree(&filter);
		bool any = false;
		for (size_t i = 0; i < st.probes.n; i++)
			any |= !(st.probes.v[i].caps & PROBE_RUNS_ONCE);
		if (!any && !err) {
			diag_error(d, (struct pos){ 0 }, "NO_MATCH",
				   "No probes to attach: --probe-filter '%s' "
				   "matches none of the script's probes",
				   o->probe_filter);
			err = -ENOENT;
		}
	}
	if (strict && !err && !d->nerrors && !st.probes.n &&
	    root->u.list.n) {
		/* bpftrace 0.24's line, bare, as its tests expect it */
		fputs("No probes to attach\n", stderr);
		err = -ENOENT;
	}
	/* What probes name but this system lacks: skipped with a warning
	 * while any probe remains (bpftrace 0.17 attaches the rest: its
	 * tools name functions that differ between kernels and libraries),
	 * errors when none does or the script has other errors. */
	bool skip = !o->frontend || o->frontend == &frontend_bpftrace ||
		o->zdefs;
	/* config's missing_probes (bpftrace 0.2x), when the script sets
	 * it: error, warn (skipped) or ignore (skipped silently) */
	uint8_t policy = prog->config.missing_probes;
	bool w26 = policy && prog->dialect >= DIALECT_026;   /* its words */
	if (policy == 1)
		skip = false;
	if (missing.nerrors && !err && st.probes.n && policy == 3)
		;    /* ignored: freed below */
	else if (missing.nerrors && !err && st.probes.n && skip)
		diags_move(d, &missing, DIAG_WARNING, w26 ? ". Skipping." :
			   "; the probe is skipped");
	else if (missing.nerrors)
		diags_move(d, &missing, DIAG_ERROR, w26 ? "." : "");
	diags_free(&missing);
	if (!err && !st.probes.n && d->nerrors)
		err = -ENOENT;
	if (err) {
		vec_free(&st.probes);
		return err;
	}
	for (size_t i = 0; i < st.probes.n && st.probes.n > 1; i++)
		if (st.probes.v[i].caps & PROBE_ITER) {
			diag_error(d, root->u.list.v[st.probes.v[i].block]->pos,
				   "BAD_PROBE", "%s: an iterator probe cannot be "
				   "mixed with any other probe, not even another "
				   "iterator", st.probes.v[i].name);
			vec_free(&st.probes);
			return -EINVAL;
		}
	prog->nprobes = (uint32_t)st.probes.n;
	prog->probes = arena_array(prog->arena, struct probe,
				   prog->nprobes ? prog->nprobes : 1);
	if (st.probes.n)
		memcpy(prog->probes, st.probes.v,
		       st.probes.n * sizeof(struct probe));
	vec_free(&st.probes);
	/* `args` only where a block uses it (or types retval from it): a
	 * uprobe's come from the file's DWARF, which is costly to read */
	bool *wants = arena_array(prog->arena, bool,
				  root->u.list.n ? root->u.list.n : 1);
	for (uint32_t b = 0; b < root->u.list.n; b++)
		wants[b] = ast_uses_builtin(root->u.list.v[b], BI_ARGS);
	for (uint32_t i = 0; i < prog->nprobes; i++) {
		struct probe *p = &prog->probes[i];
		if (p->provider->args_type &&
		    (wants[p->block] || (p->caps & PROBE_TYPED_RET)))
			p->args_type = p->provider->args_type(p, &ctx);
	}
	elf_func_params_release();
	if (elf_func_params_files())
		log_info("args: read the DWARF of %u file%s",
			 elf_func_params_files(),
			 elf_func_params_files() == 1 ? "" : "s");
	return 0;
}

/* The maps every program has: the event ring and the globals. */
static void add_internal_maps(struct program *prog)
{
	/* max_entries 0: the engine sizes the ring for the machine. */
	struct map_spec ring = { .name = ".events", .kind = MAP_RINGBUF };
	prog->ringbuf_map = program_add_map(prog, &ring);
	struct map_spec globals = {
		.name = ".globals", .kind = MAP_ARRAY, .key_size = 4,
		.value_size = sizeof(struct sonde_globals), .max_entries = 1,
		.mmapable = true,
	};
	prog->globals_map = program_add_map(prog, &globals);
}

/* After sema, when the user maps are known: their failed-update counters,
 * and BPFTRACE_MAP_KEYS_MAX (bpftrace's name) applied to each. */
static void add_user_map_limits(struct program *prog, uint32_t keys_max)
{
	uint32_t n = prog->nmaps;
	bool any = false;
	for (uint32_t i = 0; i < n; i++) {
		struct map_spec *m = &prog->maps[i];
		if (m->name[0] != '@')
			continue;
		any = true;
		/* A keyless map is already as small as it can be. */
		bool hash = m->kind == MAP_HASH || m->kind == MAP_PERCPU_HASH;
		if (keys_max && hash && (m->nkeys || keys_max < m->max_entries))
			m->max_entries = keys_max;
		/* a keyless histogram's sum entry needs a slot of its own */
		if (prog->hist_sums && !m->nkeys && m->value_type &&
		    (m->value_type->kind == TYPE_HIST ||
		     m->value_type->kind == TYPE_LHIST))
			m->max_entries++;
	}
	if (!any)
		return;
	struct map_spec fails = {
		.name = SONDE_MAPFAIL_MAP, .kind = MAP_ARRAY, .key_size = 4,
		.value_size = 8, .max_entries = n, .mmapable = true,
	};
	program_add_map(prog, &fails);
}

/* The script through its language's front end (lang/frontend.h). */
static struct node *parse_script(struct program *prog,
				 const struct compile_opts *o, struct diags *d)
{
	const struct frontend *fe = o->frontend ? o->frontend :
		&frontend_bpftrace;
	struct frontend_opts fo = {
		.include_dirs = o->include_dirs,
		.ninclude_dirs = o->ninclude_dirs,
		.include_files = o->include_files,
		.ninclude_files = o->ninclude_files,
		.have_btf = host_have_btf(),
		.positional = o->positional,
		.npositional = o->npositional,
		.pid = o->pid,
		.cmd = o->cmd,
		.script_name = o->name,
		.quiet = o->quiet,
		.xopts = o->xopts,
		.nxopts = o->nxopts,
		.cpp = o->cpp,
		.defines = o->defines,
		.ndefines = o->ndefines,
		.set = o->settings,
	};
	return fe->parse(prog->arena, o->text, &fo, prog->ctypes, d);
}

/* The function a USDT site is in (D's probefunc), from the file's
 * symbols; NULL when unknown. */
static const char *site_func(const struct probe *p, struct arena *a)
{
	const struct uprobe_info *u = p->uprobe;
	if (!u || !u->path)
		return NULL;
	struct elf_file *ef;
	if (elf_open(u->path, &ef) < 0)
		return NULL;
	const struct elf_sym *sym = elf_sym_at(ef, u->vaddr);
	const char *name = sym && sym->name ? arena_strdup(a, sym->name) : NULL;
	elf_close(ef);
	return name;
}

/* A struct a uprobe's cast names but the script does not declare comes
 * from the probed binaries' DWARF before the kernel's BTF, as bpftrace
 * 0.17 looks there first (`(struct Foo *)arg0` of a program's own
 * type). The files are asked only when such a name is looked up. */
static void add_dwarf_types(struct program *prog)
{
	const char *paths[8];
	size_t n = 0;
	for (uint32_t i = 0; i < prog->nprobes && n < 8; i++) {
		const struct uprobe_info *u = prog->probes[i].uprobe;
		if (!u || !u->path)
			continue;
		size_t k = 0;
		while (k < n && strcmp(paths[k], u->path) != 0)
			k++;
		if (k == n)
			paths[n++] = u->path;
	}
	if (n)
		ctypes_add_resolver_first(prog->ctypes,
					  elf_dwarf_resolver(prog->arena, paths,
							     n));
}

/* The arguments after the script that read --NAME[=VALUE] are named
 * parameters, for getopt() (bpftrace 0.24). From 0.24 on they are not
 * positional ($1 is the first other one); in 0.17's dialect they stay
 * positional too, so no 0.17 script sees its $N move. */
static void split_named(struct program *prog, const struct compile_opts *o,
			struct sema_opts *so)
{
	if (!o->npositional)
		return;
	char **named = arena_array(prog->arena, char *, o->npositional);
	char **pos = arena_array(prog->arena, char *, o->npositional);
	int nn = 0, np = 0;
	for (int i = 0; i < o->npositional; i++) {
		char *a = o->positional[i];
		bool is_named = a[0] == '-' && a[1] == '-' && a[2] &&
			a[2] != '=';
		if (is_named)
			named[nn++] = a;
		if (!is_named || prog->dialect < DIALECT_024)
			pos[np++] = a;
	}
	so->named = named;
	so->nnamed = nn;
	so->positional = pos;
	so->npositional = np;
}

struct program *compile(const struct compile_opts *o, struct diags *d)
{
	struct arena *a = malloc(sizeof(*a));
	if (!a)
		return NULL;
	arena_init(a);
	struct program *prog = arena_new(a, struct program);
	prog->arena = a;
	prog->strlen = o->strlen ? o->strlen : SONDE_STRLEN_DEFAULT;
	prog->ringbuf_map = prog->globals_map = prog->skb_map = -1;
	prog->ctypes = ctypes_new(a);
	/* Types a script names but does not declare come from the kernel,
	 * as in bpftrace 0.17 on a BTF kernel (read only if asked). */
	ctypes_add_resolver(prog->ctypes, kbtf_resolver(a));
	prog->ustack_copy = o->ustack_fp ? 0 :
		o->ustack_copy ? o->ustack_copy : SONDE_USTACK_COPY_DEFAULT;
	prog->helper_check = o->helper_check;
	prog->hist_sums = o->hist_sums;
	prog->dialect = o->dialect;
	prog->src_name = arena_strdup(a, o->name ? o->name : "stdin");
	prog->src_text = o->text ? arena_strdup(a, o->text) : NULL;

	struct sema_opts sopts = { .positional = o->positional,
				   .npositional = o->npositional,
				   .unsafe = o->unsafe,
				   .no_child = !o->child,
				   .kinds_with = provider_names_with };
	split_named(prog, o, &sopts);
	struct node *root = parse_script(prog, o, d);
	if (!root || d->nerrors)
		goto fail;
	if (o->settings) {   /* what the script's own options set (D) */
		if (o->settings->strsize)
			prog->strlen = o->settings->strsize;
		if (o->settings->destructive)
			sopts.unsafe = true;
	}
	uint32_t map_keys_max = o->map_keys_max;
	if (config_apply(root, prog, &map_keys_max, d) < 0 || d->nerrors)
		goto fail;
	add_internal_maps(prog);
	if (expand_probes(root, prog, o, d) < 0 || d->nerrors)
		goto fail;
	add_dwarf_types(prog);
	if (o->frontend && o->frontend->name_probes)
		o->frontend->name_probes(prog, site_func);
	if (o->settings) {
		prog->dtrace.quiet = o->settings->quiet;
		prog->dtrace.flowindent = o->settings->flowindent;
		prog->dtrace.aggs = o->settings->aggs;
		prog->dtrace.naggs = o->settings->naggs;
		prog->dtrace.clauses = o->settings->clauses;
		prog->dtrace.nclauses = o->settings->nclauses;
		/* which program (-n, -s ...) each block came from, by line */
		uint32_t *lines = arena_alloc(prog->arena, (prog->nblocks + 1) *
					      sizeof(*lines));
		for (uint32_t b = 0; lines && b < prog->nblocks; b++)
			lines[b] = root->u.list.v[b]->pos.line;
		prog->dtrace.block_lines = lines;
	}
	int sr = sema_check(root, prog, &sopts, d);
	elf_func_params_release();   /* the DWARF the types came from */
	if (sr < 0 || d->nerrors)
		goto fail;
	add_user_map_limits(prog, map_keys_max);
	config_map_decls(prog, d);
	if (prog->nskb_outputs) {
		/* max_entries 0: the engine makes one slot per CPU */
		struct map_spec skb = { .name = ".skb",
					.kind = MAP_PERF_EVENT_ARRAY,
					.key_size = 4, .value_size = 4 };
		prog->skb_map = program_add_map(prog, &skb);
	}
	if (o->dump_ast)
		ast_dump(o->dump_ast, root, a);
	if (codegen_program(root, prog, d) < 0 || d->nerrors)
		goto fail;
	providers_describe(prog);
	return prog;
fail:
	program_free(prog);
	return NULL;
}

int compile_attach_points(const struct compile_opts *o, struct diags *d,
			  int (*each)(void *arg, const char *text), void *arg)
{
	struct arena *a = malloc(sizeof(*a));
	if (!a)
		return -ENOMEM;
	arena_init(a);
	struct program *prog = arena_new(a, struct program);
	prog->arena = a;
	prog->ringbuf_map = prog->globals_map = prog->skb_map = -1;
	prog->ctypes = ctypes_new(a);
	prog->dialect = o->dialect;
	struct sema_opts sopts = { 0 };
	split_named(prog, o, &sopts);
	struct node *root = parse_script(prog, o, d);
	uint32_t keys_max = 0;
	int r = 0;
	if (!root || d->nerrors ||
	    config_apply(root, prog, &keys_max, d) < 0 || d->nerrors)
		r = -EINVAL;
	for (uint32_t b = 0; !r && b < root->u.list.n; b++) {
		const struct node *probe = root->u.list.v[b];
		for (uint32_t i = 0; !r && i < probe->u.probe.attach.n; i++)
			r = each(arg, probe->u.probe.attach.v[i]->u.attach.text);
	}
	program_free(prog);
	return r;
}
