/* btf.c - kernel functions from vmlinux BTF: lookup by name, arguments
 * with their types and context slots, and wildcard listing. */

/*
 * A fentry/fexit program sees the traced function's arguments as an
 * array of u64 (the trampoline's copy of the argument registers); an
 * argument of up to 8 bytes takes one slot, a struct of 9 to 16 bytes
 * passed by value takes two, and fexit finds the return value in the
 * slot after the last argument. The program is loaded with the FUNC's
 * BTF id (attach_btf_id) and the verifier checks every context access
 * against the same BTF.
 *
 * vmlinux BTF is parsed once per process and kept: it is a few
 * megabytes, immutable while the system runs, and wanted by the
 * compiler (expansion, types) and by -l alike. The function index is
 * sorted by name for lookups and listing.
 */
#include <bpf/btf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "btf.h"
#include "../base/glob.h"

struct kfunc_ent {
	const char *name;
	uint32_t id;
};

/* Process-wide: vmlinux BTF and its sorted function index, loaded on
 * first use. */
static struct {
	struct btf *btf;
	int err;                /* load failed with this */
	struct kfunc_ent *funcs;
	size_t nfuncs;
} vmlinux;

static int ent_cmp(const void *a, const void *b)
{
	const struct kfunc_ent *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	return c ? c : (x->id > y->id) - (x->id < y->id);
}

static int vmlinux_load(void)
{
	if (vmlinux.btf)
		return 0;
	if (vmlinux.err)
		return vmlinux.err;
	struct btf *btf = btf__load_vmlinux_btf();
	if (!btf) {
		vmlinux.err = errno == ENOENT ? -EOPNOTSUPP :
			(errno ? -errno : -EOPNOTSUPP);
		return vmlinux.err;
	}
	uint32_t n = btf__type_cnt(btf);
	struct kfunc_ent *v = malloc(sizeof(*v) * (n ? n : 1));
	if (!v) {
		btf__free(btf);
		return -ENOMEM;
	}
	size_t k = 0;
	for (uint32_t id = 1; id < n; id++) {
		const struct btf_type *t = btf__type_by_id(btf, id);
		if (!t || !btf_is_func(t))
			continue;
		const char *name = btf__name_by_offset(btf, t->name_off);
		if (!name || !*name)
			continue;
		v[k++] = (struct kfunc_ent){ name, id };
	}
	qsort(v, k, sizeof(*v), ent_cmp);
	/* A name twice (static functions of different files): the first
	 * id is the one the kernel resolves too. */
	size_t out = 0;
	for (size_t i = 0; i < k; i++)
		if (out == 0 || strcmp(v[out - 1].name, v[i].name) != 0)
			v[out++] = v[i];
	vmlinux.btf = btf;
	vmlinux.funcs = v;
	vmlinux.nfuncs = out;
	return 0;
}

/* Where decl_printf writes: one btf_dump serves every call (making one
 * sizes arrays by the type count, which for vmlinux made `-lv kfunc:*`
 * take minutes). */
static char *decl_out;

static void decl_printf(void *ctx, const char *fmt, va_list ap)
{
	(void)ctx;
	char *buf = decl_out;
	size_t n = strlen(buf);
	if (n + 1 < sizeof(((struct kfunc_arg *)0)->decl))
		vsnprintf(buf + n, sizeof(((struct kfunc_arg *)0)->decl) - n,
			  fmt, ap);
}

/* TYPE_ID as C, without a name: "struct file *", "unsigned int". */
static void type_decl(struct btf *btf, uint32_t type_id, char *out)
{
	static struct btf_dump *d;
	static struct btf *d_btf;
	out[0] = '\0';
	if (type_id == 0) {
		strcpy(out, "void");
		return;
	}
	if (d && d_btf != btf) {
		btf_dump__free(d);
		d = NULL;
	}
	if (!d) {
		d = btf_dump__new(btf, decl_printf, NULL, NULL);
		if (!d)
			return;
		d_btf = btf;
	}
	decl_out = out;
	LIBBPF_OPTS(btf_dump_emit_type_decl_opts, o, .field_name = "");
	btf_dump__emit_type_decl(d, type_id, &o);
	decl_out = NULL;
	size_t n = strlen(out);
	while (n && out[n - 1] == ' ')
		out[--n] = '\0';
}

