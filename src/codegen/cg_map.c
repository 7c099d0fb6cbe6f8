/* cg_map.c - map reads, writes and deletes, and the aggregations (count,
 * sum, min, max, avg, stats, hist, lhist, tseries) on per-CPU maps, with the value
 * layouts and bucket numbering documented in program.h. */
#include "cg.h"

#include <stddef.h>
#include <string.h>

#include "../funcs/func.h"
#include "../host/host.h"

static const struct map_spec *spec_of(struct cg *cg, const struct node *m)
{
	int32_t id = m->u.map.map_id;
	if (id < 0 || (uint32_t)id >= cg->prog->nmaps) {
		cg_error(cg, m->pos, "map %s has no storage", m->u.map.name);
		return NULL;
	}
	return &cg->prog->maps[id];
}

static bool key_has_padding(const struct type *t)
{
	if (!t)
		return false;
	if (t->kind == TYPE_TUPLE) {
		for (uint32_t i = 0; i < t->nfields; i++)
			if (t->fields[i]->size % 8 ||
			    key_has_padding(t->fields[i]))
				return true;
		return false;
	}
	return t->size % 8 != 0;
}

/* Build the key of @m[k...] in a new object of the map's key size. A
 * histogram's key ends with the bucket, written by the caller at
 * key_size - 8. */
static struct cmem build_key(struct cg *cg, const struct node *m,
			     const struct map_spec *s)
{
	struct cmem key = cg_alloc(cg, s->key_size);
	const struct node_list *keys = &m->u.map.keys;
	const struct type *kt = s->key_type;
	if (!keys->n || !kt) {
		/* an array's key is its u32 index */
		ir_st(cg->ir, s->key_size == 4 ? BPF_W : BPF_DW, key.base,
		      (int16_t)key.off, 0);
		return key;
	}
	/* Hash keys compare every byte: padding must be zero. */
	if (key_has_padding(kt))
		cg_zero(cg, key, s->key_size);
	if (kt->kind == TYPE_TUPLE && kt->nfields == keys->n) {
		for (uint32_t i = 0; i < keys->n; i++)
			cg_expr_to(cg, keys->v[i],
				   cg_at(key, (int32_t)kt->offsets[i]),
				   kt->fields[i]);
	} else if (keys->n == 1) {
		cg_expr_to(cg, keys->v[0], key, kt);
	} else {
		cg_error(cg, m->pos, "keys of %s do not match its key type",
			 m->u.map.name);
	}
	return key;
}

/* A lookup that finds nothing is reported under -kk at cg->pos, as
 * bpftrace 0.17 reports every map read, ++, op= and aggregation of a
 * missing key ("Failed to map_lookup_elem: 0"). */
static vreg lookup(struct cg *cg, int map, struct cmem key)
{
	vreg p = cg_call(cg, BPF_FUNC_map_lookup_elem,
			 (struct ir_arg[]){ IR_MAP(map), cg_arg(key) }, 2);
	cg_check_found(cg, p);
	return p;
}

/* An update that fails (a full map refuses new keys) is counted in the
 * map's slot of SONDE_MAPFAIL_MAP, so the user hears of it, once, instead
 * of silently missing keys. Only the failing path pays. */
static void update(struct cg *cg, int map, struct cmem key, struct cmem val)
{
	vreg r = cg_call(cg, BPF_FUNC_map_update_elem,
			 (struct ir_arg[]){ IR_MAP(map), cg_arg(key),
					    cg_arg(val), IR_IMM(BPF_ANY) }, 4);
	cg_check_helper(cg, r, BPF_FUNC_map_update_elem);
	int fails = cg->mapfail_map;
	if (fails < 0 || (uint32_t)map >= cg->prog->maps[fails].max_entries)
		return;
	uint32_t ok = ir_label(cg->ir);
	ir_jcci(cg->ir, BPF_JSGE, r, 0, ok);
	struct cg_mark mk = cg_mark(cg);
	struct cmem slot = cg_alloc(cg, 8);
	ir_st(cg->ir, BPF_W, slot.base, (int16_t)slot.off, map);
	vreg p = cg_call(cg, BPF_FUNC_map_lookup_elem,
			 (struct ir_arg[]){ IR_MAP(fails), cg_arg(slot) }, 2);
	ir_jcci(cg->ir, BPF_JEQ, p, 0, ok);
	vreg one = ir_vreg(cg->ir);
	ir_movi(cg->ir, one, 1);
	ir_xadd(cg->ir, BPF_DW, p, 0, one);
	cg_release(cg, mk);
	ir_place(cg->ir, ok);
}

/* The integer at p, or 0 when p is NULL. */
static vreg load_or_zero(struct cg *cg, vreg p, int16_t off)
{
	vreg r = ir_vreg(cg->ir);
	uint32_t skip = ir_label(cg->ir);
	ir_movi(cg->ir, r, 0);
	ir_jcci(cg->ir, BPF_JEQ, p, 0, skip);
	ir_ldx(cg->ir, BPF_DW, r, p, off);
	ir_place(cg->ir, skip);
	return r;
}

