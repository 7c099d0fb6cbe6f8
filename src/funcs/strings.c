/* strings.c - string functions: str(), buf(), strncmp(), strcontains(),
 * path() and sonde's json(); the code of most is in codegen/cg_str.c and
 * cg_json.c. */
#include "funcs_int.h"

#include <errno.h>
#include <string.h>

/* str($N + K) (or K + $N): bpftrace 0.17 reads a positional parameter
 * in str() as a pointer to its text, so this is the text from its K-th
 * byte on (str($1 + 1) with $1 = hello is "ello"). The argument becomes
 * that literal in the final pass (1); 0: not that form; -EINVAL: K is
 * past the text. */
static int positional_suffix(struct sema *s, struct node *a)
{
	if (a->kind != N_BINOP || a->u.binop.op != OP_ADD)
		return 0;
	struct node *l = a->u.binop.lhs, *r = a->u.binop.rhs;
	struct node *p = l->kind == N_POSITIONAL ? l :
		r->kind == N_POSITIONAL ? r : NULL;
	int64_t off;
	if (!p || p->u.positional.is_count ||
	    !sema_const_int(s, p == l ? r : l, &off))
		return 0;
	const char *text = sema_positional_text(s, p);
	size_t len = strlen(text);
	if (off < 0 || (uint64_t)off > len) {
		sema_error(s, a->pos, "BAD_POSITIONAL", "only addition of a "
			   "single constant less or equal to the length of $%u "
			   "(which is %zu) is allowed inside str()",
			   p->u.positional.index, len);
		return -EINVAL;
	}
	if (s->final) {    /* nodes are rewritten in the final pass only */
		a->kind = N_STR;
		a->u.str.s = text + off;
		a->u.str.len = (uint32_t)(len - (size_t)off);
	}
	return 1;
}

/* str(ptr [, len]), str($N): a string of BPFTRACE_STRLEN bytes. */
static const struct type *check_str(struct sema *s, struct node *n)
{
	struct node *a = arg(n, 0);
	int suffix = positional_suffix(s, a);
	if (suffix < 0)
		return NULL;
	if (suffix && !s->final)
		return type_str(s->a, s->prog->strlen);
	const struct type *at = a->kind == N_POSITIONAL ?
		sema_positional(s, a, true) : sema_expr(s, a);
	a->type = at;
	if (nargs(n) > 1 && !sema_int_arg(s, n, 1, "the length"))
		return NULL;
	if (at && !is_int(at) && !is_str(at)) {
		sema_error(s, a->pos, "ARG_TYPE",
			   "str() expects a pointer or a string, not '%s'",
			   sema_tname(s, at));
		return NULL;
	}
	return at ? type_str(s->a, s->prog->strlen) : NULL;
}

/* buf(ptr, len), buf(string, len): its first bytes; buf(array): a C
 * array's bytes, all of them (bpftrace 0.17's one-argument form). */
static const struct type *check_buf(struct sema *s, struct node *n)
{
	const struct type *a = sema_expr(s, arg(n, 0));
	if (a && !is_int(a) && !is_str(a) && a->kind != TYPE_ARRAY) {
		sema_error(s, arg(n, 0)->pos, "ARG_TYPE",
			   "buf() expects a pointer, a string or an array, "
			   "not '%s'", sema_tname(s, a));
		return NULL;
	}
	if (nargs(n) == 1) {
		if (a && a->kind != TYPE_ARRAY) {
			sema_error(s, n->pos, "ARG_COUNT", "buf() expects a "
				   "length argument for non-array type '%s'",
				   sema_tname(s, a));
			return NULL;
		}
		if (!a)
			return NULL;
		uint32_t len = a->size < s->prog->strlen ? a->size :
			s->prog->strlen;
		return type_simple(s->a, TYPE_BUF, 4 + len);
	}
	if (a && a->kind == TYPE_ARRAY) {
		sema_error(s, arg(n, 0)->pos, "ARG_TYPE",
			   "buf() of an array takes no length: buf(array)");
		return NULL;
	}
	const struct type *l = sema_int_arg(s, n, 1, "the length");
	if (!a || !l)
		return NULL;
	/* As bpftrace 0.17 sizes it: a length known when compiling (a
	 * literal or a positional parameter, in every pass alike) is the
	 * buffer's, a string's bytes past its end reading as zeros
	 * (buf("ok_key", 8) keeps 8); else BPFTRACE_STRLEN. */
	uint32_t len = s->prog->strlen;
	int64_t want;
	if (sema_const_int(s, arg(n, 1), &want) && want >= 0 &&
	    (uint64_t)want < len)
		len = (uint32_t)want;
	return type_simple(s->a, TYPE_BUF, 4 + len);
}

