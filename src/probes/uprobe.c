/* uprobe.c - uprobe:PATH:FUNC [u:] and uretprobe:PATH:FUNC [ur:]: entry
 * and return of a function in an ELF file. FUNC is a symbol (wildcards,
 * C++ names demangled or not, by bpftrace 0.17's matching rule),
 * SYMBOL+OFFSET or 0xADDR; PATH a path, a library or program name, or
 * left out with -p (the process's executable). Attached as events of the
 * uprobe PMU (user.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/glob.h"
#include "../base/log.h"
#include "../types.h"
#include "user.h"

extern const struct provider provider_uprobe, provider_uretprobe;

static const char *kind_of(const struct attach_point *attach)
{
	const struct provider *pv = provider_find(attach->provider);
	return pv ? pv->name : "uprobe";
}

/* uprobe -> PATH ':' FUNC | FUNC (with -p) */
static int uprobe_parse(struct attach_point *attach, struct expand_ctx *ctx)
{
	const char *kind = kind_of(attach);
	struct ap_parts parts;
	if (user_split(ctx->arena, attach->text, &parts) < 0)
		return ap_error(attach, ctx, "unterminated quote in '%s'",
				attach->text);
	const char *target = NULL, *func;
	if (parts.n == 1 && ctx->pid > 0) {
		func = parts.v[0];
	} else if (parts.n >= 2) {
		target = parts.v[0];
		/* an unquoted C++ name keeps its "::" */
		func = parts.v[1];
		for (int i = 2; i < parts.n && i < AP_MAX_PARTS; i++)
			func = arena_printf(ctx->arena, "%s:%s", func, parts.v[i]);
	} else {
		return ap_error(attach, ctx, "%s probe type requires 2 arguments",
				kind);
	}
	if (target && !*target)
		return ap_error(attach, ctx, "%s probe has an empty path", kind);
	if (!*func)
		return ap_error(attach, ctx, "%s probe has no function name", kind);
	ap_set(attach, kind, target, func, 0);
	return 0;
}

struct uprobe_expand {
	struct expand_ctx *ctx;
	const struct user_target *t;
	const struct elf_file *ef;
	bool ret, wild;
	int emitted;
	int (*emit)(void *arg, const char *target, const char *func,
		    uint64_t freq);
	void *arg;
};

static int emit_at(struct uprobe_expand *x, const char *func, uint64_t vaddr,
		   uint64_t offset)
{
	struct uprobe_info *u = user_info(x->ctx, x->t, x->ef, vaddr, offset);
	u->retprobe = x->ret;
	u->wild = x->wild;
	x->ctx->emit_uprobe = u;
	int r = x->emit(x->arg, x->t->shown, func, 0);
	x->ctx->emit_uprobe = NULL;
	return r < 0 ? r : 0;
}

/* Parts of functions the compiler split off (foo.part.0) do not follow
 * the calling convention; bpftrace neither lists nor expands them, and
 * they are probed only by their exact name. */
static bool split_part(const char *name)
{
	return strstr(name, ".part.") != NULL;
}

static int emit_sym(void *arg, const struct elf_sym *sym)
{
	struct uprobe_expand *x = arg;
	if (split_part(sym->name) && x->wild)
		return 0;
	x->emitted++;
	return emit_at(x, sym->name, sym->addr, sym->offset);
}

/* "no function 'foo' in /bin/x; did you mean: fop, food?". A function
 * the file lacks is `missing` (the probe is skipped while others remain,
 * as bpftrace 0.17 skips it: tools name functions that moved between
 * libraries); a location that cannot be in it is an error. */
static int no_symbol(const struct attach_point *attach, struct expand_ctx *ctx,
		     const struct elf_file *ef, const char *kind,
		     const char *func, const char *path, const char *why,
		     bool missing)
{
	const char *near[4];
	size_t n = ap_has_wildcard(func) ? 0 : elf_suggest(ef, func, near, 4);
	char hint[512] = "";
	size_t len = 0;
	for (size_t i = 0; i < n && len < sizeof(hint); i++)
		len += (size_t)snprintf(hint + len, sizeof(hint) - len, "%s%s",
					i ? ", " : "; did you mean: ", near[i]);
	if (n && len < sizeof(hint))
		snprintf(hint + len, sizeof(hint) - len, "?");
	if (missing)
		return ap_missing(attach, ctx, "NO_SYMBOL", "%s: %s '%s' in '%s'%s",
				  kind, why, func, path, hint);
	diag_error(ctx->diags, attach->pos, "NO_SYMBOL", "%s: %s '%s' in '%s'%s",
		   kind, why, func, path, hint);
	return -ENOENT;
}