static bool int_valued(const struct type *t)
{
	return t && (t->kind == TYPE_INT || t->kind == TYPE_COUNT ||
		     t->kind == TYPE_SUM);
}

/* Values whose read is their first u64: integers, and min()/max()
 * ({ s64 value; u64 set }). All but TYPE_INT are aggregations, which a
 * per-CPU map holds once per CPU. */
static bool word_valued(const struct type *t)
{
	return int_valued(t) || (t && (t->kind == TYPE_MIN ||
				       t->kind == TYPE_MAX ||
				       t->kind == TYPE_AVG));
}

/* The jump that keeps CUR against a new value X (min/max). */
static uint8_t keep_jump(bool is_max, bool sgn)
{
	return is_max ? (sgn ? BPF_JSGE : BPF_JGE) : (sgn ? BPF_JSLE : BPF_JLE);
}

/* How many per-CPU slots an aggregation read merges (program.h): a host
 * fact, so such a script's bytecode depends on the machine. */
static int64_t percpu_read_slots(void)
{
	int n = host_possible_cpus();
	if (n < SONDE_PERCPU_READ_MIN)
		n = SONDE_PERCPU_READ_MIN;
	return n > SONDE_PERCPU_READ_MAX ? SONDE_PERCPU_READ_MAX : n;
}

/* The loop every aggregation read runs over the CPUs' slots of KEY:
 * percpu_begin returns the slot's address, where the code that follows
 * may jump to l->next to skip it; percpu_end closes the loop. */
struct percpu_loop {
	vreg cpu;
	uint32_t top, next, done;
};

static vreg percpu_begin(struct cg *cg, struct percpu_loop *l, int map_id,
			 struct cmem key)
{
	struct ir *ir = cg->ir;
	l->cpu = ir_vreg(ir);
	ir_movi(ir, l->cpu, 0);
	l->top = ir_label(ir);
	l->next = ir_label(ir);
	l->done = ir_label(ir);
	ir_place(ir, l->top);
	ir_jcci(ir, BPF_JGE, l->cpu, percpu_read_slots(), l->done);
	vreg p = cg_call(cg, BPF_FUNC_map_lookup_percpu_elem,
			 (struct ir_arg[]){ IR_MAP(map_id), cg_arg(key),
					    IR_ARG(l->cpu) }, 3);
	ir_jcci(ir, BPF_JEQ, p, 0, l->next);
	return p;
}

static void percpu_end(struct ir *ir, const struct percpu_loop *l)
{
	ir_place(ir, l->next);
	ir_alui(ir, BPF_ADD, l->cpu, l->cpu, 1);
	ir_ja(ir, l->top);
	ir_place(ir, l->done);
}

/* avg() read as a value (bpftrace 0.2x): the totals of every CPU's slot
 * ({ s64 count; s64 total }) over their counts, 0 when none counted;
 * the division truncates toward zero, done on magnitudes (BPF's signed
 * division is a 6.6 instruction). */
static struct cval avg_read_at(struct cg *cg, int map_id, struct cmem key,
			       const struct type *t)
{
	struct ir *ir = cg->ir;
	bool sgn = cg->prog->maps[map_id].value_type->is_signed;
	vreg total = ir_vreg(ir), count = ir_vreg(ir);
	ir_movi(ir, total, 0);
	ir_movi(ir, count, 0);
	struct percpu_loop l;
	vreg p = percpu_begin(cg, &l, map_id, key);
	vreg v = ir_vreg(ir);
	ir_ldx(ir, BPF_DW, v, p, 0);
	ir_alu(ir, BPF_ADD, count, count, v);
	vreg w = ir_vreg(ir);
	ir_ldx(ir, BPF_DW, w, p, 8);
	ir_alu(ir, BPF_ADD, total, total, w);
	percpu_end(ir, &l);
	vreg r = ir_vreg(ir);
	uint32_t out = ir_label(ir);
	ir_movi(ir, r, 0);
	ir_jcci(ir, BPF_JEQ, count, 0, out);
	if (sgn) {
		uint32_t pos = ir_label(ir);
		ir_jcci(ir, BPF_JSGE, total, 0, pos);
		ir_neg(ir, total, total);
		ir_alu(ir, BPF_DIV, r, total, count);
		ir_neg(ir, r, r);
		ir_ja(ir, out);
		ir_place(ir, pos);
	}
	ir_alu(ir, BPF_DIV, r, total, count);
	ir_place(ir, out);
	return cg_regval(r, t);
}

/* count() or sum() read as a value: the sum over every CPU's slot; min()
 * or max(): the extreme of the slots that are set ({ s64 value; u64 set }),
 * 0 when none is. bpftrace 0.17 reads the current CPU's slot alone. One
 * bounded loop over bpf_map_lookup_percpu_elem (5.19+), which returns
 * NULL past the last CPU and for a key that is not there. */
