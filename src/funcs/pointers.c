/* pointers.c - functions that say where a pointer points: uptr(p) and
 * kptr(p) (types.h enum addr_space). The value is unchanged; following
 * the result with ->, * or [] reads user or kernel memory. */
#include "funcs_int.h"

static const struct type *check_space(struct sema *s, struct node *n,
				      enum addr_space space)
{
	const struct type *t = sema_int_arg(s, n, 0, "the pointer");
	return t ? sema_addr_space(s, t, space) : NULL;
}

static const struct type *check_uptr(struct sema *s, struct node *n)
{
	return check_space(s, n, AS_USER);
}

static const struct type *check_kptr(struct sema *s, struct node *n)
{
	return check_space(s, n, AS_KERNEL);
}

static struct cval gen_ptr(struct cg *cg, const struct node *n)
{
	return cg_regval(cg_reg(cg, cg_expr(cg, arg(n, 0))), n->type);
}

const struct func funcs_pointers[] = {
	/* name, arguments min max, flags, needs, check, code (value, memory) */
	{ "uptr", 1, 1, 0, 0, check_uptr, gen_ptr },
	{ "kptr", 1, 1, 0, 0, check_kptr, gen_ptr },
	{ NULL },
};
