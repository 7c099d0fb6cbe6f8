/* regalloc.c - linear-scan register allocation over the IR.
 *
 * How it works. A vreg's interval is the hull of the positions where it
 * is live or defined (liveness per basic block, sparse: below): coarse,
 * but it makes loops and non-SSA variables (assigned on several paths)
 * need no special case.
 *
 * The BPF calling convention shapes the register classes: a call
 * clobbers r0-r5 and preserves r6-r9. An interval that spans a call
 * (starts before it and ends at or after it; a call argument counts) may
 * only live in r6-r9; others may also use r1-r4, which are preferred for
 * them so the callee-saved registers stay free for long-lived values.
 * Call arguments therefore never sit in r1-r5 when the call is lowered,
 * so moving them into place needs no parallel-move ordering. r0 and r5
 * are kept as scratch for lowering spilled operands.
 *
 * When no register of the right class is free, the interval that ends
 * last (among the current one and the active ones holding a usable
 * register) is spilled for its whole length to an 8-byte stack slot;
 * slots are reused once their interval has ended (Poletto & Sarkar). */
#include "regalloc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- liveness, as intervals -----------------------------------------
 *
 * The allocator needs, per vreg, only the hull of the positions where
 * it is live or defined. Liveness is computed per basic block and per
 * vreg, sparsely: from each block where the vreg is used before any
 * definition (upward-exposed), it is propagated to predecessors until
 * blocks that define it. The work is the size of the live ranges, in
 * blocks; the bitsets of every vreg at every instruction that this
 * replaced made a script of 20,000 statements take seconds and
 * gigabytes. The hull is the same: the uses and definitions, the start
 * of each block where the vreg is live-in, the end of each where it is
 * live-out. */

struct cfg {
	size_t n;                  /* blocks */
	int32_t *start, *end;      /* instructions, inclusive */
	int32_t *block_of_label;   /* -1: label never placed */
	int32_t *pred_at, *preds;  /* preds of b: preds[pred_at[b]..pred_at[b+1]) */
};

static void cfg_free(struct cfg *g)
{
	free(g->start);
	free(g->end);
	free(g->block_of_label);
	free(g->pred_at);
	free(g->preds);
	memset(g, 0, sizeof(*g));
}

static bool ends_block(const struct ir_insn *in)
{
	return ir_is_jump(in) || in->op == IR_RET;
}

/* The successors of block b: up to two. */
static int cfg_succ(const struct ir *ir, const struct cfg *g, size_t b,
		    int32_t succ[2])
{
	const struct ir_insn *last = &ir->insns.v[g->end[b]];
	int ns = 0;
	if (ir_falls_through(last) && b + 1 < g->n)
		succ[ns++] = (int32_t)b + 1;
	if (ir_is_jump(last) && g->block_of_label[last->label] >= 0)
		succ[ns++] = g->block_of_label[last->label];
	return ns;
}

static int cfg_build(const struct ir *ir, struct cfg *g)
{
	size_t n = ir->insns.n;
	memset(g, 0, sizeof(*g));
	g->start = malloc((n + 1) * sizeof(int32_t));
	g->end = malloc((n + 1) * sizeof(int32_t));
	g->block_of_label = malloc((ir->nlabels + 1) * sizeof(int32_t));
	if (!g->start || !g->end || !g->block_of_label)
		goto nomem;
	for (uint32_t l = 0; l < ir->nlabels; l++)
		g->block_of_label[l] = -1;
	for (size_t i = 0; i < n; i++) {
		const struct ir_insn *in = &ir->insns.v[i];
		bool leader = i == 0 || in->op == IR_LABEL ||
			      ends_block(&ir->insns.v[i - 1]);
		if (leader) {
			if (g->n)
				g->end[g->n - 1] = (int32_t)i - 1;
			g->start[g->n++] = (int32_t)i;
		}
		if (in->op == IR_LABEL)
			g->block_of_label[in->label] = (int32_t)g->n - 1;
	}
	if (g->n)
		g->end[g->n - 1] = (int32_t)n - 1;
	/* predecessors, counted then placed */
	g->pred_at = calloc(g->n + 2, sizeof(int32_t));
	g->preds = malloc((2 * g->n + 1) * sizeof(int32_t));
	if (!g->pred_at || !g->preds)
		goto nomem;
	int32_t succ[2];
	for (size_t b = 0; b < g->n; b++)
		for (int k = cfg_succ(ir, g, b, succ); k-- > 0;)
			g->pred_at[succ[k] + 2]++;
	for (size_t b = 0; b < g->n; b++)
		g->pred_at[b + 2] += g->pred_at[b + 1];
	for (size_t b = 0; b < g->n; b++)
		for (int k = cfg_succ(ir, g, b, succ); k-- > 0;)
			g->preds[g->pred_at[succ[k] + 1]++] = (int32_t)b;
	return 0;
nomem:
	cfg_free(g);
	return -ENOMEM;
}

