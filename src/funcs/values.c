/* values.c - integer functions: sizeof() and cgroupid(), known when the
 * script is compiled, and bswap(). */
#include "funcs_int.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <strings.h>

/* The size and alignment bpftrace 0.17 gives a value of type t, which
 * sizeof() reports: integers of their declared width, strings of their
 * bytes, C values of their C layout, and a tuple laid out as a C struct
 * of those (`((int8)1, (int16)1, (int32)1)` is 8). sonde itself stores
 * a tuple's fields 8-byte aligned (types.h); that layout is its own. */
static void bt_layout(const struct type *t, uint64_t *size, uint64_t *align)
{
	switch (t->kind) {
	case TYPE_INT:
		*size = *align = t->bits ? t->bits / 8 : 8;
		return;
	case TYPE_STR:
		*size = t->size;
		*align = 1;
		return;
	case TYPE_STRUCT:
	case TYPE_ARRAY:
		*size = t->size;
		*align = t->ctype && t->ctype->align ? t->ctype->align : 1;
		return;
	case TYPE_TUPLE: {
		uint64_t off = 0, max = 1;
		for (uint32_t i = 0; i < t->nfields; i++) {
			uint64_t fs, fa;
			bt_layout(t->fields[i], &fs, &fa);
			off = (off + fa - 1) / fa * fa + fs;
			if (fa > max)
				max = fa;
		}
		*size = (off + max - 1) / max * max;
		*align = max;
		return;
	}
	default:
		*size = t->size;
		*align = 8;
		return;
	}
}

/* sizeof(TYPE) or sizeof(expr); the final pass turns the call into the
 * N_INT it stands for, so it has no code hook. */
static const struct type *check_sizeof(struct sema *s, struct node *n)
{
	struct node *a = arg(n, 0);
	uint64_t size = 0;
	const char *why;
	int64_t v;
	/* a bare name that is no type but an enum constant (the kernel's
	 * BTF_VAR_STATIC) is an expression, an int64 (8), as in bpftrace */
	bool constant = a->kind == N_IDENT && !strchr(a->u.str.s, ' ') &&
		!sema_type_name(s, a->u.str.s, &why) &&
		ctypes_find_const(s->prog->ctypes, a->u.str.s, &v) == 0;
	if (a->kind == N_IDENT && !constant) {
		if (!sema_sizeof_type(s, a, &size))
			return NULL;
	} else {
		const struct type *t = sema_expr(s, a);
		if (!t)
			return NULL;
		uint64_t align;
		bt_layout(t, &size, &align);
	}
	if (s->final) {
		n->kind = N_INT;
		n->u.ival = size;
	}
	return type_u64();
}

static const struct type *check_cgroupid(struct sema *s, struct node *n)
{
	return sema_lit_str(s, n, 0, "its argument") ? type_u64() : NULL;
}

/* The id the kernel gives a cgroup v2 directory (bpf_get_current_cgroup_id
 * and the cgroup builtin return it): its file handle, as bpftrace
 * resolves cgroupid(path) when it compiles. */
static int cgroup_id(const char *path, uint64_t *id)
{
	struct {
		struct file_handle fh;
		uint64_t id;
	} h = { .fh.handle_bytes = sizeof(uint64_t) };
	int mount_id;
	if (name_to_handle_at(AT_FDCWD, path, &h.fh, &mount_id, 0) < 0)
		return -errno;
	memcpy(id, h.fh.f_handle, sizeof(*id));
	return 0;
}

static struct cval gen_cgroupid(struct cg *cg, const struct node *n)
{
	const char *path = lit_arg(n, 0);
	uint64_t id = 0;
	int r = cgroup_id(path, &id);
	if (r == -EOVERFLOW)   /* a handle longer than a cgroup id */
		cg_error(cg, n->pos, "cgroupid(): '%s' is not a directory "
			 "of a cgroup v2 file system", path);
	else if (r < 0)
		cg_error(cg, n->pos, "cgroupid(): cannot read the id of "
			 "cgroup '%s': %s", path, strerror(-r));
	if (r < 0)
		return cg_imm(0, n->type);
	vreg d = ir_vreg(cg->ir);
	ir_movi(cg->ir, d, (int64_t)id);
	return cg_regval(d, n->type);
}

/* bswap(n): the bytes of an integer reversed, an unsigned integer of
 * the same width (8 bits: unchanged). */
