/* cg_usdt.c - values of user-space probes: USDT arguments loaded the way
 * their note specs say (constant, register, memory at
 * disp+base+index*scale, symbol-relative), sign or zero extended from
 * their size; uaddr(); and the load bias those need.
 *
 * The load bias. A symbol in a spec (`8@counter(%rip)`, `$table`) and a
 * uaddr() name are link-time addresses; in a position-independent file
 * (a PIE program or a shared library) the run-time address adds the bias
 * the loader chose, which differs per process. With -p the provider read
 * it from /proc/PID/maps. Otherwise it is read at run time: when an entry
 * uprobe or a USDT site fires, pt_regs->ip is the probed instruction, so
 * bias = ip - its link-time address. At a uretprobe ip is the return
 * address, which says nothing about the file, so there the bias must come
 * from -p. A non-PIE executable has bias 0. */
#include "cg.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../elf/elf.h"

static vreg ctx_reg(struct cg *cg, int off)
{
	vreg d = ir_vreg(cg->ir);
	ir_ldx(cg->ir, BPF_DW, d, cg->ctx, (int16_t)off);
	return d;
}

/* The bias as a vreg, or VR_NONE when it is known to be 0. */
static vreg load_bias(struct cg *cg, struct pos pos, const char *what)
{
	const struct uprobe_info *u = cg->probe->uprobe;
	if (u->bias_known && !u->bias)
		return VR_NONE;
	vreg b = ir_vreg(cg->ir);
	if (u->bias_known) {
		ir_movi(cg->ir, b, (int64_t)u->bias);
		return b;
	}
	if (u->retprobe) {
		cg_error(cg, pos, "%s in %s: the load address of the "
			 "position-independent file '%s' is not known at a "
			 "return; use -p PID", what, cg->probe->name, u->path);
		ir_movi(cg->ir, b, 0);
		return b;
	}
	ir_ldx(cg->ir, BPF_DW, b, cg->ctx, (int16_t)cg_reg_offset("ip"));
	ir_alui(cg->ir, BPF_SUB, b, b, (int64_t)u->vaddr);
	return b;
}

/* An error at pos, unless the same one is already there: every site of a
 * USDT probe is a probe of its own, compiled from the same block. */
static void usdt_error(struct cg *cg, struct pos pos, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void usdt_error(struct cg *cg, struct pos pos, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!cg->err)
		cg->err = -EINVAL;
	for (size_t i = 0; i < cg->d->list.n; i++) {
		const struct diag *g = &cg->d->list.v[i];
		if (g->pos.line == pos.line && g->pos.col == pos.col &&
		    strcmp(g->msg, msg) == 0)
			return;
	}
	diag_error(cg->d, pos, "CODEGEN", "%s", msg);
}

/* Keep the low `size` bytes, extended by sign or zero. */
static void extend(struct cg *cg, vreg r, int size, bool is_signed)
{
	if (size < 8)
		cg_normalize(cg, r, type_int(cg->a, (unsigned)size * 8, is_signed));
}

static struct cval arg_mem(struct cg *cg, const struct node *n,
			   const struct usdt_arg *a)
{
	vreg addr = ir_vreg(cg->ir);
	ir_movi(cg->ir, addr, a->val);
	if (a->reg != USDT_REG_NONE && !a->rip) {
		vreg base = ctx_reg(cg, a->reg);
		if (a->reg_size == 4)   /* 32-bit addressing: (%eax) */
			cg_normalize(cg, base, type_int(cg->a, 32, false));
		ir_alu(cg->ir, BPF_ADD, addr, addr, base);
	}
	if (a->index != USDT_REG_NONE) {
		vreg idx = ctx_reg(cg, a->index);
		if (a->reg_size == 4)
			cg_normalize(cg, idx, type_int(cg->a, 32, false));
		if (a->scale > 1)
			ir_alui(cg->ir, BPF_LSH, idx, idx,
				a->scale == 2 ? 1 : a->scale == 4 ? 2 : 3);
		ir_alu(cg->ir, BPF_ADD, addr, addr, idx);
	}
	if (a->symbol[0]) {
		vreg b = load_bias(cg, n->pos, "a USDT argument");
		if (b != VR_NONE)
			ir_alu(cg->ir, BPF_ADD, addr, addr, b);
	}
	struct cg_mark mk = cg_mark(cg);
	struct cmem tmp = cg_alloc(cg, 8);
	ir_st(cg->ir, BPF_DW, tmp.base, (int16_t)tmp.off, 0);
	cg_callv(cg, BPF_FUNC_probe_read_user,
		(struct ir_arg[]){ cg_arg(tmp), IR_IMM(a->size), IR_ARG(addr) }, 3);
	vreg d = cg_load(cg, BPF_DW, tmp);
	cg_release(cg, mk);
	extend(cg, d, a->size, a->is_signed);
	return cg_regval(d, n->type);
}

