/* test_maps_print.c - map printing (print() and maps at exit) against
 * bpftrace 0.17's own output. Each case rebuilds, by hand, what the
 * script next to its golden file (tests/data/output/NAME.bt) leaves in
 * its maps, spread over several CPUs, and compares sonde's text with the
 * golden text bpftrace printed for that script. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_maps.h"
#include "output/output_int.h"
#include "unit.h"

struct run {
	struct fake f;
	struct output *o;
	char *buf;
	size_t len;
	FILE *mem;
};

static void run_start(struct run *r)
{
	fake_init(&r->f);
	r->buf = NULL;
	r->mem = open_memstream(&r->buf, &r->len);
	r->o = NULL;
}

/* Create the output once every map and event exists (it keeps a
 * pointer to the program's tables). */
static void run_attach(struct run *r)
{
	struct output_opts oo = { .format = "text", .out = r->mem };
	r->o = output_new(&r->f.prog, &oo, &r->f.reader);
	output_attaching(r->o, 1);
}

static void run_finish(struct run *r, const char *golden)
{
	output_print_maps(r->o);
	fflush(r->mem);
	char *want = read_golden(golden);
	char name[128];
	snprintf(name, sizeof(name), "maps: %s", golden);
	if (!want) {
		CHECK(0, name);
		printf("#   cannot read tests/data/output/%s\n", golden);
	} else {
		CHECK_STR(r->buf, want, name);
	}
	free(want);
	output_free(r->o);
	fclose(r->mem);
	free(r->buf);
	fake_fini(&r->f);
}

static void t_order_mixed(void)
{
	struct run r;
	run_start(&r);
	struct fake *f = &r.f;
	const struct type *s64 = type_s64();
	struct fmap *zeta = fake_map(f, "@zeta", NULL, s64);
	struct fmap *alpha = fake_map(f, "@alpha", NULL, s64);
	struct fmap *mid = fake_map(f, "@mid", t_tuple(f, 1, s64), s64);
	struct fmap *beta = fake_map(f, "@beta", NULL, t_agg(f, TYPE_COUNT, false));
	struct fmap *B = fake_map(f, "@B", NULL, s64);
	struct fmap *u = fake_map(f, "@_u", NULL, s64);
	struct fmap *anon = fake_map(f, "@", NULL, s64);
	/* an internal map: never printed */
	struct fmap *internal = fake_map(f, ".scratch", NULL, s64);
	run_attach(&r);
	op_set_int(f, zeta, key0(), 1);
	op_set_int(f, alpha, key0(), 2);
	op_set_int(f, mid, keyi(1), 3);
	op_count(f, beta, key0());
	op_set_int(f, B, key0(), 4);
	op_set_int(f, u, key0(), 5);
	op_set_int(f, anon, key0(), 6);
	op_set_int(f, internal, key0(), 99);
	run_finish(&r, "order_mixed.txt");
}

static void t_count_keys(void)
{
	struct run r;
	run_start(&r);
	struct fake *f = &r.f;
	struct fmap *m = fake_map(f, "@", t_tuple(f, 1, type_s64()),
				  t_agg(f, TYPE_COUNT, false));
	run_attach(&r);
	int64_t keys[] = { 1, 2, 2, 3, 3, 3, -1, -1, -1, -1 };
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		op_count(f, m, keyi(keys[i]));
	run_finish(&r, "count_keys.txt");
}