struct cval cg_agg_read_at(struct cg *cg, int map_id, struct cmem key,
			   const struct type *t)
{
	struct ir *ir = cg->ir;
	const struct map_spec *s = &cg->prog->maps[map_id];
	enum type_kind k = s->value_type->kind;
	bool extreme = k == TYPE_MIN || k == TYPE_MAX;
	if (k == TYPE_AVG)
		return avg_read_at(cg, map_id, key, t);
	vreg acc = ir_vreg(ir), set = ir_vreg(ir);
	ir_movi(ir, acc, 0);
	ir_movi(ir, set, 0);
	struct percpu_loop l;
	vreg p = percpu_begin(cg, &l, map_id, key);
	vreg v = ir_vreg(ir);
	if (!extreme) {
		ir_ldx(ir, BPF_DW, v, p, 0);
		ir_alu(ir, BPF_ADD, acc, acc, v);
	} else {
		uint32_t take = ir_label(ir);
		vreg here = ir_vreg(ir);
		ir_ldx(ir, BPF_DW, here, p, 8);
		ir_jcci(ir, BPF_JEQ, here, 0, l.next);
		ir_ldx(ir, BPF_DW, v, p, 0);
		ir_jcci(ir, BPF_JEQ, set, 0, take);
		ir_jcc(ir, keep_jump(k == TYPE_MAX, s->value_type->is_signed),
		       acc, v, l.next);
		ir_place(ir, take);
		ir_mov(ir, acc, v);
		ir_movi(ir, set, 1);
	}
	percpu_end(ir, &l);
	return cg_regval(acc, t);
}

static struct cval agg_read(struct cg *cg, const struct node *m,
			    const struct map_spec *s)
{
	struct cg_mark mk = cg_mark(cg);
	struct cmem key = build_key(cg, m, s);
	struct cval v = cg_agg_read_at(cg, m->u.map.map_id, key, m->type);
	cg_release(cg, mk);
	return v;
}

struct cval cg_map_read(struct cg *cg, const struct node *m)
{
	const struct map_spec *s = spec_of(cg, m);
	if (!s)
		return cg_imm(0, m->type);
	if (!word_valued(s->value_type)) {
		struct cmem dst = cg_alloc(cg, m->type->size);
		cg_map_read_to(cg, m, dst, m->type);
		return cg_memval(dst, m->type);
	}
	if (s->value_type->kind != TYPE_INT && map_kind_percpu(s->kind))
		return agg_read(cg, m, s);
	struct cg_mark mk = cg_mark(cg);
	struct cmem key = build_key(cg, m, s);
	struct pos outer = cg->pos;
	cg->pos = m->pos;
	vreg p = lookup(cg, m->u.map.map_id, key);
	cg->pos = outer;
	vreg r = load_or_zero(cg, p, 0);
	cg_release(cg, mk);
	return cg_regval(r, m->type);
}

void cg_map_read_to(struct cg *cg, const struct node *m, struct cmem dst,
		    const struct type *to)
{
	const struct map_spec *s = spec_of(cg, m);
	if (!to)
		to = m->type;
	if (!s || word_valued(s->value_type)) {
		cg_store(cg, dst, cg_map_read(cg, m), to);
		return;
	}
	struct cg_mark mk = cg_mark(cg);
	struct cmem key = build_key(cg, m, s);
	struct pos outer = cg->pos;
	cg->pos = m->pos;
	vreg p = lookup(cg, m->u.map.map_id, key);
	cg->pos = outer;
	uint32_t missing = ir_label(cg->ir), done = ir_label(cg->ir);
	ir_jcci(cg->ir, BPF_JEQ, p, 0, missing);
	cg_store(cg, dst, cg_memval((struct cmem){ p, 0 }, s->value_type), to);
	ir_ja(cg->ir, done);
	ir_place(cg->ir, missing);
	cg_zero(cg, dst, to->size);
	ir_place(cg->ir, done);
	cg_release(cg, mk);
}

/* Add v to the u64 at key (count, sum, histogram buckets): in place when
 * the entry exists, else insert v. */
static void add_at(struct cg *cg, int map, struct cmem key, struct cval v)
{
	vreg p = lookup(cg, map, key);
	uint32_t fresh = ir_label(cg->ir), done = ir_label(cg->ir);
	ir_jcci(cg->ir, BPF_JEQ, p, 0, fresh);
	vreg old = ir_vreg(cg->ir);
	ir_ldx(cg->ir, BPF_DW, old, p, 0);
	if (v.kind == CV_IMM)
		ir_alui(cg->ir, BPF_ADD, old, old, v.imm);
	else
		ir_alu(cg->ir, BPF_ADD, old, old, v.r);
	ir_stx(cg->ir, BPF_DW, p, 0, old);
	ir_ja(cg->ir, done);
	ir_place(cg->ir, fresh);
	struct cmem val = cg_alloc(cg, 8);
	cg_store_int(cg, val, v);
	update(cg, map, key, val);
	ir_place(cg->ir, done);
}

