/* maps.c - printing maps: print(@m, top, div) and every user map at exit,
 * in bpftrace 0.17's order, sorting and format (text or JSON).
 *
 * A map is read as one snapshot, per-CPU values are merged (count, sum
 * and histogram buckets add up; min/max keep the extreme of the CPUs that
 * set one; avg/stats add both count and total), and entries are sorted
 * the way bpftrace sorts them:
 *  - count, sum, min, max and integer maps by value, ascending;
 *  - hist/lhist by the sum of their buckets, avg/stats by the average,
 *    both with libstdc++'s std::sort over keys in byte order (exactly
 *    bpftrace's input, so even ties come out as bpftrace prints them);
 *  - every other map by key: fields from the first, integers compared
 *    as unsigned 64-bit, strings with strncmp.
 * bpftrace iterates value-sorted maps in the kernel's hash order, which
 * is random per run, so its order of ties there is not reproducible;
 * sonde breaks those ties by key order (same rules as above).
 *
 * Text layout, as bpftrace writes it: a map with no entries prints an
 * empty line; value maps print one "@m[k]: v" line per entry; histograms
 * print "@m[k]: " then the bucket lines and an empty line per key;
 * avg/stats maps print their lines and then one empty line. top keeps
 * the last N entries of the sorted order (stats ignore it, and div), div
 * divides values and histogram counts (not lhist's). */
#include "output_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define HIST_BUCKETS 65        /* bpftrace: "< 0", "0", then 2^0..2^62 */
#define LHIST_MAX_BUCKETS 1002 /* bpftrace's cap: 1000 plus two outliers */


/* One entry (or, for histograms, one user key) with its values merged. */
static uint64_t ld64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

/* Signed division that cannot trap: INT64_MIN / -1 wraps, as the
 * two's complement result would, and / 0 leaves the value alone. */
static int64_t sdiv(int64_t a, int64_t b)
{
	if (b == 0)
		return a;
	if (b == -1)
		return (int64_t)(0 - (uint64_t)a);
	return a / b;
}

static bool vt_signed(const struct type *t)
{
	return t->is_signed;
}

static const uint8_t *cpu_value(const struct map_snapshot *s, uint32_t i,
				uint32_t c)
{
	return s->values + ((size_t)i * s->nvalues + c) * s->value_stride;
}

/* D's standard deviation of n values of sum `sum` and sum of squares
 * sq, as DTrace computes it: integers throughout, the mean truncated,
 * sqrt(sq / n - mean * mean) rounded down. */
static int64_t stddev_of(uint64_t n, uint64_t sum, unsigned __int128 sq,
			 bool sg)
{
	if (!n)
		return 0;
	__int128 mean = sg ? (__int128)((int64_t)sum / (int64_t)n) :
		(__int128)(sum / n);
	unsigned __int128 msq = (unsigned __int128)(mean * mean);
	unsigned __int128 q = sq / n;
	if (q <= msq)
		return 0;
	unsigned __int128 d = q - msq, r = 0;
	/* the integer square root, bit by bit */
	unsigned __int128 bit = (unsigned __int128)1 << 126;
	while (bit > d)
		bit >>= 2;
	while (bit) {
		if (d >= r + bit) {
			d -= r + bit;
			r = (r >> 1) + bit;
		} else {
			r >>= 1;
		}
		bit >>= 2;
	}
	return (int64_t)r;
}

