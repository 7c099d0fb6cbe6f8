/* symbols.c - addresses, symbols, registers and stacks: ksym(), usym(),
 * kaddr(), uaddr(), reg(), kstack(), ustack(). Symbols are resolved by
 * output when printed; kaddr() when the script is compiled, as bpftrace
 * does. */
#include "funcs_int.h"

#include <errno.h>
#include <string.h>

#include "../elf/elf.h"
#include "../elf/symbolize.h"

static const struct type *check_ksym(struct sema *s, struct node *n)
{
	if (!sema_int_arg(s, n, 0, "the address"))
		return NULL;
	return type_simple(s->a, TYPE_KSYM, 8);
}

static void gen_ksym(struct cg *cg, const struct node *n, struct cmem dst,
		     const struct type *to)
{
	cg_store_int(cg, dst, cg_expr(cg, arg(n, 0)));
}

/* usym(addr): the address and the pid whose mappings it belongs to. */
static const struct type *check_usym(struct sema *s, struct node *n)
{
	if (!sema_int_arg(s, n, 0, "the address"))
		return NULL;
	return type_simple(s->a, TYPE_USYM, 16);
}

static void gen_usym(struct cg *cg, const struct node *n, struct cmem dst,
		     const struct type *to)
{
	cg_store_int(cg, dst, cg_expr(cg, arg(n, 0)));
	vreg pid = cg_call(cg, BPF_FUNC_get_current_pid_tgid, NULL, 0);
	ir_alui(cg->ir, BPF_RSH, pid, pid, 32);
	cg_store_int(cg, cg_at(dst, 8), cg_regval(pid, type_u64()));
	cg_note_pid(cg);
}

/* D's mod(addr) and umod(addr): ksym/usym printed as the module the
 * address is in (the kernel's "vmlinux" or a module; the file's base
 * name in the process), or the address when none has it. */
static const struct type *check_mod(struct sema *s, struct node *n)
{
	bool user = strcmp(n->u.call.name, "__dtrace_umod") == 0;
	const struct type *b = user ? check_usym(s, n) : check_ksym(s, n);
	if (!b)
		return NULL;
	struct type *t = arena_new(s->a, struct type);
	*t = *b;
	t->sym_module = true;
	return t;
}

/* kaddr("sym"): a pointer. */
static const struct type *check_addr(struct sema *s, struct node *n)
{
	if (!sema_lit_str(s, n, 0, "its argument"))
		return NULL;
	struct type *t = arena_new(s->a, struct type);
	*t = *type_u64();
	t->is_ptr = true;
	return t;
}

/* uaddr("sym"): a pointer to an unsigned integer of the symbol's size (1,
 * 2, 4 or 8 bytes; else 8) in the first file of the block's probes, as
 * bpftrace 0.17 types it, so *uaddr("int_global") reads 4 bytes. */
static const struct type *check_uaddr(struct sema *s, struct node *n)
{
	const char *name = sema_lit_str(s, n, 0, "its argument");
	if (!name)
		return NULL;
	uint64_t size = 8;
	for (uint32_t i = 0; i < s->prog->nprobes; i++) {
		const struct probe *p = &s->prog->probes[i];
		struct elf_file *ef;
		uint64_t addr, sz;
		if (p->block != s->block || !p->uprobe ||
		    elf_open(p->uprobe->path, &ef) < 0)
			continue;
		if (elf_symbol_info(ef, name, &addr, &sz) == 0 &&
		    (sz == 1 || sz == 2 || sz == 4))
			size = sz;
		elf_close(ef);
		break;
	}
	const struct ctype *pointee = ctype_int(s->a, (uint32_t)size, false,
						NULL);
	return type_of_ctype(s->a, ctype_ptr(s->a, pointee), AS_USER);
}

/* Resolved now, as bpftrace does, from /proc/kallsyms. */
static struct cval gen_kaddr(struct cg *cg, const struct node *n)
{
	const char *sym = lit_arg(n, 0);
	struct ksyms *k = ksyms_new(NULL);
	uint64_t addr = 0;
	int r = k ? ksyms_addr(k, sym, &addr) : -ENOMEM;
	ksyms_free(k);
	if (r < 0) {
		cg_error(cg, n->pos, "kaddr(): Failed to resolve kernel symbol: %s",
			 sym);
		return cg_imm(0, n->type);
	}
	vreg d = ir_vreg(cg->ir);
	ir_movi(cg->ir, d, (int64_t)addr);
	return cg_regval(d, n->type);
}

static const char *const x86_regs[] = {
	"r15", "r14", "r13", "r12", "bp", "bx", "r11", "r10", "r9", "r8",
	"ax", "cx", "dx", "si", "di", "orig_ax", "ip", "cs", "flags", "sp",
	"ss", NULL,
};