static void gen_buf(struct cg *cg, const struct node *n, struct cmem dst,
		    const struct type *to)
{
	cg_buf_call_to(cg, n, dst);
}

static const struct type *check_strncmp(struct sema *s, struct node *n)
{
	int64_t len;
	const struct type *a = sema_str_arg(s, n, 0, "its first argument");
	const struct type *b = sema_str_arg(s, n, 1, "its second argument");
	if (!sema_lit_int(s, n, 2, "the length", &len) || !a || !b)
		return NULL;
	return type_u64();
}

static const struct type *check_strcontains(struct sema *s, struct node *n)
{
	const struct type *a = sema_str_arg(s, n, 0, "the haystack");
	const struct type *b = sema_str_arg(s, n, 1, "the needle");
	if (!a || !b)
		return NULL;
	/* a bool from 0.24 (stdlib.md: "bool strcontains(...)"), as the
	 * comparisons are; 0.17's gives 1 or 0 */
	return s->prog->dialect >= DIALECT_024 ? type_bool() : type_u64();
}

/* strlen(s) (bpftrace 0.2x): a string's length, a uint64 */
static const struct type *check_strlen(struct sema *s, struct node *n)
{
	return sema_str_arg(s, n, 0, "its argument") ? type_u64() : NULL;
}

/* json(document, "a.b[2].c"), the path a literal compiled into the
 * scan (cg_json.c). */
static const struct type *check_json(struct sema *s, struct node *n)
{
	const struct type *a = sema_str_arg(s, n, 0, "the document");
	if (!sema_lit_str(s, n, 1, "the path") || !a)
		return NULL;
	return type_str(s->a, s->prog->strlen);
}

/* path(struct path *) or path(file->f_path): the path the kernel's
 * d_path() makes of it. Only BTF tracing programs may call bpf_d_path,
 * and the kernel allows it only in some functions (filp_close,
 * dentry_open, vfs_getattr, security_file_permission...): the verifier
 * says so when the program is loaded. */
static const struct type *check_path(struct sema *s, struct node *n)
{
	struct node *a = arg(n, 0);
	const struct type *t = sema_expr(s, a);
	if (!t)
		return NULL;
	bool by_value = t->kind == TYPE_STRUCT && sema_is_place(a);
	if (!by_value && !(is_int(t) && t->is_ptr)) {
		sema_error(s, a->pos, "ARG_TYPE",
			   "path() expects a struct path or a pointer to one, "
			   "not '%s'", sema_tname(s, t));
		return NULL;
	}
	return type_str(s->a, s->prog->strlen);
}

static void gen_path(struct cg *cg, const struct node *n, struct cmem dst,
		     const struct type *to)
{
	const struct node *a = arg(n, 0);
	vreg pr;
	cg_zero(cg, dst, to->size);
	if (!cg_btf_pointer(cg, a, &pr)) {
		cg_error(cg, a->pos, "path(): the kernel takes only a path it "
			 "can trust: one reached from the probe's arguments or "
			 "retval through -> and . (args->filp->f_path)");
		return;
	}
	vreg r = cg_call(cg, BPF_FUNC_d_path, (struct ir_arg[]){
			IR_ARG(pr), cg_arg(dst), IR_IMM((int32_t)to->size) }, 3);
	cg_check_helper(cg, r, BPF_FUNC_d_path);
}

const struct func funcs_strings[] = {
	/* name, arguments min max, flags, needs, check, code (value, memory) */
	{ "str", 1, 2, 0, 0, check_str, NULL, cg_str_call_to },
	{ "buf", 1, 2, 0, 0, check_buf, NULL, gen_buf },
	{ "strncmp", 3, 3, 0, 0, check_strncmp, cg_strncmp },
	{ "strcontains", 2, 2, 0, 0, check_strcontains, cg_strcontains },
	{ "strlen", 1, 1, 0, 0, check_strlen, cg_strlen },
	{ "json", 2, 2, 0, 0, check_json, NULL, cg_json_to },
	{ "path", 1, 1, 0, PROBE_TRACING, check_path, NULL, gen_path },
	{ NULL },
};