static void t_aggs_signed(void)
{
	struct run r;
	run_start(&r);
	struct fake *f = &r.f;
	const struct type *k1 = t_tuple(f, 1, type_s64());
	const struct type *ks = t_tuple(f, 1, t_str(f));
	struct fmap *s = fake_map(f, "@s", NULL, t_agg(f, TYPE_SUM, true));
	struct fmap *mn = fake_map(f, "@mn", NULL, t_agg(f, TYPE_MIN, true));
	struct fmap *mx = fake_map(f, "@mx", NULL, t_agg(f, TYPE_MAX, true));
	struct fmap *a = fake_map(f, "@a", NULL, t_agg(f, TYPE_AVG, true));
	struct fmap *an = fake_map(f, "@an", NULL, t_agg(f, TYPE_AVG, true));
	struct fmap *ak = fake_map(f, "@ak", k1, t_agg(f, TYPE_AVG, true));
	struct fmap *mk = fake_map(f, "@mk", ks, t_agg(f, TYPE_MAX, true));
	struct fmap *sk = fake_map(f, "@sk", k1, t_agg(f, TYPE_SUM, true));
	run_attach(&r);
	op_sum(f, s, key0(), 5);
	op_sum(f, s, key0(), -8);
	op_minmax(f, mn, key0(), 4, true);
	op_minmax(f, mn, key0(), -3, true);
	op_minmax(f, mn, key0(), 10, true);
	op_minmax(f, mx, key0(), 4, false);
	op_minmax(f, mx, key0(), -3, false);
	op_minmax(f, mx, key0(), 10, false);
	op_avg(f, a, key0(), 10);
	op_avg(f, a, key0(), 3);
	op_avg(f, a, key0(), 4);
	op_avg(f, an, key0(), -10);
	op_avg(f, an, key0(), 3);
	op_avg(f, ak, keyi(1), 7);
	op_avg(f, ak, keyi(1), 8);
	op_avg(f, ak, keyi(2), 1);
	op_avg(f, ak, keyi(3), -4);
	op_minmax(f, mk, keys_("b"), 3, false);
	op_minmax(f, mk, keys_("a"), 9, false);
	op_minmax(f, mk, keys_("c"), 1, false);
	op_sum(f, sk, keyi(2), -1);
	op_sum(f, sk, keyi(1), 7);
	run_finish(&r, "aggs_signed.txt");
}

static void t_stats(void)
{
	struct run r;
	run_start(&r);
	struct fake *f = &r.f;
	struct fmap *s = fake_map(f, "@s", NULL, t_agg(f, TYPE_STATS, true));
	struct fmap *t = fake_map(f, "@t", t_tuple(f, 1, t_str(f)),
				  t_agg(f, TYPE_STATS, true));
	run_attach(&r);
	op_avg(f, s, key0(), 7);
	op_avg(f, s, key0(), 11);
	op_avg(f, s, key0(), -2);
	op_avg(f, t, keys_("x"), 100);
	op_avg(f, t, keys_("y"), -5);
	op_avg(f, t, keys_("y"), -6);
	op_avg(f, t, keys_("z"), 3);
	run_finish(&r, "stats.txt");
}

static void t_hist_basic(void)
{
	struct run r;
	run_start(&r);
	struct fake *f = &r.f;
	struct fmap *h = fake_map(f, "@h", NULL, t_agg(f, TYPE_HIST, true));
	struct fmap *g = fake_map(f, "@g", NULL, t_agg(f, TYPE_HIST, true));
	run_attach(&r);
	int64_t v[] = { 0, 1, 2, 3, 5, 100, 1000, 1024, 4096, 1048576, -1, 3, 3 };
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		op_hist(f, h, key0(), v[i]);
	op_hist(f, g, key0(), 1073741824);
	op_hist(f, g, key0(), 2147483648);
	run_finish(&r, "hist_basic.txt");
}

static struct kb key_is(int64_t i, const char *s)
{
	struct kb k = { .n = 0 };
	kb_int(&k, i);
	kb_str(&k, s);
	return k;
}

static void t_hist_keys(void)
{
	struct run r;
	run_start(&r);
	struct fake *f = &r.f;
	struct fmap *h = fake_map(f, "@h", t_tuple(f, 1, t_str(f)),
				  t_agg(f, TYPE_HIST, true));
	struct fmap *h2 = fake_map(f, "@h2", t_tuple(f, 2, type_s64(), t_str(f)),
				   t_agg(f, TYPE_HIST, true));
	run_attach(&r);
	op_hist(f, h, keys_("a"), 10);
	op_hist(f, h, keys_("a"), 20);
	op_hist(f, h, keys_("b"), 3000);
	op_hist(f, h2, key_is(1, "x"), 7);
	op_hist(f, h2, key_is(1, "x"), 7);
	op_hist(f, h2, key_is(0, "y"), 70);
	op_hist(f, h2, key_is(2, "w"), 0);
	run_finish(&r, "hist_keys.txt");
}

