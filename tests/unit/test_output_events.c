/* test_output_events.c - event records in text mode: print() of every
 * value type against bpftrace 0.17 (tests/data/output/events.bt/.txt),
 * time, join, cat, system, exit, the Attaching and Lost lines, and
 * malformed records (refused, never read past their end). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fake_maps.h"
#include "output/output_int.h"
#include "unit.h"

struct cap {
	char *buf;
	size_t len;
	FILE *mem;
	struct output *o;
};

static void cap_open(struct cap *c, struct fake *f, const char *fmt,
		     bool unsafe)
{
	c->buf = NULL;
	c->mem = open_memstream(&c->buf, &c->len);
	struct output_opts oo = { .format = fmt, .out = c->mem,
				  .unsafe = unsafe };
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

static uint64_t ev_value(struct fake *f, const struct type *t)
{
	return ev_simple(f, EV_PRINT_VALUE, NULL, t_tuple(f, 1, t), -1);
}

static void t_events_golden(void)
{
	struct fake fk, *f = &fk;
	fake_init(f);
	const struct type *s64 = type_s64(), *str = t_str(f);
	const struct type *tup = t_tuple(f, 2, s64, str);
	const struct type *nest = t_tuple(f, 3, s64, t_tuple(f, 2, s64, str), str);
	const struct type *buf_t = type_simple(&f->arena, TYPE_BUF, 4 + 7);
	const struct type *inet_t = type_simple(&f->arena, TYPE_INET, 24);
	const struct type *ksym_t = type_simple(&f->arena, TYPE_KSYM, 8);
	const struct type *usym_t = type_simple(&f->arena, TYPE_USYM, 16);
	uint64_t v_int = ev_value(f, s64), v_str = ev_value(f, str);
	uint64_t v_tup = ev_value(f, tup), v_nest = ev_value(f, nest);
	uint64_t v_s8 = ev_value(f, t_int(f, 8, true));
	uint64_t v_u8 = ev_value(f, t_int(f, 8, false));
	/* a comparison: an integer in bpftrace 0.17 (bool from 0.24) */
	uint64_t v_bool = ev_value(f, type_u64());
	uint64_t v_buf = ev_value(f, buf_t), v_inet = ev_value(f, inet_t);
	uint64_t v_ksym = ev_value(f, ksym_t), v_usym = ev_value(f, usym_t);
	uint64_t p_syms = ev_simple(f, EV_PRINTF, "%s|%s|%s\n",
				    t_tuple(f, 3, ksym_t, usym_t, inet_t), -1);
	uint64_t e_time = ev_simple(f, EV_TIME, "T%%\n", NULL, -1);
	uint64_t p_after = ev_simple(f, EV_PRINTF, "after\n", NULL, -1);

	struct cap c;
	cap_open(&c, f, "text", false);
	output_attaching(c.o, 1);
	struct kb v;
	int64_t x = 5;
	fake_send(c.o, v_int, &x, 8);
	v = keys_("str");
	fake_send(c.o, v_str, v.b, v.n);
	v = (struct kb){ .n = 0 }; kb_int(&v, 1); kb_str(&v, "a");
	fake_send(c.o, v_tup, v.b, v.n);
	v = (struct kb){ .n = 0 }; kb_int(&v, 1); kb_int(&v, 2); kb_str(&v, "x");
	kb_str(&v, "y");
	fake_send(c.o, v_nest, v.b, v.n);
	x = -5;
	fake_send(c.o, v_int, &x, 8);
	fake_send(c.o, v_s8, &x, 8);
	fake_send(c.o, v_u8, &x, 8);
	x = 1;
	fake_send(c.o, v_bool, &x, 8);
	uint8_t b[16] = { 7, 0, 0, 0, 'a', 'b', 1, 0xff, 'c', '"', '\\' };
	fake_send(c.o, v_buf, b, 16);
	uint8_t in[24] = { 2, 0, 0, 0, 0, 0, 0, 0, 127, 0, 0, 1 };
	fake_send(c.o, v_inet, in, 24);
	uint64_t sym[2] = { 1, 1234 };
	fake_send(c.o, v_ksym, sym, 8);
	sym[0] = 0;
	fake_send(c.o, v_ksym, sym, 8);
	sym[0] = 1;
	fake_send(c.o, v_usym, sym, 16);
	uint8_t rec[64] = { 0 };
	uint64_t a1 = 1, a2 = 0x401000, pid = 99;
	memcpy(rec, &a1, 8);
	memcpy(rec + 8, &a2, 8);
	memcpy(rec + 16, &pid, 8);
	memcpy(rec + 24, in, 24);
	fake_send(c.o, p_syms, rec, 48);
	fake_send(c.o, e_time, NULL, 0);
	fake_send(c.o, p_after, NULL, 0);
	output_print_maps(c.o);
	char *want = read_golden("events.txt");
	CHECK_STR(cap_text(&c), want ? want : "(no events.txt)",
		  "events: print() of each type matches bpftrace");
	free(want);
	cap_close(&c);
	fake_fini(f);
}

