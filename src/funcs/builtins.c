/* builtins.c - the builtin variables, one record each (builtin.h): how
 * the semantic pass types each and the code that reads it. */
#include "funcs_int.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "builtin.h"

/* ---- the semantic pass ---------------------------------------------- */

static const struct type *comm_check(struct sema *s, struct node *n)
{
	return type_str(s->a, 16);
}

/* bpftrace 0.24: the CPUs of this machine, a constant */
static const struct type *ncpus_check(struct sema *s, struct node *n)
{
	long c = sysconf(_SC_NPROCESSORS_CONF);
	if (s->final) {
		n->kind = N_INT;
		n->u.ival = c > 0 ? (uint64_t)c : 1;
	}
	return type_u64();
}

/* bpftrace 0.24: 1 where the probe interrupted user mode. On x86-64,
 * the privilege level in the low bits of the saved cs; begin and end run
 * in sonde's own process (bpftrace's in its own, under a uprobe), so 1. */
static const struct type *usermode_check(struct sema *s, struct node *n)
{
	for (uint32_t i = 0; i < s->prog->nprobes; i++) {
		const struct probe *p = &s->prog->probes[i];
		if (p->block != s->block ||
		    (p->caps & (PROBE_REGS | PROBE_RUNS_ONCE)))
			continue;
		sema_error(s, n->pos, "BAD_BUILTIN", "usermode is not available "
			   "in %s probes: they save no registers",
			   sema_probe_kind(s->a, p));
		return NULL;
	}
	return type_int(s->a, 8, false);
}

/* bpftrace 0.24: the probe's type, "special" for begin and end */
static const char *probetype_of(struct arena *a, const struct probe *p)
{
	return (p->caps & PROBE_RUNS_ONCE) ? "special" :
		sema_probe_kind(a, p);
}

static const struct type *probetype_check(struct sema *s, struct node *n)
{
	uint32_t len = 1;
	for (uint32_t i = 0; i < s->prog->nprobes; i++) {
		const struct probe *p = &s->prog->probes[i];
		if (p->block == s->block && strlen(probetype_of(s->a, p)) + 1 > len)
			len = (uint32_t)strlen(probetype_of(s->a, p)) + 1;
	}
	return type_str(s->a, len);
}

static const struct type *stack_check(struct sema *s, struct node *n)
{
	struct type *t = arena_new(s->a, struct type);
	bool k = n->u.builtin.id == BI_KSTACK;
	t->kind = k ? TYPE_KSTACK : TYPE_USTACK;
	t->size = k ? 8 : 16;
	t->stack_limit = 127;
	t->stack_mode = s->prog->config.stack_mode;
	return t;
}

static const struct type *func_check(struct sema *s, struct node *n)
{
	return sema_block_has(s, PROBE_USER_MEM) ?
		type_simple(s->a, TYPE_USYM, 16) :
		type_simple(s->a, TYPE_KSYM, 8);
}

/* A string each probe's program stores: the longest of the block's. */
static const struct type *probe_check(struct sema *s, struct node *n)
{
	uint32_t len = 1;
	for (uint32_t i = 0; i < s->prog->nprobes; i++) {
		const struct probe *p = &s->prog->probes[i];
		if (p->block == s->block && p->name &&
		    strlen(p->name) + 1 > len)
			len = (uint32_t)strlen(p->name) + 1;
	}
	return type_str(s->a, len);
}

/* D's probeprov ... "function:name": strings each probe's program
 * stores; 5 is the probe's number */
static const struct type *dprobe_check(struct sema *s, struct node *n)
{
	uint32_t k = n->u.builtin.index, len = 1;
	if (k >= 5)
		return type_u64();
	for (uint32_t i = 0; i < s->prog->nprobes; i++) {
		const struct probe *p = &s->prog->probes[i];
		if (p->block == s->block && p->dname[k] &&
		    strlen(p->dname[k]) + 1 > len)
			len = (uint32_t)strlen(p->dname[k]) + 1;
	}
	return type_str(s->a, len);
}

static const struct type *curtask_check(struct sema *s, struct node *n)
{
	return sema_curtask(s);
}

static const struct type *username_check(struct sema *s, struct node *n)
{
	return type_simple(s->a, TYPE_USERNAME, 8);
}

/* only as the base of a field access: see sema.c's field_type() */
static const struct type *args_check(struct sema *s, struct node *n)
{
	sema_error(s, n->pos, "BAD_FIELD",
		   "args must be followed by a field: args->name");
	return NULL;
}