static void t_hist_bars(void)
{
	struct run r;
	run_start(&r);
	struct fake *f = &r.f;
	struct fmap *h = fake_map(f, "@h", NULL, t_agg(f, TYPE_HIST, true));
	struct fmap *l = fake_map(f, "@l", NULL, t_lhist(f, 0, 10, 1));
	run_attach(&r);
	struct { int64_t v; int n; } hv[] = {
		{ 2, 100 }, { 4, 33 }, { 8, 67 }, { 16, 7 }, { 64, 1 } };
	for (size_t i = 0; i < sizeof(hv) / sizeof(hv[0]); i++)
		for (int k = 0; k < hv[i].n; k++)
			op_hist(f, h, key0(), hv[i].v);
	int64_t lv[] = { 1, 1, 1, 2, 2, 5 };
	for (size_t i = 0; i < sizeof(lv) / sizeof(lv[0]); i++)
		op_lhist(f, l, key0(), lv[i], 0, 10, 1);
	run_finish(&r, "hist_bars.txt");
}

/* 40 keys whose totals tie in groups: bpftrace's std::sort scrambles
 * them in a way only the same algorithm reproduces. */
static void t_hist_ties(void)
{
	struct run r;
	run_start(&r);
	struct fake *f = &r.f;
	struct fmap *h = fake_map(f, "@h", t_tuple(f, 1, type_s64()),
				  t_agg(f, TYPE_HIST, true));
	run_attach(&r);
	for (int64_t i = 0; i < 40; i++) {
		op_hist(f, h, keyi(i), i % 3);
		if (i % 2 == 0)
			op_hist(f, h, keyi(i), 5);
		if (i % 7 == 0)
			op_hist(f, h, keyi(i), 9);
	}
	run_finish(&r, "hist_ties.txt");
}

static void t_avg_ties(void)
{
	struct run r;
	run_start(&r);
	struct fake *f = &r.f;
	const struct type *k1 = t_tuple(f, 1, type_s64());
	struct fmap *a = fake_map(f, "@a", k1, t_agg(f, TYPE_AVG, true));
	struct fmap *s = fake_map(f, "@s", k1, t_agg(f, TYPE_STATS, true));
	run_attach(&r);
	for (int64_t i = 0; i < 35; i++) {
		op_avg(f, a, keyi(i), i % 4);
		op_avg(f, s, keyi(i % 20), i % 3);
	}
	run_finish(&r, "avg_ties.txt");
}

static void t_lhist_maps(void)
{
	struct run r;
	run_start(&r);
	struct fake *f = &r.f;
	struct fmap *l = fake_map(f, "@l", NULL, t_lhist(f, 0, 10, 2));
	struct fmap *m = fake_map(f, "@m", NULL, t_lhist(f, 0, 1000, 100));
	struct fmap *k = fake_map(f, "@k", NULL, t_lhist(f, 0, 4096, 1024));
	struct fmap *g = fake_map(f, "@g", NULL, t_lhist(f, 0, 3145728, 1048576));
	struct fmap *n = fake_map(f, "@n", t_tuple(f, 1, type_s64()),
				  t_lhist(f, 1000, 3000, 500));
	run_attach(&r);
	int64_t lv[] = { 5, 0, 9, 10, -1, 55 };
	for (size_t i = 0; i < sizeof(lv) / sizeof(lv[0]); i++)
		op_lhist(f, l, key0(), lv[i], 0, 10, 2);
	op_lhist(f, m, key0(), 250, 0, 1000, 100);
	op_lhist(f, m, key0(), 251, 0, 1000, 100);
	op_lhist(f, k, key0(), 2048, 0, 4096, 1024);
	op_lhist(f, k, key0(), 5000, 0, 4096, 1024);
	op_lhist(f, g, key0(), 2100000, 0, 3145728, 1048576);
	op_lhist(f, n, keyi(1), 1500, 1000, 3000, 500);
	op_lhist(f, n, keyi(1), 2100, 1000, 3000, 500);
	op_lhist(f, n, keyi(2), 2100, 1000, 3000, 500);
	run_finish(&r, "lhist.txt");
}

