/* net.c - network addresses: ntop(). */
#include "funcs_int.h"

#include <sys/socket.h>

/* ntop([family,] addr): addr an integer (IPv4, its low four bytes) or
 * the 4 or 16 bytes of an address (IPv4, IPv6). */
static const struct type *check_ntop(struct sema *s, struct node *n)
{
	uint32_t last = nargs(n) - 1;
	if (last && !sema_int_arg(s, n, 0, "the address family"))
		return NULL;
	struct node *an = arg(n, last);
	const struct type *a = an->kind == N_FIELD ?
		sema_field_bytes(s, an) : sema_expr(s, an);
	/* bytes: a string of them, or a C array (u8[16], __be32[4] ...) */
	bool bytes = a && (is_str(a) || a->kind == TYPE_ARRAY);
	if (a && !is_int(a) && !(bytes && (a->size == 4 || a->size == 16))) {
		sema_error(s, an->pos, "ARG_TYPE",
			   "ntop() expects an integer or the 4 or 16 bytes "
			   "of an address, not '%s'", sema_tname(s, a));
		return NULL;
	}
	return a ? type_simple(s->a, TYPE_INET, 24) : NULL;
}

/* TYPE_INET: u64 family, then 16 address bytes (types.h). Without a
 * family, an integer or 4 bytes are IPv4 and 16 bytes IPv6; an integer
 * address is its low four bytes, in memory order (bpftrace's
 * ntop(0x0100007f) is 127.0.0.1). */
static void gen_ntop(struct cg *cg, const struct node *n, struct cmem dst,
		     const struct type *to)
{
	const struct node *addr = arg(n, nargs(n) - 1);
	bool bytes = addr->type->kind == TYPE_STR ||
		addr->type->kind == TYPE_ARRAY;
	cg_zero(cg, dst, 24);
	if (nargs(n) == 2)
		cg_store_int(cg, dst, cg_expr(cg, arg(n, 0)));
	else
		cg_store_int(cg, dst, cg_imm(bytes && addr->type->size == 16 ?
					     AF_INET6 : AF_INET, type_u64()));
	if (bytes) {
		cg_expr_to(cg, addr, cg_at(dst, 8), addr->type);
		return;
	}
	vreg v = cg_reg(cg, cg_expr(cg, addr));
	ir_stx(cg->ir, BPF_W, dst.base, (int16_t)(dst.off + 8), v);
}

const struct func funcs_net[] = {
	/* name, arguments min max, flags, needs, check, code (value, memory) */
	{ "ntop", 1, 2, 0, 0, check_ntop, NULL, gen_ntop },
	{ NULL },
};
