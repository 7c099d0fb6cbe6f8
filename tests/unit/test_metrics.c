/* test_metrics.c - the metrics endpoint without a kernel: the HTTP
 * request parser on good and hostile requests, and the exposition of
 * hand-built maps (fake_maps.h, values spread over CPUs): names, types,
 * labels and their escaping, cumulative buckets with the sum entry,
 * label sets that merge, both formats, and the refusals of
 * --metrics-labels and of names that would collide. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/http.h"
#include "export/metrics.h"
#include "fake_maps.h"
#include "program.h"
#include "unit.h"

static int parse(const char *s, struct http_request *r)
{
	return http_parse_request(s, strlen(s), r);
}

static void t_parser(void)
{
	struct http_request r;
	CHECK(parse("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", &r) == 1 &&
	      r.method == HTTP_GET && r.path == HTTP_PATH_METRICS &&
	      r.format == HTTP_FMT_TEXT, "http: a plain GET of /metrics");
	CHECK(parse("GET /metrics?x=1 HTTP/1.0\nAccept: application/openmetrics-text;"
		    "version=1.0.0,text/plain;q=0.5\n\n", &r) == 1 &&
	      r.path == HTTP_PATH_METRICS && r.format == HTTP_FMT_OPENMETRICS,
	      "http: LF line ends, a query, OpenMetrics asked for");
	CHECK(parse("HEAD / HTTP/1.1\r\n\r\n", &r) == 1 && r.method == HTTP_HEAD &&
	      r.path == HTTP_PATH_ROOT, "http: HEAD of /");
	CHECK(parse("DELETE /metricsx HTTP/1.1\r\n\r\n", &r) == 1 &&
	      r.method == HTTP_OTHER_METHOD && r.path == HTTP_PATH_OTHER,
	      "http: another method, another path");
	CHECK(parse("GET /metrics HTTP/1.1\r\nHost: x\r\n", &r) == 0,
	      "http: no blank line yet: more is needed");
	CHECK(parse("GET /metr", &r) == 0, "http: half a request line");
	CHECK(parse("\r\n\r\nGET / HTTP/1.1\r\n\r\n", &r) == 1,
	      "http: blank lines before the request");
	CHECK(parse("GET /metrics\r\n\r\n", &r) == -EBADMSG, "http: no version");
	CHECK(parse("GET  HTTP/1.1\r\n\r\n", &r) == -EBADMSG, "http: no target");
	CHECK(parse("GET / HTTP/2.0\r\n\r\n", &r) == -EBADMSG, "http: HTTP/2");
	CHECK(parse("GET / HTTP/1.1\r\nno colon\r\n\r\n", &r) == -EBADMSG,
	      "http: a header without a colon");
	CHECK(http_parse_request("GET /\0 HTTP/1.1", 15, &r) == -EBADMSG,
	      "http: a NUL byte");
	CHECK(parse("", &r) == 0, "http: nothing yet");
}

/* The exposition of the fake program's maps. */
static char *render(struct fake *f, struct output **o, bool om,
		    const char *maps, const char *const *labels, size_t nlabels)
{
	struct output_opts oo = { .format = "text", .out = stdout };
	*o = output_new(&f->prog, &oo, &f->reader);
	struct metrics *m = metrics_new(NULL, &f->prog, maps, labels, nlabels);
	if (!m)
		return NULL;
	metrics_set_output(m, *o);
	size_t len;
	char *s = metrics_render(m, om, 7, &len);
	metrics_free(m);
	return s;
}