static struct kb val_str(const char *s)
{
	return keys_(s);
}

static void t_keys_values(void)
{
	struct run r;
	run_start(&r);
	struct fake *f = &r.f;
	const struct type *s64 = type_s64(), *str = t_str(f);
	struct fmap *m = fake_map(f, "@m", t_tuple(f, 1, str), s64);
	struct fmap *n = fake_map(f, "@n", t_tuple(f, 2, str, s64), s64);
	struct fmap *s = fake_map(f, "@s", NULL, str);
	struct fmap *t = fake_map(f, "@t", t_tuple(f, 1, s64), str);
	struct fmap *u = fake_map(f, "@u", t_tuple(f, 2, str, s64), str);
	const struct type *tu_t = t_tuple(f, 2, s64, str);
	const struct type *tk_t = t_tuple(f, 3, s64, str, s64);
	struct fmap *tu = fake_map(f, "@tu", NULL, tu_t);
	struct fmap *tk = fake_map(f, "@tk", t_tuple(f, 1, s64), tk_t);
	struct fmap *x = fake_map(f, "@x", NULL, t_int(f, 8, true));
	struct fmap *y = fake_map(f, "@y", t_tuple(f, 2, t_int(f, 8, false),
						  t_int(f, 16, true)),
				  t_int(f, 32, false));
	struct fmap *big = fake_map(f, "@big", NULL, s64);
	struct fmap *neg = fake_map(f, "@neg", NULL, s64);
	/* a comparison: an integer in bpftrace 0.17 (bool from 0.24) */
	struct fmap *b = fake_map(f, "@b", NULL, type_u64());
	run_attach(&r);
	op_set_int(f, m, keys_("abc"), 3);
	op_set_int(f, m, keys_("d"), 1);
	op_set_int(f, m, keys_("zz"), 2);
	struct kb k;
	k = keys_("one"); kb_int(&k, 1); op_set_int(f, n, k, 10);
	k = keys_("two"); kb_int(&k, 2); op_set_int(f, n, k, 20);
	struct kb v = val_str("hello");
	op_set(f, s, key0(), &v);
	v = val_str("one"); op_set(f, t, keyi(1), &v);
	v = val_str("two"); op_set(f, t, keyi(2), &v);
	v = val_str("minus"); op_set(f, t, keyi(-1), &v);
	v = val_str("zero"); op_set(f, t, keyi(0), &v);
	const char *uk[][2] = { { "b", "x" }, { "a", "y" }, { "b", "z" },
				{ "a", "w" } };
	int64_t un[] = { 2, 9, 1, -1 };
	for (int i = 0; i < 4; i++) {
		k = keys_(uk[i][0]);
		kb_int(&k, un[i]);
		v = val_str(uk[i][1]);
		op_set(f, u, k, &v);
	}
	v = (struct kb){ .n = 0 }; kb_int(&v, 1); kb_str(&v, "s");
	op_set(f, tu, key0(), &v);
	v = (struct kb){ .n = 0 }; kb_int(&v, 2); kb_str(&v, "x"); kb_int(&v, -3);
	op_set(f, tk, keyi(3), &v);
	v = (struct kb){ .n = 0 }; kb_int(&v, 5); kb_str(&v, "y"); kb_int(&v, 6);
	op_set(f, tk, keyi(1), &v);
	/* Stored sign-extended, as codegen keeps an int8 -5. */
	op_set_int(f, x, key0(), -5);
	k = (struct kb){ .n = 0 };
	kb_int(&k, 255);
	kb_int(&k, -2);
	op_set_int(f, y, k, 0xffffffff);
	op_set_int(f, big, key0(), 0x7fffffffffffffffll);
	op_set_int(f, neg, key0(), -7);
	op_set_int(f, b, key0(), 1);
	run_finish(&r, "keys_values.txt");
}

