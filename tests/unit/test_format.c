/* test_format.c - printf formatting against bpftrace 0.17. Each case is
 * one printf of tests/data/output/printf.bt; its expected text is the
 * line bpftrace printed for it (tests/data/output/printf.txt). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_maps.h"
#include "output/output_int.h"
#include "unit.h"

/* An argument: 'i' integer (bits, signed, value), 's' string, 'b' buffer. */
struct arg {
	char kind;
	unsigned bits;
	bool sg;
	int64_t v;
	const char *s;
	size_t n;
};

#define I(x) { 'i', 64, true, (x), NULL, 0 }
#define IT(b, sg, x) { 'i', (b), (sg), (x), NULL, 0 }
#define S(x) { 's', 0, false, 0, (x), 0 }
#define B(x, len) { 'b', 0, false, 0, (x), (len) }
#define END { 0, 0, false, 0, NULL, 0 }

struct fcase {
	const char *fmt;
	struct arg args[12];
};

static const struct fcase cases[] = {
	{ "%d %u %x %X %o|\n", { I(-42), I(-42), I(-42), I(-42), I(-42), END } },
	{ "%hhd %hhu %hhx %hd %hu %hx|\n",
	  { I(-42), I(-42), I(-42), I(-42), I(-42), I(-42), END } },
	{ "%ld %lu %lx %lld %llu %llx|\n",
	  { I(-42), I(-42), I(-42), I(-42), I(-42), I(-42), END } },
	{ "%jd %zd %td %zu %jx|\n", { I(-42), I(-42), I(-42), I(-42), I(-42), END } },
	{ "%hhd %hd %hhu|\n", { I(300), I(70000), I(300), END } },
	{ "%d %d|\n", { I(INT64_MIN), I(INT64_MAX), END } },
	{ "%ld %ld|\n", { I(INT64_MIN), I(INT64_MAX), END } },
	{ "%d %u %x|\n", { I(4294967301), I(4294967301), I(4294967301), END } },
	{ "%u|\n", { I(-1), END } },
	{ "%d %d %d %d|\n", { IT(8, true, -1), IT(8, false, 255),
			      IT(32, true, -1), IT(32, false, 0xffffffff), END } },
	{ "%u %u %u %u|\n", { IT(8, true, -1), IT(8, false, 255),
			      IT(32, true, -1), IT(32, false, 0xffffffff), END } },
	{ "%x %lx %lu %ld|\n", { IT(8, true, -1), IT(8, true, -1),
				 IT(32, true, -1), IT(32, false, 0xffffffff), END } },
	{ "%c|%5c|%-5c|%c|\n", { I(65), I(66), I(67), I(321), END } },
	{ "a%cb|\n", { I(0), END } },
	{ "x%cy%dz|\n", { I(0), I(5), END } },
	{ "%p|%20p|%-20p|%5.3p|%p|\n", { I(4096), I(4096), I(0), I(65), I(-1), END } },
	{ "%s|%10s|%-10s|%.2s|%10.2s|%-6.1s|\n",
	  { S("abc"), S("abc"), S("abc"), S("abc"), S("abc"), S("abc"), END } },
	{ "%5d|%-5d|%05d|%.3d|%8.3d|%-05d|%08.3d|%.0d|%08x|%-08d|\n",
	  { I(42), I(42), I(42), I(42), I(42), I(42), I(42), I(42), I(42),
	    I(42), END } },
	{ "100%%\n", { END } },
	{ "%d%%|\n", { I(7), END } },
	{ "%%%d|\n", { I(7), END } },
	{ "%s %d|\n", { S("x%%y"), I(3), END } },
	{ "%d%% of %d%%\n", { I(1), I(2), END } },
	{ "no args 50%% done\n", { END } },
	{ "[%r] [%rx] [%rh]\n", { B("ab\x01\xff" "c", 5), B("ab\x01\xff" "c", 5),
				  B("ab\x01\xff" "c", 5), END } },
	{ "%s|%s|\n", { S(""), S("tab\there"), END } },
	{ "%d %s %d\n", { I(1), S("two"), I(3), END } },
};

/* Build the argument tuple and the record bytes the way codegen lays
 * them out (types.h). */