/* { s64 value; u64 set; }: replace when unset or when x beats value. */
static void minmax(struct cg *cg, int map, struct cmem key, vreg x,
		   bool is_max, bool sgn)
{
	vreg p = lookup(cg, map, key);
	uint32_t fresh = ir_label(cg->ir), write = ir_label(cg->ir);
	uint32_t done = ir_label(cg->ir);
	ir_jcci(cg->ir, BPF_JEQ, p, 0, fresh);
	vreg set = ir_vreg(cg->ir);
	ir_ldx(cg->ir, BPF_DW, set, p, 8);
	ir_jcci(cg->ir, BPF_JEQ, set, 0, write);
	vreg cur = ir_vreg(cg->ir);
	ir_ldx(cg->ir, BPF_DW, cur, p, 0);
	ir_jcc(cg->ir, keep_jump(is_max, sgn), cur, x, done);
	ir_place(cg->ir, write);
	ir_stx(cg->ir, BPF_DW, p, 0, x);
	ir_st(cg->ir, BPF_DW, p, 8, 1);
	ir_ja(cg->ir, done);
	ir_place(cg->ir, fresh);
	struct cmem val = cg_alloc(cg, 16);
	ir_stx(cg->ir, BPF_DW, val.base, (int16_t)val.off, x);
	ir_st(cg->ir, BPF_DW, val.base, (int16_t)(val.off + 8), 1);
	update(cg, map, key, val);
	ir_place(cg->ir, done);
}

/* { s64 count; s64 total; } */
static void avg(struct cg *cg, int map, struct cmem key, vreg x)
{
	vreg p = lookup(cg, map, key);
	uint32_t fresh = ir_label(cg->ir), done = ir_label(cg->ir);
	ir_jcci(cg->ir, BPF_JEQ, p, 0, fresh);
	vreg c = ir_vreg(cg->ir), t = ir_vreg(cg->ir);
	ir_ldx(cg->ir, BPF_DW, c, p, 0);
	ir_alui(cg->ir, BPF_ADD, c, c, 1);
	ir_stx(cg->ir, BPF_DW, p, 0, c);
	ir_ldx(cg->ir, BPF_DW, t, p, 8);
	ir_alu(cg->ir, BPF_ADD, t, t, x);
	ir_stx(cg->ir, BPF_DW, p, 8, t);
	ir_ja(cg->ir, done);
	ir_place(cg->ir, fresh);
	struct cmem val = cg_alloc(cg, 16);
	ir_st(cg->ir, BPF_DW, val.base, (int16_t)val.off, 1);
	ir_stx(cg->ir, BPF_DW, val.base, (int16_t)(val.off + 8), x);
	update(cg, map, key, val);
	ir_place(cg->ir, done);
}

/* D's stddev(): count, sum, and the sum of squares in 128 bits (x * x
 * of a signed x is |x| * |x|, at most 2^126; the carry out of the low
 * word goes to the high one). */
