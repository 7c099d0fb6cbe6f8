/* syscalls.c - one program on raw_syscalls for the syscalls:sys_enter_*
 * (or sys_exit_*) probes of a script, dispatching on the syscall number.
 *
 * Why: `tracepoint:syscalls:sys_enter_*` is some 350 tracepoints, each
 * a perf event released with its own grace period: 16-30 s to exit. The
 * syscalls: records have the layout of raw_syscalls' (the number at 8,
 * then the arguments or the return value from 16), so each probe's
 * program, unchanged, can run from raw_syscalls:sys_enter/sys_exit once
 * its own number is seen. One perf event, one release.
 *
 * How: the programs of the group (the provider marks them MULTI_SYSCALL
 * with their number) are laid end to end, one copy per distinct program,
 * behind a prologue that reads the number and jumps to the program of
 * that number:
 *
 *     r2 = *(u32 *)(r1 + 8)
 *     if r2 == NR_a goto A ; if r2 == NR_b goto B ; ...
 *     r0 = 0 ; exit
 *   A: ...program of a, ending in exit...
 *   B: ...
 *
 * Every jump inside a program is relative and its map references are
 * indexes patched at load, so a program moved down still works; the
 * prologue leaves r1 (the context) as the program expects it. Programs
 * with bpf-to-bpf calls or callbacks are left alone (the verifier reads subprogram
 * bounds from calls). A number two probes share (two blocks on one
 * syscall) keeps its later probes on their own tracepoints, since a
 * dispatch runs one program. Jumps reach 32767 instructions (and the
 * verifier needs room to grow the code under them), so a group bigger
 * than DISPATCH_MAX_INSNS is cut into several dispatchers.
 *
 * multi.c builds the same kind of program for a kprobe_multi or
 * uprobe_multi link whose probes' programs differ (@[probe] under a
 * wildcard): there the key is the link's per-target cookie. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../base/log.h"
#include "engine_int.h"

#define NR_SEEN_MAX 4096

bool engine_has_calls(const struct probe *p)
{
	for (uint32_t i = 0; i < p->ninsns; i++) {
		if (p->insns[i].code == (BPF_JMP | BPF_CALL) &&
		    p->insns[i].src_reg == BPF_PSEUDO_CALL)
			return true;
		/* a callback's address (for ($kv : @m), len(@m)) */
		if (p->insns[i].code == (BPF_LD | BPF_IMM | BPF_DW) &&
		    p->insns[i].src_reg == BPF_PSEUDO_FUNC)
			return true;
	}
	return false;
}

static bool same_insns(const struct probe *a, const struct probe *b)
{
	return a->ninsns == b->ninsns &&
		memcmp(a->insns, b->insns, a->ninsns * sizeof(*a->insns)) == 0;
}

/* Build the leader's program from `chunk` (probe indexes, the leader
 * first). DISPATCH_SYSCALL: on the number at ctx + 8, one jump per probe
 * (numbers all distinct); DISPATCH_COOKIE: on the attach cookie, one
 * jump per distinct program, each probe's cookie set to its program's
 * index (multi.c gives the link those cookies). */
