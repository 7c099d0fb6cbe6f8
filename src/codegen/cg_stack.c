/* cg_stack.c - kstack and ustack values: stack-map ids for kernel stacks
 * (and user stacks under --ustack=fp), copied user stacks that sonde
 * unwinds with the CFI, and the once-per-process "new pid" record.
 *
 * Why copy user stacks. bpf_get_stackid(BPF_F_USER_STACK) follows the
 * frame-pointer chain, which Debian's binaries and libraries (python3.11,
 * libc) do not keep: their stacks come out one or two frames deep, or
 * skip callers. So by default a ustack evaluation reserves one ring
 * record (struct sonde_ustack_record in program.h), copies the task's
 * user registers (bpf_task_pt_regs, which works in every probe context:
 * a profile sample taken in the kernel still gets the user state) and
 * up to prog->ustack_copy bytes of stack from the user sp, and gives the
 * value a fresh sample id. Output unwinds the record with the .eh_frame /
 * .debug_frame of the mapped files, as perf does for --call-graph dwarf,
 * and interns the result: map entries keyed by different samples of one
 * stack are merged by output (see output/stackmaps.c).
 *
 * The copy goes page by page (bpf_probe_read_user fails as a whole when
 * any byte is unmapped, and the top of the stack is the end of the
 * mapping): first from sp to the next page boundary, then whole pages,
 * stopping at the first page that cannot be read. The reserved record
 * has room for ustack_copy bytes; the copy is between ustack_copy - 4095
 * and ustack_copy bytes, depending on where sp falls in its page.
 *
 * Sample ids must be unique for the run: the low 12 bits are the CPU,
 * the next 50 the ktime in ns (two ustack evaluations on one CPU cannot
 * share a nanosecond: each copies kilobytes), bit 62 marks a sample. */
#include "cg.h"

#include <stddef.h>

#include "../program.h"

#define PAGE 4096
#define RING_FOR_SAMPLES (8u << 20)
#define PIDS_MAX 16384

static vreg helper0(struct cg *cg, int id)
{
	return cg_call(cg, id, NULL, 0);
}

/* The event of an internal record kind, added on first use (codegen
 * may run a probe several times to fit the stack: find it first). */
static int internal_event(struct cg *cg, enum event_kind kind,
			  const struct type *args)
{
	for (uint32_t i = 0; i < cg->prog->nevents; i++)
		if (cg->prog->events[i].kind == kind)
			return (int)i;
	struct event_spec e = { .kind = kind, .args = args, .map_id = -1 };
	return program_add_event(cg->prog, &e);
}

static int stack_map(struct cg *cg, uint32_t limit)
{
	char name[32];
	if (limit == 0)
		limit = SONDE_STACK_FRAMES;
	program_stack_map_name(name, sizeof(name), limit);
	int map = program_find_map(cg->prog, name);
	if (map >= 0)
		return map;
	struct map_spec s = { .name = arena_strdup(cg->a, name),
			      .kind = MAP_STACK_TRACE, .key_size = 4,
			      .value_size = 8 * limit, .max_entries = 4096 };
	return program_add_map(cg->prog, &s);
}

/* The current process id (tgid). */
static vreg current_pid(struct cg *cg)
{
	vreg pid = helper0(cg, BPF_FUNC_get_current_pid_tgid);
	ir_alui(cg->ir, BPF_RSH, pid, pid, 32);
	return pid;
}