static const struct type *cpid_check(struct sema *s, struct node *n)
{
	if (s->opts && s->opts->no_child) {
		sema_error(s, n->pos, "BAD_BUILTIN",
			   "cpid is the pid of the child started with -c, and "
			   "there is no -c here");
		return NULL;
	}
	return type_u64();
}

/* retval: u64, except in fexit probes, whose args record ends with the
 * function's typed "retval" (int returns print signed, as bpftrace's
 * kretfunc does). All probes of the block must agree. */
static const struct type *retval_check(struct sema *s, struct node *n)
{
	const struct type *t = NULL;
	for (uint32_t i = 0; i < s->prog->nprobes; i++) {
		const struct probe *p = &s->prog->probes[i];
		if (p->block != s->block)
			continue;
		const struct type *rec = p->args_type;
		const struct type *ft = NULL;
		if (rec && rec->kind == TYPE_RECORD && rec->nfields &&
		    strcmp(rec->rfields[rec->nfields - 1].name, "retval") == 0 &&
		    (p->caps & PROBE_TYPED_RET))
			ft = sema_record_field_type(s, &rec->rfields[rec->nfields - 1],
					       false);
		if (!ft)
			return type_u64();
		t = t ? type_unify(s->a, t, ft) : ft;
		if (!t)
			return type_u64();
	}
	return t ? t : type_u64();
}

/* ctx: a pointer to the struct the provider names (iter:task: struct
 * bpf_iter__task), from the kernel's BTF; the same for every probe of
 * the block. */
/* `ctx`, by the program type as bpftrace 0.17 types it: what the
 * provider names (iter), else struct pt_regs * for kprobe-type programs
 * (kprobes, uprobes, USDT), the context's address as a number in perf
 * event programs (interval, profile, software, hardware: their context
 * is the kernel's, not struct bpf_perf_event_data's layout, so it is
 * only cast, `(struct x *)ctx`), else an error. */
static const struct type *ctx_check(struct sema *s, struct node *n)
{
	const char *name = NULL;
	bool raw = false;
	for (uint32_t i = 0; i < s->prog->nprobes; i++) {
		const struct probe *p = &s->prog->probes[i];
		if (p->block != s->block)
			continue;
		const char *st = p->ctx_struct ? p->ctx_struct :
			p->prog_type == BPF_PROG_TYPE_KPROBE ?
			"pt_regs" : NULL;
		if (!st && p->prog_type == BPF_PROG_TYPE_PERF_EVENT) {
			raw = true;
			continue;
		}
		if (!st) {
			sema_error(s, n->pos, "BAD_BUILTIN", "ctx is not "
				   "available in %s probes",
				   sema_probe_kind(s->a, p));
			return NULL;
		}
		if (name && strcmp(name, st) != 0) {
			sema_error(s, n->pos, "BAD_BUILTIN", "ctx is struct %s "
				   "in one probe of this block and struct %s in "
				   "another", name, st);
			return NULL;
		}
		name = st;
	}
	if (raw && name) {
		sema_error(s, n->pos, "BAD_BUILTIN", "ctx cannot be used in "
			   "different BPF program types (struct %s and a perf "
			   "event's)", name);
		return NULL;
	}
	if (raw)
		return type_u64();
	if (!name)
		return NULL;
	const struct ctype *ct = ctypes_find_tag(s->prog->ctypes, CT_STRUCT,
						 name);
	const struct type *t = ct ? type_of_ctype(s->a, ctype_ptr(s->a, ct),
						  AS_KERNEL) : NULL;
	if (!t)
		sema_error(s, n->pos, "BAD_BUILTIN", "ctx: the kernel's BTF has "
			   "no struct %s", name);
	return t;
}


/* ---- code ----------------------------------------------------------- */

static struct cval helper_value(struct cg *cg, const struct node *n, int id)
{
	return cg_regval(cg_call(cg, id, NULL, 0), n->type);
}

/* pid and tid: the upper and lower half of one helper's value; uid and
 * gid likewise. */
static struct cval upper_or_lower(struct cg *cg, const struct node *n,
				  int helper, bool upper)
{
	vreg r = cg_call(cg, helper, NULL, 0);
	if (upper)
		ir_alui(cg->ir, BPF_RSH, r, r, 32);
	else
		cg_normalize(cg, r, type_int(cg->a, 32, false));
	return cg_regval(r, n->type);
}