/* One vreg's first appearance in a block: used before any definition
 * there (upward-exposed), or defined. */
struct occ {
	vreg v;
	int32_t block;
	bool def;
};

struct interval {
	vreg v;
	int32_t start, end;
	bool crosses_call;
};

/* The hull of every vreg's live range into iv[0..nvregs) (end -1: never
 * live nor defined); the vregs live at the entry into *ENTRY (malloc'd,
 * *NENTRY of them). 0 or -ENOMEM. */
static int live_intervals(const struct ir *ir, struct interval *iv,
			  vreg **entry, size_t *nentry)
{
	size_t n = ir->insns.n, nv = (size_t)ir->nvregs;
	struct cfg g;
	*entry = NULL;
	*nentry = 0;
	for (size_t v = 0; v < nv; v++)
		iv[v] = (struct interval){ .v = (vreg)v, .start = INT32_MAX,
					   .end = -1 };
	if (!n)
		return 0;
	if (cfg_build(ir, &g) < 0)
		return -ENOMEM;
	/* what each block does to each vreg first, and where every vreg
	 * occurs (its uses and definitions bound the hull) */
	VEC(struct occ) occs = { 0 };
	int32_t *seen = malloc(nv * sizeof(int32_t));   /* block + 1 */
	int32_t *defd = malloc(nv * sizeof(int32_t));   /* block + 1 */
	int err = -ENOMEM;
	if (!seen || !defd)
		goto out;
	for (size_t v = 0; v < nv; v++)
		seen[v] = defd[v] = 0;
	for (size_t b = 0; b < g.n; b++) {
		for (int32_t i = g.start[b]; i <= g.end[b]; i++) {
			const struct ir_insn *in = &ir->insns.v[i];
			vreg uses[IR_MAX_ARGS + 2];
			int nu = ir_uses(in, uses);
			for (int k = 0; k < nu; k++) {
				vreg u = uses[k];
				if (iv[u].start > i)
					iv[u].start = i;
				if (iv[u].end < i)
					iv[u].end = i;
				if (seen[u] == (int32_t)b + 1)
					continue;
				seen[u] = (int32_t)b + 1;
				if (vec_push(&occs, ((struct occ){ u, (int32_t)b,
								   false })))
					goto out;
			}
			vreg d = ir_def(in);
			if (!d)
				continue;
			if (iv[d].start > i)
				iv[d].start = i;
			if (iv[d].end < i)
				iv[d].end = i;
			if (defd[d] != (int32_t)b + 1) {
				defd[d] = (int32_t)b + 1;
				seen[d] = (int32_t)b + 1;
				if (vec_push(&occs, ((struct occ){ d, (int32_t)b,
								   true })))
					goto out;
			}
		}
	}
	/* occurrences grouped by vreg (counting sort) */
	int32_t *at = calloc(nv + 1, sizeof(int32_t));
	struct occ *by_v = malloc((occs.n + 1) * sizeof(*by_v));
	int32_t *def_stamp = calloc(g.n, sizeof(int32_t));
	int32_t *in_stamp = calloc(g.n, sizeof(int32_t));
	int32_t *out_stamp = calloc(g.n, sizeof(int32_t));
	int32_t *work = malloc((g.n + 1) * sizeof(int32_t));
	vreg *ent = malloc((nv + 1) * sizeof(vreg));
	if (!at || !by_v || !def_stamp || !in_stamp || !out_stamp || !work ||
	    !ent)
		goto out2;
	for (size_t k = 0; k < occs.n; k++)
		at[occs.v[k].v + 1]++;
	for (size_t v = 0; v < nv; v++)
		at[v + 1] += at[v];
	for (size_t k = 0; k < occs.n; k++)
		by_v[at[occs.v[k].v]++] = occs.v[k];
	/* at[v] is now the end of v's group, the start of v + 1's */
	size_t ne = 0;
	for (size_t v = VR_FIRST, lo = (size_t)at[VR_FIRST - 1]; v < nv;
	     lo = (size_t)at[v++]) {
		size_t hi = (size_t)at[v];
		/* stamps are v: each vreg's marks are its own */
		for (size_t k = lo; k < hi; k++)
			if (by_v[k].def)
				def_stamp[by_v[k].block] = (int32_t)v;
		size_t top = 0;
		for (size_t k = lo; k < hi; k++) {
			int32_t b = by_v[k].block;
			if (by_v[k].def || in_stamp[b] == (int32_t)v)
				continue;
			in_stamp[b] = (int32_t)v;
			work[top++] = b;
		}
		while (top) {
			int32_t b = work[--top];
			if (iv[v].start > g.start[b])
				iv[v].start = g.start[b];
			for (int32_t p = g.pred_at[b]; p < g.pred_at[b + 1]; p++) {
				int32_t pb = g.preds[p];
				if (out_stamp[pb] != (int32_t)v) {
					out_stamp[pb] = (int32_t)v;
					if (iv[v].end < g.end[pb])
						iv[v].end = g.end[pb];
				}
				if (def_stamp[pb] == (int32_t)v ||
				    in_stamp[pb] == (int32_t)v)
					continue;
				in_stamp[pb] = (int32_t)v;
				work[top++] = pb;
			}
		}
		if (in_stamp[0] == (int32_t)v)
			ent[ne++] = (vreg)v;
	}
	*entry = ent;
	*nentry = ne;
	ent = NULL;
	err = 0;
out2:
	free(at);
	free(by_v);
	free(def_stamp);
	free(in_stamp);
	free(out_stamp);
	free(work);
	free(ent);
out:
	vec_free(&occs);
	free(seen);
	free(defd);
	cfg_free(&g);
	return err;
}