static void stddev(struct cg *cg, int map, struct cmem key, vreg x,
		   bool is_signed)
{
	struct ir *ir = cg->ir;
	vreg sq = ir_vreg(ir), ax = ir_vreg(ir);
	ir_mov(ir, ax, x);
	if (is_signed) {
		uint32_t pos = ir_label(ir);
		ir_jcci(ir, BPF_JSGE, ax, 0, pos);
		ir_neg(ir, ax, ax);
		ir_place(ir, pos);
	}
	/* |x| * |x| as 128 bits from 32-bit halves: lo*lo + 2*lo*hi<<32
	 * + hi*hi<<64 */
	vreg lo = ir_vreg(ir), hi = ir_vreg(ir), mid = ir_vreg(ir);
	vreg sqhi = ir_vreg(ir), t = ir_vreg(ir);
	ir_mov(ir, lo, ax);
	ir_alui(ir, BPF_LSH, lo, lo, 32);
	ir_alui(ir, BPF_RSH, lo, lo, 32);
	ir_mov(ir, hi, ax);
	ir_alui(ir, BPF_RSH, hi, hi, 32);
	ir_mov(ir, sq, lo);
	ir_alu(ir, BPF_MUL, sq, sq, lo);           /* lo*lo */
	ir_mov(ir, sqhi, hi);
	ir_alu(ir, BPF_MUL, sqhi, sqhi, hi);       /* hi*hi */
	ir_mov(ir, mid, lo);
	ir_alu(ir, BPF_MUL, mid, mid, hi);         /* lo*hi, < 2^64 */
	for (int twice = 0; twice < 2; twice++) {
		uint32_t nc = ir_label(ir);
		ir_mov(ir, t, mid);
		ir_alui(ir, BPF_LSH, t, t, 32);
		ir_alu(ir, BPF_ADD, sq, sq, t);
		ir_mov(ir, t, mid);
		ir_alui(ir, BPF_RSH, t, t, 32);
		ir_alu(ir, BPF_ADD, sqhi, sqhi, t);
		/* carry: the sum is below what was added */
		ir_mov(ir, t, mid);
		ir_alui(ir, BPF_LSH, t, t, 32);
		ir_jcc(ir, BPF_JGE, sq, t, nc);
		ir_alui(ir, BPF_ADD, sqhi, sqhi, 1);
		ir_place(ir, nc);
	}
	vreg p = lookup(cg, map, key);
	uint32_t fresh = ir_label(ir), done = ir_label(ir), nc = ir_label(ir);
	ir_jcci(ir, BPF_JEQ, p, 0, fresh);
	vreg c = ir_vreg(ir);
	ir_ldx(ir, BPF_DW, c, p, 0);
	ir_alui(ir, BPF_ADD, c, c, 1);
	ir_stx(ir, BPF_DW, p, 0, c);
	ir_ldx(ir, BPF_DW, c, p, 8);
	ir_alu(ir, BPF_ADD, c, c, x);
	ir_stx(ir, BPF_DW, p, 8, c);
	ir_ldx(ir, BPF_DW, t, p, 24);
	ir_alu(ir, BPF_ADD, t, t, sqhi);
	ir_ldx(ir, BPF_DW, c, p, 16);
	ir_alu(ir, BPF_ADD, c, c, sq);
	ir_jcc(ir, BPF_JGE, c, sq, nc);
	ir_alui(ir, BPF_ADD, t, t, 1);
	ir_place(ir, nc);
	ir_stx(ir, BPF_DW, p, 16, c);
	ir_stx(ir, BPF_DW, p, 24, t);
	ir_ja(ir, done);
	ir_place(ir, fresh);
	struct cmem val = cg_alloc(cg, 32);
	ir_st(ir, BPF_DW, val.base, (int16_t)val.off, 1);
	ir_stx(ir, BPF_DW, val.base, (int16_t)(val.off + 8), x);
	ir_stx(ir, BPF_DW, val.base, (int16_t)(val.off + 16), sq);
	ir_stx(ir, BPF_DW, val.base, (int16_t)(val.off + 24), sqhi);
	update(cg, map, key, val);
	ir_place(ir, done);
}

/* bpftrace 0.17's log2 bucket: 0 for v < 0, 1 for 0, else 2 + floor(log2
 * v) found by a five-step binary search that, as in bpftrace, cannot
 * shift by more than 31 in total (values >= 2^32 land in bucket 33);
 * under --dialect=0.26 a sixth step makes it exact. */
static vreg hist_bucket(struct cg *cg, vreg x)
{
	struct ir *ir = cg->ir;
	vreg b = ir_vreg(ir), v = ir_vreg(ir);
	uint32_t done = ir_label(ir);
	ir_movi(ir, b, 0);
	ir_jcci(ir, BPF_JSLT, x, 0, done);
	ir_movi(ir, b, 1);
	ir_jcci(ir, BPF_JEQ, x, 0, done);
	ir_mov(ir, v, x);
	ir_movi(ir, b, 2);
	if (cg->prog->dialect >= DIALECT_026) {
		/* 0.26 buckets values >= 2^32 too (its test call
		 * "hist_10g": 10G is in [8G, 16G)): a sixth step */
		vreg t = ir_vreg(ir);
		uint32_t low = ir_label(ir);
		ir_alui(ir, BPF_RSH, t, v, 32);
		ir_jcci(ir, BPF_JEQ, t, 0, low);
		ir_mov(ir, v, t);
		ir_alui(ir, BPF_ADD, b, b, 32);
		ir_place(ir, low);
	}
	for (int i = 4; i >= 0; i--) {
		int s = 1 << i;
		uint32_t skip = ir_label(ir);
		ir_jcci(ir, BPF_JLT, v, (int64_t)1 << s, skip);
		ir_alui(ir, BPF_RSH, v, v, s);
		ir_alui(ir, BPF_ADD, b, b, s);
		ir_place(ir, skip);
	}
	ir_place(ir, done);
	return b;
}

/* 0 below min, 1 + (v - min) / step inside, 1 + (max - min) / step from
 * max on (bpftrace 0.17: a value equal to max is in the last bucket). */
static vreg lhist_bucket(struct cg *cg, vreg x, int64_t min, int64_t max,
			 int64_t step)
{
	struct ir *ir = cg->ir;
	vreg b = ir_vreg(ir);
	uint32_t done = ir_label(ir), in = ir_label(ir);
	if (step <= 0)
		step = 1;
	ir_movi(ir, b, 0);
	ir_jcci(ir, BPF_JSLT, x, min, done);
	/* sema keeps (max - min) / step small; unsigned, so no bound can
	 * overflow here whatever it is */
	ir_movi(ir, b, (int64_t)(1 + ((uint64_t)max - (uint64_t)min) /
				 (uint64_t)step));
	ir_jcci(ir, BPF_JSGT, x, max, done);
	ir_place(ir, in);
	ir_alui(ir, BPF_SUB, b, x, min);
	ir_alui(ir, BPF_DIV, b, b, step);
	ir_alui(ir, BPF_ADD, b, b, 1);
	ir_place(ir, done);
	return b;
}

