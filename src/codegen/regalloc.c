/* regalloc.c - linear-scan register allocation over the IR.
 *
 * How it works. Liveness is computed per instruction by the usual
 * backward dataflow (iterate to a fixed point; loops converge in a few
 * rounds). A vreg's interval is the hull of the positions where it is
 * live or defined: coarse, but it makes loops and non-SSA variables
 * (assigned on several paths) need no special case.
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

typedef uint64_t word;
#define WBITS 64

struct live {
	size_t n;          /* instructions */
	size_t words;      /* per bitset */
	word *in;          /* n bitsets: live-in of each instruction */
	int32_t *labels;   /* label -> instruction index */
};

static bool bit(const word *s, vreg v)
{
	return (s[v / WBITS] >> (v % WBITS)) & 1;
}

static void set(word *s, vreg v)
{
	s[v / WBITS] |= (word)1 << (v % WBITS);
}

static void clr(word *s, vreg v)
{
	s[v / WBITS] &= ~((word)1 << (v % WBITS));
}

static void live_free(struct live *lv)
{
	free(lv->in);
	free(lv->labels);
	memset(lv, 0, sizeof(*lv));
}

static int live_compute(const struct ir *ir, struct live *lv)
{
	size_t n = ir->insns.n;
	memset(lv, 0, sizeof(*lv));
	lv->n = n;
	lv->words = ((size_t)ir->nvregs + WBITS - 1) / WBITS;
	lv->in = calloc(n ? n * lv->words : 1, sizeof(word));
	lv->labels = malloc((ir->nlabels ? ir->nlabels : 1) * sizeof(int32_t));
	word *out = calloc(lv->words, sizeof(word));
	if (!lv->in || !lv->labels || !out) {
		free(out);
		live_free(lv);
		return -ENOMEM;
	}
	for (uint32_t l = 0; l < ir->nlabels; l++)
		lv->labels[l] = -1;
	for (size_t i = 0; i < n; i++)
		if (ir->insns.v[i].op == IR_LABEL)
			lv->labels[ir->insns.v[i].label] = (int32_t)i;

	bool changed = true;
	while (changed) {
		changed = false;
		for (size_t i = n; i-- > 0;) {
			const struct ir_insn *in = &ir->insns.v[i];
			memset(out, 0, lv->words * sizeof(word));
			if (ir_falls_through(in) && i + 1 < n)
				for (size_t w = 0; w < lv->words; w++)
					out[w] |= lv->in[(i + 1) * lv->words + w];
			if (ir_is_jump(in) && lv->labels[in->label] >= 0) {
				size_t t = (size_t)lv->labels[in->label];
				for (size_t w = 0; w < lv->words; w++)
					out[w] |= lv->in[t * lv->words + w];
			}
			vreg d = ir_def(in);
			if (d)
				clr(out, d);
			vreg uses[IR_MAX_ARGS + 2];
			int nu = ir_uses(in, uses);
			for (int k = 0; k < nu; k++)
				set(out, uses[k]);
			word *cur = &lv->in[i * lv->words];
			if (memcmp(cur, out, lv->words * sizeof(word))) {
				memcpy(cur, out, lv->words * sizeof(word));
				changed = true;
			}
		}
	}
	free(out);
	return 0;
}

/* Registers are read before any write on some path: give them a zero at
 * entry, as bpftrace's variables start at zero. */
static int init_live_at_entry(struct ir *ir, const struct live *lv)
{
	if (!lv->n)
		return 0;
	size_t at = ir->insns.v[0].op == IR_ENTRY ? 1 : 0;
	size_t count = 0;
	for (vreg v = VR_FIRST; v < ir->nvregs; v++)
		if (bit(lv->in, v))
			count++;
	if (!count)
		return 0;
	if (vec_reserve(&ir->insns, ir->insns.n + count))
		return -ENOMEM;
	memmove(&ir->insns.v[at + count], &ir->insns.v[at],
		(ir->insns.n - at) * sizeof(struct ir_insn));
	ir->insns.n += count;
	size_t k = at;
	for (vreg v = VR_FIRST; v < ir->nvregs; v++)
		if (bit(lv->in, v))
			ir->insns.v[k++] = (struct ir_insn){
				.op = IR_MOV, .d = v, .has_imm = true };
	return 1;
}

struct interval {
	vreg v;
	int32_t start, end;
	bool crosses_call;
};

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
	struct live lv;
	int err;
	memset(out, 0, sizeof(*out));
	if (nregs < 1 || nregs > 4)
		return -EINVAL;

	err = live_compute(ir, &lv);
	if (err)
		return err;
	err = init_live_at_entry(ir, &lv);
	if (err < 0)
		goto fail;
	if (err > 0) {
		live_free(&lv);
		err = live_compute(ir, &lv);
		if (err)
			return err;
	}

	size_t nv = (size_t)ir->nvregs;
	struct interval *iv = calloc(nv, sizeof(*iv));
	int32_t *calls = calloc(lv.n + 1, sizeof(int32_t));
	out->home = malloc(nv * sizeof(int8_t));
	out->slot = calloc(nv, sizeof(int16_t));
	err = -ENOMEM;
	if (!iv || !calls || !out->home || !out->slot)
		goto fail_iv;
	for (size_t v = 0; v < nv; v++) {
		iv[v].v = (vreg)v;
		iv[v].start = INT32_MAX;
		iv[v].end = -1;
		out->home[v] = RA_SPILLED;
	}
	size_t ncalls = 0;
	for (size_t i = 0; i < lv.n; i++) {
		const struct ir_insn *in = &ir->insns.v[i];
		const word *s = &lv.in[i * lv.words];
		for (size_t w = 0; w < lv.words; w++) {
			word bits = s[w];
			while (bits) {
				vreg v = (vreg)(w * WBITS + (size_t)__builtin_ctzll(bits));
				bits &= bits - 1;
				if (iv[v].start > (int32_t)i)
					iv[v].start = (int32_t)i;
				iv[v].end = (int32_t)i;
			}
		}
		vreg d = ir_def(in);
		if (d) {
			if (iv[d].start > (int32_t)i)
				iv[d].start = (int32_t)i;
			if (iv[d].end < (int32_t)i)
				iv[d].end = (int32_t)i;
		}
		if (in->op == IR_CALL)
			calls[ncalls++] = (int32_t)i;
	}
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
	live_free(&lv);
	return 0;

fail_iv:
	free(iv);
	free(calls);
	ra_free(out);
fail:
	live_free(&lv);
	return err;
}