void cg_note_pid(struct cg *cg)
{
	if (cg->prog->ringbuf_map < 0)
		return;
	int map = program_find_map(cg->prog, ".pids");
	if (map < 0) {
		struct map_spec s = { .name = ".pids", .kind = MAP_HASH,
				      .key_size = 8, .value_size = 8,
				      .max_entries = PIDS_MAX };
		map = program_add_map(cg->prog, &s);
	}
	const struct type *u64 = type_u64();
	int ev = internal_event(cg, EV_NEW_PID,
				type_tuple(cg->a, 1, &u64));
	struct cg_mark mk = cg_mark(cg);
	struct cmem key = cg_alloc(cg, 8), one = cg_alloc(cg, 8);
	uint32_t done = ir_label(cg->ir), lost = ir_label(cg->ir);
	vreg pid = current_pid(cg);
	cg_store_int(cg, key, cg_regval(pid, u64));
	vreg seen = cg_call(cg, BPF_FUNC_map_lookup_elem,
			    (struct ir_arg[]){ IR_MAP(map), cg_arg(key) }, 2);
	ir_jcci(cg->ir, BPF_JNE, seen, 0, done);
	ir_st(cg->ir, BPF_DW, one.base, (int16_t)one.off, 1);
	/* NOEXIST: of two CPUs that both missed, one reports the pid. */
	vreg r = cg_call(cg, BPF_FUNC_map_update_elem,
			 (struct ir_arg[]){ IR_MAP(map), cg_arg(key),
					    cg_arg(one), IR_IMM(BPF_NOEXIST) },
			 4);
	ir_jcci(cg->ir, BPF_JNE, r, 0, done);
	vreg rec = cg_call(cg, BPF_FUNC_ringbuf_reserve,
			   (struct ir_arg[]){ IR_MAP(cg->prog->ringbuf_map),
					      IR_IMM(16), IR_IMM(0) }, 3);
	ir_jcci(cg->ir, BPF_JEQ, rec, 0, lost);
	ir_st(cg->ir, BPF_DW, rec, 0, ev);
	vreg pid2 = cg_load(cg, BPF_DW, key);
	ir_stx(cg->ir, BPF_DW, rec, 8, pid2);
	/* Wake the reader now: the mappings must be read before the
	 * process can exit (a -c child may live a millisecond). Once per
	 * process, so it costs nothing in steady state. */
	struct ir_arg flags = cg_wake_flags(cg, true);
	cg_callv(cg, BPF_FUNC_ringbuf_submit,
		 (struct ir_arg[]){ IR_ARG(rec), flags }, 2);
	ir_ja(cg->ir, done);
	ir_place(cg->ir, lost);
	cg_count_lost(cg);
	ir_place(cg->ir, done);
	cg_release(cg, mk);
}

/* A copied user stack: reserve, fill, submit; the USTACK value gets the
 * record's id (or -1 when the ring was full). */
static void ustack_sample_to(struct cg *cg, const struct type *t,
			     struct cmem dst)
{
	struct program *prog = cg->prog;
	uint32_t copy = prog->ustack_copy & ~(uint32_t)(PAGE - 1);
	if (copy < PAGE)
		copy = PAGE;
	const uint32_t hdr = (uint32_t)sizeof(struct sonde_ustack_record);
	int ev = internal_event(cg, EV_USTACK, NULL);
	/* A ring sized by the engine (max_entries 0) is megabytes per CPU;
	 * one sized here must still hold a good number of samples. */
	struct map_spec *ring = &prog->maps[prog->ringbuf_map];
	if (ring->max_entries && ring->max_entries < RING_FOR_SAMPLES)
		ring->max_entries = RING_FOR_SAMPLES;

	uint32_t lost = ir_label(cg->ir), done = ir_label(cg->ir);
	uint32_t copied = ir_label(cg->ir);
	vreg rec = cg_call(cg, BPF_FUNC_ringbuf_reserve,
			   (struct ir_arg[]){ IR_MAP(prog->ringbuf_map),
					      IR_IMM((int32_t)(hdr + copy)),
					      IR_IMM(0) }, 3);
	ir_jcci(cg->ir, BPF_JEQ, rec, 0, lost);
	ir_st(cg->ir, BPF_DW, rec, 0, ev);

	/* id = SAMPLE | (ktime & (2^50 - 1)) << 12 | cpu & 0xfff */
	vreg id = helper0(cg, BPF_FUNC_ktime_get_ns);
	ir_alui(cg->ir, BPF_LSH, id, id, 14);
	ir_alui(cg->ir, BPF_RSH, id, id, 2);
	vreg cpu = helper0(cg, BPF_FUNC_get_smp_processor_id);
	ir_alui(cg->ir, BPF_AND, cpu, cpu, 0xfff);
	ir_alu(cg->ir, BPF_OR, id, id, cpu);
	vreg flag = ir_vreg(cg->ir);
	ir_movi(cg->ir, flag, (int64_t)USTACK_ID_SAMPLE);
	ir_alu(cg->ir, BPF_OR, id, id, flag);
	ir_stx(cg->ir, BPF_DW, rec,
	       (int16_t)offsetof(struct sonde_ustack_record, id), id);
	ir_stx(cg->ir, BPF_DW, dst.base, (int16_t)dst.off, id);
	vreg tgid = helper0(cg, BPF_FUNC_get_current_pid_tgid);
	ir_stx(cg->ir, BPF_DW, rec,
	       (int16_t)offsetof(struct sonde_ustack_record, pid_tgid), tgid);
	ir_alui(cg->ir, BPF_RSH, tgid, tgid, 32);
	ir_stx(cg->ir, BPF_DW, dst.base, (int16_t)(dst.off + 8), tgid);
	ir_st(cg->ir, BPF_DW, rec,
	      (int16_t)offsetof(struct sonde_ustack_record, limit),
	      t->stack_limit ? t->stack_limit : SONDE_STACK_FRAMES);
	ir_st(cg->ir, BPF_DW, rec,
	      (int16_t)offsetof(struct sonde_ustack_record, stack_len), 0);

