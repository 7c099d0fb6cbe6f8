/* test_output_scale.c - the reader side of output at scale: full maps
 * warned once per map (text and JSON), lost events in both formats,
 * clear() of a keyless count() map, and sonde's own messages and script
 * diagnostics as JSON lines with -f json. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/diag.h"
#include "base/log.h"
#include "fake_maps.h"
#include "output/output_int.h"
#include "unit.h"

static uint64_t fails[FAKE_MAXMAPS];

static uint64_t fake_failures(void *ctx, uint32_t map_id)
{
	(void)ctx;
	return map_id < FAKE_MAXMAPS ? fails[map_id] : 0;
}

static uint32_t fake_capacity(void *ctx, uint32_t map_id)
{
	(void)ctx;
	(void)map_id;
	return 4096;
}

struct cap {
	char *buf;
	size_t len;
	FILE *mem;
	struct output *o;
};

static void cap_open(struct cap *c, struct fake *f, const char *fmt)
{
	c->buf = NULL;
	c->mem = open_memstream(&c->buf, &c->len);
	struct output_opts oo = { .format = fmt, .out = c->mem };
	c->o = output_new(&f->prog, &oo, &f->reader);
}

static const char *cap_text(struct cap *c)
{
	fflush(c->mem);
	return c->buf ? c->buf : "";
}

static void cap_close(struct cap *c)
{
	output_free(c->o);
	fclose(c->mem);
	free(c->buf);
}

static int count_of(const char *hay, const char *needle)
{
	int n = 0;
	for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

static void t_full_maps(void)
{
	struct fake fk, *f = &fk;
	fake_init(f);
	f->reader.failures = fake_failures;
	f->reader.capacity = fake_capacity;
	struct map_spec internal = { .name = ".internal", .kind = MAP_ARRAY,
				     .key_size = 4, .value_size = 8,
				     .max_entries = 1 };
	int in = program_add_map(&f->prog, &internal);
	struct fmap *a = fake_map(f, "@a", type_s64(), type_s64());
	struct fmap *b = fake_map(f, "@b", type_s64(), t_agg(f, TYPE_COUNT, false));
	memset(fails, 0, sizeof(fails));

	struct cap c;
	cap_open(&c, f, "json");
	output_check_maps(c.o);
	CHECK_STR(cap_text(&c), "", "full: nothing to say while no update failed");
	fails[in] = 9;        /* internal maps are not the user's business */
	fails[a->id] = 3;
	output_check_maps(c.o);
	CHECK_STR(cap_text(&c),
		  "{\"type\": \"warning\", \"data\": \"map @a is full (4096 "
		  "entries): 3 updates failed, new keys are dropped "
		  "(BPFTRACE_MAP_KEYS_MAX raises the limit)\"}\n",
		  "full: JSON warning names the map, once");
	fails[a->id] = 300;
	output_check_maps(c.o);
	output_check_maps(c.o);
	CHECK(count_of(cap_text(&c), "@a") == 1, "full: said once, however often checked");
	fails[b->id] = 1;
	output_check_maps(c.o);
	CHECK(count_of(cap_text(&c), "map @b is full (4096 entries): 1 update failed") == 1,
	      "full: a second map, later, its own warning");
	cap_close(&c);

	/* no failures hook (another engine): silent */
	f->reader.failures = NULL;
	cap_open(&c, f, "text");
	output_check_maps(c.o);
	CHECK_STR(cap_text(&c), "", "full: no hook, no warning");
	cap_close(&c);
	fake_fini(f);
}