/* Registers are read before any write on some path: give them a zero at
 * entry, as bpftrace's variables start at zero. */
static int init_live_at_entry(struct ir *ir, const vreg *entry, size_t count)
{
	if (!count)
		return 0;
	size_t at = 0;
	while (at < ir->insns.n && (ir->insns.v[at].op == IR_ENTRY ||
				    ir->insns.v[at].op == IR_ARGSAVE))
		at++;
	if (vec_reserve(&ir->insns, ir->insns.n + count))
		return -ENOMEM;
	memmove(&ir->insns.v[at + count], &ir->insns.v[at],
		(ir->insns.n - at) * sizeof(struct ir_insn));
	ir->insns.n += count;
	for (size_t k = 0; k < count; k++)
		ir->insns.v[at + k] = (struct ir_insn){
			.op = IR_MOV, .d = entry[k], .has_imm = true };
	return 1;
}


static int by_start(const void *x, const void *y)
{
	const struct interval *a = x, *b = y;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->v < b->v ? -1 : a->v > b->v;
}

/* Registers in order of preference for each class. */
static const int8_t short_regs[] = { 1, 2, 3, 4, 6, 7, 8, 9 };
static const int8_t long_regs[] = { 6, 7, 8, 9 };

static bool reg_allowed(int8_t r, const struct interval *it, int nregs)
{
	if (r >= 6)
		return r - 6 < nregs;
	if (it->crosses_call)
		return false;
	return r >= 1 && r <= 4 && nregs >= 4;
}

void ra_free(struct ra *ra)
{
	if (!ra)
		return;
	free(ra->home);
	free(ra->slot);
	ra->home = NULL;
	ra->slot = NULL;
}