static void t_join(void)
{
	struct fake fk, *f = &fk;
	fake_init(f);
	const struct type *str = t_str(f);
	const struct type *arr = t_tuple(f, 4, str, str, str, str);
	uint64_t j1 = ev_simple(f, EV_JOIN, " ", arr, -1);
	uint64_t j2 = ev_simple(f, EV_JOIN, ",", arr, -1);
	struct kb v = { .n = 0 };
	kb_str(&v, "mkdir");
	kb_str(&v, "-p");
	kb_str(&v, "b c");
	kb_str(&v, "");
	struct cap c;
	cap_open(&c, f, "text", false);
	fake_send(c.o, j1, v.b, v.n);
	fake_send(c.o, j2, v.b, v.n);
	CHECK_STR(cap_text(&c), "mkdir -p b c\nmkdir,-p,b c\n",
		  "events: join() stops at the first empty string");
	cap_close(&c);
	cap_open(&c, f, "json", false);
	fake_send(c.o, j2, v.b, v.n);
	CHECK_STR(cap_text(&c), "{\"type\": \"join\", \"data\": \"mkdir,-p,b c\"}\n",
		  "events: join() in JSON has no newline");
	cap_close(&c);
	fake_fini(f);
}

static void t_cat_system(void)
{
	struct fake fk, *f = &fk;
	fake_init(f);
	char path[] = "/tmp/sonde-cat-XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0 && write(fd, "no nl", 5) == 5, "events: temp file");
	close(fd);
	const struct type *one_str = t_tuple(f, 1, t_str(f));
	const struct type *one_int = t_tuple(f, 1, type_s64());
	uint64_t cat = ev_simple(f, EV_CAT, "%s", one_str, -1);
	uint64_t sys = ev_simple(f, EV_SYSTEM, "echo hi %d", one_int, -1);
	struct kb v = keys_(path);
	int64_t five = 5;
	struct cap c;
	cap_open(&c, f, "text", true);
	fake_send(c.o, cat, v.b, v.n);
	fake_send(c.o, sys, &five, 8);
	CHECK_STR(cap_text(&c), "no nlhi 5\n",
		  "events: cat() prints the file as it is; system() its output");
	cap_close(&c);
	cap_open(&c, f, "json", true);
	fake_send(c.o, cat, v.b, v.n);
	fake_send(c.o, sys, &five, 8);
	CHECK_STR(cap_text(&c), "{\"type\": \"cat\", \"data\": \"no nl\"}\n"
		  "{\"type\": \"syscall\", \"data\": \"hi 5\\n\"}\n",
		  "events: cat and system in JSON");
	cap_close(&c);
	/* without --unsafe the command never runs */
	cap_open(&c, f, "text", false);
	fake_send(c.o, sys, &five, 8);
	CHECK_STR(cap_text(&c), "", "events: system() refused without unsafe");
	cap_close(&c);
	unlink(path);
	fake_fini(f);
}

