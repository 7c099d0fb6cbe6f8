/* cg_call.c - function calls: the ones that talk to user space through a
 * ring buffer record (printf, print, exit, time, join, cat, system,
 * clear, zero), and the ones that compute values (str, buf, strncmp,
 * strcontains, sizeof, reg, ksym, usym, signal). */
#include "cg.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>

#include "../elf/symbolize.h"



/* Index of the call argument that fills field 0 of the event record. */
static uint32_t first_value_arg(enum event_kind k)
{
	switch (k) {
	case EV_PRINTF:
	case EV_CAT:
	case EV_SYSTEM:
		return 1;       /* after the format */
	default:
		return 0;
	}
}

/* join(argv): up to nfields strings read through an array of pointers,
 * stopping at the first NULL pointer (the rest stay empty). */
static void join_args(struct cg *cg, const struct node *n, vreg rec,
		      const struct type *args)
{
	struct cmem base = { rec, 8 };
	vreg arr = cg_reg(cg, cg_expr(cg, n->u.call.args.v[0]));
	uint32_t done = ir_label(cg->ir);
	struct cg_mark mk = cg_mark(cg);
	struct cmem tmp = cg_alloc(cg, 8);
	cg_zero(cg, cg_at(base, 0), args->size);
	for (uint32_t i = 0; i < args->nfields; i++) {
		vreg p = ir_vreg(cg->ir);
		ir_mov(cg->ir, p, arr);
		ir_alui(cg->ir, BPF_ADD, p, p, 8 * (int64_t)i);
		ir_st(cg->ir, BPF_DW, tmp.base, (int16_t)tmp.off, 0);
		cg_callv(cg, BPF_FUNC_probe_read,
			(struct ir_arg[]){ cg_arg(tmp), IR_IMM(8), IR_ARG(p) },
			3);
		vreg s = cg_load(cg, BPF_DW, tmp);
		ir_jcci(cg->ir, BPF_JEQ, s, 0, done);
		cg_callv(cg, BPF_FUNC_probe_read_str,
			(struct ir_arg[]){
				cg_arg(cg_at(base, (int32_t)args->offsets[i])),
				IR_IMM((int32_t)args->fields[i]->size),
				IR_ARG(s) }, 3);
	}
	ir_place(cg->ir, done);
	cg_release(cg, mk);
}

/* Count a record the ring could not take (struct sonde_globals); when it
 * was exit()'s, say so too, or sonde would never stop. */
static void count_lost_kind(struct cg *cg, enum event_kind kind)
{
	if (cg->prog->globals_map < 0)
		return;
	vreg p = cg_globals_ptr(cg);
	uint32_t skip = ir_label(cg->ir);
	ir_jcci(cg->ir, BPF_JEQ, p, 0, skip);
	vreg one = ir_vreg(cg->ir);
	ir_movi(cg->ir, one, 1);
	ir_xadd(cg->ir, BPF_DW, p,
		(int16_t)offsetof(struct sonde_globals, lost_events), one);
	if (kind == EV_EXIT)
		ir_st(cg->ir, BPF_DW, p,
		      (int16_t)offsetof(struct sonde_globals, exit_lost), 1);
	ir_place(cg->ir, skip);
}

void cg_count_lost(struct cg *cg)
{
	count_lost_kind(cg, EV_PRINTF);
}

/* Wake-ups are batched. Waking the reader costs the probe an irq_work
 * (a self-interrupt, a VM exit under virtualization) and the reader a
 * context switch per record, which at one record per hit is most of what
 * a printf costs the traced program. So records are submitted with
 * BPF_RB_NO_WAKEUP and the reader drains the ring on a short timer
 * (engine.c), except:
 *   - exit(), which should not wait for the timer;
 *   - a burst: the first record that finds the ring a quarter full while
 *     the reader sleeps (sonde_globals.wake_armed, set by the reader
 *     before it sleeps) wakes it, so the ring is drained before it
 *     overflows, at the cost of one wake-up per sleep. */
struct ir_arg cg_wake_flags(struct cg *cg, bool now)
{
	vreg f = ir_vreg(cg->ir);
	if (now) {
		ir_movi(cg->ir, f, BPF_RB_FORCE_WAKEUP);
		return IR_ARG(f);
	}
	int ring = cg->prog->ringbuf_map;
	ir_movi(cg->ir, f, BPF_RB_NO_WAKEUP);
	vreg avail = cg_call(cg, BPF_FUNC_ringbuf_query,
			     (struct ir_arg[]){ IR_MAP(ring),
						IR_IMM(BPF_RB_AVAIL_DATA) }, 2);
	vreg size = cg_call(cg, BPF_FUNC_ringbuf_query,
			    (struct ir_arg[]){ IR_MAP(ring),
					       IR_IMM(BPF_RB_RING_SIZE) }, 2);
	uint32_t quiet = ir_label(cg->ir);
	ir_alui(cg->ir, BPF_LSH, avail, avail, 2);
	ir_jcc(cg->ir, BPF_JLT, avail, size, quiet);
	if (cg->prog->globals_map >= 0) {
		/* Not atomic: two CPUs that both see the flag both wake the
		 * reader, which is harmless. */
		int16_t armed = (int16_t)offsetof(struct sonde_globals,
						  wake_armed);
		vreg g = cg_globals_ptr(cg);
		ir_jcci(cg->ir, BPF_JEQ, g, 0, quiet);
		vreg a = ir_vreg(cg->ir);
		ir_ldx(cg->ir, BPF_DW, a, g, armed);
		ir_jcci(cg->ir, BPF_JEQ, a, 0, quiet);
		ir_st(cg->ir, BPF_DW, g, armed, 0);
	}
	ir_movi(cg->ir, f, BPF_RB_FORCE_WAKEUP);
	ir_place(cg->ir, quiet);
	return IR_ARG(f);
}