/* The pid namespace sonde runs in, when it is not the initial one
 * (whose inode is the kernel's PROC_PID_INIT_INO): false there, or when
 * /proc cannot say. */
static bool own_pid_ns(uint64_t *dev, uint64_t *ino)
{
	struct stat st;
	if (stat("/proc/self/ns/pid", &st) < 0 || st.st_ino == 0xEFFFFFFCu)
		return false;
	*dev = st.st_dev;
	*ino = st.st_ino;
	return true;
}

/* pid and tid as seen from sonde's pid namespace: the kernel's struct
 * bpf_pidns_info { u32 pid (the thread), u32 tgid } */
static struct cval pid_ns_gen(struct cg *cg, const struct node *n,
			      uint64_t dev, uint64_t ino)
{
	struct cmem info = cg_alloc(cg, 8);
	cg_zero(cg, info, 8);
	vreg d = ir_vreg(cg->ir), i = ir_vreg(cg->ir);
	ir_movi(cg->ir, d, (int64_t)dev);
	ir_movi(cg->ir, i, (int64_t)ino);
	cg_callv(cg, BPF_FUNC_get_ns_current_pid_tgid,
		 (struct ir_arg[]){ IR_ARG(d), IR_ARG(i), cg_arg(info),
				    IR_IMM(8) }, 4);
	vreg r = cg_load(cg, BPF_W,
			 cg_at(info, n->u.builtin.id == BI_PID ? 4 : 0));
	return cg_regval(r, n->type);
}

/* pid(init), and pid(curr_ns) when sonde runs in the initial namespace
 * (as the name alone: 0.24.2 made it curr_ns's, "Fix tid/pid in non-init
 * namespaces"; 0.17's is the initial namespace's) */
static struct cval pid_gen(struct cg *cg, const struct node *n)
{
	uint64_t dev, ino;
	uint32_t mode = n->u.builtin.index;
	if ((mode == BM_CURR_NS ||
	     (mode == BM_DEFAULT && cg->prog->dialect >= DIALECT_024)) &&
	    own_pid_ns(&dev, &ino))
		return pid_ns_gen(cg, n, dev, ino);
	return upper_or_lower(cg, n, BPF_FUNC_get_current_pid_tgid,
			      n->u.builtin.id == BI_PID);
}

static struct cval uid_gen(struct cg *cg, const struct node *n)
{
	return upper_or_lower(cg, n, BPF_FUNC_get_current_uid_gid,
			      n->u.builtin.id == BI_GID);
}

/* nsecs(sw_tai): the boot clock plus TAI's offset from it, measured
 * here between two readings of the boot clock (bpftrace's "triple vdso
 * sandwich"), for kernels without bpf_ktime_get_tai_ns */
static int64_t tai_offset(void)
{
	struct timespec b0, t, b1;
	clock_gettime(CLOCK_BOOTTIME, &b0);
	clock_gettime(CLOCK_TAI, &t);
	clock_gettime(CLOCK_BOOTTIME, &b1);
	int64_t boot = ((int64_t)b0.tv_sec + b1.tv_sec) * 500000000 +
		((int64_t)b0.tv_nsec + b1.tv_nsec) / 2;
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec - boot;
}

static struct cval nsecs_gen(struct cg *cg, const struct node *n)
{
	switch (n->u.builtin.index) {
	case BM_BOOT:
		return helper_value(cg, n, BPF_FUNC_ktime_get_boot_ns);
	case BM_TAI:
		return helper_value(cg, n, BPF_FUNC_ktime_get_tai_ns);
	case BM_SW_TAI: {
		vreg r = cg_call(cg, BPF_FUNC_ktime_get_boot_ns, NULL, 0);
		vreg off = ir_vreg(cg->ir);
		ir_movi(cg->ir, off, tai_offset());
		ir_alu(cg->ir, BPF_ADD, r, r, off);
		return cg_regval(r, n->type);
	}
	default:    /* the name alone and nsecs(monotonic) */
		return helper_value(cg, n, BPF_FUNC_ktime_get_ns);
	}
}

static struct cval elapsed_gen(struct cg *cg, const struct node *n)
{
	vreg start = cg_global(cg, offsetof(struct sonde_globals, start_ns));
	vreg r = cg_call(cg, BPF_FUNC_ktime_get_ns, NULL, 0);
	ir_alu(cg->ir, BPF_SUB, r, r, start);
	return cg_regval(r, n->type);
}

static struct cval cpu_gen(struct cg *cg, const struct node *n)
{
	return helper_value(cg, n, BPF_FUNC_get_smp_processor_id);
}