static void merge(const struct mctx *mc, const struct map_snapshot *s,
		  uint32_t i, struct ment *e)
{
	const struct type *t = mc->vt;
	bool sg = vt_signed(t);
	uint32_t nv = s->nvalues ? s->nvalues : 1;
	e->raw = cpu_value(s, i, 0);
	switch (t->kind) {
	case TYPE_INT:
		e->a = value_int(t, e->raw);
		break;
	case TYPE_COUNT: case TYPE_SUM: case TYPE_HIST: case TYPE_LHIST:
		for (uint32_t c = 0; c < nv; c++)
			e->a += ld64(cpu_value(s, i, c));
		break;
	case TYPE_MIN: case TYPE_MAX:
		for (uint32_t c = 0; c < nv; c++) {
			const uint8_t *v = cpu_value(s, i, c);
			if (!ld64(v + 8))
				continue;     /* this CPU never set one */
			uint64_t x = ld64(v);
			bool less = sg ? (int64_t)x < (int64_t)e->a : x < e->a;
			bool better = t->kind == TYPE_MIN ? less :
				(!less && x != e->a);
			if (!e->b || better)
				e->a = x;
			e->b = 1;
		}
		break;
	case TYPE_STDDEV: {
		unsigned __int128 sq = 0;
		for (uint32_t c = 0; c < nv; c++) {
			const uint8_t *v = cpu_value(s, i, c);
			e->a += ld64(v);
			e->b += ld64(v + 8);
			sq += (unsigned __int128)ld64(v + 24) << 64 | ld64(v + 16);
		}
		e->avg = stddev_of(e->a, e->b, sq, sg);
		break;
	}
	case TYPE_AVG: case TYPE_STATS:
		for (uint32_t c = 0; c < nv; c++) {
			const uint8_t *v = cpu_value(s, i, c);
			e->a += ld64(v);
			e->b += ld64(v + 8);
		}
		if (e->a == 0)
			e->avg = 0;
		else if (sg)
			e->avg = sdiv((int64_t)e->b, (int64_t)e->a);
		else
			e->avg = (int64_t)(e->b / e->a);
		break;
	default:
		break;
	}
}

void maps_merge_values(const struct type *vt, const struct map_snapshot *s,
		       uint32_t i, uint64_t *a, uint64_t *b)
{
	struct mctx mc = { .vt = vt };
	struct ment e = { 0 };
	merge(&mc, s, i, &e);
	*a = e.a;
	*b = e.b;
}

/* ---- ordering ------------------------------------------------------- */

/* Sorts move pointers to entries, not the entries themselves. */
#define ME(x) (*(const struct ment *const *)(x))

static bool less_key_bytes(const void *x, const void *y, void *ctx)
{
	const struct ment *a = ME(x), *b = ME(y);
	const struct mctx *mc = ctx;
	return memcmp(a->key, b->key, mc->ksize) < 0;
}

/* bpftrace's sort_by_key: the key fields in order, integers compared as
 * unsigned 64-bit numbers, strings with strncmp; fields of other types
 * (stacks, symbols) do not take part. */
static int cmp_key_fields(const struct mctx *mc, const struct ment *a,
			  const struct ment *b)
{
	const struct type *kt = mc->m->key_type;
	if (!kt || !mc->m->nkeys)
		return 0;
	uint32_t nf = kt->kind == TYPE_TUPLE ? kt->nfields : 1;
	for (uint32_t i = 0; i < nf; i++) {
		const struct type *ft = kt->kind == TYPE_TUPLE ? kt->fields[i] : kt;
		uint32_t off = kt->kind == TYPE_TUPLE ? kt->offsets[i] : 0;
		if (ft->kind == TYPE_STR && off + ft->size <= mc->ksize) {
			int c = strncmp((const char *)a->key + off,
					(const char *)b->key + off, ft->size);
			if (c)
				return c;
		} else if (ft->kind == TYPE_INT && off + 8 <= mc->ksize) {
			uint64_t x = ld64(a->key + off), y = ld64(b->key + off);
			if (x != y)
				return x < y ? -1 : 1;
		}
	}
	return 0;
}

static bool is_value_sorted(enum type_kind k);

/* Maps that are neither histograms nor avg/stats. bpftrace sorts value
 * maps by value (ties in random hash order) and the others by key;
 * sonde breaks value ties by key, and what the key fields leave equal
 * by key bytes, so the order is always the same. */
static bool less_plain(const void *x, const void *y, void *ctx)
{
	const struct mctx *mc = ctx;
	const struct ment *a = ME(x), *b = ME(y);
	if (is_value_sorted(mc->vt->kind) && a->a != b->a) {
		if (vt_signed(mc->vt) && mc->vt->kind != TYPE_COUNT)
			return (int64_t)a->a < (int64_t)b->a;
		return a->a < b->a;
	}
	int c = cmp_key_fields(mc, a, b);
	if (c)
		return c < 0;
	return memcmp(a->key, b->key, mc->ksize) < 0;
}

static bool less_total(const void *x, const void *y, void *ctx)
{
	(void)ctx;
	return ME(x)->total < ME(y)->total;
}