static int sym_size(void *arg, const struct elf_sym *sym)
{
	*(uint64_t *)arg = sym->size;
	return 1;
}

/* SYMBOL+OFF past the function's end, in bpftrace 0.17's words. */
static int offset_error(const struct attach_point *attach, struct expand_ctx *ctx,
			const struct elf_file *ef, const char *kind,
			const char *func)
{
	char name[256];
	const char *plus = strrchr(func, '+');
	size_t len = plus ? (size_t)(plus - func) : strlen(func);
	snprintf(name, sizeof(name), "%.*s", (int)len, func);
	uint64_t size = 0;
	elf_match(ef, name, sym_size, &size);
	diag_error(ctx->diags, attach->pos, "NO_SYMBOL",
		   "%s: Offset outside the function bounds ('%s' size is "
		   "%llu)", kind, name, (unsigned long long)size);
	return -ENOENT;
}

static int uprobe_expand_one(const struct attach_point *attach,
			     struct expand_ctx *ctx,
			     int (*emit)(void *arg, const char *target,
					 const char *func, uint64_t freq),
			     void *arg);

/* uprobe:*:FUNC -p PID (bpftrace 0.2x): a wildcard target is every file
 * the process maps executable whose path (or base name) matches it;
 * FUNC is looked for in each, and an error only when none has it. */
static int uprobe_expand_mapped(const struct attach_point *attach,
				struct expand_ctx *ctx,
				int (*emit)(void *arg, const char *target,
					    const char *func, uint64_t freq),
				void *arg)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/maps", ctx->pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return ap_error((struct attach_point *)attach, ctx, "cannot read "
				"%s: %s", path, strerror(errno));
	char line[4200], last[4096] = "";
	int found = 0, r = 0;
	unsigned files = 0;
	while (r >= 0 && files < 4096 && fgets(line, sizeof(line), f)) {
		char perms[8] = "";
		int off = 0;
		if (sscanf(line, "%*x-%*x %7s %*x %*x:%*x %*u %n", perms,
			   &off) < 1 || perms[2] != 'x' || !off)
			continue;
		char *file = line + off;
		file[strcspn(file, "\n")] = '\0';
		const char *base = strrchr(file, '/');
		if (file[0] != '/' || strcmp(file, last) == 0 ||
		    (!glob_match(attach->target, file) &&
		     !(base && glob_match(attach->target, base + 1))))
			continue;
		snprintf(last, sizeof(last), "%s", file);
		files++;
		struct attach_point one = *attach;
		one.target = arena_strdup(ctx->arena, file);
		/* what a file lacks is no error here: others may have it */
		struct diags quiet, *d = ctx->diags, *m = ctx->missing;
		diags_init(&quiet, d->src);
		ctx->diags = ctx->missing = &quiet;   /* the same ctx: emit
						       * reads emit_uprobe */
		r = uprobe_expand_one(&one, ctx, emit, arg);
		ctx->diags = d;
		ctx->missing = m;
		found += r > 0 ? r : 0;
		r = 0;        /* a file that cannot be read is skipped */
		diags_free(&quiet);
	}
	fclose(f);
	if (r < 0)
		return r;
	if (!found)
		return ap_missing(attach, ctx, "NO_SYMBOL", "%s: no function "
				  "matches '%s' in the files process %d maps "
				  "that match '%s'", attach->provider,
				  attach->func, ctx->pid, attach->target);
	return 0;
}

static int uprobe_expand(const struct attach_point *attach, struct expand_ctx *ctx,
			 int (*emit)(void *arg, const char *target,
				     const char *func, uint64_t freq),
			 void *arg)
{
	if (ctx->pid > 0 && attach->target && ap_has_wildcard(attach->target))
		return uprobe_expand_mapped(attach, ctx, emit, arg);
	int r = uprobe_expand_one(attach, ctx, emit, arg);
	return r < 0 ? r : 0;
}