/* Reserve the record, write event id and arguments in place, submit. */
static void emit_event(struct cg *cg, const struct node *n)
{
	int32_t id = n->u.call.event_id;
	if (id < 0 || (uint32_t)id >= cg->prog->nevents ||
	    cg->prog->ringbuf_map < 0) {
		cg_error(cg, n->pos, "%s() has no event", n->u.call.name);
		return;
	}
	const struct event_spec *e = &cg->prog->events[id];
	const struct type *args = e->args;
	uint32_t size = 8 + (args ? args->size : 0);
	uint32_t first = first_value_arg(e->kind);
	/* A copied user stack is a ring record of its own that must come
	 * before the record that refers to it: such arguments are computed
	 * before this record is reserved, and copied in. */
	struct cg_mark outer = cg_mark(cg);
	struct cmem pre[16];
	bool has_pre[16] = { false };
	if (args && e->kind != EV_JOIN && cg->prog->ustack_copy) {
		for (uint32_t i = 0; i < args->nfields && i < 16; i++) {
			if (first + i >= n->u.call.args.n ||
			    !type_has_kind(args->fields[i], TYPE_USTACK))
				continue;
			pre[i] = cg_alloc(cg, args->fields[i]->size);
			cg_expr_to(cg, n->u.call.args.v[first + i], pre[i],
				   args->fields[i]);
			has_pre[i] = true;
		}
	}
	vreg rec = cg_call(cg, BPF_FUNC_ringbuf_reserve,
			   (struct ir_arg[]){ IR_MAP(cg->prog->ringbuf_map),
					      IR_IMM((int32_t)size), IR_IMM(0) },
			   3);
	uint32_t lost = ir_label(cg->ir), done = ir_label(cg->ir);
	ir_jcci(cg->ir, BPF_JEQ, rec, 0, lost);
	ir_st(cg->ir, BPF_DW, rec, 0, id);
	if (e->kind == EV_JOIN && args) {
		join_args(cg, n, rec, args);
	} else if (args) {
		for (uint32_t i = 0; i < args->nfields; i++) {
			if (first + i >= n->u.call.args.n)
				break;
			struct cmem to = { rec, 8 + (int32_t)args->offsets[i] };
			if (i < 16 && has_pre[i]) {
				cg_copy(cg, to, pre[i], args->fields[i]->size);
				continue;
			}
			struct cg_mark mk = cg_mark(cg);
			cg_expr_to(cg, n->u.call.args.v[first + i], to,
				   args->fields[i]);
			cg_release(cg, mk);
		}
	}
	struct ir_arg flags = cg_wake_flags(cg, e->kind == EV_EXIT);
	cg_callv(cg, BPF_FUNC_ringbuf_submit,
		(struct ir_arg[]){ IR_ARG(rec), flags }, 2);
	ir_ja(cg->ir, done);
	ir_place(cg->ir, lost);
	count_lost_kind(cg, e->kind);
	ir_place(cg->ir, done);
	cg_release(cg, outer);
}

