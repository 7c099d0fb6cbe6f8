/* cg_probe.c - what depends on the probe: the builtins' dispatch to
 * their records (funcs/builtins.c), the probe's context as they read it
 * (argN, sargN, retval, func), and tracepoint fields. */
#include "cg.h"

#include <stddef.h>
#include <string.h>

#include "../funcs/builtin.h"
#include "../program.h"

/* struct pt_regs on x86-64 (uprobes, kprobes, perf events: a perf
 * event's context starts with the registers). */
enum {
	PT_R15 = 0, PT_R14 = 8, PT_R13 = 16, PT_R12 = 24, PT_BP = 32,
	PT_BX = 40, PT_R11 = 48, PT_R10 = 56, PT_R9 = 64, PT_R8 = 72,
	PT_AX = 80, PT_CX = 88, PT_DX = 96, PT_SI = 104, PT_DI = 112,
	PT_ORIG_AX = 120, PT_IP = 128, PT_CS = 136, PT_FLAGS = 144,
	PT_SP = 152, PT_SS = 160,
};

static const int16_t arg_regs[] = { PT_DI, PT_SI, PT_DX, PT_CX, PT_R8,
				    PT_R9 };

static const struct { const char *name; int16_t off; } reg_names[] = {
	{ "r15", PT_R15 }, { "r14", PT_R14 }, { "r13", PT_R13 },
	{ "r12", PT_R12 }, { "bp", PT_BP }, { "bx", PT_BX },
	{ "r11", PT_R11 }, { "r10", PT_R10 }, { "r9", PT_R9 },
	{ "r8", PT_R8 }, { "ax", PT_AX }, { "cx", PT_CX }, { "dx", PT_DX },
	{ "si", PT_SI }, { "di", PT_DI }, { "orig_ax", PT_ORIG_AX },
	{ "ip", PT_IP }, { "cs", PT_CS }, { "flags", PT_FLAGS },
	{ "sp", PT_SP }, { "ss", PT_SS },
};

int cg_reg_offset(const char *name)
{
	for (size_t i = 0; i < sizeof(reg_names) / sizeof(*reg_names); i++)
		if (strcmp(reg_names[i].name, name) == 0)
			return reg_names[i].off;
	return -1;
}

static bool ctx_is_regs(const struct cg *cg)
{
	return (cg->probe->caps & PROBE_REGS) != 0;
}

static vreg ctx_load(struct cg *cg, int16_t off)
{
	vreg d = ir_vreg(cg->ir);
	ir_ldx(cg->ir, BPF_DW, d, cg->ctx, off);
	return d;
}

static vreg helper0(struct cg *cg, int id)
{
	return cg_call(cg, id, NULL, 0);
}

bool cg_builtin_is_mem(const struct node *n)
{
	return n->type && n->type->kind != TYPE_INT;
}

struct cval cg_probe_arg(struct cg *cg, const struct node *n)
{
	uint32_t i = n->u.builtin.index;
	if (cg->probe->uprobe && cg->probe->uprobe->usdt)
		return cg_usdt_arg(cg, n);
	/* slots in the context (syscall tracepoints); beyond them 0 */
	if (cg->probe->ctx_nargs)
		return i < cg->probe->ctx_nargs ?
			cg_regval(ctx_load(cg, (int16_t)(cg->probe->ctx_args_off +
							 8 * i)), n->type) :
			cg_imm(0, n->type);
	/* fentry/fexit and raw tracepoints: the arguments are u64 slots */
	if (cg->probe->prog_type == BPF_PROG_TYPE_TRACING ||
	    cg->probe->prog_type == BPF_PROG_TYPE_RAW_TRACEPOINT)
		return cg_regval(ctx_load(cg, (int16_t)(8 * i)), n->type);
	if (!ctx_is_regs(cg)) {
		cg_error(cg, n->pos, "arg%u is not available in %s", i,
			 cg->probe->name);
		return cg_imm(0, n->type);
	}
	if (i < 6)
		return cg_regval(ctx_load(cg, arg_regs[i]), n->type);
	/* Beyond six, arguments are on the stack above the return address:
	 * at entry, sp + 8 * (i - 5). */
	struct cg_mark mk = cg_mark(cg);
	struct cmem tmp = cg_alloc(cg, 8);
	ir_st(cg->ir, BPF_DW, tmp.base, (int16_t)tmp.off, 0);
	vreg sp = ctx_load(cg, PT_SP);
	ir_alui(cg->ir, BPF_ADD, sp, sp, 8 * ((int64_t)i - 5));
	cg_callv(cg, BPF_FUNC_probe_read_user,
		(struct ir_arg[]){ cg_arg(tmp), IR_IMM(8), IR_ARG(sp) }, 3);
	vreg d = cg_load(cg, BPF_DW, tmp);
	cg_release(cg, mk);
	return cg_regval(d, n->type);
}