struct cval cg_usdt_arg(struct cg *cg, const struct node *n)
{
	const struct uprobe_info *u = cg->probe->uprobe;
	uint32_t i = n->u.builtin.index;
	if (u->args_error) {
		usdt_error(cg, n->pos, "%s: cannot read its arguments ('%s'): %s",
			 cg->probe->name, u->args_text ? u->args_text : "",
			 u->args_error == -ENOTSUP ?
			 "an argument form sonde does not support" :
			 u->args_error == -ENOENT ?
			 "a symbol they name is not in the file" :
			 "malformed argument specs");
		return cg_imm(0, n->type);
	}
	if (i >= u->nargs) {
		usdt_error(cg, n->pos, "arg%u does not exist: %s has %u argument%s",
			 i, cg->probe->name, u->nargs, u->nargs == 1 ? "" : "s");
		return cg_imm(0, n->type);
	}
	const struct usdt_arg *a = &u->args[i];
	switch (a->kind) {
	case USDT_ARG_CONST: {
		if (!a->symbol[0])
			return cg_imm(a->val, n->type);
		vreg d = ir_vreg(cg->ir);
		ir_movi(cg->ir, d, a->val);
		vreg b = load_bias(cg, n->pos, "a USDT argument");
		if (b != VR_NONE)
			ir_alu(cg->ir, BPF_ADD, d, d, b);
		return cg_regval(d, n->type);
	}
	case USDT_ARG_REG: {
		vreg d = ctx_reg(cg, a->reg);
		if (a->reg_shift)
			ir_alui(cg->ir, BPF_RSH, d, d, a->reg_shift);
		extend(cg, d, a->size, a->is_signed);
		return cg_regval(d, n->type);
	}
	case USDT_ARG_MEM:
		return arg_mem(cg, n, a);
	}
	return cg_imm(0, n->type);
}

struct cval cg_uaddr(struct cg *cg, const struct node *n)
{
	const struct uprobe_info *u = cg->probe->uprobe;
	const struct node *a = n->u.call.args.n ? n->u.call.args.v[0] : NULL;
	if (!a || a->kind != N_STR) {
		cg_error(cg, n->pos, "uaddr() needs a symbol name");
		return cg_imm(0, n->type);
	}
	if (!u) {
		cg_error(cg, n->pos, "uaddr() can only be used in uprobe, "
			 "uretprobe and usdt probes (%s used here)",
			 cg->probe->name);
		return cg_imm(0, n->type);
	}
	struct elf_file *ef;
	uint64_t addr = 0;
	int r = elf_open(u->path, &ef);
	if (r == 0) {
		r = elf_symbol_addr(ef, a->u.str.s, &addr);
		elf_close(ef);
	}
	if (r < 0) {
		/* the file lacks it: tagged like the providers' errors */
		diag_error(cg->d, a->pos, r == -ENOENT ? "NO_SYMBOL" : "NOT_ELF",
			   "uaddr(): no symbol '%s' in '%s'%s%s", a->u.str.s,
			   u->path, r == -ENOENT ? "" : ": ",
			   r == -ENOENT ? "" : strerror(-r));
		if (!cg->err)
			cg->err = -ENOENT;
		return cg_imm(0, n->type);
	}
	vreg b = u->is_dyn ? load_bias(cg, n->pos, "uaddr()") : VR_NONE;
	if (b == VR_NONE)
		return cg_imm((int64_t)addr, n->type);
	ir_alui(cg->ir, BPF_ADD, b, b, (int64_t)addr);
	return cg_regval(b, n->type);
}

bool cg_user_probe(const struct cg *cg)
{
	return (cg->probe->caps & PROBE_USER_MEM) != 0;
}