void cg_call_stmt(struct cg *cg, const struct node *n)
{
	switch (n->u.call.id) {
	case FN_PRINTF: case FN_PRINT: case FN_TIME: case FN_JOIN:
	case FN_CAT: case FN_SYSTEM: case FN_CLEAR: case FN_ZERO:
		emit_event(cg, n);
		return;
	case FN_EXIT:
		/* bpftrace ends the probe at exit(). */
		emit_event(cg, n);
		ir_ja(cg->ir, cg->l_exit);
		return;
	case FN_DELETE:
		cg_map_delete(cg, n);
		return;
	default: {
		struct cg_mark mk = cg_mark(cg);
		cg_expr(cg, n);
		cg_release(cg, mk);
	}
	}
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

struct cval cg_call_expr(struct cg *cg, const struct node *n)
{
	const struct node_list *a = &n->u.call.args;
	switch (n->u.call.id) {
	case FN_STRNCMP:
		return cg_strncmp(cg, n);
	case FN_STRCONTAINS:
		return cg_strcontains(cg, n);
	case FN_SIZEOF:
		return cg_imm(a->n && a->v[0]->type ? a->v[0]->type->size : 0,
			      n->type);
	case FN_REG: {
		int off = a->n && a->v[0]->kind == N_STR ?
			cg_reg_offset(a->v[0]->u.str.s) : -1;
		if (off < 0 || (cg->probe->prog_type != BPF_PROG_TYPE_KPROBE &&
				cg->probe->prog_type != BPF_PROG_TYPE_PERF_EVENT))
			break;
		vreg d = ir_vreg(cg->ir);
		ir_ldx(cg->ir, BPF_DW, d, cg->ctx, (int16_t)off);
		return cg_regval(d, n->type);
	}
	case FN_UADDR:
		return cg_uaddr(cg, n);
	case FN_KADDR: {
		/* Resolved now, as bpftrace does, from /proc/kallsyms. */
		const char *sym = a->n && a->v[0]->kind == N_STR ?
			a->v[0]->u.str.s : "";
		struct ksyms *k = ksyms_new(NULL);
		uint64_t addr = 0;
		int r = k ? ksyms_addr(k, sym, &addr) : -ENOMEM;
		ksyms_free(k);
		if (r < 0) {
			cg_error(cg, n->pos, "kaddr(): cannot resolve kernel "
				 "symbol '%s'", sym);
			return cg_imm(0, n->type);
		}
		vreg d = ir_vreg(cg->ir);
		ir_movi(cg->ir, d, (int64_t)addr);
		return cg_regval(d, n->type);
	}
	case FN_UPTR:
	case FN_KPTR:
		/* the value as it is: only its type's address space changes */
		return cg_regval(cg_reg(cg, cg_expr(cg, a->v[0])), n->type);
	case FN_CGROUPID: {
		const char *path = a->n && a->v[0]->kind == N_STR ?
			a->v[0]->u.str.s : "";
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
	case FN_SIGNAL: {
		struct cval sig = cg_expr(cg, a->v[0]);
		vreg s = cg_reg(cg, sig);
		cg_callv(cg, BPF_FUNC_send_signal,
			(struct ir_arg[]){ IR_ARG(s) }, 1);
		return cg_imm(0, n->type);
	}
	default:
		if (n->type && n->type->kind != TYPE_INT &&
		    n->type->kind != TYPE_NONE) {
			struct cmem m = cg_alloc(cg, n->type->size);
			cg_call_to(cg, n, m, n->type);
			return cg_memval(m, n->type);
		}
		if (n->type && n->type->kind == TYPE_NONE) {
			cg_call_stmt(cg, n);
			return cg_imm(0, n->type);
		}
		break;
	}
	cg_error(cg, n->pos, "%s() cannot be compiled here", n->u.call.name);
	return cg_imm(0, n->type);
}

/* ntop([family,] addr) as TYPE_INET: u64 family, then 16 address bytes
 * (types.h). Without a family, an integer or 4 bytes are IPv4 and 16
 * bytes IPv6; an integer address is its low four bytes, in memory order
 * (bpftrace's ntop(0x0100007f) is 127.0.0.1). */
static void ntop_to(struct cg *cg, const struct node *n, struct cmem dst)
{
	const struct node_list *a = &n->u.call.args;
	const struct node *addr = a->v[a->n - 1];
	bool bytes = addr->type->kind == TYPE_STR;
	cg_zero(cg, dst, 24);
	if (a->n == 2)
		cg_store_int(cg, dst, cg_expr(cg, a->v[0]));
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

void cg_call_to(struct cg *cg, const struct node *n, struct cmem dst,
		const struct type *to)
{
	const struct node_list *a = &n->u.call.args;
	if (!to)
		to = n->type;
	switch (n->u.call.id) {
	case FN_STR:
		cg_str_call_to(cg, n, dst, to);
		return;
	case FN_BUF:
		cg_buf_call_to(cg, n, dst);
		return;
	case FN_JSON:
		cg_json_to(cg, n, dst, to);
		return;
	case FN_KSYM:
		cg_store_int(cg, dst, cg_expr(cg, a->v[0]));
		return;
	case FN_KSTACK:
	case FN_USTACK:
		cg_stack_to(cg, n->type, dst);
		return;
	case FN_NTOP:
		ntop_to(cg, n, dst);
		return;
	case FN_USYM: {
		cg_store_int(cg, dst, cg_expr(cg, a->v[0]));
		vreg pid = cg_call(cg, BPF_FUNC_get_current_pid_tgid, NULL, 0);
		ir_alui(cg->ir, BPF_RSH, pid, pid, 32);
		cg_store_int(cg, cg_at(dst, 8), cg_regval(pid, type_u64()));
		cg_note_pid(cg);
		return;
	}
	default:
		break;
	}
	if (n->type && n->type->kind == TYPE_INT) {
		cg_store(cg, dst, cg_call_expr(cg, n), to);
		return;
	}
	cg_error(cg, n->pos, "%s() is not supported yet", n->u.call.name);
	cg_zero(cg, dst, to->size);
}