int engine_dispatch_build(struct engine *e, const uint32_t *chunk, size_t n,
			  enum dispatch_key key)
{
	/* distinct programs: body[k] is the first probe with that code */
	uint32_t *body = calloc(n, sizeof(*body));
	uint32_t *body_of = calloc(n, sizeof(*body_of));
	uint32_t *at = calloc(n, sizeof(*at));
	size_t nbody = 0;
	int r = -ENOMEM;
	if (!body || !body_of || !at)
		goto out;
	for (size_t i = 0; i < n; i++) {
		const struct probe *p = e->probes[chunk[i]].probe;
		size_t k = 0;
		while (k < nbody && !same_insns(e->probes[body[k]].probe, p))
			k++;
		if (k == nbody)
			body[nbody++] = chunk[i];
		body_of[i] = (uint32_t)k;
	}
	/* the prologue: read the key, one jump per key, r0 = 0, exit */
	size_t head = key == DISPATCH_SYSCALL ? 1 : 4;
	size_t njumps = key == DISPATCH_SYSCALL ? n : nbody;
	size_t total = head + njumps + 2;
	for (size_t k = 0; k < nbody; k++)
		total += e->probes[body[k]].probe->ninsns;
	struct bpf_insn *v = calloc(total, sizeof(*v));
	if (!v)
		goto out;
	size_t pc = head + njumps + 2;
	for (size_t k = 0; k < nbody; k++) {
		at[k] = (uint32_t)pc;
		const struct probe *p = e->probes[body[k]].probe;
		memcpy(&v[pc], p->insns, p->ninsns * sizeof(*v));
		pc += p->ninsns;
	}
	if (key == DISPATCH_SYSCALL) {
		v[0] = (struct bpf_insn){ .code = BPF_LDX | BPF_MEM | BPF_W,
					  .dst_reg = 2, .src_reg = 1, .off = 8 };
	} else {
		/* r6 = ctx; r0 = bpf_get_attach_cookie(ctx); r2 = r0; r1 = r6 */
		v[0] = (struct bpf_insn){ .code = BPF_ALU64 | BPF_MOV | BPF_X,
					  .dst_reg = 6, .src_reg = 1 };
		v[1] = (struct bpf_insn){ .code = BPF_JMP | BPF_CALL,
					  .imm = BPF_FUNC_get_attach_cookie };
		v[2] = (struct bpf_insn){ .code = BPF_ALU64 | BPF_MOV | BPF_X,
					  .dst_reg = 2, .src_reg = 0 };
		v[3] = (struct bpf_insn){ .code = BPF_ALU64 | BPF_MOV | BPF_X,
					  .dst_reg = 1, .src_reg = 6 };
	}
	for (size_t j = 0; j < njumps; j++) {
		size_t here = head + j;
		size_t k = key == DISPATCH_SYSCALL ? body_of[j] : j;
		int32_t imm = key == DISPATCH_SYSCALL ?
			e->probes[chunk[j]].req.syscall_nr : (int32_t)j;
		v[here] = (struct bpf_insn){
			.code = BPF_JMP | BPF_JEQ | BPF_K, .dst_reg = 2,
			.imm = imm, .off = (int16_t)(at[k] - (here + 1)),
		};
	}
	v[head + njumps] = (struct bpf_insn){ .code = BPF_ALU64 | BPF_MOV |
					      BPF_K, .dst_reg = 0, .imm = 0 };
	v[head + njumps + 1] = (struct bpf_insn){ .code = BPF_JMP | BPF_EXIT };
	for (size_t i = 0; i < n; i++)
		e->probes[chunk[i]].cookie = body_of[i];

	struct engine_probe *lead = &e->probes[chunk[0]];
	lead->dispatch_insns = v;
	lead->dispatch_ninsns = (uint32_t)total;
	lead->dispatch = true;
	lead->dispatch_members = (uint32_t)n - 1;
	if (key == DISPATCH_SYSCALL)
		lead->req.perf_config = lead->req.dispatch_config;
	for (size_t i = 1; i < n; i++)
		e->probes[chunk[i]].leader = (int32_t)chunk[0];
	r = 0;
out:
	free(body);
	free(body_of);
	free(at);
	return r;
}

/* The probes of one direction (enter or exit) into dispatchers. */
static int plan_direction(struct engine *e, bool exit_)
{
	uint8_t *seen = calloc(NR_SEEN_MAX, 1);
	uint32_t *chunk = calloc(e->nprobes ? e->nprobes : 1, sizeof(*chunk));
	int r = -ENOMEM;
	if (!seen || !chunk)
		goto out;
	size_t n = 0, size = 0;
	r = 0;
	for (uint32_t i = 0; i <= e->nprobes && r == 0; i++) {
		struct engine_probe *ep = i < e->nprobes ? &e->probes[i] : NULL;
		bool fits = ep && ep->has_req && ep->req.multi == MULTI_SYSCALL &&
			ep->req.retprobe == exit_ && ep->leader < 0 &&
			ep->probe->insns && !engine_has_calls(ep->probe) &&
			ep->req.syscall_nr >= 0 &&
			ep->req.syscall_nr < NR_SEEN_MAX &&
			!seen[ep->req.syscall_nr];
		/* the chunk is full (or the probes are done): close it */
		if (n && (!ep || (fits && size + 1 + ep->probe->ninsns >
				   DISPATCH_MAX_INSNS))) {
			if (n > 1)
				r = engine_dispatch_build(e, chunk, n,
							  DISPATCH_SYSCALL);
			n = size = 0;
		}
		if (!fits)
			continue;
		seen[ep->req.syscall_nr] = 1;
		chunk[n++] = i;
		size += 1 + ep->probe->ninsns;   /* at most: its jump and body */
	}
out:
	free(seen);
	free(chunk);
	return r;
}

int engine_syscalls_plan(struct engine *e)
{
	int r = plan_direction(e, false);
	return r < 0 ? r : plan_direction(e, true);
}