static bool less_avg(const void *x, const void *y, void *ctx)
{
	const struct mctx *mc = ctx;
	const struct ment *a = ME(x), *b = ME(y);
	if (vt_signed(mc->vt))
		return a->avg < b->avg;
	return (uint64_t)a->avg < (uint64_t)b->avg;
}

static bool is_value_sorted(enum type_kind k)
{
	return k == TYPE_COUNT || k == TYPE_SUM || k == TYPE_MIN ||
	       k == TYPE_MAX || k == TYPE_INT;
}

/* ---- key text ------------------------------------------------------- */

static bool has_keys(const struct mctx *mc)
{
	return mc->m->key_type && mc->m->nkeys;
}

/* The key's fields, each as value_text prints it, joined by SEP. */
static void key_fields(const struct mctx *mc, struct sbuf *out,
		       const uint8_t *key, const char *sep)
{
	const struct type *kt = mc->m->key_type;
	if (kt->kind != TYPE_TUPLE) {
		value_text(mc->o, out, kt, key, VCTX_KEY);
		return;
	}
	for (uint32_t i = 0; i < kt->nfields; i++) {
		if (i)
			sbuf_puts(out, sep);
		value_text(mc->o, out, kt->fields[i], key + kt->offsets[i],
			   VCTX_KEY);
	}
}

/* Text: "[1, abc]"; nothing for a map without keys. */
static void key_text(const struct mctx *mc, struct sbuf *out,
		     const uint8_t *key)
{
	if (!has_keys(mc))
		return;
	sbuf_putc(out, '[');
	key_fields(mc, out, key, ", ");
	sbuf_putc(out, ']');
}


/* JSON: the fields joined by "," as one quoted string, then ": ". */
static void json_key(const struct mctx *mc, struct sbuf *out,
		     const uint8_t *key)
{
	struct sbuf k = { 0 };
	key_fields(mc, &k, key, ",");
	json_str(out, k.s ? k.s : "", k.n);
	sbuf_free(&k);
	sbuf_puts(out, ": ");
}

/* ---- values --------------------------------------------------------- */

static void plain_value_text(const struct mctx *mc, struct sbuf *out,
			     const struct ment *e)
{
	const struct type *t = mc->vt;
	/* 0.26's text names enums and writes pointers in hex; its JSON
	 * keeps both numbers ("to preserve backwards compat for machines
	 * parsing output", its tests say) */
	bool text26 = mc->o->prog->dialect >= DIALECT_026 &&
		strcmp(mc->o->fmt->name, "text") == 0;
	bool enum_name = t->kind == TYPE_INT && t->ctype && !t->is_ptr &&
		t->ctype->kind == CT_ENUM && text26;
	if (is_value_sorted(t->kind) && !t->is_bool && !enum_name) {
		uint64_t v = e->a;
		uint64_t div = mc->div ? mc->div : 1;
		if (t->kind == TYPE_INT && t->is_ptr && div == 1 && text26) {
			/* pointers in hex (value.c's int_text) */
			sbuf_printf(out, "0x%llx", (unsigned long long)v);
			return;
		}
		bool sg = vt_signed(t);
		if (t->kind == TYPE_COUNT)
			sg = false;
		if (sg)
			sbuf_printf(out, "%lld", (long long)sdiv((int64_t)v, (int64_t)div));
		else
			sbuf_printf(out, "%llu", (unsigned long long)(v / div));
		return;
	}
	mc->o->fmt->value(mc->o, out, t, e->raw);
}

static void avg_text(const struct mctx *mc, struct sbuf *out,
		     const struct ment *e)
{
	uint64_t div = mc->div ? mc->div : 1;
	if (vt_signed(mc->vt))
		sbuf_printf(out, "%lld", (long long)sdiv(e->avg, (int64_t)div));
	else
		sbuf_printf(out, "%llu",
			    (unsigned long long)((uint64_t)e->avg / div));
}

/* bpftrace 0.26 prints stats as a record: "{ .count = 3, .average = 2,
 * .total = 6 }" (its runtime tests' expected output; the CHANGELOG does
 * not say which version changed it). */