/* llquantize's bucket: a chain of comparisons with the bounds, from
 * the top (they are constants, at most LLQ_MAX_BOUNDS of them). */
static vreg llq_bucket(struct cg *cg, vreg x, const struct type *t)
{
	struct ir *ir = cg->ir;
	int64_t *lb = calloc(LLQ_MAX_BOUNDS, sizeof(*lb));
	vreg b = ir_vreg(ir);
	if (!lb) {
		cg->err = -12;
		ir_movi(ir, b, 0);
		return b;
	}
	int n = type_llq_bounds(t->llq_factor, t->llq_low, t->llq_high,
				t->llq_steps, lb, LLQ_MAX_BOUNDS);
	uint32_t done = ir_label(ir);
	for (int k = n - 1; k >= 0; k--) {
		ir_movi(ir, b, k + 1);
		ir_jcci(ir, BPF_JSGE, x, lb[k], done);
	}
	ir_movi(ir, b, 0);
	ir_place(ir, done);
	free(lb);
	return b;
}

/* tseries' clock: the monotonic ns, or the value of the map
 * BPFTRACE_DUMMY_TS_MAP names (a keyless map of an integer). */
static vreg tseries_clock(struct cg *cg, const struct node *call,
			  const struct type *vt)
{
	if (!vt->ts_clock_map)
		return cg_call(cg, BPF_FUNC_ktime_get_ns, NULL, 0);
	for (uint32_t i = 0; i < cg->prog->nmaps; i++) {
		const struct map_spec *c = &cg->prog->maps[i];
		if (!c->name || strcmp(c->name, vt->ts_clock_map) != 0)
			continue;
		if (c->nkeys || !c->value_type ||
		    c->value_type->kind != TYPE_INT)
			break;
		struct cg_mark mk = cg_mark(cg);
		struct cmem key = cg_alloc(cg, c->key_size);
		cg_zero(cg, key, c->key_size);
		vreg p = cg_call(cg, BPF_FUNC_map_lookup_elem,
				 (struct ir_arg[]){ IR_MAP((int)i),
						    cg_arg(key) }, 2);
		vreg t = load_or_zero(cg, p, 0);
		cg_release(cg, mk);
		return t;
	}
	cg_error(cg, call->pos, "BPFTRACE_DUMMY_TS_MAP names %s, which is "
		 "not a map of one integer in this script", vt->ts_clock_map);
	return cg_call(cg, BPF_FUNC_ktime_get_ns, NULL, 0);
}

/* tseries(x, interval, n[, agg]): the interval's slot (epoch % n, the
 * key's last word) holds { epoch + 1, value, count, time } per CPU; a
 * write of a later epoch starts the slot over, of an earlier one (a CPU
 * behind) is dropped. */
static void tseries(struct cg *cg, int map, struct cmem key, uint32_t ksize,
		    const struct node *call, const struct type *vt, vreg x)
{
	struct ir *ir = cg->ir;
	vreg ts = tseries_clock(cg, call, vt);
	vreg ep = ir_vreg(ir), iv = ir_vreg(ir);
	ir_movi(ir, iv, vt->ts_interval);
	ir_mov(ir, ep, ts);
	ir_alu(ir, BPF_DIV, ep, ep, iv);
	vreg slot = ir_vreg(ir);
	ir_mov(ir, slot, ep);
	ir_alui(ir, BPF_MOD, slot, slot, vt->ts_intervals);
	ir_alui(ir, BPF_ADD, ep, ep, 1);
	ir_stx(ir, BPF_DW, key.base, (int16_t)(key.off + (int32_t)ksize - 8),
	       slot);
	vreg p = lookup(cg, map, key);
	uint32_t fresh = ir_label(ir), reset = ir_label(ir);
	uint32_t done = ir_label(ir);
	ir_jcci(ir, BPF_JEQ, p, 0, fresh);
	vreg cur = ir_vreg(ir);
	ir_ldx(ir, BPF_DW, cur, p, 0);
	ir_jcc(ir, BPF_JGT, cur, ep, done);
	ir_jcc(ir, BPF_JNE, cur, ep, reset);
	/* the same interval: combine */
	vreg v = ir_vreg(ir), c = ir_vreg(ir);
	ir_ldx(ir, BPF_DW, v, p, 8);
	ir_ldx(ir, BPF_DW, c, p, 16);
	ir_alui(ir, BPF_ADD, c, c, 1);
	ir_stx(ir, BPF_DW, p, 16, c);
	ir_stx(ir, BPF_DW, p, 24, ts);
	switch (vt->ts_agg) {
	case TS_AVG:
	case TS_SUM:
		ir_alu(ir, BPF_ADD, v, v, x);
		ir_stx(ir, BPF_DW, p, 8, v);
		break;
	case TS_MAX:
	case TS_MIN:
		ir_jcc(ir, keep_jump(vt->ts_agg == TS_MAX, vt->is_signed), v, x,
		       done);
		ir_stx(ir, BPF_DW, p, 8, x);
		break;
	default:
		ir_stx(ir, BPF_DW, p, 8, x);
	}
	ir_ja(ir, done);
	ir_place(ir, reset);
	ir_stx(ir, BPF_DW, p, 0, ep);
	ir_stx(ir, BPF_DW, p, 8, x);
	ir_st(ir, BPF_DW, p, 16, 1);
	ir_stx(ir, BPF_DW, p, 24, ts);
	ir_ja(ir, done);
	ir_place(ir, fresh);
	struct cmem val = cg_alloc(cg, TSERIES_SLOT);
	ir_stx(ir, BPF_DW, val.base, (int16_t)val.off, ep);
	ir_stx(ir, BPF_DW, val.base, (int16_t)(val.off + 8), x);
	ir_st(ir, BPF_DW, val.base, (int16_t)(val.off + 16), 1);
	ir_stx(ir, BPF_DW, val.base, (int16_t)(val.off + 24), ts);
	update(cg, map, key, val);
	ir_place(ir, done);
}

