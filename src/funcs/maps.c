/* maps.c - map functions: the aggregations (count, sum, avg, min, max,
 * stats, hist, lhist), whose check gives the map's value type and whose
 * code is the map update cg_map.c makes for that type, and the
 * operations on maps (delete, clear, zero). */
#include "funcs_int.h"

#include <stdlib.h>
#include <string.h>

static struct type *agg_type(struct sema *s, enum type_kind kind,
			     uint32_t size)
{
	struct type *t = arena_new(s->a, struct type);
	t->kind = kind;
	t->size = size;
	return t;
}

static const struct type *check_count(struct sema *s, struct node *n)
{
	return agg_type(s, TYPE_COUNT, 8);
}

/* sum, avg, min, max, stats, hist of an integer; all but hist keep its
 * signedness. */
static const struct type *check_agg1(struct sema *s, struct node *n,
				     enum type_kind kind, uint32_t size)
{
	const struct type *at = sema_int_arg(s, n, 0, "its argument");
	if (!at)
		return NULL;
	struct type *t = agg_type(s, kind, size);
	t->is_signed = kind != TYPE_HIST && at->is_signed;
	return t;
}

static const struct type *check_sum(struct sema *s, struct node *n)
{
	return check_agg1(s, n, TYPE_SUM, 8);
}

static const struct type *check_avg(struct sema *s, struct node *n)
{
	return check_agg1(s, n, TYPE_AVG, 16);
}

static const struct type *check_min(struct sema *s, struct node *n)
{
	return check_agg1(s, n, TYPE_MIN, 16);
}

static const struct type *check_max(struct sema *s, struct node *n)
{
	return check_agg1(s, n, TYPE_MAX, 16);
}

static const struct type *check_stats(struct sema *s, struct node *n)
{
	return check_agg1(s, n, TYPE_STATS, 16);
}

/* D's llquantize(x, factor, low, high, nsteps), reached only from the
 * D front end: an lhist whose buckets the type's llq_* fields place
 * (types.h), with the checks DTrace makes of its constants. */
static const struct type *check_llquantize(struct sema *s, struct node *n)
{
	const struct type *at = sema_int_arg(s, n, 0, "its value");
	int64_t v[4];
	static const char *const what[] = { "factor", "low", "high", "nsteps" };
	bool ok = true;
	for (int i = 0; i < 4; i++)
		ok = sema_lit_int(s, n, (uint32_t)i + 1, what[i], &v[i]) && ok;
	if (!ok || !at)
		return NULL;
	const char *why = v[0] < 2 ? "factor must be greater than 1" :
		v[1] < 0 ? "low must be non-negative" :
		v[2] <= v[1] ? "high must be greater than low" :
		v[3] < v[0] ? "nsteps must be greater than or equal to factor" :
		v[3] % v[0] ? "factor must evenly divide nsteps" : NULL;
	int nb = why ? 0 : type_llq_bounds(v[0], v[1], v[2], v[3], NULL,
					   LLQ_MAX_BOUNDS);
	if (!why && nb < 0)
		why = "too many buckets, or factor^(high + 1) overflows";
	if (why) {
		if (s->final)
			sema_error(s, n->pos, "ARG_TYPE", "llquantize( ) %s",
				   why);
		return NULL;
	}
	struct type *t = agg_type(s, TYPE_LHIST, 8);
	t->lhist_min = 0;
	t->lhist_max = nb - 1;   /* the buckets in range */
	t->lhist_step = 1;
	t->llq_factor = v[0];
	t->llq_low = v[1];
	t->llq_high = v[2];
	t->llq_steps = v[3];
	return t;
}

/* D's stddev(), reached only from the D front end */
static const struct type *check_stddev(struct sema *s, struct node *n)
{
	return check_agg1(s, n, TYPE_STDDEV, 32);
}

/* hist(n[, k]) (k: bpftrace 0.2x, 2^k buckets per power of 2, 0 to 5).
 * k = 0 is the plain log2 histogram, and the argument is dropped; finer
 * ones are refused, saying so. */
static const struct type *check_hist(struct sema *s, struct node *n)
{
	if (n->u.call.args.n == 2) {
		int64_t k;
		if (!sema_lit_int(s, n, 1, "k", &k))
			return NULL;
		if (k < 0 || k > 5) {
			sema_error(s, n->u.call.args.v[1]->pos, "ARG_TYPE",
				   "hist(): k must be 0 to 5 (2^k buckets per "
				   "power of 2), not %lld", (long long)k);
			return NULL;
		}
		if (k) {
			sema_error(s, n->u.call.args.v[1]->pos, "UNSUPPORTED",
				   "hist(): k = %lld (2^k buckets per power of "
				   "2) is not supported yet: only 0, the log2 "
				   "histogram", (long long)k);
			return NULL;
		}
		n->u.call.args.n = 1;
	}
	return check_agg1(s, n, TYPE_HIST, 8);
}