static void t_clear_zero(void)
{
	struct run r;
	run_start(&r);
	struct fake *f = &r.f;
	const struct type *s64 = type_s64();
	const struct type *k1 = t_tuple(f, 1, s64);
	struct fmap *a = fake_map(f, "@a", k1, s64);
	struct fmap *b = fake_map(f, "@b", k1, t_agg(f, TYPE_COUNT, false));
	struct fmap *c = fake_map(f, "@c", k1, s64);
	struct fmap *h = fake_map(f, "@h", NULL, t_agg(f, TYPE_HIST, true));
	struct fmap *i = fake_map(f, "@i", NULL, t_lhist(f, 0, 10, 1));
	struct fmap *s = fake_map(f, "@s", NULL, t_agg(f, TYPE_STATS, true));
	struct fmap *t = fake_map(f, "@t", k1, t_agg(f, TYPE_STATS, true));
	struct fmap *v = fake_map(f, "@v", NULL, t_agg(f, TYPE_AVG, true));
	struct fmap *w = fake_map(f, "@w", NULL, t_agg(f, TYPE_AVG, true));
	struct fmap *mn = fake_map(f, "@mn", NULL, t_agg(f, TYPE_MIN, true));
	/* clear and zero go through events, as the script does them */
	uint64_t clr[4], zr[5];
	clr[0] = ev_simple(f, EV_CLEAR_MAP, NULL, NULL, (int32_t)a->id);
	zr[0] = ev_simple(f, EV_ZERO_MAP, NULL, NULL, (int32_t)b->id);
	clr[1] = ev_simple(f, EV_CLEAR_MAP, NULL, NULL, (int32_t)h->id);
	zr[1] = ev_simple(f, EV_ZERO_MAP, NULL, NULL, (int32_t)i->id);
	clr[2] = ev_simple(f, EV_CLEAR_MAP, NULL, NULL, (int32_t)s->id);
	zr[2] = ev_simple(f, EV_ZERO_MAP, NULL, NULL, (int32_t)t->id);
	zr[3] = ev_simple(f, EV_ZERO_MAP, NULL, NULL, (int32_t)v->id);
	clr[3] = ev_simple(f, EV_CLEAR_MAP, NULL, NULL, (int32_t)w->id);
	zr[4] = ev_simple(f, EV_ZERO_MAP, NULL, NULL, (int32_t)mn->id);
	run_attach(&r);
	op_set_int(f, a, keyi(1), 1);
	op_set_int(f, a, keyi(2), 2);
	op_count(f, b, keyi(1));
	op_count(f, b, keyi(1));
	op_set_int(f, c, keyi(1), 5);
	op_set_int(f, c, keyi(2), 6);
	struct kb k1b = keyi(1);
	fake_delete(c, &k1b);
	fake_send(r.o, clr[0], NULL, 0);
	fake_send(r.o, zr[0], NULL, 0);
	op_hist(f, h, key0(), 1);
	fake_send(r.o, clr[1], NULL, 0);
	op_lhist(f, i, key0(), 1, 0, 10, 1);
	fake_send(r.o, zr[1], NULL, 0);
	op_avg(f, s, key0(), 3);
	fake_send(r.o, clr[2], NULL, 0);
	op_avg(f, t, keyi(1), 3);
	op_avg(f, t, keyi(2), 4);
	fake_send(r.o, zr[2], NULL, 0);
	op_avg(f, v, key0(), 4);
	fake_send(r.o, zr[3], NULL, 0);
	op_avg(f, w, key0(), 5);
	fake_send(r.o, clr[3], NULL, 0);
	op_minmax(f, mn, key0(), 5, true);
	fake_send(r.o, zr[4], NULL, 0);
	run_finish(&r, "clear_zero.txt");
}