static int64_t lit(const struct node *call, uint32_t i)
{
	if (i < call->u.call.args.n && call->u.call.args.v[i]->kind == N_INT)
		return (int64_t)call->u.call.args.v[i]->u.ival;
	return 0;
}

/* @m[k] = count() / sum(x) / ... */
static void aggregate(struct cg *cg, const struct node *m,
		      const struct node *call, const struct map_spec *s)
{
	int map = m->u.map.map_id;
	const struct node_list *args = &call->u.call.args;
	const struct type *vt = s->value_type;
	struct cval x = cg_imm(1, type_u64());
	if (args->n) {
		x = cg_expr(cg, args->v[0]);
		if (x.kind != CV_IMM)
			x = cg_regval(cg_reg(cg, x), x.t);
	}
	struct cmem key = build_key(cg, m, s);
	/* the aggregation's type says how (sema_agg: the map value type) */
	switch (call->type ? call->type->kind : TYPE_NONE) {
	case TYPE_COUNT:
		add_at(cg, map, key, cg_imm(1, type_u64()));
		return;
	case TYPE_SUM:
		add_at(cg, map, key, x);
		return;
	case TYPE_MIN:
	case TYPE_MAX:
		minmax(cg, map, key, cg_reg(cg, x), call->type->kind == TYPE_MAX,
		       vt->is_signed);
		return;
	case TYPE_AVG:
	case TYPE_STATS:
		avg(cg, map, key, cg_reg(cg, x));
		return;
	case TYPE_STDDEV:
		stddev(cg, map, key, cg_reg(cg, x), vt->is_signed);
		return;
	case TYPE_TSERIES:
		tseries(cg, map, key, s->key_size, call, vt, cg_reg(cg, x));
		return;
	case TYPE_HIST:
	case TYPE_LHIST: {
		vreg b = call->type->kind == TYPE_HIST ?
			hist_bucket(cg, cg_reg(cg, x)) :
			vt->llq_factor ? llq_bucket(cg, cg_reg(cg, x), vt) :
			lhist_bucket(cg, cg_reg(cg, x),
				     vt->lhist_step ? vt->lhist_min : lit(call, 1),
				     vt->lhist_step ? vt->lhist_max : lit(call, 2),
				     vt->lhist_step ? vt->lhist_step : lit(call, 3));
		int16_t boff = (int16_t)(key.off + (int32_t)s->key_size - 8);
		ir_stx(cg->ir, BPF_DW, key.base, boff, b);
		add_at(cg, map, key, cg_imm(1, type_u64()));
		if (cg->prog->hist_sums) {
			/* the sum of the values, under a bucket index no
			 * value maps to (program.h) */
			ir_st(cg->ir, BPF_DW, key.base, boff,
			      (int32_t)SONDE_HIST_SUM_BUCKET);
			add_at(cg, map, key, x);
		}
		return;
	}
	default:
		cg_error(cg, call->pos, "%s() cannot be stored in a map",
			 call->u.call.name);
	}
}

static bool is_agg_call(const struct node *n)
{
	return n->kind == N_CALL && n->u.call.fn &&
		(n->u.call.fn->flags & FUNC_AGG);
}