static struct cval numaid_gen(struct cg *cg, const struct node *n)
{
	return helper_value(cg, n, BPF_FUNC_get_numa_node_id);
}

static struct cval jiffies_gen(struct cg *cg, const struct node *n)
{
	return helper_value(cg, n, BPF_FUNC_jiffies64);
}

static struct cval usermode_gen(struct cg *cg, const struct node *n)
{
	if (!(cg->probe->caps & PROBE_REGS))
		return cg_imm(1, n->type);      /* begin, end: sonde's own */
	vreg d = ir_vreg(cg->ir);
	ir_ldx(cg->ir, BPF_DW, d, cg->ctx, (int16_t)cg_reg_offset("cs"));
	ir_alui(cg->ir, BPF_AND, d, d, 3);
	vreg r = ir_vreg(cg->ir);
	ir_movi(cg->ir, r, 0);
	uint32_t l = ir_label(cg->ir);
	ir_jcci(cg->ir, BPF_JNE, d, 3, l);
	ir_movi(cg->ir, r, 1);
	ir_place(cg->ir, l);
	return cg_regval(r, n->type);
}

static struct cval curtask_gen(struct cg *cg, const struct node *n)
{
	return helper_value(cg, n, BPF_FUNC_get_current_task);
}

static struct cval rand_gen(struct cg *cg, const struct node *n)
{
	return helper_value(cg, n, BPF_FUNC_get_prandom_u32);
}

static struct cval cgroup_gen(struct cg *cg, const struct node *n)
{
	return helper_value(cg, n, BPF_FUNC_get_current_cgroup_id);
}

static struct cval ctx_gen(struct cg *cg, const struct node *n)
{
	vreg d = ir_vreg(cg->ir);
	ir_mov(cg->ir, d, cg->ctx);
	return cg_regval(d, n->type);
}

static struct cval cpid_gen(struct cg *cg, const struct node *n)
{
	return cg_regval(cg_global(cg, offsetof(struct sonde_globals, cpid)),
			 n->type);
}

/* index 5: the probe's number, from 1 */
static struct cval dprobe_gen(struct cg *cg, const struct node *n)
{
	return cg_imm((uint64_t)(cg->probe - cg->prog->probes) + 1, n->type);
}

/* The probe's name, D's parts of it: strings known now. */
static void const_string_to(struct cg *cg, struct cmem dst, const char *s,
			    const struct type *to)
{
	if (!s)
		s = "";
	cg_str_literal(cg, dst, s, (uint32_t)strlen(s), to->size);
}

static void probe_gen_to(struct cg *cg, const struct node *n,
			 struct cmem dst, const struct type *to)
{
	const_string_to(cg, dst, cg->probe->name, to);
}

static void probetype_gen_to(struct cg *cg, const struct node *n,
			     struct cmem dst, const struct type *to)
{
	const_string_to(cg, dst, probetype_of(cg->a, cg->probe), to);
}

static void dprobe_gen_to(struct cg *cg, const struct node *n,
			  struct cmem dst, const struct type *to)
{
	if (n->u.builtin.index >= 5) {
		cg_builtin_unsupported(cg, n);
		cg_zero(cg, dst, to->size);
		return;
	}
	const_string_to(cg, dst, cg->probe->dname[n->u.builtin.index], to);
}

static void stack_gen_to(struct cg *cg, const struct node *n,
			 struct cmem dst, const struct type *to)
{
	cg_stack_to(cg, n->type, dst);
}

static void comm_gen_to(struct cg *cg, const struct node *n,
			struct cmem dst, const struct type *to)
{
	uint32_t len = to->size < 16 ? to->size : 16;
	if (to->size > len)
		cg_zero(cg, cg_at(dst, (int32_t)len), to->size - len);
	cg_callv(cg, BPF_FUNC_get_current_comm,
		(struct ir_arg[]){ cg_arg(dst), IR_IMM((int32_t)len) }, 2);
}

/* the uid, as a u64 that output prints as the user's name */
static void username_gen_to(struct cg *cg, const struct node *n,
			    struct cmem dst, const struct type *to)
{
	vreg uid = cg_call(cg, BPF_FUNC_get_current_uid_gid, NULL, 0);
	cg_normalize(cg, uid, type_int(cg->a, 32, false));
	cg_store_int(cg, dst, cg_regval(uid, type_u64()));
}

/* ---- the records ---------------------------------------------------- */

