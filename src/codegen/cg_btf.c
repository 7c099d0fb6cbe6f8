/* cg_btf.c - pointers the kernel's verifier trusts, in BTF tracing
 * programs (fentry, fexit, iter): some helpers take only those
 * (bpf_d_path for path(), bpf_skb_output for skboutput()).
 *
 * Elsewhere codegen reads a pointer argument with a helper, so that it
 * becomes a plain number scripts can compute with (cg_probe.c). A
 * trusted pointer instead comes straight from the context with a load
 * (the verifier types it from BTF), is followed with plain loads (which
 * the verifier turns into faulting-safe reads of typed memory) and moved
 * by constant member offsets only. So `args->filp->f_path` is: load the
 * argument, add the offset of f_path; `retval->f_path` the same from
 * fexit's return value. What cannot be expressed that way is an error at
 * the argument's position. */
#include "cg.h"

#include <string.h>

/* The record field `args->name` of this probe's context. */
static const struct record_field *ctx_field(struct cg *cg, const char *name)
{
	const struct type *rec = cg->probe->args_type;
	if (!rec || rec->kind != TYPE_RECORD)
		return NULL;
	for (uint32_t i = 0; i < rec->nfields; i++)
		if (strcmp(rec->rfields[i].name, name) == 0)
			return &rec->rfields[i];
	return NULL;
}

static bool is_args(const struct node *n)
{
	return n->kind == N_BUILTIN && n->u.builtin.id == BI_ARGS;
}

static vreg add_const(struct cg *cg, vreg r, int64_t off)
{
	if (!off)
		return r;
	vreg d = ir_vreg(cg->ir);
	ir_alui(cg->ir, BPF_ADD, d, r, off);
	return d;
}

static bool addr_of(struct cg *cg, const struct node *n, vreg *out);

/* The value of pointer expression n as a trusted pointer. */
static bool ptr_value(struct cg *cg, const struct node *n, vreg *out)
{
	const struct record_field *f;
	switch (n->kind) {
	case N_FIELD:
		if (is_args(n->u.field.base)) {
			/* args->name: the argument, loaded from the context */
			f = ctx_field(cg, n->u.field.name);
			if (!f || f->size != 8 || f->offset % 8)
				return false;
			*out = ir_vreg(cg->ir);
			ir_ldx(cg->ir, BPF_DW, *out, cg->ctx, (int16_t)f->offset);
			return true;
		}
		/* a pointer member of a C object: loaded from its address */
		if (!n->u.field.cfield || !n->type || n->type->kind != TYPE_INT ||
		    !n->type->is_ptr)
			return false;
		vreg a;
		if (!addr_of(cg, n, &a))
			return false;
		*out = ir_vreg(cg->ir);
		ir_ldx(cg->ir, BPF_DW, *out, a, 0);
		return true;
	case N_BUILTIN:
		if (n->u.builtin.id != BI_RETVAL ||
		    !(f = ctx_field(cg, "retval")) || f->size != 8)
			return false;
		*out = ir_vreg(cg->ir);
		ir_ldx(cg->ir, BPF_DW, *out, cg->ctx, (int16_t)f->offset);
		return true;
	case N_CAST:
		return n->type && n->type->kind == TYPE_INT && n->type->is_ptr &&
			ptr_value(cg, n->u.cast.expr, out);
	default:
		return false;
	}
}

/* The address of the C object n (a member reached through `->` or `.`). */
static bool addr_of(struct cg *cg, const struct node *n, vreg *out)
{
	if (n->kind != N_FIELD || !n->u.field.cfield)
		return false;
	const struct node *b = n->u.field.base;
	vreg base;
	if (n->u.field.arrow ? !ptr_value(cg, b, &base) : !addr_of(cg, b, &base))
		return false;
	if (n->u.field.bit_offset % 8)
		return false;
	*out = add_const(cg, base, n->u.field.bit_offset / 8);
	return true;
}

bool cg_btf_pointer(struct cg *cg, const struct node *n, vreg *out)
{
	if (cg->probe->prog_type != BPF_PROG_TYPE_TRACING)
		return false;
	if (n->type && n->type->kind == TYPE_STRUCT)
		return addr_of(cg, n, out);
	return ptr_value(cg, n, out);
}