static void stats_text(const struct mctx *mc, struct sbuf *out,
		       const struct ment *e)
{
	if (mc->o->prog->dialect >= DIALECT_026) {
		sbuf_printf(out, vt_signed(mc->vt) ?
			    "{ .count = %llu, .average = %lld, .total = %lld }" :
			    "{ .count = %llu, .average = %llu, .total = %llu }",
			    (unsigned long long)e->a, (long long)e->avg,
			    (long long)e->b);
		return;
	}
	sbuf_printf(out, vt_signed(mc->vt) ?
		    "count %llu, average %lld, total %lld" :
		    "count %llu, average %llu, total %llu",
		    (unsigned long long)e->a, (long long)e->avg,
		    (long long)e->b);
}

static void stats_json(const struct mctx *mc, struct sbuf *out,
		       const struct ment *e)
{
	sbuf_printf(out, vt_signed(mc->vt) ?
		    "{\"count\": %llu, \"average\": %lld, \"total\": %lld}" :
		    "{\"count\": %llu, \"average\": %llu, \"total\": %llu}",
		    (unsigned long long)e->a, (long long)e->avg,
		    (long long)e->b);
}

/* ---- histograms ----------------------------------------------------- */

static void hist_label(struct sbuf *out, int power)
{
	char suffix = '\0';
	if (power >= 60) {    /* only 0.26's buckets reach these */
		suffix = 'E';
		power -= 60;
	} else if (power >= 50) {
		suffix = 'P';
		power -= 50;
	} else if (power >= 40) {
		suffix = 'T';
		power -= 40;
	} else if (power >= 30) {
		suffix = 'G';
		power -= 30;
	} else if (power >= 20) {
		suffix = 'M';
		power -= 20;
	} else if (power >= 10) {
		suffix = 'K';
		power -= 10;
	}
	sbuf_printf(out, "%llu", 1ull << power);
	if (suffix)
		sbuf_putc(out, suffix);
}

static void lhist_label(struct sbuf *out, long long n)
{
	if (n == 0)
		sbuf_putc(out, '0');
	else if (n % 1048576 == 0)
		sbuf_printf(out, "%lldM", n / 1048576);
	else if (n % 1024 == 0)
		sbuf_printf(out, "%lldK", n / 1024);
	else
		sbuf_printf(out, "%lld", n);
}

/* One bucket line: the header left in 16 columns, the count right in 8,
 * and a bar of up to 52 '@' scaled in single precision like bpftrace. */
static void bucket_line(struct sbuf *out, const char *header, uint64_t count,
			uint64_t shown, int max_value)
{
	float f = max_value > 0 ? (float)count / (float)max_value * 52 : 0;
	int bar = f > 52 ? 52 : f < 0 ? 0 : (int)f;
	char bars[53];
	memset(bars, '@', (size_t)bar);
	bars[bar] = '\0';
	sbuf_printf(out, "%-16s%8llu |%-52s|\n", header,
		    (unsigned long long)shown, bars);
}

/* The range of buckets bpftrace shows: first to last non-zero. Counts
 * are compared as C ints, as bpftrace does. Returns false if none. */
static bool hist_range(const uint64_t *v, uint32_t nb, uint32_t *lo,
		       uint32_t *hi, int *max_value)
{
	int mi = -1, ma = -1, mv = 0;
	for (uint32_t i = 0; i < nb; i++) {
		int x = (int)(uint32_t)v[i];
		if (x > 0) {
			if (mi == -1)
				mi = (int)i;
			ma = (int)i;
		}
		if (x > mv)
			mv = x;
	}
	*max_value = mv;
	if (ma == -1)
		return false;
	*lo = (uint32_t)mi;
	*hi = (uint32_t)ma;
	return true;
}

static bool lhist_range(const uint64_t *v, uint32_t nb, uint32_t *lo,
			uint32_t *hi, int *max_value)
{
	int ma = -1, mv = 0;
	for (uint32_t i = 0; i < nb; i++) {
		int x = (int)(uint32_t)v[i];
		if (x != 0)
			ma = (int)i;
		if (x > mv)
			mv = x;
	}
	*max_value = mv;
	if (ma == -1)
		return false;
	int start = -1, end = 0;
	for (uint32_t i = 0; i < nb; i++) {
		if (v[i] > 0) {
			if (start == -1)
				start = (int)i;
			end = (int)i;
		}
	}
	*lo = start == -1 ? 0 : (uint32_t)start;
	*hi = (uint32_t)end;
	return true;
}

