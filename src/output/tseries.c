/* tseries.c - a tseries() map (bpftrace 0.24) as text (and JSON, below), the way bpftrace
 * 0.26's runtime tests and stdlib.md show it: per key, one line per
 * interval from the oldest one kept to the latest any key wrote, each
 * with its start time, a '*' placed between the smallest and largest
 * value shown, and the value ('-' where the interval has none):
 *
 *   @:
 *                -5                                                  5
 *   hh:mm:ss.ms  |___________________________________________________|
 *   10:41:46.700 *                         .                         | -5
 *   10:41:46.800 |                         *                         | 0
 *                v___________________________________________________v
 *                -5                                                  5
 *
 * The '.' column is zero, drawn when zero lies inside the scale. The
 * map's entries are the key's bytes then the interval's slot (epoch %
 * intervals); each CPU's value is { epoch + 1, value, count, time }
 * (types.h), merged here: the latest epoch wins, values of one epoch
 * combine as the aggregation says. */
#include "output_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define GRAPH 53           /* graph columns, both borders included */
#define LABEL 13           /* "hh:mm:ss.ms  " */

struct tsval {
	const uint8_t *key;
	uint64_t epoch;    /* + 1; 0: no CPU wrote this slot */
	int64_t value;
	uint64_t count, ts;
};