static const struct type *check_bswap(struct sema *s, struct node *n)
{
	const struct type *t = sema_expr(s, arg(n, 0));
	if (!t)
		return NULL;
	if (!is_int(t)) {
		sema_error(s, arg(n, 0)->pos, "ARG_TYPE",
			   "bswap() only supports integer arguments (%s provided)",
			   sema_tname(s, t));
		return NULL;
	}
	return type_int(s->a, t->bits ? t->bits : 64, false);
}

static struct cval gen_bswap(struct cg *cg, const struct node *n)
{
	vreg v = cg_reg(cg, cg_expr(cg, arg(n, 0)));
	vreg d = ir_vreg(cg->ir);
	if (n->type->bits > 8)
		ir_alui(cg->ir, BPF_END, d, v, n->type->bits);
	else
		ir_mov(cg->ir, d, v);
	cg_normalize(cg, d, n->type);
	return cg_regval(d, n->type);
}

/* is_err(ptr) (bpftrace 0.26, stdlib.md): whether a pointer is an
 * ERR_PTR, the kernel's IS_ERR(): (unsigned long)-4095 and above. */
static const struct type *check_is_err(struct sema *s, struct node *n)
{
	const struct type *t = sema_expr(s, arg(n, 0));
	if (!t)
		return NULL;
	if (!is_int(t)) {
		sema_error(s, arg(n, 0)->pos, "ARG_TYPE",
			   "is_err() takes a pointer (or an integer), not '%s'",
			   sema_tname(s, t));
		return NULL;
	}
	return type_bool();
}

static struct cval gen_is_err(struct cg *cg, const struct node *n)
{
	vreg v = cg_reg(cg, cg_expr(cg, arg(n, 0)));
	vreg d = ir_vreg(cg->ir);
	uint32_t done = ir_label(cg->ir);
	ir_movi(cg->ir, d, 0);
	/* the immediate is sign-extended: 0xfffffffffffff001 */
	ir_jcci(cg->ir, BPF_JLT, v, -4095, done);
	ir_movi(cg->ir, d, 1);
	ir_place(cg->ir, done);
	return cg_regval(d, n->type);
}

/* The value of --NAME on the command line: NULL if absent, "" for a
 * bare --NAME, else the text after '=' (the last one given wins). */
static const char *named_param(struct sema *s, const char *name,
			       bool *present)
{
	const char *v = NULL;
	size_t len = strlen(name);
	*present = false;
	for (int i = 0; s->opts && i < s->opts->nnamed; i++) {
		const char *a = s->opts->named[i] + 2;
		if (strncmp(a, name, len) != 0 || (a[len] && a[len] != '='))
			continue;
		*present = true;
		v = a[len] ? a + len + 1 : "";
	}
	return v;
}

/* getopt(NAME [, DEFAULT [, DESCRIPTION]]), bpftrace 0.24's named
 * parameters (`-- --NAME=VALUE`): the default's type, a bool without
 * one. A constant, as sizeof() is: the call becomes the value. */
static const struct type *check_getopt(struct sema *s, struct node *n)
{
	const char *name = sema_lit_str(s, n, 0, "the parameter's name");
	if (!name)
		return NULL;
	if (nargs(n) > 2 && !sema_lit_str(s, n, 2, "the description"))
		return NULL;
	struct node *d = nargs(n) > 1 ? arg(n, 1) : NULL;
	enum { GO_BOOL, GO_INT, GO_STR } kind = GO_BOOL;
	if (d && d->kind == N_STR)
		kind = GO_STR;
	else if (d && d->kind == N_INT && !(d->type && d->type->is_bool))
		kind = GO_INT;
	else if (d && d->kind != N_INT) {
		sema_error(s, d->pos, "ARG_TYPE", "getopt(): the default must be "
			   "a literal number, string or bool");
		return NULL;
	}
	bool present, big = false;
	const char *v = named_param(s, name, &present);
	uint64_t iv = d && kind != GO_STR ? d->u.ival : 0;
	const char *sv = d && kind == GO_STR ? d->u.str.s : "";
	if (present && kind == GO_BOOL) {
		/* True/False too, as bpftrace 0.26's tests write them */
		if (!*v || !strcasecmp(v, "true") || !strcmp(v, "1"))
			iv = 1;
		else if (!strcasecmp(v, "false") || !strcmp(v, "0"))
			iv = 0;
		else {
			sema_error(s, n->pos, "BAD_PARAM", "program command line "
				   "option --%s invalid boolean (value: %s)",
				   name, v);
			return NULL;
		}
	} else if (present && kind == GO_INT) {
		char *end;
		errno = 0;
		long long x = strtoll(v, &end, 0);
		if (errno == ERANGE && *v != '-') {
			/* above INT64_MAX: an unsigned 64-bit value
			 * (0xffffffffffffffff), typed so */
			errno = 0;
			x = (long long)strtoull(v, &end, 0);
			big = !errno;
		}
		if (!*v || *end || errno) {
			sema_error(s, n->pos, "BAD_PARAM", "program command line "
				   "option --%s invalid integer (value: %s)",
				   name, v);
			return NULL;
		}
		iv = (uint64_t)x;
	} else if (present) {
		sv = v;
	}
	if (s->final) {
		if (kind == GO_STR) {
			n->kind = N_STR;
			n->u.str.s = sv;
			n->u.str.len = (uint32_t)strlen(sv);
		} else {
			n->kind = N_INT;
			n->u.ival = iv;
		}
	}
	if (kind == GO_STR)
		return type_str(s->a, (uint32_t)strlen(sv) + 1);
	return kind == GO_BOOL ? type_bool() : big ? type_u64() : type_s64();
}