static const struct type *check_reg(struct sema *s, struct node *n)
{
	const char *r = sema_lit_str(s, n, 0, "a register");
	if (!r)
		return NULL;
	for (int i = 0; x86_regs[i]; i++)
		if (strcmp(x86_regs[i], r) == 0)
			return type_u64();
	sema_error(s, arg(n, 0)->pos, "ARG_TYPE", "reg(): unknown register '%s'",
		   r);
	return NULL;
}

/* A register of the probe's struct pt_regs (PROBE_REGS: its context). */
static struct cval gen_reg(struct cg *cg, const struct node *n)
{
	int off = cg_reg_offset(lit_arg(n, 0));
	if (off < 0 || !(cg->probe->caps & PROBE_REGS)) {
		cg_error(cg, n->pos, "%s() cannot be compiled here",
			 n->u.call.name);
		return cg_imm(0, n->type);
	}
	vreg d = ir_vreg(cg->ir);
	ir_ldx(cg->ir, BPF_DW, d, cg->ctx, (int16_t)off);
	return cg_regval(d, n->type);
}

/* kstack([mode,] [limit]), ustack(...): the mode a bare name (bpftrace,
 * perf, raw), the limit a literal. */
static const struct type *check_stack(struct sema *s, struct node *n, bool k)
{
	struct type *t = arena_new(s->a, struct type);
	t->kind = k ? TYPE_KSTACK : TYPE_USTACK;
	t->size = k ? 8 : 16;
	t->stack_limit = 127;
	t->stack_mode = s->prog->config.stack_mode;   /* config's default */
	uint32_t i = 0;
	if (nargs(n) > 0 && arg(n, 0)->kind == N_IDENT) {
		const char *m = arg(n, 0)->u.str.s;
		if (strcmp(m, "bpftrace") == 0)
			t->stack_mode = 0;
		else if (strcmp(m, "perf") == 0)
			t->stack_mode = 1;
		else if (strcmp(m, "raw") == 0)
			t->stack_mode = 2;
		else if (strcmp(m, "build_id") == 0 && !k)
			t->stack_mode = 3;      /* bpftrace 0.25 */
		else {
			sema_error(s, arg(n, 0)->pos, "ARG_TYPE",
				   "%s(): unknown stack mode '%s' (%s)",
				   n->u.call.name, m, k ? "bpftrace, perf or raw" :
				   "bpftrace, perf, raw or build_id");
			return NULL;
		}
		i = 1;
	}
	if (nargs(n) > i) {
		int64_t lim;
		if (!sema_lit_int(s, n, i, "the frame limit", &lim))
			return NULL;
		if (s->final && (lim < 1 || lim > 1024)) {
			sema_error(s, arg(n, i)->pos, "ARG_TYPE",
				   "%s(): frame limit %lld out of range (1 to 1024)",
				   n->u.call.name, (long long)lim);
			return NULL;
		}
		t->stack_limit = (uint32_t)lim;
		i++;
	}
	if (nargs(n) > i) {
		sema_error(s, arg(n, i)->pos, "ARG_TYPE",
			   "%s() takes ([mode,] [limit])", n->u.call.name);
		return NULL;
	}
	return t;
}

static const struct type *check_kstack(struct sema *s, struct node *n)
{
	return check_stack(s, n, true);
}

static const struct type *check_ustack(struct sema *s, struct node *n)
{
	return check_stack(s, n, false);
}

static void gen_stack(struct cg *cg, const struct node *n, struct cmem dst,
		      const struct type *to)
{
	cg_stack_to(cg, n->type, dst);
}

const struct func funcs_symbols[] = {
	/* name, arguments min max, flags, needs, check, code (value, memory) */
	{ "ksym", 1, 1, 0, 0, check_ksym, NULL, gen_ksym },
	{ "usym", 1, 1, 0, 0, check_usym, NULL, gen_usym },
	{ "__dtrace_mod", 1, 1, 0, 0, check_mod, NULL, gen_ksym },
	{ "__dtrace_umod", 1, 1, 0, 0, check_mod, NULL, gen_usym },
	{ "kaddr", 1, 1, 0, 0, check_addr, gen_kaddr },
	{ "uaddr", 1, 1, 0, 0, check_uaddr, cg_uaddr },
	{ "reg", 1, 1, 0, PROBE_REGS, check_reg, gen_reg },
	{ "kstack", 0, 2, 0, 0, check_kstack, NULL, gen_stack },
	{ "ustack", 0, 2, 0, 0, check_ustack, NULL, gen_stack },
	{ NULL },
};