static int uprobe_expand_one(const struct attach_point *attach,
			     struct expand_ctx *ctx,
			     int (*emit)(void *arg, const char *target,
					 const char *func, uint64_t freq),
			     void *arg)
{
	const char *kind = attach->provider;
	const char *func = attach->func;
	struct user_target *t = arena_new(ctx->arena, struct user_target);
	struct elf_file *ef;
	int r = user_open(attach, ctx, kind, attach->target, t, &ef);
	if (r < 0)
		return r;
	struct uprobe_expand x = { .ctx = ctx, .t = t, .ef = ef,
				   .ret = strcmp(kind, "uretprobe") == 0,
				   .wild = ap_has_wildcard(func),
				   .emit = emit, .arg = arg };
	/* a number is an address, decimal too, as bpftrace reads it */
	char addr[32];
	if (func[0] >= '1' && func[0] <= '9' &&
	    strspn(func, "0123456789") == strlen(func) && strlen(func) < 20) {
		snprintf(addr, sizeof(addr), "0x%llx", strtoull(func, NULL, 10));
		func = addr;
	}
	r = elf_match(ef, func, emit_sym, &x);
	if (r >= 0)
		r = x.emitted;
	if (r == 0 && !x.wild) {
		/* SYMBOL+OFF, 0xADDR, or an exact demangled name */
		struct elf_loc loc;
		r = elf_resolve(ef, func, &loc);
		if (r == 0)
			r = emit_at(&x, func, loc.addr, loc.offset);
		else if (r == -ERANGE)
			r = offset_error(attach, ctx, ef, kind, func);
		else if (r == -ENOENT && func[0] == '0' &&
			 (func[1] == 'x' || func[1] == 'X')) {
			/* bpftrace's words */
			diag_error(ctx->diags, attach->pos, "NO_SYMBOL",
				   "%s: Could not resolve address: %s:%s",
				   kind, t->shown, func);
			r = -ENOENT;
		}
		else if (r == -EINVAL)
			r = ap_error((struct attach_point *)attach, ctx,
				     "%s: malformed location '%s'", kind, func);
		else
			r = no_symbol(attach, ctx, ef, kind, func, t->shown,
				      "no function", true);
	} else if (r == 0) {
		r = no_symbol(attach, ctx, ef, kind, func, t->shown,
			      "no function matches", true);
	}
	elf_close(ef);
	return r < 0 ? r : x.emitted;   /* how many, for uprobe_expand */
}

/* pt_regs offsets of the registers the x86-64 calling convention passes
 * the first six integer and pointer arguments in: rdi, rsi, rdx, rcx,
 * r8, r9. */
static const uint16_t arg_regs[] = { 112, 104, 96, 88, 72, 64 };

static bool scalar(const struct ctype *t)
{
	return (t->kind == CT_INT || t->kind == CT_ENUM || t->kind == CT_PTR) &&
	       t->size >= 1 && t->size <= 8;
}

/* uprobe args->NAME: the function's parameters from the file's DWARF
 * (elf/dwarf_args.c), each read from the register it arrives in, so
 * pointers to structs are typed and `args->req->id` reads the target's
 * memory. Parameters that do not arrive in a general register (floats,
 * structs by value, the seventh on) are not in the record. */
static const struct type *uprobe_args_type(const struct probe *p,
					   struct expand_ctx *ctx)
{
	if (!p->uprobe || !p->func || p->uprobe->retprobe)
		return NULL;
	struct elf_param *prm;
	uint32_t n;
	if (elf_func_params(p->uprobe->path, p->func, p->uprobe->vaddr,
			    ctx->arena, &prm, &n) < 0)
		return NULL;
	struct record_field *f = arena_array(ctx->arena, struct record_field,
					     n ? n : 1);
	uint32_t k = 0, reg = 0;
	for (uint32_t i = 0; i < n && reg < 6; i++) {
		const struct ctype *t = prm[i].type;
		if (t->kind == CT_FLOAT)
			continue;          /* in an SSE register */
		if (!scalar(t)) {
			/* a struct by value: up to 16 bytes in one or two
			 * registers, more in memory */
			if (t->size <= 16)
				reg += (t->size + 7) / 8;
			continue;
		}
		f[k++] = (struct record_field){
			.name = prm[i].name,
			.offset = arg_regs[reg++],
			.size = t->size,
			.is_signed = t->is_signed,
			.is_ptr = t->kind == CT_PTR,
			.decl = arena_printf(ctx->arena, "%s %s", prm[i].decl,
					     prm[i].name),
			.ctype = t,
			.space = AS_USER,
		};
	}
	struct type *t = arena_new(ctx->arena, struct type);
	t->kind = TYPE_RECORD;
	t->nfields = k;
	t->rfields = f;
	return t;
}

/* -lv: a function's parameters as bpftrace 0.17 lists them. */
static void list_params(struct elf_file *ef, const struct elf_sym *s,
			FILE *out)
{
	struct arena a;
	arena_init(&a);
	struct elf_param *prm;
	uint32_t n;
	if (elf_func_params(elf_path(ef), s->name, s->addr, &a, &prm, &n) == 0)
		for (uint32_t i = 0; i < n; i++)
			fprintf(out, "    %s %s\n", prm[i].decl, prm[i].name);
	arena_free(&a);
}