static uint64_t ld(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

/* One slot's value over the CPUs. */
static void merge_slot(const struct type *t, const struct map_snapshot *s,
		       uint32_t i, struct tsval *r)
{
	uint32_t nv = s->nvalues ? s->nvalues : 1;
	for (uint32_t c = 0; c < nv; c++) {
		const uint8_t *v = s->values +
			((size_t)i * nv + c) * s->value_stride;
		uint64_t ep = ld(v);
		int64_t x = (int64_t)ld(v + 8);
		uint64_t n = ld(v + 16), ts = ld(v + 24);
		if (!ep || ep < r->epoch)
			continue;
		if (ep > r->epoch) {
			r->epoch = ep;
			r->value = x;
			r->count = n;
			r->ts = ts;
			continue;
		}
		switch (t->ts_agg) {
		case TS_AVG:
		case TS_SUM:
			/* wraps as the BPF side's 64-bit add does */
			r->value = (int64_t)((uint64_t)r->value + (uint64_t)x);
			break;
		case TS_MAX:
		case TS_MIN: {
			bool less = t->is_signed ? x < r->value :
				(uint64_t)x < (uint64_t)r->value;
			if (less == (t->ts_agg == TS_MIN))
				r->value = x;
			break;
		}
		default:
			if (ts > r->ts)
				r->value = x;
		}
		r->count += n;
		if (ts > r->ts)
			r->ts = ts;
	}
}

static int64_t shown(const struct type *t, const struct tsval *v)
{
	if (t->ts_agg != TS_AVG || !v->count)
		return v->value;
	if (t->is_signed)
		return v->value / (int64_t)v->count;
	return (int64_t)((uint64_t)v->value / v->count);
}

static void num(char *buf, size_t n, const struct type *t, int64_t v)
{
	if (t->is_signed)
		snprintf(buf, n, "%lld", (long long)v);
	else
		snprintf(buf, n, "%llu", (unsigned long long)v);
}

/* "             -5                                                  5" */
static void scale_line(struct sbuf *out, const struct type *t, int64_t lo,
		       int64_t hi)
{
	char a[24], b[24];
	num(a, sizeof(a), t, lo);
	num(b, sizeof(b), t, hi);
	int pad = GRAPH - (int)strlen(a) - (int)strlen(b);
	sbuf_printf(out, "%*s%s%*s%s\n", LABEL, "", a, pad > 1 ? pad : 1, "",
		    b);
}

/* The start of an interval as local time, hh:mm:ss.mmm. */
static void time_label(const struct mctx *mc, struct sbuf *out, uint64_t ns)
{
	const struct type *t = mc->vt;
	time_t sec = (time_t)(ns / 1000000000u);
	long ms = (long)(ns % 1000000000u / 1000000u);
	if (!t->ts_clock_map) {
		/* the monotonic clock: since boot */
		struct timespec bt = { 0 };
		output_boot_time(mc->o, &bt);
		uint64_t n = (uint64_t)bt.tv_nsec + ns % 1000000000u;
		sec += bt.tv_sec + (time_t)(n / 1000000000u);
		ms = (long)(n % 1000000000u / 1000000u);
	}
	struct tm tm;
	char text[16] = "??:??:??";
	if (localtime_r(&sec, &tm))
		strftime(text, sizeof(text), "%H:%M:%S", &tm);
	sbuf_printf(out, "%s.%03ld ", text, ms);
}

/* Column of v on the scale lo..hi (lo < hi). */
static int column(int64_t v, int64_t lo, int64_t hi)
{
	__int128 c = (__int128)((__int128)v - lo) * (GRAPH - 1) /
		((__int128)hi - lo);
	return c < 0 ? 0 : c > GRAPH - 1 ? GRAPH - 1 : (int)c;
}

static void render_key(const struct mctx *mc, struct sbuf *out,
		       struct tsval *const *g, size_t n, uint64_t last)
{
	const struct type *t = mc->vt;
	uint64_t span = t->ts_intervals ? t->ts_intervals : 1;
	uint64_t first = g[0]->epoch;
	if (last >= span && first < last - span + 1)
		first = last - span + 1;
	bool any = false;
	int64_t lo = 0, hi = 0;
	for (size_t i = 0; i < n; i++) {
		if (g[i]->epoch < first || g[i]->epoch > last)
			continue;
		int64_t v = shown(t, g[i]);
		bool less = t->is_signed ? v < lo : (uint64_t)v < (uint64_t)lo;
		bool more = t->is_signed ? v > hi : (uint64_t)v > (uint64_t)hi;
		if (!any || less)
			lo = v;
		if (!any || more)
			hi = v;
		any = true;
	}
	if (lo == hi) {
		/* one value: a scale around it, from 0 for 0 */
		if (lo != 0)
			lo--;
		hi++;
	}
	sbuf_puts(out, mc->m->name);
	maps_key_text(mc, out, g[0]->key);
	sbuf_puts(out, ":\n");
	scale_line(out, t, lo, hi);
	sbuf_printf(out, "hh:mm:ss.ms  |%.*s|\n", GRAPH - 2,
		    "_______________________________________________________");
	bool zero = t->is_signed && lo < 0 && hi > 0;
	size_t k = 0;
	for (uint64_t e = first; e <= last && e >= first; e++) {
		while (k < n && g[k]->epoch < e)
			k++;
		const struct tsval *v = k < n && g[k]->epoch == e ? g[k] : NULL;
		time_label(mc, out, (e - 1) * (uint64_t)t->ts_interval);
		char row[GRAPH + 1];
		memset(row, ' ', GRAPH);
		row[0] = row[GRAPH - 1] = '|';
		row[GRAPH] = 0;
		if (zero)
			row[column(0, lo, hi)] = '.';
		char val[24] = "-";
		if (v) {
			int64_t x = shown(t, v);
			row[column(x, lo, hi)] = '*';
			num(val, sizeof(val), t, x);
		}
		sbuf_printf(out, "%s %s\n", row, val);
	}
	sbuf_printf(out, "%*sv%.*sv\n", LABEL, "", GRAPH - 2,
		    "_______________________________________________________");
	scale_line(out, t, lo, hi);
	sbuf_putc(out, '\n');
}

static int cmp_slot(const void *x, const void *y, void *ctx)
{
	const struct mctx *mc = ctx;
	const struct tsval *a = *(struct tsval *const *)x;
	const struct tsval *b = *(struct tsval *const *)y;
	int c = memcmp(a->key, b->key, mc->ksize);
	if (c)
		return c;
	return a->epoch < b->epoch ? -1 : a->epoch > b->epoch;
}

/* JSON, as bpftrace 0.26 writes it (its runtime tests' expected
 * output): the intervals that have a value, their start in UTC with
 * nanoseconds, "1970-01-01 00:00:00.500000000". */
static void render_key_json(const struct mctx *mc, struct sbuf *out,
			    struct tsval *const *g, size_t n, uint64_t last)
{
	const struct type *t = mc->vt;
	uint64_t span = t->ts_intervals ? t->ts_intervals : 1;
	uint64_t first = last >= span ? last - span + 1 : 1;
	sbuf_putc(out, '[');
	bool any = false;
	for (size_t i = 0; i < n; i++) {
		if (g[i]->epoch < first || g[i]->epoch > last)
			continue;
		uint64_t ns = (g[i]->epoch - 1) * (uint64_t)t->ts_interval;
		if (!t->ts_clock_map) {
			struct timespec bt = { 0 };
			output_boot_time(mc->o, &bt);
			ns += (uint64_t)bt.tv_sec * 1000000000u +
				(uint64_t)bt.tv_nsec;
		}
		time_t sec = (time_t)(ns / 1000000000u);
		struct tm tm;
		char text[32] = "?";
		if (gmtime_r(&sec, &tm))
			strftime(text, sizeof(text), "%Y-%m-%d %H:%M:%S", &tm);
		char val[24];
		num(val, sizeof(val), t, shown(t, g[i]));
		sbuf_printf(out, "%s{\"interval_start\": \"%s.%09llu\", "
			    "\"value\": %s}", any ? ", " : "", text,
			    (unsigned long long)(ns % 1000000000u), val);
		any = true;
	}
	sbuf_putc(out, ']');
}

int tseries_render(const struct mctx *mc, const struct map_snapshot *s,
		   struct sbuf *out, bool json)
{
	if (s->n && s->value_size < TSERIES_SLOT)
		return -EINVAL;
	struct tsval *vals = calloc(s->n ? s->n : 1, sizeof(*vals));
	struct tsval **v = calloc(s->n ? s->n : 1, sizeof(*v));
	if (!vals || !v) {
		free(vals);
		free(v);
		return -ENOMEM;
	}
	size_t n = 0;
	uint64_t last = 0;
	for (uint32_t i = 0; i < s->n; i++) {
		struct tsval *r = &vals[n];
		r->key = s->keys + (size_t)i * s->key_size;
		merge_slot(mc->vt, s, i, r);
		if (!r->epoch)
			continue;     /* zeroed, or never written */
		if (r->epoch > last)
			last = r->epoch;
		v[n] = r;
		n++;
	}
	qsort_r(v, n, sizeof(*v), cmp_slot, (void *)mc);
	bool keyed = mc->m->nkeys > 0;
	if (json) {
		sbuf_puts(out, "{\"type\": \"tseries\", \"data\": {");
		json_str(out, mc->m->name, strlen(mc->m->name));
		sbuf_puts(out, keyed ? ": {" : ": ");
		if (!keyed && !n)
			sbuf_puts(out, "[]");
	}
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;
		while (j < n && !memcmp(v[i]->key, v[j]->key, mc->ksize))
			j++;
		if (json) {
			if (i)
				sbuf_puts(out, ", ");
			maps_key_json(mc, out, v[i]->key);
			render_key_json(mc, out, v + i, j - i, last);
			if (!keyed)
				break;
		} else {
			render_key(mc, out, v + i, j - i, last);
		}
		i = j;
	}
	if (json)
		sbuf_puts(out, keyed ? "}}}\n" : "}}\n");
	free(vals);
	free(v);
	return 0;
}