static void t_exposition(void)
{
	struct fake f;
	fake_init(&f);
	const struct type *str = t_str(&f);
	struct fmap *calls = fake_map(&f, "@calls_total", t_tuple(&f, 2, str, type_s64()),
				      t_agg(&f, TYPE_COUNT, false));
	struct fmap *lat = fake_map(&f, "@lat", NULL, t_agg(&f, TYPE_HIST, false));
	struct fmap *mn = fake_map(&f, "@low", str, t_agg(&f, TYPE_MIN, true));
	struct fmap *st = fake_map(&f, "@", NULL, t_agg(&f, TYPE_STATS, true));
	struct fmap *text = fake_map(&f, "@name", NULL, str);
	struct fmap *gauge = fake_map(&f, "@level", NULL, type_s64());
	for (int i = 0; i < 5; i++)
		op_count(&f, calls, ({ struct kb k = { .n = 0 };
			kb_str(&k, "a\"b\\c\nd\xff"); kb_int(&k, i % 2); k; }));
	int64_t vals[] = { 0, 1, 3, 5, 1000, -4 };
	int64_t total = 0;
	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		op_hist(&f, lat, key0(), vals[i]);
		total += vals[i];
	}
	/* the sum entry codegen keeps with --metrics */
	struct kb sk = key0();
	kb_int(&sk, (int64_t)SONDE_HIST_SUM_BUCKET);
	op_sum(&f, lat, sk, total);
	op_minmax(&f, mn, keys_("x"), -3, true);
	op_minmax(&f, mn, keys_("x"), 2, true);
	op_avg(&f, st, key0(), 10);
	op_avg(&f, st, key0(), -4);
	op_set(&f, text, key0(), &(struct kb){ .n = 0 });
	op_set_int(&f, gauge, key0(), -12);
	const char *labels[] = { "@calls_total:who,parity" };
	struct output *o;
	char *s = render(&f, &o, false, NULL, labels, 1);
	CHECK(s != NULL, "render: text 0.0.4");
	if (s) {
		CHECK(strstr(s, "# TYPE sonde_calls_total counter\n"
			       "# HELP sonde_calls_total count() of @calls_total\n"
			       "sonde_calls_total{who=\"a\\\"b\\\\c\\nd\xef\xbf\xbd\",parity=\"0\"} 3\n"
			       "sonde_calls_total{who=\"a\\\"b\\\\c\\nd\xef\xbf\xbd\",parity=\"1\"} 2\n") != NULL,
		      "render: counter, named labels, escaping, U+FFFD, CPUs merged");
		CHECK(strstr(s, "sonde_lat_bucket{le=\"-1\"} 1\nsonde_lat_bucket{le=\"0\"} 2\n"
			       "sonde_lat_bucket{le=\"1\"} 3\nsonde_lat_bucket{le=\"3\"} 4\n"
			       "sonde_lat_bucket{le=\"7\"} 5\n") != NULL &&
		      strstr(s, "sonde_lat_bucket{le=\"1023\"} 6\n") != NULL &&
		      strstr(s, "sonde_lat_bucket{le=\"+Inf\"} 6\nsonde_lat_count 6\n"
			       "sonde_lat_sum 1005\n") != NULL,
		      "render: hist() cumulative, +Inf, _count and _sum");
		CHECK(strstr(s, "# TYPE sonde_low gauge\n# HELP sonde_low min() of @low\n"
			       "sonde_low{key=\"x\"} -3\n") != NULL, "render: min() gauge, signed");
		CHECK(strstr(s, "# TYPE sonde_anon summary\n# HELP sonde_anon stats() of @\n"
			       "sonde_anon_count 2\nsonde_anon_sum 6\n") != NULL,
		      "render: stats() summary, the anonymous map");
		CHECK(strstr(s, "sonde_name") == NULL, "render: a string map is not a metric");
		CHECK(strstr(s, "sonde_level") == NULL,
		      "render: a map of integers only when --metrics-maps names it");
		CHECK(strstr(s, "sonde_events_lost_total 7\n") != NULL &&
		      strstr(s, "# EOF") == NULL, "render: sonde's own counter, no # EOF");
	}
	free(s);
	output_free(o);
	s = render(&f, &o, true, NULL, labels, 1);
	CHECK(s && strstr(s, "# TYPE sonde_calls counter\n") &&
	      strstr(s, "sonde_calls_total{who=") &&
	      strcmp(s + strlen(s) - 6, "# EOF\n") == 0,
	      "render: OpenMetrics: the family without _total, # EOF last");
	free(s);
	output_free(o);
	s = render(&f, &o, false, "@level,@lat", NULL, 0);
	CHECK(s && strstr(s, "# TYPE sonde_level gauge\n# HELP sonde_level the value of "
			       "@level\nsonde_level -12\n") && strstr(s, "sonde_lat_sum") &&
	      !strstr(s, "sonde_calls"), "render: --metrics-maps, an integer gauge");
	free(s);
	output_free(o);
	fake_fini(&f);
}

static void t_refusals(void)
{
	struct fake f;
	fake_init(&f);
	fake_map(&f, "@h", type_s64(), t_agg(&f, TYPE_HIST, false));
	fake_map(&f, "@x", NULL, t_agg(&f, TYPE_COUNT, false));
	fake_map(&f, "@x_total", NULL, t_agg(&f, TYPE_COUNT, false));
	fake_map(&f, "@t", t_tuple(&f, 2, type_s64(), type_s64()),
		 t_agg(&f, TYPE_COUNT, false));
	struct { const char *spec; const char *name; } cases[] = {
		{ "@h:le", "labels: le on a histogram" },
		{ "@nope:a", "labels: a map the program lacks" },
		{ "@t:a,b,c", "labels: more names than fields" },
		{ "@t:a,a", "labels: twice the same name" },
		{ "@t:__a", "labels: a reserved name" },
		{ "@t:9a", "labels: not a name" },
		{ "t:a", "labels: no @" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *spec = cases[i].spec;
		struct metrics *m = metrics_new(NULL, &f.prog, NULL, &spec, 1);
		CHECK(!m && errno == EINVAL, cases[i].name);
		metrics_free(m);
	}
	/* @x and @x_total both write sonde_x_total */
	struct metrics *m = metrics_new(NULL, &f.prog, NULL, NULL, 0);
	CHECK(!m && errno == EINVAL, "names: two maps writing one series");
	metrics_free(m);
	m = metrics_new(NULL, &f.prog, "@h,@nope", NULL, 0);
	CHECK(!m && errno == EINVAL, "maps: a map the program lacks");
	metrics_free(m);
	fake_fini(&f);
}

int main(void)
{
	t_parser();
	t_exposition();
	t_refusals();
	return UNIT_DONE();
}