void cg_map_assign(struct cg *cg, const struct node *st)
{
	const struct node *m = st->u.assign.target;
	const struct node *v = st->u.assign.value;
	const struct map_spec *s = spec_of(cg, m);
	if (!s)
		return;
	if (st->u.assign.op == OP_NONE && is_agg_call(v)) {
		struct pos outer = cg->pos;
		cg->pos = v->pos;    /* -kk: a first count() reported there */
		aggregate(cg, m, v, s);
		cg->pos = outer;
		return;
	}
	int map = m->u.map.map_id;
	if (st->u.assign.op == OP_NONE) {
		/* Evaluate the value first: it may read this same map. */
		struct cmem val = cg_alloc(cg, s->value_size);
		cg_expr_to(cg, v, val, s->value_type);
		struct cmem key = build_key(cg, m, s);
		update(cg, map, key, val);
		return;
	}
	struct cval x = cg_scale_step(cg, st->u.assign.op, s->value_type,
				      cg_expr(cg, v));
	vreg xr = cg_reg(cg, x);
	struct cmem key = build_key(cg, m, s);
	struct pos outer = cg->pos;
	cg->pos = m->pos;
	vreg p = lookup(cg, map, key);
	cg->pos = outer;
	vreg old = load_or_zero(cg, p, 0);
	ir_alu(cg->ir, cg_alu_code(st->u.assign.op), old, old, xr);
	cg_normalize(cg, old, s->value_type);
	struct cmem val = cg_alloc(cg, 8);
	cg_store_int(cg, val, cg_regval(old, s->value_type));
	update(cg, map, key, val);
}

struct cval cg_map_incdec(struct cg *cg, const struct node *n)
{
	const struct node *m = n->u.incdec.target;
	const struct map_spec *s = spec_of(cg, m);
	if (!s)
		return cg_imm(0, n->type);
	enum op op = n->u.incdec.op;
	struct cmem key = build_key(cg, m, s);
	struct pos outer = cg->pos;
	cg->pos = n->pos;
	vreg p = lookup(cg, m->u.map.map_id, key);
	cg->pos = outer;
	vreg old = load_or_zero(cg, p, 0);
	vreg nv = ir_vreg(cg->ir);
	int64_t step = cg_ptr_step(s->value_type);
	ir_alui(cg->ir, BPF_ADD, nv, old,
		op == OP_PREINC || op == OP_POSTINC ? step : -step);
	cg_normalize(cg, nv, s->value_type);
	struct cmem val = cg_alloc(cg, 8);
	cg_store_int(cg, val, cg_regval(nv, s->value_type));
	update(cg, m->u.map.map_id, key, val);
	return cg_regval(op == OP_PREINC || op == OP_PREDEC ? nv : old,
			 n->type);
}

/* has_key(): 1 if the element's key is in the map, else 0. */
struct cval cg_map_has_key(struct cg *cg, const struct node *m,
			   const struct type *t)
{
	const struct map_spec *s = spec_of(cg, m);
	if (!s)
		return cg_imm(0, t);
	struct cg_mark mk = cg_mark(cg);
	struct cmem key = build_key(cg, m, s);
	vreg p = cg_call(cg, BPF_FUNC_map_lookup_elem,
			 (struct ir_arg[]){ IR_MAP(m->u.map.map_id),
					    cg_arg(key) }, 2);
	vreg d = ir_vreg(cg->ir);
	uint32_t done = ir_label(cg->ir);
	ir_movi(cg->ir, d, 0);
	ir_jcci(cg->ir, BPF_JEQ, p, 0, done);
	ir_movi(cg->ir, d, 1);
	ir_place(cg->ir, done);
	cg_release(cg, mk);
	return cg_regval(d, t);
}

struct cval cg_map_delete(struct cg *cg, const struct node *call)
{
	const struct node *m = call->u.call.args.v[0];
	const struct map_spec *s = spec_of(cg, m);
	if (!s)
		return cg_imm(0, call->type);
	struct cg_mark mk = cg_mark(cg);
	struct cmem key = build_key(cg, m, s);
	if (s->kind == MAP_ARRAY || s->kind == MAP_PERCPU_ARRAY) {
		/* An array's slot cannot go: zero it (bpftrace 0.17 prints
		 * a deleted keyless count() as 0). The value is at most a
		 * count's 8 bytes, for this CPU's slot. It was there. */
		struct cmem zero = cg_alloc(cg, s->value_size);
		cg_zero(cg, zero, s->value_size);
		update(cg, m->u.map.map_id, key, zero);
		cg_release(cg, mk);
		return cg_imm(1, call->type);
	}
	vreg r = cg_call(cg, BPF_FUNC_map_delete_elem,
			 (struct ir_arg[]){ IR_MAP(m->u.map.map_id),
					    cg_arg(key) }, 2);
	cg_check_helper(cg, r, BPF_FUNC_map_delete_elem);
	cg_release(cg, mk);
	if (cg->stmt_call == call)
		return cg_imm(0, call->type);
	/* 0 when deleted, -ENOENT when not there: bpftrace 0.24's bool */
	vreg b = ir_vreg(cg->ir);
	uint32_t done = ir_label(cg->ir);
	ir_movi(cg->ir, b, 1);
	ir_jcci(cg->ir, BPF_JEQ, r, 0, done);
	ir_movi(cg->ir, b, 0);
	ir_place(cg->ir, done);
	return cg_regval(b, call->type);
}