static void t_lost_and_clear(void)
{
	struct fake fk, *f = &fk;
	fake_init(f);
	struct fmap *n = fake_map(f, "@n", NULL, t_agg(f, TYPE_COUNT, false));
	struct fmap *nk = fake_map(f, "@nk", type_s64(), t_agg(f, TYPE_COUNT, false));
	struct fmap *s = fake_map(f, "@s", NULL, t_agg(f, TYPE_SUM, true));
	op_count(f, n, key0());
	op_count(f, nk, keyi(1));
	op_sum(f, s, key0(), 4);
	uint64_t cl_n = ev_simple(f, EV_CLEAR_MAP, NULL, NULL, (int32_t)n->id);
	uint64_t cl_nk = ev_simple(f, EV_CLEAR_MAP, NULL, NULL, (int32_t)nk->id);
	uint64_t cl_s = ev_simple(f, EV_CLEAR_MAP, NULL, NULL, (int32_t)s->id);

	struct cap c;
	cap_open(&c, f, "text");
	fake_send(c.o, cl_n, NULL, 0);
	fake_send(c.o, cl_nk, NULL, 0);
	fake_send(c.o, cl_s, NULL, 0);
	CHECK(n->n == 1, "clear: a keyless count() map keeps its key (zeroed)");
	uint64_t total = 0;
	for (unsigned cpu = 0; cpu < n->ncpu; cpu++) {
		uint64_t v;
		memcpy(&v, n->vals + cpu * n->stride, 8);
		total += v;
	}
	CHECK(total == 0, "clear: ... and its value is zero");
	CHECK(nk->n == 0, "clear: count() with keys is emptied");
	CHECK(s->n == 0, "clear: a keyless sum() is emptied");
	output_lost(c.o, 7);
	CHECK(strstr(cap_text(&c), "Lost 7 events\n") != NULL, "lost: bpftrace's words");
	cap_close(&c);

	cap_open(&c, f, "json");
	output_lost(c.o, 12);
	CHECK_STR(cap_text(&c), "{\"type\": \"lost_events\", \"data\": {\"events\": 12}}\n",
		  "lost: JSON record");
	cap_close(&c);
	fake_fini(f);
}

static void t_json_messages(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	output_format_log_line("json")(m, "info", "a \"b\" \\ \n\t\x01\x7f ok");
	fclose(m);
	CHECK_STR(buf, "{\"type\": \"info\", \"data\": "
		  "\"a \\\"b\\\" \\\\ \\n\\t\\u0001\\u007f ok\"}\n",
		  "json's message line: quotes, backslash, controls escaped");
	free(buf);

	struct diag_source src = { .name = "stdin",
				   .text = "BEGIN { x }\nEND { \"q\" }" };
	struct diags d;
	diags_init(&d, &src);
	diag_error(&d, (struct pos){ 2, 7, 3 }, "SYNTAX", "unexpected \"%s\"", "q");
	diag_warning(&d, (struct pos){ 1, 9, 1 }, "UNUSED", "x does nothing");
	diag_error(&d, (struct pos){ 0, 0, 0 }, "NOPOS", "no place");
	buf = NULL;
	m = open_memstream(&buf, &len);
	log_set_line(output_format_log_line("json"));
	diags_print(&d, m);
	log_set_line(NULL);
	fclose(m);
	CHECK_STR(buf,
		  "{\"type\": \"error\", \"data\": \"stdin: ERROR: no place [NOPOS]\"}\n"
		  "{\"type\": \"warning\", \"data\": \"stdin:1:9: WARNING: x does nothing [UNUSED]\"}\n"
		  "{\"type\": \"error\", \"data\": \"stdin:2:7: ERROR: unexpected \\\"q\\\" [SYNTAX]\"}\n",
		  "diagnostics: one JSON line each, in source order, no caret");
	free(buf);
	buf = NULL;
	m = open_memstream(&buf, &len);
	diags_print(&d, m);
	fclose(m);
	CHECK(strstr(buf, "stdin:2:7: ERROR: unexpected \"q\" [SYNTAX]\nEND { \"q\" }\n      ^~~\n") != NULL,
	      "diagnostics: text unchanged without -f json");
	free(buf);
	diags_free(&d);
}

int main(void)
{
	t_full_maps();
	t_lost_and_clear();
	t_json_messages();
	return UNIT_DONE();
}