static void classify(struct btf *btf, uint32_t type_id, struct kfunc_arg *a)
{
	type_decl(btf, type_id, a->decl);
	int rid = btf__resolve_type(btf, type_id);
	const struct btf_type *t = rid > 0 ? btf__type_by_id(btf, (uint32_t)rid)
					   : NULL;
	a->size = 8;
	if (!t)
		return;
	if (btf_is_ptr(t)) {
		a->is_ptr = a->is_scalar = true;
		a->size = 8;
	} else if (btf_is_int(t)) {
		a->size = t->size;
		a->is_signed = btf_int_encoding(t) & BTF_INT_SIGNED;
		a->is_scalar = t->size <= 8;
	} else if (btf_is_any_enum(t)) {
		a->size = t->size;
		a->is_signed = btf_kflag(t);
		a->is_scalar = t->size <= 8;
	} else {
		int64_t sz = btf__resolve_size(btf, (uint32_t)rid);
		a->size = sz > 0 ? (uint32_t)sz : 8;
	}
}

int kbtf_func(const char *name, struct kfunc_info *out)
{
	memset(out, 0, sizeof(*out));
	int r = vmlinux_load();
	if (r < 0)
		return r;
	struct kfunc_ent key = { name, 0 };
	size_t lo = 0, hi = vmlinux.nfuncs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(vmlinux.funcs[mid].name, key.name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == vmlinux.nfuncs || strcmp(vmlinux.funcs[lo].name, name) != 0)
		return -ENOENT;
	struct btf *btf = vmlinux.btf;
	const struct btf_type *f = btf__type_by_id(btf, vmlinux.funcs[lo].id);
	const struct btf_type *proto = btf__type_by_id(btf, f->type);
	if (!proto || !btf_is_func_proto(proto))
		return -EINVAL;
	out->name = vmlinux.funcs[lo].name;
	out->btf_id = vmlinux.funcs[lo].id;
	const struct btf_param *p = btf_params(proto);
	uint32_t n = btf_vlen(proto), slot = 0;
	if (n > KFUNC_MAX_ARGS)
		return -E2BIG;
	for (uint32_t i = 0; i < n; i++) {
		struct kfunc_arg *a = &out->args[out->nargs];
		if (p[i].type == 0)     /* "..." */
			break;
		const char *pn = btf__name_by_offset(btf, p[i].name_off);
		a->name = pn && *pn ? pn : NULL;
		classify(btf, p[i].type, a);
		a->slot = slot;
		slot += a->size > 8 ? (a->size + 7) / 8 : 1;
		out->nargs++;
	}
	if (slot > KFUNC_MAX_ARGS)
		return -E2BIG;
	if (proto->type) {
		out->has_ret = true;
		out->ret.name = "retval";
		classify(btf, proto->type, &out->ret);
		out->ret.slot = slot;
	}
	return 0;
}

int kbtf_funcs_each(const char *pattern,
		    int (*fn)(void *arg, const char *name), void *arg)
{
	int r = vmlinux_load();
	if (r < 0)
		return r;
	for (size_t i = 0; i < vmlinux.nfuncs; i++) {
		if (pattern && !glob_match(pattern, vmlinux.funcs[i].name))
			continue;
		r = fn(arg, vmlinux.funcs[i].name);
		if (r)
			return r;
	}
	return 0;
}

static void dump_printf(void *ctx, const char *fmt, va_list ap)
{
	vfprintf(ctx, fmt, ap);
}

/* ID's definition: btf_dump writes the types it depends on first, so
 * the definition is what follows the last line that opens it. */