static void hist_header(struct sbuf *h, uint32_t i)
{
	if (i == 0) {
		sbuf_puts(h, "(..., 0)");
	} else if (i == 1) {
		sbuf_puts(h, "[0]");
	} else if (i == 2) {
		sbuf_puts(h, "[1]");
	} else {
		sbuf_putc(h, '[');
		hist_label(h, (int)i - 2);
		sbuf_puts(h, ", ");
		hist_label(h, (int)i - 1);
		sbuf_putc(h, ')');
	}
}

static void lhist_header(struct sbuf *h, const struct type *t, uint32_t i,
			 uint32_t nb)
{
	long long min = t->lhist_min, max = t->lhist_max, step = t->lhist_step;
	if (i == 0) {
		sbuf_puts(h, "(..., ");
		lhist_label(h, min);
		sbuf_putc(h, ')');
	} else if (i == nb - 1) {
		sbuf_putc(h, '[');
		lhist_label(h, max);
		sbuf_puts(h, ", ...)");
	} else {
		sbuf_putc(h, '[');
		lhist_label(h, (long long)(i - 1) * step + min);
		sbuf_puts(h, ", ");
		lhist_label(h, (long long)i * step + min);
		sbuf_putc(h, ')');
	}
}

static void hist_text(const struct mctx *mc, struct sbuf *out,
		      const uint64_t *v)
{
	bool lin = mc->vt->kind == TYPE_LHIST;
	uint32_t lo, hi;
	int max_value;
	if (!(lin ? lhist_range : hist_range)(v, mc->nb, &lo, &hi, &max_value))
		return;
	uint64_t div = mc->div && !lin ? mc->div : 1;
	struct sbuf h = { 0 };
	for (uint32_t i = lo; i <= hi; i++) {
		sbuf_truncate(&h, 0);
		if (lin)
			lhist_header(&h, mc->vt, i, mc->nb);
		else
			hist_header(&h, i);
		bucket_line(out, h.s ? h.s : "", v[i], v[i] / div, max_value);
	}
	sbuf_free(&h);
}

static void hist_json(const struct mctx *mc, struct sbuf *out,
		      const uint64_t *v)
{
	bool lin = mc->vt->kind == TYPE_LHIST;
	uint32_t lo, hi;
	int max_value;
	sbuf_putc(out, '[');
	if (!(lin ? lhist_range : hist_range)(v, mc->nb, &lo, &hi, &max_value)) {
		sbuf_putc(out, ']');
		return;
	}
	uint64_t div = mc->div && !lin ? mc->div : 1;
	long long min = mc->vt->lhist_min, step = mc->vt->lhist_step;
	for (uint32_t i = lo; i <= hi; i++) {
		if (i > lo)
			sbuf_puts(out, ", ");
		sbuf_putc(out, '{');
		if (lin) {
			if (i == 0)
				sbuf_printf(out, "\"max\": %lld, ", min - 1);
			else if (i == mc->nb - 1)
				sbuf_printf(out, "\"min\": %lld, ",
					    (long long)mc->vt->lhist_max);
			else
				sbuf_printf(out, "\"min\": %lld, \"max\": %lld, ",
					    (long long)(i - 1) * step + min,
					    (long long)i * step + min - 1);
		} else {
			if (i == 0)
				sbuf_puts(out, "\"max\": -1, ");
			else if (i == 1)
				sbuf_puts(out, "\"min\": 0, \"max\": 0, ");
			else if (i == 2)
				sbuf_puts(out, "\"min\": 1, \"max\": 1, ");
			else
				sbuf_printf(out, "\"min\": %llu, \"max\": %llu, ",
					    1ull << (i - 2),
					    (1ull << (i - 1)) - 1);
		}
		sbuf_printf(out, "\"count\": %llu}",
			    (unsigned long long)(v[i] / div));
	}
	sbuf_putc(out, ']');
}

/* ---- gathering ------------------------------------------------------ */

