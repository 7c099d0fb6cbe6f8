/* test_resolve.c - values user space turns into text (output/resolve.c):
 * strftime() timestamps (boot time plus nsecs, %f, bpftrace's 64-byte
 * limit and its "(?)"), strerror(), macaddr() and cgroup_path() (the
 * hierarchies of this machine, found by inode number). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "output/output_int.h"
#include "unit.h"

static struct program prog;
static struct arena arena;

static struct sbuf b;

static const char *text_of(struct output *o, enum type_kind kind,
			   uint32_t size, const void *data)
{
	struct type t = { .kind = kind, .size = size };
	sbuf_free(&b);
	b = (struct sbuf){ 0 };
	value_text(o, &b, &t, data, VCTX_VALUE);
	return b.s ? b.s : "";
}

static const char *json_of(struct output *o, enum type_kind kind,
			   uint32_t size, const void *data)
{
	struct type t = { .kind = kind, .size = size };
	sbuf_free(&b);
	b = (struct sbuf){ 0 };
	json_value(o, &b, &t, data);
	return b.s ? b.s : "";
}

int main(void)
{
	arena_init(&arena);
	prog.arena = &arena;
	program_add_string(&prog, "%Y-%m-%d %H:%M:%S.%f");
	program_add_string(&prog, "");
	program_add_string(&prog, "%%f|%f");
	program_add_string(&prog, "unified");
	program_add_string(&prog, "no-such-hierarchy*");
	CHECK(program_add_string(&prog, "") == 1 && prog.nstrings == 5,
	      "program strings are kept once");

	FILE *devnull = fopen("/dev/null", "w");
	struct output_opts oo = { .format = "text", .out = devnull };
	struct output *o = output_new(&prog, &oo, NULL);
	CHECK(o && o->boottime_ok, "the output knows the boot time");

	/* nsecs 1.5 s after the boot time, rendered as the local time */
	uint64_t ts[2] = { 0, 1500000000ull };
	time_t sec = o->boottime.tv_sec + 1;
	long nsec = o->boottime.tv_nsec + 500000000L;
	if (nsec >= 1000000000L) {
		sec++;
		nsec -= 1000000000L;
	}
	struct tm tm;
	char want[96], day[64];
	localtime_r(&sec, &tm);
	strftime(day, sizeof(day), "%Y-%m-%d %H:%M:%S", &tm);
	snprintf(want, sizeof(want), "%s.%06ld", day, nsec / 1000);
	CHECK_STR(text_of(o, TYPE_TIMESTAMP, 16, ts), want,
		  "strftime: boot time + nsecs, %f the microseconds");
	ts[0] = 1;
	CHECK_STR(text_of(o, TYPE_TIMESTAMP, 16, ts), "(?)",
		  "strftime: an empty result is an error, printed (?)");
	ts[0] = 2;
	CHECK_STR(text_of(o, TYPE_TIMESTAMP, 16, ts), "(?)",
		  "strftime: %%f is replaced too, as in bpftrace (then invalid)");
	ts[0] = 99;
	CHECK_STR(text_of(o, TYPE_TIMESTAMP, 16, ts), "(?)",
		  "strftime: an unknown format index");
	CHECK_STR(json_of(o, TYPE_TIMESTAMP, 16, (uint64_t[]){ 1, 0 }),
		  "\"(?)\"", "strftime in JSON: a string");

	int64_t e = 2;
	CHECK_STR(text_of(o, TYPE_ERRNO, 8, &e), "No such file or directory",
		  "strerror(2)");
	e = -1;
	CHECK_STR(text_of(o, TYPE_ERRNO, 8, &e), "Unknown error -1",
		  "strerror(-1)");
	e = 1ll << 40;
	CHECK_STR(text_of(o, TYPE_ERRNO, 8, &e), "Unknown error 1099511627776",
		  "strerror of a number beyond int");
	e = 13;
	CHECK_STR(json_of(o, TYPE_ERRNO, 8, &e), "\"Permission denied\"",
		  "strerror in JSON: a string");

	const uint8_t mac[6] = { 0x18, 0xc0, 0x4d, 0x08, 0x2e, 0xbb };
	CHECK_STR(text_of(o, TYPE_MACADDR, 6, mac), "18:C0:4D:08:2E:BB",
		  "macaddr: upper-case hex");

	/* cgroup_path: the root of this machine's cgroup v2 mount, if any */
	FILE *m = fopen("/proc/mounts", "r");
	char line[4096], root[2048] = "";
	while (m && fgets(line, sizeof(line), m))
		if (sscanf(line, "cgroup2 %2047s", root) == 1)
			break;
	if (m)
		fclose(m);
	struct stat st;
	if (root[0] && stat(root, &st) == 0) {
		uint64_t cg[2] = { st.st_ino, 4 };   /* filter "unified" */
		CHECK_STR(text_of(o, TYPE_CGROUP_PATH, 16, cg), "unified:/",
			  "cgroup_path: the unified root, filtered");
		cg[1] = 5;
		CHECK_STR(text_of(o, TYPE_CGROUP_PATH, 16, cg), "",
			  "cgroup_path: a filter matching no hierarchy");
	} else {
		printf("ok - cgroup_path: no cgroup2 mount here # SKIP\n");
	}
	uint64_t none[2] = { 0x7ffffffffff0ull, 0 };
	CHECK_STR(text_of(o, TYPE_CGROUP_PATH, 16, none), "",
		  "cgroup_path: an id found nowhere prints nothing");
	CHECK_STR(json_of(o, TYPE_CGROUP_PATH, 16, none), "\"\"",
		  "cgroup_path in JSON: a string");

	output_free(o);
	fclose(devnull);
	arena_free(&arena);
	sbuf_free(&b);
	return UNIT_DONE();
}