struct list_ctx {
	const struct provider *pv;
	const char *pattern;    /* over symbol names */
	FILE *out;
};

static int list_file(void *arg, struct elf_file *ef, const char *shown)
{
	struct list_ctx *lc = arg;
	size_t n;
	const struct elf_sym *syms = elf_syms(ef, &n);
	int found = 0;
	for (size_t i = 0; i < n; i++) {
		if (lc->pattern && !elf_sym_match(&syms[i], lc->pattern))
			continue;
		/* static functions of one name in several files: one line */
		if ((i && strcmp(syms[i].name, syms[i - 1].name) == 0) ||
		    split_part(syms[i].name))
			continue;
		fprintf(lc->out, "%s:%s:%s\n", lc->pv->name, shown,
			syms[i].name);
		if (log_verbose && lc->pv == &provider_uprobe)
			list_params(ef, &syms[i], lc->out);
		found++;
	}
	return found;
}

/* -l: uprobe:PATH:FUNC, uprobe:FUNC with -p, or any pattern with -p
 * (matched against the function names of the process's executable). */
static int list_common(const struct provider *pv, const char *pattern,
		       int pid, FILE *out)
{
	if (!provider_list_wants(pv, pattern))
		return 0;
	struct list_ctx lc = { .pv = pv, .out = out };
	const char *target = NULL;
	if (pattern && strchr(pattern, ':')) {
		struct arena a;
		arena_init(&a);
		struct ap_parts parts;
		int r = user_split(&a, pattern, &parts);
		if (r == 0 && parts.n == 1 && pid > 0) {
			lc.pattern = parts.v[0];
		} else if (r == 0 && parts.n >= 2) {
			target = parts.v[0];
			lc.pattern = parts.v[1];
			for (int i = 2; i < parts.n && i < AP_MAX_PARTS; i++)
				lc.pattern = arena_printf(&a, "%s:%s", lc.pattern,
							  parts.v[i]);
		} else if (r == 0 && parts.n == 1) {
			target = parts.v[0];
		}
		/* the strings live in the arena until the walk is done */
		if (r == 0 && target && pid <= 0 && ap_has_wildcard(target))
			r = user_glob_files(target, list_file, &lc);
		else
			r = target || pid > 0 ?
				user_list_files(pv->name, target, pid, true,
						list_file, &lc) : 0;
		arena_free(&a);
		return r;
	}
	/* no provider: the pattern matches the function names */
	lc.pattern = pattern;
	return user_list_files(pv->name, NULL, pid, true, list_file, &lc);
}

static int uprobe_list(const char *pattern, int pid, FILE *out)
{
	int r = list_common(&provider_uprobe, pattern, pid, out);
	elf_func_params_release();
	return r;
}

/* Only a pattern naming uretprobe comes here (probes/list.c): bpftrace
 * lists a function under uprobe alone otherwise. */
static int uretprobe_list(const char *pattern, int pid, FILE *out)
{
	return list_common(&provider_uretprobe, pattern, pid, out);
}

/* The process engine patches the function in the traced process. */
static int uprobe_process(const struct probe *p, struct process_req *req)
{
	if (!p->uprobe || p->uprobe->usdt)
		return -EINVAL;
	req->how = PROCESS_FUNC;
	return 0;
}

const struct provider provider_uprobe = {
	.name = "uprobe",
	.alias = "u",
	.parse = uprobe_parse,
	.expand = uprobe_expand,
	.args_type = uprobe_args_type,
	.prog_type = BPF_PROG_TYPE_KPROBE,
	.caps = PROBE_ARGN | PROBE_SARGN | PROBE_FUNC | PROBE_REGS |
		PROBE_USTACK | PROBE_KSTACK | PROBE_USER_MEM | PROBE_ARGS,
	.attach = user_attach,
	.process = uprobe_process,
	.list = uprobe_list,
	.fires_newest_first = true,
};

const struct provider provider_uretprobe = {
	.name = "uretprobe",
	.alias = "ur",
	.parse = uprobe_parse,
	.expand = uprobe_expand,
	.prog_type = BPF_PROG_TYPE_KPROBE,
	.caps = PROBE_RETVAL | PROBE_FUNC | PROBE_REGS | PROBE_USTACK |
		PROBE_KSTACK | PROBE_USER_MEM,
	.attach = user_attach,
	.process = uprobe_process,
	.list = uretprobe_list,
	.fires_newest_first = true,
};