/* sargN: the N-th 8-byte word above the return address. */
struct cval cg_probe_sarg(struct cg *cg, const struct node *n)
{
	if (!ctx_is_regs(cg)) {
		cg_error(cg, n->pos, "sarg%u is not available in %s",
			 n->u.builtin.index, cg->probe->name);
		return cg_imm(0, n->type);
	}
	struct cg_mark mk = cg_mark(cg);
	struct cmem tmp = cg_alloc(cg, 8);
	ir_st(cg->ir, BPF_DW, tmp.base, (int16_t)tmp.off, 0);
	vreg sp = ctx_load(cg, PT_SP);
	ir_alui(cg->ir, BPF_ADD, sp, sp, 8 * ((int64_t)n->u.builtin.index + 1));
	cg_callv(cg, BPF_FUNC_probe_read_user,
		(struct ir_arg[]){ cg_arg(tmp), IR_IMM(8), IR_ARG(sp) }, 3);
	vreg d = cg_load(cg, BPF_DW, tmp);
	cg_release(cg, mk);
	return cg_regval(d, n->type);
}

/* fexit: the return value is the record field "retval" (after the
 * arguments; see probes/fentry.c). */
static struct cval tracing_retval(struct cg *cg, const struct node *n)
{
	const struct type *rec = cg->probe->args_type;
	for (uint32_t i = rec && rec->kind == TYPE_RECORD ? rec->nfields : 0;
	     i-- > 0;) {
		const struct record_field *f = &rec->rfields[i];
		if (strcmp(f->name, "retval") != 0)
			continue;
		vreg d = ir_vreg(cg->ir);
		ir_ldx(cg->ir, BPF_DW, d, cg->ctx, (int16_t)f->offset);
		if (f->size < 8)
			cg_normalize(cg, d, type_int(cg->a, f->size * 8,
						     f->is_signed));
		return cg_regval(d, n->type);
	}
	cg_error(cg, n->pos, "retval: %s returns nothing", cg->probe->name);
	return cg_imm(0, n->type);
}

void cg_builtin_unsupported(struct cg *cg, const struct node *n)
{
	cg_error(cg, n->pos, "builtin '%s' is not supported in %s",
		 builtins[n->u.builtin.id].name, cg->probe->name);
}

/* retval: the return register, or fexit's record field */
struct cval cg_probe_retval(struct cg *cg, const struct node *n)
{
	if (ctx_is_regs(cg))
		return cg_regval(ctx_load(cg, PT_AX), n->type);
	if (cg->probe->prog_type == BPF_PROG_TYPE_TRACING)
		return tracing_retval(cg, n);
	cg_builtin_unsupported(cg, n);
	return cg_imm(0, n->type);
}

/* A builtin variable: its record's code hook (funcs/builtins.c). */
struct cval cg_builtin(struct cg *cg, const struct node *n)
{
	const struct type *t = n->type;
	if (cg_builtin_is_mem(n)) {
		struct cmem m = cg_alloc(cg, t->size);
		cg_builtin_to(cg, n, m, t);
		return cg_memval(m, t);
	}
	const struct builtin *b = &builtins[n->u.builtin.id];
	if (b->gen)
		return b->gen(cg, n);
	cg_builtin_unsupported(cg, n);
	return cg_imm(0, t);
}

