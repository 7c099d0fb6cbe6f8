/* cg_seq.c - printf into an iterator's seq file (bpf_seq_printf), for
 * a pinned iterator (iter:task:PIN): whoever reads the pin file gets
 * the text, as with bpftrace, after sonde has gone.
 *
 * The arguments are computed into a record on the stack exactly as a
 * printf event lays them out (prog->events), then passed as the u64
 * array bpf_seq_printf wants: integers by value (extended by their
 * signedness), strings by their address on the stack (the kernel reads
 * a %s argument itself). The format goes to the kernel as written: sema
 * already checked it against the arguments, and the conversions the
 * kernel's printf lacks are refused here. */
#include <string.h>

#include "cg.h"

#define SEQ_MAX_ARGS 12     /* MAX_BPRINTF_VARARGS */

/* The conversions of fmt the kernel's bprintf understands: d i u x X c
 * s p with flags, width, precision and the l/ll/h/hh modifiers. Returns
 * the first other conversion character, or 0. */
static char unsupported_conversion(const char *fmt)
{
	for (const char *c = fmt; *c; c++) {
		if (*c != '%')
			continue;
		c++;
		if (*c == '%')
			continue;
		while (*c && strchr("-+ #0123456789.lh", *c))
			c++;
		if (!*c || !strchr("diuxXcsp", *c))
			return *c ? *c : '%';
	}
	return 0;
}

struct cval cg_seq_printf(struct cg *cg, const struct node *n)
{
	int32_t id = n->u.call.event_id;
	if (id < 0 || (uint32_t)id >= cg->prog->nevents) {
		cg_error(cg, n->pos, "printf() has no event");
		return cg_imm(0, n->type);
	}
	const struct event_spec *e = &cg->prog->events[id];
	const struct type *args = e->args;
	uint32_t nargs = args ? args->nfields : 0;
	char bad = unsupported_conversion(e->fmt);
	if (bad) {
		cg_error(cg, n->pos, "printf() in a pinned iterator writes "
			 "through the kernel's printf, which has no %%%c", bad);
		return cg_imm(0, n->type);
	}
	if (nargs > SEQ_MAX_ARGS) {
		cg_error(cg, n->pos, "printf() in a pinned iterator takes at "
			 "most %d arguments (the kernel's limit)", SEQ_MAX_ARGS);
		return cg_imm(0, n->type);
	}
	struct cg_mark mk = cg_mark(cg);
	struct cmem rec = cg_alloc(cg, args && args->size ? args->size : 8);
	struct cmem arr = cg_alloc(cg, 8 * (nargs ? nargs : 1));
	for (uint32_t i = 0; i < nargs && i + 1 < n->u.call.args.n; i++) {
		const struct type *t = args->fields[i];
		struct cmem at = cg_at(rec, (int32_t)args->offsets[i]);
		cg_expr_to(cg, n->u.call.args.v[i + 1], at, t);
		vreg v = ir_vreg(cg->ir);
		if (t->kind == TYPE_STR) {
			ir_mov(cg->ir, v, at.base);
			ir_alui(cg->ir, BPF_ADD, v, v, at.off);
		} else if (t->kind == TYPE_INT && (t->size == 1 ||
			   t->size == 2 || t->size == 4 || t->size == 8)) {
			uint8_t sz = t->size == 8 ? BPF_DW : t->size == 4 ?
				BPF_W : t->size == 2 ? BPF_H : BPF_B;
			v = cg_load(cg, sz, at);
			if (t->size < 8)
				cg_normalize(cg, v, t);
		} else {
			cg_error(cg, n->pos, "printf() in a pinned iterator "
				 "prints integers and strings only (argument "
				 "%u is a %s)", i + 1, type_name(cg->a, t));
			cg_release(cg, mk);
			return cg_imm(0, n->type);
		}
		ir_stx(cg->ir, BPF_DW, arr.base, (int16_t)(arr.off + 8 * (int32_t)i),
		       v);
	}
	uint32_t flen = (uint32_t)strlen(e->fmt) + 1;
	struct cmem fmt = cg_alloc(cg, flen);
	cg_str_literal(cg, fmt, e->fmt, flen - 1, flen);
	/* ctx->meta->seq */
	vreg meta = ir_vreg(cg->ir), seq = ir_vreg(cg->ir);
	ir_ldx(cg->ir, BPF_DW, meta, cg->ctx, 0);
	ir_ldx(cg->ir, BPF_DW, seq, meta, 0);
	cg_callv(cg, BPF_FUNC_seq_printf,
		 (struct ir_arg[]){ IR_ARG(seq), cg_arg(fmt),
				    IR_IMM((int32_t)flen), cg_arg(arr),
				    IR_IMM((int32_t)(8 * nargs)) }, 5);
	cg_release(cg, mk);
	return cg_imm(0, n->type);
}