static void t_malformed(void)
{
	struct fake fk, *f = &fk;
	fake_init(f);
	const struct type *args = t_tuple(f, 2, type_s64(), t_str(f));
	uint64_t p = ev_simple(f, EV_PRINTF, "%d %s\n", args, -1);
	uint64_t ex = ev_simple(f, EV_EXIT, NULL, NULL, -1);
	uint64_t pm = ev_simple(f, EV_PRINT_MAP, NULL, NULL, 57);
	struct cap c;
	cap_open(&c, f, "text", false);
	uint8_t rec[256] = { 0 };
	memcpy(rec, &p, 8);
	CHECK(output_event(c.o, rec, 8 + args->size - 1) == -EINVAL,
	      "events: short record refused");
	CHECK(output_event(c.o, rec, 7) == -EINVAL, "events: record without id");
	uint64_t bad = 1000;
	memcpy(rec, &bad, 8);
	CHECK(output_event(c.o, rec, 64) == -EINVAL, "events: unknown event id");
	memcpy(rec, &pm, 8);
	CHECK(output_event(c.o, rec, 8) == -EINVAL, "events: print of unknown map");
	memcpy(rec, &ex, 8);
	CHECK(output_event(c.o, rec, 8) == 1, "events: exit() returns 1");
	memcpy(rec, &p, 8);
	CHECK(output_event(c.o, rec, 8 + args->size) == 0,
	      "events: full record accepted");
	CHECK_STR(cap_text(&c), "0 \n", "events: only the good record printed");
	cap_close(&c);
	fake_fini(f);
}

static void t_attach_lost(void)
{
	struct fake fk;
	fake_init(&fk);
	struct cap c;
	cap_open(&c, &fk, "text", false);
	output_attaching(c.o, 1);
	output_attaching(c.o, 2);
	output_lost(c.o, 1);
	output_lost(c.o, 1925);
	CHECK_STR(cap_text(&c), "Attaching 1 probe...\nAttaching 2 probes...\n"
		  "Lost 1 events\nLost 1925 events\n",
		  "events: Attaching and Lost lines as bpftrace");
	cap_close(&c);
	fake_fini(&fk);
}

/* The symbol/stack hooks: what the stacks part installs is used. */
static void hook_sym(void *ctx, struct sbuf *out, uint64_t addr, int64_t pid,
		     bool user, bool module)
{
	(void)ctx;
	sbuf_printf(out, "%s:%lld:%llx", user ? "u" : "k", (long long)pid,
		    (unsigned long long)addr);
}

static void hook_stack(void *ctx, struct sbuf *out, const struct type *t,
		       const uint8_t *data, unsigned indent)
{
	(void)ctx; (void)t; (void)data;
	sbuf_printf(out, "\n%*sframe\n", (int)indent, "");
}

static void t_hooks(void)
{
	struct fake fk, *f = &fk;
	fake_init(f);
	const struct type *ks = type_simple(&f->arena, TYPE_KSTACK, 8);
	const struct type *us = type_simple(&f->arena, TYPE_USYM, 16);
	struct fmap *m = fake_map(f, "@", t_tuple(f, 1, ks),
				  t_agg(f, TYPE_COUNT, false));
	uint64_t pv = ev_value(f, us);
	struct cap c;
	cap_open(&c, f, "text", false);
	struct output_hooks h = { .sym = hook_sym, .stack = hook_stack };
	output_set_hooks(c.o, &h);
	uint64_t a[2] = { 0xabc, 42 };
	fake_send(c.o, pv, a, 16);
	op_count(f, m, keyi(3));
	output_print_maps(c.o);
	CHECK_STR(cap_text(&c), "u:42:abc\n\n\n@[\n    frame\n]: 1\n",
		  "events: symbol and stack hooks, stack keys indented by 4");
	cap_close(&c);
	fake_fini(f);
}

static void t_username(void)
{
	struct fake fk, *f = &fk;
	fake_init(f);
	const struct type *ut = type_simple(&f->arena, TYPE_USERNAME, 8);
	uint64_t pv = ev_value(f, ut);
	struct cap c;
	cap_open(&c, f, "text", false);
	uint64_t uid = 0;
	fake_send(c.o, pv, &uid, 8);
	uid = 4000000000u;
	fake_send(c.o, pv, &uid, 8);
	CHECK_STR(cap_text(&c), "root\n\n",
		  "events: username from /etc/passwd, nothing when unknown");
	cap_close(&c);
	fake_fini(f);
}