int regalloc(struct ir *ir, uint32_t frame, int nregs, struct ra *out)
{
	int err;
	memset(out, 0, sizeof(*out));
	if (nregs < 1 || nregs > 4)
		return -EINVAL;

	size_t nv = (size_t)ir->nvregs;
	struct interval *iv = calloc(nv + 1, sizeof(*iv));
	if (!iv)
		return -ENOMEM;
	vreg *entry;
	size_t nentry;
	err = live_intervals(ir, iv, &entry, &nentry);
	if (!err) {
		err = init_live_at_entry(ir, entry, nentry);
		free(entry);
		/* the zeros moved every instruction: once more */
		if (err > 0 && (err = live_intervals(ir, iv, &entry,
						     &nentry)) == 0)
			free(entry);
	}
	if (err < 0) {
		free(iv);
		return err;
	}

	size_t n = ir->insns.n;
	int32_t *calls = calloc(n + 1, sizeof(int32_t));
	out->home = malloc((nv + 1) * sizeof(int8_t));
	out->slot = calloc(nv + 1, sizeof(int16_t));
	err = -ENOMEM;
	if (!calls || !out->home || !out->slot)
		goto fail_iv;
	for (size_t v = 0; v < nv; v++)
		out->home[v] = RA_SPILLED;
	size_t ncalls = 0;
	for (size_t i = 0; i < n; i++)
		if (ir->insns.v[i].op == IR_CALL)
			calls[ncalls++] = (int32_t)i;
	/* Spans a call: some call c with start < c <= end. */
	size_t nlive = 0;
	for (size_t v = VR_FIRST; v < nv; v++) {
		if (iv[v].end < 0)
			continue;
		size_t lo = 0, hi = ncalls;     /* first call > start */
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (calls[mid] > iv[v].start)
				hi = mid;
			else
				lo = mid + 1;
		}
		iv[v].crosses_call = lo < ncalls && calls[lo] <= iv[v].end;
		iv[nlive++] = iv[v];
	}
	qsort(iv, nlive, sizeof(*iv), by_start);

	/* active: indices into iv holding a register. */
	size_t *active = malloc((nlive + 1) * sizeof(size_t));
	struct { int32_t free_after; int16_t off; } *slots =
		malloc((nlive + 1) * sizeof(*slots));
	size_t nactive = 0, nslots = 0;
	if (!active || !slots) {
		free(active);
		free(slots);
		goto fail_iv;
	}
	uint32_t stack = (frame + 7) & ~7u;

	for (size_t k = 0; k < nlive; k++) {
		struct interval *cur = &iv[k];
		/* Expire intervals that ended; a register freed at this very
		 * position may be reused by the value defined here. */
		size_t j = 0;
		for (size_t a = 0; a < nactive; a++)
			if (iv[active[a]].end > cur->start)
				active[j++] = active[a];
		nactive = j;

		bool used[10] = { false };
		for (size_t a = 0; a < nactive; a++)
			used[out->home[iv[active[a]].v]] = true;
		const int8_t *pref = cur->crosses_call ? long_regs : short_regs;
		size_t npref = cur->crosses_call ? sizeof(long_regs)
						 : sizeof(short_regs);
		int8_t r = RA_SPILLED;
		for (size_t p = 0; p < npref; p++)
			if (!used[pref[p]] && reg_allowed(pref[p], cur, nregs)) {
				r = pref[p];
				break;
			}
		struct interval *spill = cur;
		if (r == RA_SPILLED) {
			size_t victim = SIZE_MAX;
			for (size_t a = 0; a < nactive; a++) {
				struct interval *o = &iv[active[a]];
				if (!reg_allowed(out->home[o->v], cur, nregs))
					continue;
				if (o->end > spill->end) {
					spill = o;
					victim = a;
				}
			}
			if (victim != SIZE_MAX) {
				r = out->home[spill->v];
				out->home[spill->v] = RA_SPILLED;
				active[victim] = k;
			}
		} else {
			active[nactive++] = k;
		}
		out->home[cur->v] = r == RA_SPILLED ? RA_SPILLED : r;
		if (spill != cur || r == RA_SPILLED) {
			/* `spill` goes to memory for its whole interval. */
			size_t s;
			for (s = 0; s < nslots; s++)
				if (slots[s].free_after < spill->start)
					break;
			if (s == nslots) {
				stack += 8;
				slots[nslots].off = (int16_t)-(int32_t)stack;
				nslots++;
			}
			slots[s].free_after = spill->end;
			out->slot[spill->v] = slots[s].off;
			out->home[spill->v] = RA_SPILLED;
			out->nspilled++;
		}
	}
	out->stack = stack;
	free(active);
	free(slots);
	free(iv);
	free(calls);
	return 0;

fail_iv:
	free(iv);
	free(calls);
	ra_free(out);
	return err;
}