static void t_print_top_div(void)
{
	struct run r;
	run_start(&r);
	struct fake *f = &r.f;
	const struct type *s64 = type_s64();
	const struct type *k1 = t_tuple(f, 1, s64);
	struct fmap *a = fake_map(f, "@a", k1, s64);
	struct fmap *c = fake_map(f, "@c", NULL, t_agg(f, TYPE_COUNT, false));
	struct fmap *h = fake_map(f, "@h", k1, t_agg(f, TYPE_HIST, true));
	struct fmap *l = fake_map(f, "@l", NULL, t_lhist(f, 0, 10, 1));
	struct fmap *s = fake_map(f, "@s", k1, t_agg(f, TYPE_STATS, true));
	struct fmap *v = fake_map(f, "@v", k1, t_agg(f, TYPE_AVG, true));
	struct fmap *e = fake_map(f, "@e", k1, s64);
	uint64_t pa[5] = { ev_print_map(f, a, 0, 0), ev_print_map(f, a, 2, 0),
			   ev_print_map(f, a, 0, 10), ev_print_map(f, a, 2, 3),
			   ev_print_map(f, a, 10, 0) };
	uint64_t pc = ev_print_map(f, c, 0, 0);
	uint64_t ph[2] = { ev_print_map(f, h, 2, 0), ev_print_map(f, h, 1, 2) };
	uint64_t pl = ev_print_map(f, l, 0, 2);
	uint64_t ps[2] = { ev_print_map(f, s, 1, 0), ev_print_map(f, s, 0, 3) };
	uint64_t pv[2] = { ev_print_map(f, v, 0, 2), ev_print_map(f, v, 1, 0) };
	uint64_t pe = ev_print_map(f, e, 0, 0);
	uint64_t pend = ev_simple(f, EV_PRINTF, "end\n", NULL, -1);
	run_attach(&r);
	for (int i = 1; i <= 4; i++)
		op_set_int(f, a, keyi(i), 10 * i);
	for (int i = 0; i < 5; i++)
		fake_send(r.o, pa[i], NULL, 0);
	op_count(f, c, key0());
	fake_send(r.o, pc, NULL, 0);
	op_hist(f, h, keyi(1), 1);
	op_hist(f, h, keyi(2), 1);
	op_hist(f, h, keyi(2), 4);
	for (int i = 0; i < 3; i++)
		op_hist(f, h, keyi(3), 2);
	fake_send(r.o, ph[0], NULL, 0);
	fake_send(r.o, ph[1], NULL, 0);
	op_lhist(f, l, key0(), 5, 0, 10, 1);
	op_lhist(f, l, key0(), 5, 0, 10, 1);
	op_lhist(f, l, key0(), 7, 0, 10, 1);
	fake_send(r.o, pl, NULL, 0);
	op_avg(f, s, keyi(1), 10);
	op_avg(f, s, keyi(2), 20);
	op_avg(f, s, keyi(3), 4);
	fake_send(r.o, ps[0], NULL, 0);
	fake_send(r.o, ps[1], NULL, 0);
	op_avg(f, v, keyi(1), -10);
	op_avg(f, v, keyi(2), 7);
	fake_send(r.o, pv[0], NULL, 0);
	fake_send(r.o, pv[1], NULL, 0);
	op_set_int(f, e, keyi(1), 1);
	struct kb k = keyi(1);
	fake_delete(e, &k);
	fake_send(r.o, pe, NULL, 0);
	fake_send(r.o, pend, NULL, 0);
	run_finish(&r, "print_top_div.txt");
}

/* The sort is checked on its own too: against qsort for order, and for
 * stability of the stable variant. */
static bool less_int(const void *a, const void *b, void *ctx)
{
	(void)ctx;
	return *(const int *)a < *(const int *)b;
}

static bool less_hi(const void *a, const void *b, void *ctx)
{
	(void)ctx;
	return (*(const int *)a >> 8) < (*(const int *)b >> 8);
}