/* A uprobe's or usdt probe's `func` is its own address: the USYM value
 * carries, above the pid, which probe site it is (1 + the index of the
 * first probe at that file and address, so aliases share a key), and
 * output names it from the file when the process exited before its
 * mappings could be read. 0 elsewhere (uretprobes: the ip is the
 * caller's). */
static uint32_t usym_site(struct cg *cg)
{
	const struct uprobe_info *u = cg->probe->uprobe;
	if (!u || u->retprobe)
		return 0;
	for (uint32_t i = 0; i < cg->prog->nprobes; i++) {
		const struct uprobe_info *o = cg->prog->probes[i].uprobe;
		if (o && !o->retprobe && o->vaddr == u->vaddr &&
		    strcmp(o->path, u->path) == 0)
			return i + 1;
	}
	return 0;
}

void cg_builtin_to(struct cg *cg, const struct node *n, struct cmem dst,
		   const struct type *to)
{
	const struct builtin *b = &builtins[n->u.builtin.id];
	if (!to)
		to = n->type;
	if (b->gen_to) {
		b->gen_to(cg, n, dst, to);
		return;
	}
	cg_builtin_unsupported(cg, n);
	cg_zero(cg, dst, to->size);
}

/* func: fentry/fexit and kernel kprobes: the traced function's address
 * (a kretprobe's ip is where it returns to); probes with registers:
 * KSYM the address, USYM the address then pid | site << 32. */
void cg_probe_func_to(struct cg *cg, const struct node *n, struct cmem dst,
		      const struct type *to)
{
	if (cg->probe->prog_type == BPF_PROG_TYPE_TRACING ||
	    (cg->probe->prog_type == BPF_PROG_TYPE_KPROBE &&
	     (cg->probe->caps & PROBE_KERNEL_MEM))) {
		vreg ip = cg_call(cg, BPF_FUNC_get_func_ip,
				  (struct ir_arg[]){ IR_ARG(cg->ctx) }, 1);
		cg_store_int(cg, dst, cg_regval(ip, type_u64()));
		return;
	}
	if (!ctx_is_regs(cg)) {
		cg_builtin_unsupported(cg, n);
		cg_zero(cg, dst, to->size);
		return;
	}
	cg_store_int(cg, dst, cg_regval(ctx_load(cg, PT_IP), type_u64()));
	if (to->size >= 16) {
		vreg pid = helper0(cg, BPF_FUNC_get_current_pid_tgid);
		ir_alui(cg->ir, BPF_RSH, pid, pid, 32);
		uint32_t site = usym_site(cg);
		if (site) {
			vreg h = ir_vreg(cg->ir);
			ir_movi(cg->ir, h, site);
			ir_alui(cg->ir, BPF_LSH, h, h, 32);
			ir_alu(cg->ir, BPF_OR, pid, pid, h);
		}
		cg_store_int(cg, cg_at(dst, 8), cg_regval(pid, type_u64()));
		cg_note_pid(cg);
	}
}

/* The record field of args->name in this probe (wildcard probes of one
 * block may place a field differently, so look it up by name). */
static const struct record_field *field_of(struct cg *cg,
					   const struct node *n)
{
	const struct type *rec = cg->probe->args_type;
	if (n->u.field.base->kind != N_BUILTIN ||
	    n->u.field.base->u.builtin.id != BI_ARGS || !rec ||
	    rec->kind != TYPE_RECORD)
		return NULL;
	for (uint32_t i = 0; i < rec->nfields; i++)
		if (strcmp(rec->rfields[i].name, n->u.field.name) == 0)
			return &rec->rfields[i];
	return NULL;
}

static uint8_t size_code(uint32_t size)
{
	switch (size) {
	case 1: return BPF_B;
	case 2: return BPF_H;
	case 4: return BPF_W;
	default: return BPF_DW;
	}
}

/* The context pointer plus a constant, for helpers that take a source
 * address. */