static uint32_t lhist_nb(const struct type *t)
{
	if (t->lhist_step <= 0 || t->lhist_max <= t->lhist_min)
		return 2;
	int64_t b = (t->lhist_max - t->lhist_min) / t->lhist_step;
	if (b > LHIST_MAX_BUCKETS - 2)
		b = LHIST_MAX_BUCKETS - 2;
	return (uint32_t)b + 2;
}

/* Histograms: one ment per user key, its buckets gathered from the
 * entries whose key is the user key followed by a u64 bucket index. The
 * user keys come out in key byte order (bpftrace's std::map order) in
 * out[0..n), backed by *groups_out and *storage. Returns n or -ENOMEM. */
static long gather_hist(const struct mctx *mc, const struct map_snapshot *s,
			struct ment **out, struct ment **groups_out,
			uint64_t **storage)
{
	struct ment *tmp = calloc(s->n ? s->n : 1, sizeof(*tmp));
	struct ment **tp = calloc(s->n ? s->n : 1, sizeof(*tp));
	if (!tmp || !tp) {
		free(tmp);
		free(tp);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < s->n; i++) {
		tmp[i].key = s->keys + (size_t)i * s->key_size;
		merge(mc, s, i, &tmp[i]);
		tmp[i].bucket = ld64(tmp[i].key + mc->ksize);
		tp[i] = &tmp[i];
	}
	/* Equal user keys become neighbours. */
	cxx_stable_sort(tp, s->n, sizeof(*tp), less_key_bytes, (void *)mc);
	size_t ngroups = 0;
	for (uint32_t i = 0; i < s->n; i++)
		if (i == 0 || memcmp(tp[i - 1]->key, tp[i]->key, mc->ksize))
			ngroups++;
	uint64_t *b = calloc((ngroups ? ngroups : 1) * mc->nb, sizeof(*b));
	struct ment *g = calloc(ngroups ? ngroups : 1, sizeof(*g));
	if (!b || !g) {
		free(b);
		free(g);
		free(tmp);
		free(tp);
		return -ENOMEM;
	}
	long n = 0;
	for (uint32_t i = 0; i < s->n; i++) {
		if (n == 0 || memcmp(g[n - 1].key, tp[i]->key, mc->ksize)) {
			g[n].key = tp[i]->key;
			g[n].buckets = b + (size_t)n * mc->nb;
			out[n] = &g[n];
			n++;
		}
		if (tp[i]->bucket < mc->nb)
			g[n - 1].buckets[tp[i]->bucket] = tp[i]->a;
	}
	for (long i = 0; i < n; i++)
		for (uint32_t k = 0; k < mc->nb; k++)
			g[i].total += g[i].buckets[k];
	free(tmp);
	free(tp);
	*groups_out = g;
	*storage = b;
	return n;
}

/* ---- printing one map ---------------------------------------------- */

enum map_shape { SHAPE_PLAIN, SHAPE_HIST, SHAPE_STATS };

static enum map_shape shape_of(const struct type *t)
{
	switch (t->kind) {
	case TYPE_HIST: case TYPE_LHIST: return SHAPE_HIST;
	case TYPE_AVG: case TYPE_STATS: case TYPE_STDDEV: return SHAPE_STATS;
	default: return SHAPE_PLAIN;
	}
}

void maps_key_text(const struct mctx *mc, struct sbuf *out,
		   const uint8_t *key)
{
	key_text(mc, out, key);
}

void maps_key_json(const struct mctx *mc, struct sbuf *out,
		   const uint8_t *key)
{
	if (has_keys(mc))
		json_key(mc, out, key);
}

/* Big maps are written as they are rendered rather than held whole:
 * everything that could be wrong with the snapshot was checked first. */
static void spill(const struct mctx *mc, struct sbuf *out)
{
	if (out->n < 65536)
		return;
	output_write(mc->o, out);
	sbuf_truncate(out, 0);
}