static int type_define(uint32_t id, const char *kw, const char *name,
		       FILE *out)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	if (!mem)
		return -ENOMEM;
	struct btf_dump *d = btf_dump__new(vmlinux.btf, dump_printf, mem, NULL);
	int r = d ? btf_dump__dump_type(d, id) : -ENOMEM;
	btf_dump__free(d);
	if (fclose(mem) != 0)
		r = -ENOMEM;
	if (r >= 0 && buf) {
		char head[300];
		snprintf(head, sizeof(head), "%s %s {", kw, name);
		const char *start = NULL;
		size_t hl = strlen(head);
		for (const char *p = buf; p && *p;) {
			if (strncmp(p, head, hl) == 0)
				start = p;
			p = strchr(p, '\n');
			if (p)
				p++;
		}
		if (start)
			fputs(start, out);
	}
	free(buf);
	return r < 0 ? r : 1;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int kbtf_types_print(const char *decl, bool verbose, FILE *out)
{
	static const struct { const char *kw; int kind, kind2; } kinds[] = {
		{ "struct", BTF_KIND_STRUCT, BTF_KIND_STRUCT },
		{ "union", BTF_KIND_UNION, BTF_KIND_UNION },
		{ "enum", BTF_KIND_ENUM, BTF_KIND_ENUM64 },
	};
	size_t k = 0;
	for (; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		size_t n = strlen(kinds[k].kw);
		if (strncmp(decl, kinds[k].kw, n) == 0 && decl[n] == ' ')
			break;
	}
	if (k == sizeof(kinds) / sizeof(kinds[0]))
		return 0;
	const char *name = decl + strlen(kinds[k].kw);
	while (*name == ' ')
		name++;
	if (!*name)
		return 0;
	int r = vmlinux_load();
	if (r < 0)
		return r;
	uint32_t n = btf__type_cnt(vmlinux.btf);
	const char **names = malloc(sizeof(*names) * (n ? n : 1));
	if (!names)
		return -ENOMEM;
	size_t m = 0;
	for (uint32_t id = 1; id < n; id++) {
		const struct btf_type *t = btf__type_by_id(vmlinux.btf, id);
		int kind = t ? btf_kind(t) : -1;
		if (kind != kinds[k].kind && kind != kinds[k].kind2)
			continue;
		const char *tn = btf__name_by_offset(vmlinux.btf, t->name_off);
		if (tn && *tn && glob_match(name, tn))
			names[m++] = tn;
	}
	qsort(names, m, sizeof(*names), cmp_str);
	int found = 0;
	for (size_t i = 0; i < m; i++) {
		if (i && strcmp(names[i], names[i - 1]) == 0)
			continue;    /* a name twice: its first definition */
		if (!verbose) {
			fprintf(out, "%s %s\n", kinds[k].kw, names[i]);
			found++;
			continue;
		}
		int id = btf__find_by_name_kind(vmlinux.btf, names[i],
						kinds[k].kind);
		if (id < 0 && kinds[k].kind2 != kinds[k].kind)
			id = btf__find_by_name_kind(vmlinux.btf, names[i],
						    kinds[k].kind2);
		if (id < 0)
			continue;
		r = type_define((uint32_t)id, kinds[k].kw, names[i], out);
		if (r < 0)
			break;
		found++;
	}
	free(names);
	return r < 0 ? r : found;
}

/* ---- raw tracepoints ---------------------------------------------------- */

/* Every tracepoint has a function __bpf_trace_EVENT(void *__data, ARGS)
 * that runs its BPF programs: BTF has it with its parameters' names
 * (the typedef btf_trace_EVENT has the same types, unnamed). */
#define RAWTP_PREFIX "__bpf_trace_"

int kbtf_rawtp(const char *event, struct kfunc_info *out)
{
	char name[256];
	if (snprintf(name, sizeof(name), RAWTP_PREFIX "%s", event) >=
	    (int)sizeof(name)) {
		memset(out, 0, sizeof(*out));
		return -ENOENT;
	}
	struct kfunc_info fi;
	int r = kbtf_func(name, &fi);
	if (r == -E2BIG)
		r = -ENOENT;
	memset(out, 0, sizeof(*out));
	if (r < 0)
		return r;
	if (fi.nargs == 0)
		return -ENOENT;
	/* the first parameter is the tracepoint's data pointer, which the
	 * program's context leaves out: one u64 slot per other one */
	out->name = event;
	out->btf_id = fi.btf_id;
	for (uint32_t i = 1; i < fi.nargs; i++) {
		out->args[out->nargs] = fi.args[i];
		out->args[out->nargs].slot = out->nargs;
		out->nargs++;
	}
	return 0;
}

int kbtf_rawtps_each(const char *pattern,
		     int (*fn)(void *arg, const char *event), void *arg)
{
	int r = vmlinux_load();
	if (r < 0)
		return r;
	size_t plen = sizeof(RAWTP_PREFIX) - 1;
	for (size_t i = 0; i < vmlinux.nfuncs; i++) {
		const char *name = vmlinux.funcs[i].name;
		if (strncmp(name, RAWTP_PREFIX, plen) != 0)
			continue;
		if (pattern && !glob_match(pattern, name + plen))
			continue;
		r = fn(arg, name + plen);
		if (r)
			return r;
	}
	return 0;
}