static struct ir_arg ctx_plus(struct cg *cg, uint32_t off)
{
	vreg p = ir_vreg(cg->ir);
	ir_mov(cg->ir, p, cg->ctx);
	ir_alui(cg->ir, BPF_ADD, p, p, off);
	return IR_ARG(p);
}

struct cval cg_field(struct cg *cg, const struct node *n)
{
	if (n->u.field.cfield)
		return cg_cobject(cg, n);
	const struct record_field *f = field_of(cg, n);
	if (!f) {
		cg_error(cg, n->pos, "field '%s' cannot be compiled in %s",
			 n->u.field.name, cg->probe->name);
		return cg_imm(0, n->type);
	}
	if (n->type->kind != TYPE_INT) {
		struct cmem m = cg_alloc(cg, n->type->size);
		cg_field_to(cg, n, m, n->type);
		return cg_memval(m, n->type);
	}
	vreg d = ir_vreg(cg->ir);
	bool direct = (f->size == 1 || f->size == 2 || f->size == 4 ||
		       f->size == 8) && f->offset % f->size == 0;
	/* fentry/fexit: the verifier checks context loads against BTF;
	 * a pointer argument is read with a helper so it becomes a plain
	 * number (a loaded one would be a typed kernel pointer, on which
	 * arithmetic is refused). */
	bool tracing = cg->probe->prog_type == BPF_PROG_TYPE_TRACING;
	if (direct && (cg->probe->prog_type == BPF_PROG_TYPE_TRACEPOINT ||
		       (tracing && !f->is_ptr))) {
		ir_ldx(cg->ir, size_code(f->size), d, cg->ctx,
		       (int16_t)f->offset);
	} else {
		struct cg_mark mk = cg_mark(cg);
		struct cmem tmp = cg_alloc(cg, 8);
		ir_st(cg->ir, BPF_DW, tmp.base, (int16_t)tmp.off, 0);
		cg_callv(cg, BPF_FUNC_probe_read_kernel,
			(struct ir_arg[]){ cg_arg(tmp),
					   IR_IMM((int32_t)(f->size < 8 ? f->size : 8)),
					   ctx_plus(cg, f->offset) }, 3);
		ir_ldx(cg->ir, BPF_DW, d, tmp.base, (int16_t)tmp.off);
		cg_release(cg, mk);
	}
	if (f->is_signed && f->size < 8)
		cg_normalize(cg, d, type_int(cg->a, f->size * 8, true));
	return cg_regval(d, n->type);
}

void cg_field_to(struct cg *cg, const struct node *n, struct cmem dst,
		 const struct type *to)
{
	if (n->u.field.cfield) {
		cg_cobject_to(cg, n, dst, to);
		return;
	}
	const struct record_field *f = field_of(cg, n);
	if (!to)
		to = n->type;
	if (!f || n->type->kind != TYPE_STR) {
		struct cval v = cg_field(cg, n);
		cg_store(cg, dst, v, to);
		return;
	}
	cg_zero(cg, dst, to->size);
	if (f->is_data_loc) {
		/* u32: length << 16 | offset from the start of the record */
		vreg loc = ir_vreg(cg->ir);
		ir_ldx(cg->ir, BPF_W, loc, cg->ctx, (int16_t)f->offset);
		ir_alui(cg->ir, BPF_AND, loc, loc, 0xffff);
		vreg p = ir_vreg(cg->ir);
		ir_mov(cg->ir, p, cg->ctx);
		ir_alu(cg->ir, BPF_ADD, p, p, loc);
		cg_callv(cg, BPF_FUNC_probe_read_kernel_str,
			(struct ir_arg[]){ cg_arg(dst),
					   IR_IMM((int32_t)to->size),
					   IR_ARG(p) }, 3);
		return;
	}
	uint32_t len = f->array_len ? f->array_len : f->size;
	if (len > to->size)
		len = to->size;
	cg_callv(cg, BPF_FUNC_probe_read_kernel,
		(struct ir_arg[]){ cg_arg(dst), IR_IMM((int32_t)len),
				   ctx_plus(cg, f->offset) }, 3);
}