/* lhist(value, min, max, step), the bounds literals. */
#define LHIST_MAX_BUCKETS 1000
static const struct type *check_lhist(struct sema *s, struct node *n)
{
	const struct type *at = sema_int_arg(s, n, 0, "its value");
	int64_t mn, mx, st;
	bool ok = sema_lit_int(s, n, 1, "min", &mn);
	ok = sema_lit_int(s, n, 2, "max", &mx) && ok;
	ok = sema_lit_int(s, n, 3, "step", &st) && ok;
	if (!ok || !at)
		return NULL;
	if (s->final && (st < 1 || mx <= mn || mn < 0 || st > mx - mn)) {
		sema_error(s, n->pos, "ARG_TYPE",
			   "lhist(): needs 0 <= min < max and 1 <= step <= max - min "
			   "(min %lld, max %lld, step %lld)",
			   (long long)mn, (long long)mx, (long long)st);
		return NULL;
	}
	/* bpftrace 0.17's bound (it computes the count in an int, so
	 * lhist(x, 0, INT64_MAX, 1) slips through there and overflows) */
	uint64_t buckets = st >= 1 && mx > mn && mn >= 0 ?
		((uint64_t)mx - (uint64_t)mn) / (uint64_t)st : 0;
	if (s->final && buckets > LHIST_MAX_BUCKETS) {
		sema_error(s, n->pos, "ARG_TYPE",
			   "lhist(): too many buckets, must be <= %d (would "
			   "need %llu)", LHIST_MAX_BUCKETS,
			   (unsigned long long)buckets);
		return NULL;
	}
	struct type *t = agg_type(s, TYPE_LHIST, 8);
	t->lhist_min = mn;
	t->lhist_max = mx;
	t->lhist_step = st;
	return t;
}

/* tseries(value, interval, num_intervals[, agg]), bpftrace 0.25: the
 * interval (a duration: 100ms) and count literals, agg one of avg, max,
 * min, sum (default: the last value of each interval). */
static const struct type *check_tseries(struct sema *s, struct node *n)
{
	static const char *const aggs[] = { "avg", "max", "min", "sum" };
	const struct type *at = sema_int_arg(s, n, 0, "its value");
	int64_t iv, ni;
	bool ok = sema_lit_int(s, n, 1, "the interval", &iv);
	ok = sema_lit_int(s, n, 2, "the number of intervals", &ni) && ok;
	int agg = TS_LAST;
	if (n->u.call.args.n > 3) {
		const char *a = sema_lit_str(s, n, 3, "the aggregation");
		if (!a)
			return NULL;
		for (agg = 0; agg < 4 && strcmp(aggs[agg], a) != 0; agg++)
			;
		if (agg == 4) {
			sema_error(s, n->u.call.args.v[3]->pos, "ARG_TYPE",
				   "tseries(): the aggregation must be \"avg\", "
				   "\"max\", \"min\" or \"sum\", not \"%s\"", a);
			return NULL;
		}
		agg++;    /* TS_AVG .. TS_SUM */
	}
	if (!ok || !at)
		return NULL;
	if (s->final && iv < 1) {
		sema_error(s, n->u.call.args.v[1]->pos, "ARG_TYPE",
			   "tseries(): the interval must be at least 1 ns, "
			   "not %lld", (long long)iv);
		return NULL;
	}
	if (s->final && (ni < 1 || ni > TSERIES_MAX_INTERVALS)) {
		sema_error(s, n->u.call.args.v[2]->pos, "ARG_TYPE",
			   "tseries(): the number of intervals must be 1 to "
			   "%d, not %lld", TSERIES_MAX_INTERVALS, (long long)ni);
		return NULL;
	}
	struct type *t = agg_type(s, TYPE_TSERIES, TSERIES_SLOT);
	t->is_signed = at->is_signed;
	t->ts_interval = iv;
	t->ts_intervals = (uint32_t)ni;
	t->ts_agg = (uint8_t)agg;
	const char *clock = getenv("BPFTRACE_DUMMY_TS_MAP");
	t->ts_clock_map = clock && *clock ? arena_strdup(s->a, clock) : NULL;
	return t;
}

static struct node *map_key_element(struct sema *s, struct node *n,
				    const char *fn);

/* delete(@m[KEY]), or delete(@m, KEY) as bpftrace 0.20 writes it: a
 * bool from 0.26, whether the entry was there (0.17 gave no value, so
 * no 0.17 script sees the difference) */
static const struct type *check_delete(struct sema *s, struct node *n)
{
	if (nargs(n) == 2)
		return map_key_element(s, n, "delete") ? type_bool() : NULL;
	return sema_map_arg(s, n, true) ? type_bool() : NULL;
}

static struct cval gen_delete(struct cg *cg, const struct node *n)
{
	return cg_map_delete(cg, n);
}

/* f(@m, KEY), bpftrace 0.2x's form of a map and a key (has_key, and
 * delete besides its delete(@m[KEY])): the element @m[KEY] (KEY a tuple
 * for a map of several keys), which replaces the call's two arguments in
 * the final pass; NULL (said) if there is none. */