static void t_sort(void)
{
	int v[300], w[300];
	unsigned seed = 12345;
	for (int i = 0; i < 300; i++) {
		seed = seed * 1103515245 + 12345;
		v[i] = (int)(seed >> 16) % 1000;
		w[i] = v[i];
	}
	cxx_sort(v, 300, sizeof(int), less_int, NULL);
	bool sorted = true;
	for (int i = 1; i < 300; i++)
		if (v[i - 1] > v[i])
			sorted = false;
	CHECK(sorted, "cxx_sort sorts 300 random ints");
	/* stable: equal high bits keep the order of the low bits */
	for (int i = 0; i < 300; i++)
		w[i] = ((w[i] % 7) << 8) | (i & 0xff);
	cxx_stable_sort(w, 256, sizeof(int), less_hi, NULL);
	bool stable = true;
	for (int i = 1; i < 256; i++)
		if ((w[i - 1] >> 8) == (w[i] >> 8) &&
		    (w[i - 1] & 0xff) > (w[i] & 0xff))
			stable = false;
	CHECK(stable, "cxx_stable_sort keeps ties in order");
	/* a sorted run of equal elements beyond the threshold stays sane */
	int z[100];
	for (int i = 0; i < 100; i++)
		z[i] = 5;
	cxx_sort(z, 100, sizeof(int), less_int, NULL);
	CHECK(z[0] == 5 && z[99] == 5, "cxx_sort of equal elements");
}

/* Maps full of random bytes (keys, values, bucket indices, unset
 * min/max flags, strings without a NUL): printing must stay in bounds
 * and not trap, in both formats (run under ASan/UBSan). */
static void t_random_maps(void)
{
	struct fake fk, *f = &fk;
	fake_init(f);
	const struct type *s64 = type_s64(), *str = t_str(f);
	const struct type *kt = t_tuple(f, 3, str, t_int(f, 32, true), s64);
	enum type_kind kinds[] = { TYPE_COUNT, TYPE_SUM, TYPE_MIN, TYPE_MAX,
				   TYPE_AVG, TYPE_STATS, TYPE_HIST };
	char names[16][8];
	struct fmap *m[16];
	int nm = 0;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		snprintf(names[nm], sizeof(names[nm]), "@a%zu", i);
		m[nm] = fake_map(f, names[nm], kt, t_agg(f, kinds[i], true));
		nm++;
	}
	snprintf(names[nm], 8, "@l");
	m[nm] = fake_map(f, names[nm], kt, t_lhist(f, 0, 100, 7));
	nm++;
	snprintf(names[nm], 8, "@s");
	m[nm] = fake_map(f, names[nm], kt,
			 t_tuple(f, 3, str, s64, type_simple(&f->arena, TYPE_BUF, 12)));
	nm++;
	unsigned seed = 99;
	for (int i = 0; i < nm; i++) {
		struct fmap *fm = m[i];
		fm->n = fm->cap = 200;
		fm->keys = malloc(fm->n * fm->ksize);
		fm->vals = malloc(fm->n * fm->stride * fm->ncpu);
		for (size_t k = 0; k < fm->n * fm->ksize; k++) {
			seed = seed * 1103515245 + 12345;
			fm->keys[k] = (uint8_t)(seed >> 16);
		}
		for (size_t k = 0; k < fm->n * fm->stride * fm->ncpu; k++) {
			seed = seed * 1103515245 + 12345;
			fm->vals[k] = (uint8_t)(seed >> 16);
		}
		/* some small bucket indices so histograms have lines */
		if (fm->ksize > kt->size)
			for (size_t e = 0; e < fm->n; e += 2)
				memset(fm->keys + e * fm->ksize + kt->size + 1, 0, 7);
	}
	FILE *null = fopen("/dev/null", "w");
	for (int fmt = 0; fmt < 2; fmt++) {
		struct output_opts oo = { .format = fmt ? "json" : "text",
					  .out = null };
		struct output *o = output_new(&f->prog, &oo, &f->reader);
		int r = output_print_maps(o);
		CHECK(r == 0, fmt ? "maps: random contents print (json)"
				  : "maps: random contents print (text)");
		output_free(o);
	}
	fclose(null);
	fake_fini(f);
}

int main(void)
{
	t_random_maps();
	t_sort();
	t_order_mixed();
	t_count_keys();
	t_aggs_signed();
	t_stats();
	t_hist_basic();
	t_hist_keys();
	t_hist_bars();
	t_hist_ties();
	t_avg_ties();
	t_lhist_maps();
	t_keys_values();
	t_clear_zero();
	t_print_top_div();
	return UNIT_DONE();
}