/* offsetof(struct T, field): the field's byte offset, a constant. The
 * field may be a path through nested members, `bar.x`, and the type a
 * bare struct or union name, `offsetof(qspinlock, tail)` (bpftrace
 * 0.2x: its runtime tests use both). */
static const char *field_name(const struct node *f)
{
	return f->kind == N_IDENT ? f->u.str.s :
		f->kind == N_BUILTIN ? builtins[f->u.builtin.id].name : NULL;
}

static const struct type *check_offsetof(struct sema *s, struct node *n)
{
	struct node *t = arg(n, 0), *f = arg(n, 1);
	const struct node *path[16];
	unsigned depth = 0;
	while (f->kind == N_FIELD && !f->u.field.arrow && depth < 15) {
		path[depth++] = f;
		f = f->u.field.base;
	}
	if (t->kind != N_IDENT || !field_name(f) || f->kind == N_FIELD) {
		sema_error(s, n->pos, "ARG_TYPE", "offsetof() takes a type and "
			   "a field name: offsetof(struct task_struct, pid)");
		return NULL;
	}
	const char *why, *tn = t->u.str.s;
	const struct ctype *ct = sema_type_name(s, tn, &why);
	if (!ct && !strchr(tn, ' ')) {
		ct = ctypes_find_tag(s->prog->ctypes, CT_STRUCT, tn);
		if (!ct)
			ct = ctypes_find_tag(s->prog->ctypes, CT_UNION, tn);
	}
	uint32_t total = 0;
	const char *fname = field_name(f), *owner = tn;
	for (;;) {
		if (ct)
			ct = ctypes_complete(s->prog->ctypes, ct);
		if (!ct || !ctype_is_aggregate(ct) || !ct->complete) {
			sema_error(s, t->pos, "UNKNOWN_TYPE", "offsetof(): '%s' is "
				   "no defined struct or union", owner);
			return NULL;
		}
		uint32_t bits;
		const struct ctype_field *fl = ctype_field_find(ct, fname, &bits);
		if (!fl) {
			sema_error(s, (depth ? path[depth - 1] : f)->pos,
				   "BAD_FIELD", "%s has no field '%s'", owner,
				   fname);
			return NULL;
		}
		total += bits / 8;
		if (!depth)
			break;
		owner = fname;
		ct = fl->type;
		fname = path[--depth]->u.field.name;
	}
	if (s->final) {
		n->kind = N_INT;
		n->u.ival = total;
	}
	return type_u64();
}

const struct func funcs_values[] = {
	/* name, arguments min max, flags, needs, check, code (value, memory) */
	{ "sizeof", 1, 1, 0, 0, check_sizeof },
	{ "cgroupid", 1, 1, 0, 0, check_cgroupid, gen_cgroupid },
	{ "bswap", 1, 1, 0, 0, check_bswap, gen_bswap },
	{ "getopt", 1, 3, 0, 0, check_getopt },
	{ "offsetof", 2, 2, 0, 0, check_offsetof },
	{ "is_err", 1, 1, 0, 0, check_is_err, gen_is_err },
	{ NULL },
};