const struct builtin builtins[BI_COUNT_] = {
	[BI_PID]      = { "pid", .gen = pid_gen },
	[BI_TID]      = { "tid", .gen = pid_gen },
	[BI_UID]      = { "uid", .gen = uid_gen },
	[BI_GID]      = { "gid", .gen = uid_gen },
	[BI_NSECS]    = { "nsecs", .gen = nsecs_gen },
	[BI_ELAPSED]  = { "elapsed", .gen = elapsed_gen },
	[BI_CPU]      = { "cpu", .gen = cpu_gen },
	[BI_COMM]     = { "comm", .check = comm_check, .gen_to = comm_gen_to },
	[BI_KSTACK]   = { "kstack", .check = stack_check,
			  .gen_to = stack_gen_to },
	[BI_USTACK]   = { "ustack", .check = stack_check,
			  .gen_to = stack_gen_to },
	[BI_ARG]      = { "arg", BUILTIN_INDEXED, PROBE_ARGN,
			  .gen = cg_probe_arg },
	[BI_SARG]     = { "sarg", BUILTIN_INDEXED, PROBE_SARGN,
			  .gen = cg_probe_sarg },
	[BI_ARGS]     = { "args", .check = args_check },
	[BI_RETVAL]   = { "retval", 0, PROBE_RETVAL, .check = retval_check,
			  .gen = cg_probe_retval },
	[BI_FUNC]     = { "func", 0, PROBE_FUNC, .check = func_check,
			  .gen_to = cg_probe_func_to },
	[BI_PROBE]    = { "probe", .check = probe_check,
			  .gen_to = probe_gen_to },
	[BI_CURTASK]  = { "curtask", .check = curtask_check,
			  .gen = curtask_gen },
	[BI_RAND]     = { "rand", .gen = rand_gen },
	[BI_CGROUP]   = { "cgroup", .gen = cgroup_gen },
	[BI_CPID]     = { "cpid", .check = cpid_check, .gen = cpid_gen },
	[BI_USERNAME] = { "username", .check = username_check,
			  .gen_to = username_gen_to },
	[BI_NUMAID]   = { "numaid", .gen = numaid_gen },
	[BI_CTX]      = { "ctx", .check = ctx_check, .gen = ctx_gen },
	[BI_NCPUS]    = { "ncpus", .check = ncpus_check },
	[BI_JIFFIES]  = { "jiffies", .gen = jiffies_gen },
	[BI_USERMODE] = { "usermode", .check = usermode_check,
			  .gen = usermode_gen },
	[BI_PROBETYPE] = { "probetype", .check = probetype_check,
			   .gen_to = probetype_gen_to },
	[BI_DPROBE]   = { "__dtrace_probe", .check = dprobe_check,
			  .gen = dprobe_gen, .gen_to = dprobe_gen_to },
};

int builtin_mode(int id, const char *word, const char **names)
{
	static const struct { int id; const char *word; int mode; } modes[] = {
		{ BI_NSECS, "boot", BM_BOOT },
		{ BI_NSECS, "monotonic", BM_MONOTONIC },
		{ BI_NSECS, "tai", BM_TAI },
		{ BI_NSECS, "sw_tai", BM_SW_TAI },
		{ BI_PID, "curr_ns", BM_CURR_NS }, { BI_PID, "init", BM_INIT },
		{ BI_TID, "curr_ns", BM_CURR_NS }, { BI_TID, "init", BM_INIT },
	};
	*names = id == BI_NSECS ? "boot, monotonic, tai or sw_tai" :
		id == BI_PID || id == BI_TID ? "curr_ns or init" : "";
	for (size_t i = 0; i < sizeof(modes) / sizeof(*modes); i++)
		if (modes[i].id == id && strcmp(modes[i].word, word) == 0)
			return modes[i].mode;
	return -1;
}

int builtin_lookup(const char *name, uint32_t *index)
{
	for (int i = 0; i < BI_COUNT_; i++) {
		const char *b = builtins[i].name;
		if (builtins[i].flags & BUILTIN_INDEXED) {
			size_t l = strlen(b);
			const char *d = name + l;
			if (strncmp(name, b, l) == 0 && *d &&
			    strspn(d, "0123456789") == strlen(d) &&
			    strlen(d) < 4) {
				*index = (uint32_t)atoi(d);
				return i;
			}
			continue;
		}
		if (strcmp(name, b) == 0) {
			*index = 0;
			return i;
		}
	}
	return -1;
}