static struct node *map_key_element(struct sema *s, struct node *n,
				    const char *fn)
{
	struct node *m = arg(n, 0);
	if (m->kind != N_MAP || m->u.map.keys.n) {
		sema_error(s, m->pos, "ARG_TYPE", "%s() expects a map as "
			   "its first argument, not '%s'", fn,
			   sema_tname(s, sema_expr(s, m)));
		return NULL;
	}
	struct sema_map *whole = sema_map_whole(s, m);
	if (!whole)
		return NULL;
	if (whole->keys_known && whole->nkeys == 0) {
		sema_error(s, n->pos, "ARG_TYPE", "call to %s() expects "
			   "a map with explicit keys (non-scalar map)", fn);
		return NULL;
	}
	struct node *el = node_new(s->a, N_MAP, m->pos);
	el->u.map = m->u.map;
	el->u.map.keys = (struct node_list){ 0 };
	struct node *k = arg(n, 1);
	if (k->kind == N_TUPLE && whole->keys_known && whole->nkeys > 1)
		el->u.map.keys = k->u.list;
	else
		node_list_push(s->a, &el->u.map.keys, k);
	if (!sema_map_defined(s, el))
		return NULL;
	if (s->final) {
		n->u.call.args.v[0] = el;
		n->u.call.args.n = 1;
	}
	return el;
}

/* has_key(@m, KEY), bpftrace 0.22's: whether @m holds KEY, a bool. */
static const struct type *check_has_key(struct sema *s, struct node *n)
{
	struct node *m = arg(n, 0);
	if (nargs(n) == 1 && m->kind == N_MAP && m->u.map.keys.n)
		return sema_map_defined(s, m) ? type_bool() : NULL;
	return map_key_element(s, n, "has_key") ? type_bool() : NULL;
}

static struct cval gen_has_key(struct cg *cg, const struct node *n)
{
	return cg_map_has_key(cg, arg(n, 0), n->type);
}

/* clear(@m), zero(@m): done by user space, which owns the map's keys. */
static const struct type *check_map_event(struct sema *s, struct node *n,
					  enum event_kind kind)
{
	struct sema_map *m = sema_map_arg(s, n, false);
	if (!m)
		return NULL;
	struct event_spec e = { .kind = kind, .map_id = m->id };
	sema_add_event(s, n, &e);
	return type_none();
}

static const struct type *check_clear(struct sema *s, struct node *n)
{
	return check_map_event(s, n, EV_CLEAR_MAP);
}

static const struct type *check_zero(struct sema *s, struct node *n)
{
	return check_map_event(s, n, EV_ZERO_MAP);
}

/* len(@m), bpftrace 0.22's: the map's entries (an int64), counted by
 * bpf_for_each_map_elem in the kernel (cg_formap.c). len(kstack) and
 * len(ustack), the frames of a stack, are not there yet. */
static const struct type *check_len(struct sema *s, struct node *n)
{
	struct node *m = arg(n, 0);
	if (m->kind != N_MAP) {
		const struct type *t = sema_expr(s, m);
		if (t)
			sema_error(s, m->pos, "ARG_TYPE", "len() counts the "
				   "entries of a map: len(@m)%s",
				   t->kind == TYPE_KSTACK || t->kind == TYPE_USTACK ?
				   " (the frames of a stack are not supported "
				   "yet)" : "");
		return NULL;
	}
	struct sema_map *sm = sema_map_arg(s, n, false);
	if (sm && sm->keys_known && !sm->nkeys) {
		sema_error(s, n->pos, "ARG_TYPE", "call to len() expects a "
			   "map with explicit keys (non-scalar map)");
		return NULL;
	}
	return sm ? type_s64() : NULL;
}

static struct cval gen_len(struct cg *cg, const struct node *n)
{
	return cg_map_len(cg, arg(n, 0));
}

const struct func funcs_maps[] = {
	/* name, arguments min max, flags, needs, check, code */
	{ "count", 0, 0, FUNC_AGG, 0, check_count },
	{ "sum", 1, 1, FUNC_AGG, 0, check_sum },
	{ "avg", 1, 1, FUNC_AGG, 0, check_avg },
	{ "min", 1, 1, FUNC_AGG, 0, check_min },
	{ "max", 1, 1, FUNC_AGG, 0, check_max },
	{ "stats", 1, 1, FUNC_AGG, 0, check_stats },
	{ "__dtrace_stddev", 1, 1, FUNC_AGG, 0, check_stddev },
	{ "__dtrace_llquantize", 5, 5, FUNC_AGG, 0, check_llquantize },
	{ "hist", 1, 2, FUNC_AGG, 0, check_hist },
	{ "lhist", 4, 4, FUNC_AGG, 0, check_lhist },
	{ "tseries", 3, 4, FUNC_AGG, 0, check_tseries },
	{ "delete", 1, 2, 0, 0, check_delete, gen_delete },
	{ "has_key", 2, 2, 0, 0, check_has_key, gen_has_key },
	{ "len", 1, 1, 0, 0, check_len, gen_len },
	{ "clear", 1, 1, 0, 0, check_clear, funcs_gen_event },
	{ "zero", 1, 1, 0, 0, check_zero, funcs_gen_event },
	{ NULL },
};