	/* The user registers of the current task, wherever the probe
	 * interrupted it. */
	vreg task = helper0(cg, BPF_FUNC_get_current_task_btf);
	vreg regs = cg_call(cg, BPF_FUNC_task_pt_regs,
			    (struct ir_arg[]){ IR_ARG(task) }, 1);
	const int32_t regs_off =
		(int32_t)offsetof(struct sonde_ustack_record, regs);
	cg_callv(cg, BPF_FUNC_probe_read_kernel,
		 (struct ir_arg[]){ { rec, regs_off },
				    IR_IMM(8 * USTACK_NREGS), IR_ARG(regs) },
		 3);
	vreg sp = ir_vreg(cg->ir);
	ir_ldx(cg->ir, BPF_DW, sp, rec,
	       (int16_t)(regs_off + 8 * USTACK_REG_SP));

	/* First chunk: sp up to its page's end, 1..4096 bytes. */
	vreg len = ir_vreg(cg->ir);
	ir_mov(cg->ir, len, sp);
	ir_alui(cg->ir, BPF_AND, len, len, PAGE - 1);
	vreg first = ir_vreg(cg->ir);
	ir_movi(cg->ir, first, PAGE);
	ir_alu(cg->ir, BPF_SUB, first, first, len);
	vreg r = cg_call(cg, BPF_FUNC_probe_read_user,
			 (struct ir_arg[]){ { rec, (int32_t)hdr }, IR_ARG(first),
					    IR_ARG(sp) }, 3);
	ir_jcci(cg->ir, BPF_JNE, r, 0, copied);
	ir_mov(cg->ir, len, first);
	ir_stx(cg->ir, BPF_DW, rec,
	       (int16_t)offsetof(struct sonde_ustack_record, stack_len), len);
	/* Then whole pages while they fit and can be read. */
	for (uint32_t k = 1; k < copy / PAGE; k++) {
		vreg to = ir_vreg(cg->ir), from = ir_vreg(cg->ir);
		ir_mov(cg->ir, to, rec);
		ir_alu(cg->ir, BPF_ADD, to, to, len);
		ir_mov(cg->ir, from, sp);
		ir_alu(cg->ir, BPF_ADD, from, from, len);
		r = cg_call(cg, BPF_FUNC_probe_read_user,
			    (struct ir_arg[]){ { to, (int32_t)hdr }, IR_IMM(PAGE),
					       IR_ARG(from) }, 3);
		ir_jcci(cg->ir, BPF_JNE, r, 0, copied);
		ir_alui(cg->ir, BPF_ADD, len, len, PAGE);
		ir_stx(cg->ir, BPF_DW, rec,
		       (int16_t)offsetof(struct sonde_ustack_record, stack_len),
		       len);
	}
	ir_place(cg->ir, copied);
	struct ir_arg flags = cg_wake_flags(cg, false);
	cg_callv(cg, BPF_FUNC_ringbuf_submit,
		 (struct ir_arg[]){ IR_ARG(rec), flags }, 2);
	ir_ja(cg->ir, done);

	ir_place(cg->ir, lost);
	cg_count_lost(cg);
	ir_st(cg->ir, BPF_DW, dst.base, (int16_t)dst.off, -1);
	vreg pid = current_pid(cg);
	ir_stx(cg->ir, BPF_DW, dst.base, (int16_t)(dst.off + 8), pid);
	ir_place(cg->ir, done);
}

void cg_stack_to(struct cg *cg, const struct type *t, struct cmem dst)
{
	bool user = t->kind == TYPE_USTACK;
	if (user && cg->prog->ustack_copy && cg->prog->ringbuf_map >= 0) {
		ustack_sample_to(cg, t, dst);
		return;
	}
	int map = stack_map(cg, t->stack_limit);
	vreg id = cg_call(cg, BPF_FUNC_get_stackid, (struct ir_arg[]){
		IR_ARG(cg->ctx), IR_MAP(map),
		IR_IMM(user ? BPF_F_USER_STACK : 0) }, 3);
	/* the helper returns an int: widen its sign */
	cg_normalize(cg, id, type_int(cg->a, 32, true));
	cg_store_int(cg, dst, cg_regval(id, type_s64()));
	if (user) {
		cg_store_int(cg, cg_at(dst, 8),
			     cg_regval(current_pid(cg), type_u64()));
		cg_note_pid(cg);
	}
}