static const struct type *build(struct fake *f, const struct arg *a,
				uint8_t *data, size_t *size)
{
	const struct type *fields[12];
	uint32_t n = 0;
	for (; a[n].kind; n++) {
		switch (a[n].kind) {
		case 'i':
			fields[n] = type_int(&f->arena, a[n].bits, a[n].sg);
			break;
		case 's':
			fields[n] = type_str(&f->arena, FAKE_STRLEN);
			break;
		default:
			fields[n] = type_simple(&f->arena, TYPE_BUF,
						4 + FAKE_STRLEN);
		}
	}
	if (n == 0) {
		*size = 0;
		return NULL;
	}
	const struct type *t = type_tuple(&f->arena, n, fields);
	memset(data, 0, t->size);
	for (uint32_t i = 0; i < n; i++) {
		uint8_t *p = data + t->offsets[i];
		if (a[i].kind == 'i') {
			memcpy(p, &a[i].v, 8);
		} else if (a[i].kind == 's') {
			strncpy((char *)p, a[i].s, FAKE_STRLEN - 1);
		} else {
			uint32_t len = (uint32_t)a[i].n;
			memcpy(p, &len, 4);
			memcpy(p + 4, a[i].s, a[i].n);
		}
	}
	*size = t->size;
	return t;
}

static void t_golden(void)
{
	char *want = read_golden("printf.txt");
	if (!want) {
		CHECK(0, "format: read tests/data/output/printf.txt");
		return;
	}
	/* skip "Attaching 1 probe..." */
	char *line = strchr(want, '\n');
	line = line ? line + 1 : want;
	struct fake f;
	fake_init(&f);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *nl = strchr(line, '\n');
		if (!nl) {
			CHECK(0, "format: golden has a line per case");
			break;
		}
		*nl = '\0';
		uint8_t data[2048];
		size_t size;
		const struct type *t = build(&f, cases[i].args, data, &size);
		struct sbuf out = { 0 };
		int r = fmt_format(NULL, &out, cases[i].fmt, t, data, size);
		/* the golden lines lost their newline to strchr */
		if (out.n && out.s[out.n - 1] == '\n')
			sbuf_truncate(&out, out.n - 1);
		char name[128];
		snprintf(name, sizeof(name), "format: printf(\"%.40s\")",
			 cases[i].fmt);
		for (char *p = name; *p; p++)
			if (*p == '\n' || *p == '\t')
				*p = ' ';
		CHECK(r == 0, name);
		CHECK_STR(out.s ? out.s : "", line, name);
		sbuf_free(&out);
		line = nl + 1;
	}
	fake_fini(&f);
	free(want);
}

static void t_short_record(void)
{
	struct fake f;
	fake_init(&f);
	struct arg a[] = { I(1), S("x"), END };
	uint8_t data[256];
	size_t size;
	const struct type *t = build(&f, a, data, &size);
	struct sbuf out = { 0 };
	int r = fmt_format(NULL, &out, "%d %s\n", t, data, size - 1);
	CHECK(r == -EINVAL, "format: a record shorter than its arguments is refused");
	sbuf_free(&out);
	fake_fini(&f);
}

static void t_spec_parse(void)
{
	struct fmt_spec s;
	CHECK(fmt_parse_spec("%-08.3lld", &s) == 9 && s.conv == 'd' &&
	      s.width == 8 && s.prec == 3 && strcmp(s.length, "ll") == 0 &&
	      strchr(s.flags, '-') && strchr(s.flags, '0'),
	      "format: parse %-08.3lld");
	CHECK(fmt_parse_spec("%%d", &s) == 0, "format: %% is not a conversion");
	CHECK(fmt_parse_spec("%rx", &s) == 3 && s.conv == 'r' && s.rmode == 'x',
	      "format: %rx is one conversion");
	CHECK(fmt_parse_spec("%q", &s) == 0, "format: unknown conversion");
	CHECK(fmt_parse_spec("%99999999999d", &s) && s.width == 65536,
	      "format: huge widths are capped");
}

/* Extra conversions sonde's checker allows but bpftrace does not: they
 * behave as in C. */
static void t_c_flags(void)
{
	struct fake f;
	fake_init(&f);
	struct arg a[] = { I(42), I(42), I(255), I(8), I(-3), END };
	uint8_t data[256];
	size_t size;
	const struct type *t = build(&f, a, data, &size);
	struct sbuf out = { 0 };
	fmt_format(NULL, &out, "%+d|% d|%#x|%#o|%i|", t, data, size);
	CHECK_STR(out.s, "+42| 42|0xff|010|-3|", "format: C flags + space #, %i");
	sbuf_free(&out);
	fake_fini(&f);
}

/* The common conversions are formatted without snprintf (fmt_int's and
 * fmt_text's fast paths): they must print exactly what snprintf prints,
 * for every flag, width and length modifier they take. */