void maps_render_text(const struct mctx *mc, struct sbuf *out,
		      struct ment *const *v, size_t n, uint64_t top)
{
	enum map_shape shape = shape_of(mc->vt);
	bool stats = mc->vt->kind == TYPE_STATS;
	size_t first = 0;
	if (top && n > top && !stats)
		first = n - top;
	if (n == 0)
		sbuf_putc(out, '\n');
	for (size_t i = first; i < n; i++) {
		sbuf_puts(out, mc->m->name);
		key_text(mc, out, v[i]->key);
		/* 0.17 writes "@h: " before a histogram's lines, 0.26 "@h:"
		 * (its tests' expected output) */
		sbuf_puts(out, shape == SHAPE_HIST &&
			  mc->o->prog->dialect >= DIALECT_026 ? ":" : ": ");
		switch (shape) {
		case SHAPE_HIST:
			sbuf_putc(out, '\n');
			hist_text(mc, out, v[i]->buckets);
			sbuf_putc(out, '\n');
			break;
		case SHAPE_STATS:
			if (stats)
				stats_text(mc, out, v[i]);
			else
				avg_text(mc, out, v[i]);
			sbuf_putc(out, '\n');
			break;
		default:
			plain_value_text(mc, out, v[i]);
			sbuf_putc(out, '\n');
		}
		spill(mc, out);
	}
	if (shape == SHAPE_STATS)
		sbuf_putc(out, '\n');
}

void maps_render_json(const struct mctx *mc, struct sbuf *out,
		      struct ment *const *v, size_t n, uint64_t top)
{
	enum map_shape shape = shape_of(mc->vt);
	bool stats = mc->vt->kind == TYPE_STATS;
	bool keyed = has_keys(mc);
	if (n == 0)
		return;    /* bpftrace prints nothing for an empty map */
	size_t first = 0;
	if (top && n > top && !stats)
		first = n - top;
	sbuf_printf(out, "{\"type\": \"%s\", \"data\": {",
		    shape == SHAPE_HIST ? "hist" :
		    shape == SHAPE_STATS ? "stats" : "map");
	json_str(out, mc->m->name, strlen(mc->m->name));
	sbuf_puts(out, ": ");
	if (keyed)
		sbuf_putc(out, '{');
	for (size_t i = first; i < n; i++) {
		if (!keyed && i > first)
			break;
		if (i > first)
			sbuf_puts(out, ", ");
		if (keyed)
			json_key(mc, out, v[i]->key);
		switch (shape) {
		case SHAPE_HIST:
			hist_json(mc, out, v[i]->buckets);
			break;
		case SHAPE_STATS:
			if (stats)
				stats_json(mc, out, v[i]);
			else
				avg_text(mc, out, v[i]);
			break;
		default:
			plain_value_text(mc, out, v[i]);
		}
		spill(mc, out);
	}
	if (keyed)
		sbuf_putc(out, '}');
	sbuf_puts(out, "}}\n");
}

static int print_snapshot(struct output *o, const struct map_spec *m,
			  const struct map_snapshot *s, uint64_t top,
			  uint64_t div, struct sbuf *out)
{
	struct mctx mc = { .o = o, .m = m, .vt = m->value_type, .div = div };
	if (!mc.vt)
		return -EINVAL;
	enum map_shape shape = shape_of(mc.vt);
	uint32_t ks = s->key_size ? s->key_size : m->key_size;
	if (mc.vt->kind == TYPE_TSERIES) {
		/* the key's last word is the interval's slot */
		if (ks < 8 || (m->key_type && m->nkeys &&
			       m->key_type->size > ks - 8))
			return -EINVAL;
		mc.ksize = ks - 8;
		if (strcmp(o->fmt->name, "json") == 0)
			return tseries_render(&mc, s, out, true);
		if (strcmp(o->fmt->name, "text") != 0) {
			o->fmt->error_stderr(o, "tseries() maps print only as "
					     "text or JSON");
			return 0;
		}
		return tseries_render(&mc, s, out, false);
	}
	if (shape == SHAPE_HIST) {
		if (ks < 8)
			return -EINVAL;
		mc.ksize = ks - 8;
		mc.nb = mc.vt->kind == TYPE_HIST ? HIST_BUCKETS : lhist_nb(mc.vt);
	} else {
		mc.ksize = ks;
	}
	if (m->key_type && m->nkeys && m->key_type->size > mc.ksize)
		return -EINVAL;    /* the keys are not what the spec says */
	size_t need = type_map_value_size(mc.vt);
	if (s->n && (s->value_size < need || s->value_stride < s->value_size))
		return -EINVAL;

	struct ment *ents = NULL, **v = calloc(s->n ? s->n : 1, sizeof(*v));
	uint64_t *storage = NULL;
	if (!v)
		return -ENOMEM;
	size_t n = s->n;
	if (shape == SHAPE_HIST) {
		long r = gather_hist(&mc, s, v, &ents, &storage);
		if (r < 0) {
			free(v);
			return (int)r;
		}
		n = (size_t)r;
		cxx_sort(v, n, sizeof(*v), less_total, &mc);
	} else {
		ents = calloc(s->n ? s->n : 1, sizeof(*ents));
		if (!ents) {
			free(v);
			return -ENOMEM;
		}
		for (uint32_t i = 0; i < s->n; i++) {
			ents[i].key = s->keys + (size_t)i * s->key_size;
			merge(&mc, s, i, &ents[i]);
			v[i] = &ents[i];
		}
		if (shape == SHAPE_STATS) {
			/* bpftrace's input order, then its std::sort */
			cxx_stable_sort(v, n, sizeof(*v), less_key_bytes, &mc);
			cxx_sort(v, n, sizeof(*v), less_avg, &mc);
		} else {
			cxx_stable_sort(v, n, sizeof(*v), less_plain, &mc);
		}
	}
	o->fmt->map(&mc, out, v, n, top);
	free(storage);
	free(ents);
	free(v);
	return 0;
}