/* Random bytes after each event id, of random lengths: every record is
 * either formatted or refused, and nothing reads out of bounds (run
 * under ASan by make SANITIZE=1). */
static void t_random_records(void)
{
	struct fake fk, *f = &fk;
	fake_init(f);
	const struct type *s64 = type_s64(), *str = t_str(f);
	const struct type *buf_t = type_simple(&f->arena, TYPE_BUF, 4 + 16);
	const struct type *all = t_tuple(f, 5, s64, str, buf_t,
					 t_int(f, 16, true),
					 t_tuple(f, 2, str, s64));
	ev_simple(f, EV_PRINTF, "%d %s %r %hx %s|%c%%\n", all, -1);
	ev_simple(f, EV_PRINTF, "%-10.3s %p %rh\n",
		  t_tuple(f, 3, str, s64, buf_t), -1);
	ev_value(f, all);
	ev_simple(f, EV_JOIN, ",", t_tuple(f, 3, str, str, str), -1);
	ev_simple(f, EV_TIME, "%H\n", NULL, -1);
	FILE *null = fopen("/dev/null", "w");
	struct output_opts oo = { .format = "text", .out = null };
	struct output *o[2];
	o[0] = output_new(&f->prog, &oo, &f->reader);
	oo.format = "json";
	o[1] = output_new(&f->prog, &oo, &f->reader);
	unsigned seed = 7;
	int bad = 0;
	for (int i = 0; i < 4000; i++) {
		uint8_t *rec = malloc(512);
		size_t len = 0;
		seed = seed * 1103515245 + 12345;
		uint64_t id = (seed >> 16) % 6;
		memcpy(rec, &id, 8);
		seed = seed * 1103515245 + 12345;
		len = 8 + (seed >> 16) % 300;
		for (size_t k = 8; k < len; k++) {
			seed = seed * 1103515245 + 12345;
			rec[k] = (uint8_t)(seed >> 16);
		}
		/* exactly `len` bytes, so ASan sees any read past the end */
		uint8_t *exact = malloc(len);
		memcpy(exact, rec, len);
		int r = output_event(o[i & 1], exact, len);
		if (r < 0 && r != -EINVAL)
			bad++;
		free(exact);
		free(rec);
	}
	CHECK(bad == 0, "events: random records formatted or refused");
	output_free(o[0]);
	output_free(o[1]);
	fclose(null);
	fake_fini(f);
}

/* -f finds a format by name; output_new refuses another name. */
static void t_format_names(void)
{
	struct fake fk, *f = &fk;
	fake_init(f);
	CHECK(output_format_exists("text") && output_format_exists("json") &&
	      !output_format_exists("dtrace") && !output_format_exists("") &&
	      !output_format_exists(NULL), "formats by name: text and json");
	CHECK_STR(output_format_names(), "'text', 'json'",
		  "formats: the names -f's error lists");
	CHECK(!output_format_log_line("text") &&
	      output_format_log_line("json") == output_json_log_line,
	      "formats: json writes sonde's own messages, text leaves them");
	FILE *null = fopen("/dev/null", "w");
	struct output_opts oo = { .format = "yaml", .out = null };
	errno = 0;
	struct output *o = output_new(&f->prog, &oo, &f->reader);
	CHECK(!o && errno == EINVAL, "output_new: an unknown format is EINVAL");
	output_free(o);
	oo.format = NULL;
	o = output_new(&f->prog, &oo, &f->reader);
	CHECK(o != NULL, "output_new: no format is text");
	output_free(o);
	fclose(null);
	fake_fini(f);
}

int main(void)
{
	t_format_names();
	t_random_records();
	t_username();
	t_events_golden();
	t_join();
	t_cat_system();
	t_malformed();
	t_attach_lost();
	t_hooks();
	return UNIT_DONE();
}