static void t_fast_paths(void)
{
	static const int64_t vals[] = {
		0, 1, -1, 7, -7, 42, -42, 127, -128, 255, 256, 32767, -32768,
		65535, 65536, 2147483647, -2147483647 - 1, 4294967295ll,
		4294967296ll, 1234567890123ll, -1234567890123ll, INT64_MAX,
		INT64_MIN,
	};
	static const char *const flags[] = { "", "-", "0", "-0", "0-" };
	static const char *const lens[] = { "", "hh", "h", "l", "ll", "z", "j" };
	static const char convs[] = "diuxXo";
	unsigned bad = 0, n = 0;
	char spec_text[32], want[128];
	for (size_t c = 0; c < sizeof(convs) - 1; c++)
	for (size_t l = 0; l < sizeof(lens) / sizeof(*lens); l++)
	for (size_t fl = 0; fl < sizeof(flags) / sizeof(*flags); fl++)
	for (int w = -1; w <= 22; w += 1)
	for (size_t v = 0; v < sizeof(vals) / sizeof(*vals); v++) {
		if (w >= 0)
			snprintf(spec_text, sizeof(spec_text), "%%%s%d%s%c",
				 flags[fl], w, lens[l], convs[c]);
		else
			snprintf(spec_text, sizeof(spec_text), "%%%s%s%c",
				 flags[fl], lens[l], convs[c]);
		struct fmt_spec sp;
		if (!fmt_parse_spec(spec_text, &sp)) {
			bad++;
			continue;
		}
		/* what C prints, the value read as the length says */
		char cf[40];
		bool wide = strpbrk(lens[l], "lzj") != NULL;
		if (w >= 0)
			snprintf(cf, sizeof(cf), "%%%s%d%s%c", flags[fl], w,
				 wide ? "ll" : lens[l], convs[c]);
		else
			snprintf(cf, sizeof(cf), "%%%s%s%c", flags[fl],
				 wide ? "ll" : lens[l], convs[c]);
		uint64_t x = (uint64_t)vals[v];
		bool sgn = convs[c] == 'd' || convs[c] == 'i';
		if (wide)
			snprintf(want, sizeof(want), cf, sgn ? (long long)x :
				 (long long)(unsigned long long)x);
		else
			snprintf(want, sizeof(want), cf, sgn ? (int)(uint32_t)x :
				 (int)(unsigned)(uint32_t)x);
		struct sbuf out = { 0 };
		fmt_int(&out, &sp, x, NULL);
		n++;
		if (strcmp(out.s ? out.s : "", want) != 0) {
			if (bad++ < 5)
				printf("#   %s of %lld: got [%s] want [%s]\n",
				       spec_text, (long long)vals[v],
				       out.s ? out.s : "", want);
		}
		sbuf_free(&out);
	}
	CHECK(bad == 0 && n > 20000,
	      "format: integers without snprintf print as snprintf does");

	static const char *const strs[] = { "", "a", "abc", "hello world" };
	bad = n = 0;
	for (size_t i = 0; i < sizeof(strs) / sizeof(*strs); i++)
	for (int left = 0; left < 2; left++)
	for (int w = -1; w <= 14; w++)
	for (int pr = -1; pr <= 12; pr++) {
		char f[32] = "%";
		if (left)
			strcat(f, "-");
		if (w >= 0)
			snprintf(f + strlen(f), sizeof(f) - strlen(f), "%d", w);
		if (pr >= 0)
			snprintf(f + strlen(f), sizeof(f) - strlen(f), ".%d", pr);
		strcat(f, "s");
		snprintf(want, sizeof(want), f, strs[i]);
		struct fake fk;
		fake_init(&fk);
		struct arg a[] = { S(strs[i]), END };
		uint8_t data[256];
		size_t size;
		const struct type *t = build(&fk, a, data, &size);
		struct sbuf out = { 0 };
		fmt_format(NULL, &out, f, t, data, size);
		n++;
		if (strcmp(out.s ? out.s : "", want) != 0 && bad++ < 5)
			printf("#   %s of '%s': got [%s] want [%s]\n", f,
			       strs[i], out.s ? out.s : "", want);
		sbuf_free(&out);
		fake_fini(&fk);
	}
	CHECK(bad == 0 && n > 1000,
	      "format: strings without snprintf print as snprintf does");
}

int main(void)
{
	t_spec_parse();
	t_golden();
	t_short_record();
	t_c_flags();
	t_fast_paths();
	return UNIT_DONE();
}