int maps_print(struct output *o, uint32_t map_id, uint64_t top, uint64_t div)
{
	if (map_id >= o->prog->nmaps || !o->have_maps || !o->maps.dump)
		return -EINVAL;
	const struct map_spec *m = &o->prog->maps[map_id];
	struct map_snapshot s = { 0 };
	int r = o->maps.dump(o->maps.ctx, map_id, &s);
	if (r < 0)
		return r;
	r = stackmaps_canonicalize(o, m, &s);
	if (r < 0) {
		map_snapshot_free(&s);
		return r;
	}
	struct sbuf out = { 0 };
	r = print_snapshot(o, m, &s, top, div, &out);
	if (r == 0)
		r = output_write(o, &out);
	sbuf_free(&out);
	map_snapshot_free(&s);
	return r;
}

static bool is_user_map(const struct map_spec *m)
{
	return m->name && m->name[0] == '@' && m->value_type &&
	       (m->kind == MAP_HASH || m->kind == MAP_PERCPU_HASH ||
		m->kind == MAP_ARRAY || m->kind == MAP_PERCPU_ARRAY);
}

/* A D aggregation's place in the script (DTrace prints them in the
 * order of their ids), or -1. */
static int d_agg_order(const struct program *p, const char *name)
{
	for (uint32_t i = 0; i < p->dtrace.naggs; i++)
		if (strcmp(p->dtrace.aggs[i].name, name) == 0)
			return (int)i;
	return -1;
}

static int cmp_map_name(const void *a, const void *b, void *ctx)
{
	const struct program *p = ctx;
	const uint32_t *x = a, *y = b;
	if (p->dtrace.on) {
		int i = d_agg_order(p, p->maps[*x].name);
		int j = d_agg_order(p, p->maps[*y].name);
		if (i != j)
			return i < j ? -1 : 1;
	}
	return strcmp(p->maps[*x].name, p->maps[*y].name);
}

/* What the format prints before the maps at exit, then every map. */
int output_print_maps(struct output *o)
{
	if (!o)
		return -EINVAL;
	struct sbuf begin = { 0 };
	o->fmt->maps_begin(o, &begin);
	output_write(o, &begin);
	sbuf_free(&begin);
	return output_print_maps_now(o);
}

/* Every map in name order (bpftrace's std::map keyed by name). */
int output_print_maps_now(struct output *o)
{
	if (!o)
		return -EINVAL;
	uint32_t n = 0, *ids = calloc(o->prog->nmaps ? o->prog->nmaps : 1,
				      sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	for (uint32_t i = 0; i < o->prog->nmaps; i++)
		if (is_user_map(&o->prog->maps[i]))
			ids[n++] = i;
	qsort_r(ids, n, sizeof(*ids), cmp_map_name, (void *)o->prog);
	int ret = 0;
	for (uint32_t i = 0; i < n; i++) {
		int r = maps_print(o, ids[i], 0, 0);
		if (r < 0 && !ret)
			ret = r;
	}
	free(ids);
	return ret;
}
