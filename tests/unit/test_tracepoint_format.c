/* test_tracepoint_format.c - tracefs format files (copies from a 6.18
 * kernel in tests/data/tracepoint/) parsed into `args` record fields. */
#include <errno.h>
#include <glob.h>
#include <stdlib.h>

#include "base/file.h"
#include "probes/tracepoint_format.h"
#include "unit.h"

static char *slurp(const char *name)
{
	const char *root = getenv("SONDE_SRCDIR");
	char path[512];
	snprintf(path, sizeof(path), "%s/tests/data/tracepoint/%s",
		 root ? root : ".", name);
	return file_read(path, NULL);
}

static const struct record_field *field(const struct type *t, const char *name)
{
	for (uint32_t i = 0; t && i < t->nfields; i++)
		if (strcmp(t->rfields[i].name, name) == 0)
			return &t->rfields[i];
	return NULL;
}

static void test_sys_enter_read(struct arena *a)
{
	char *text = slurp("syscalls_sys_enter_read.format");
	const struct type *t = text ? tp_format_type(a, text) : NULL;
	CHECK(t && t->kind == TYPE_RECORD, "read: a record");
	CHECK(t && t->nfields == 4, "read: common_ fields skipped, 4 left");
	CHECK(t && t->size == 40, "read: size to the end of the last field");
	const struct record_field *f = field(t, "__syscall_nr");
	CHECK(f && f->offset == 8 && f->size == 4 && f->is_signed,
	      "read: __syscall_nr int at 8, signed");
	f = field(t, "fd");
	/* Declared "unsigned int" but stored in 8 bytes: size wins. */
	CHECK(f && f->offset == 16 && f->size == 8 && !f->is_signed &&
	      !f->is_ptr, "read: fd takes the format's size");
	f = field(t, "buf");
	CHECK(f && f->is_ptr && f->size == 8 && !f->is_char_array,
	      "read: char * buf is a pointer, not a string");
	CHECK_STR(f ? f->decl : NULL, "char * buf", "read: decl kept for -lv");
	CHECK(field(t, "common_pid") == NULL, "read: no common_pid");
	free(text);
}

static void test_sched_switch(struct arena *a)
{
	char *text = slurp("sched_sched_switch.format");
	const struct type *t = text ? tp_format_type(a, text) : NULL;
	CHECK(t && t->nfields == 7, "switch: 7 fields");
	const struct record_field *f = field(t, "prev_comm");
	CHECK(f && f->is_char_array && f->array_len == 16 && f->size == 16 &&
	      f->offset == 8, "switch: char prev_comm[16] is a string");
	f = field(t, "prev_state");
	CHECK(f && f->is_signed && f->size == 8 && f->offset == 32,
	      "switch: long prev_state signed 8 bytes");
	f = field(t, "next_pid");
	CHECK(f && f->is_signed && f->size == 4 && f->offset == 56,
	      "switch: pid_t next_pid");
	CHECK_STR(f ? field(t, "prev_comm")->decl : NULL, "char prev_comm[16]",
		  "switch: decl keeps the bound");
	CHECK(t && strcmp(t->rfields[0].name, "prev_comm") == 0 &&
	      strcmp(t->rfields[6].name, "next_prio") == 0,
	      "switch: file order kept");
	free(text);
}

static void test_data_loc(struct arena *a)
{
	char *text = slurp("sched_sched_process_exec.format");
	const struct type *t = text ? tp_format_type(a, text) : NULL;
	const struct record_field *f = field(t, "filename");
	CHECK(f && f->is_data_loc && f->size == 4 && f->offset == 8 &&
	      f->is_char_array && !f->is_ptr && f->array_len == 0,
	      "exec: __data_loc char[] filename");
	f = field(t, "old_pid");
	CHECK(f && !f->is_data_loc && f->offset == 16, "exec: old_pid after it");
	free(text);
}

static void test_arrays_and_pointers(struct arena *a)
{
	char *text = slurp("sock_inet_sock_set_state.format");
	const struct type *t = text ? tp_format_type(a, text) : NULL;
	const struct record_field *f = field(t, "saddr_v6");
	CHECK(f && !f->is_char_array && f->array_len == 16 && f->size == 16,
	      "sock: __u8 saddr_v6[16] is an array, not a string");
	f = field(t, "skaddr");
	CHECK(f && f->is_ptr, "sock: const void * skaddr is a pointer");
	f = field(t, "sport");
	CHECK(f && f->size == 2 && !f->is_signed, "sock: __u16 sport");
	free(text);

	text = slurp("syscalls_sys_enter_execve.format");
	t = text ? tp_format_type(a, text) : NULL;
	f = field(t, "argv");
	CHECK(f && f->is_ptr && f->size == 8,
	      "execve: const char *const * argv is a pointer");
	f = field(t, "filename");
	CHECK(f && f->is_ptr && !f->is_char_array,
	      "execve: const char * filename is a pointer");
	free(text);
}

static void test_edge_cases(struct arena *a)
{
	struct record_field *f;
	uint32_t n, size;
	const char *synthetic =
		"name: x\nID: 1\nformat:\n"
		"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
		"\n"
		"\tfield:unsigned long args[];\toffset:8;\tsize:0;\tsigned:0;\n"
		"\tfield:u8 fsid[FSID_LEN];\toffset:8;\tsize:16;\tsigned:0;\n"
		"\tfield:u32 words[sizeof(x)];\toffset:24;\tsize:8;\tsigned:0;\n"
		"\tfield:const char name[32];\toffset:32;\tsize:32;\tsigned:0;\n"
		"\n"
		"print fmt: \"%d\", REC->x\n";
	int r = tp_format_parse(a, synthetic, &f, &n, &size);
	CHECK(r == 0 && n == 4 && size == 64, "synthetic: parses, 4 fields");
	if (r == 0 && n == 4) {
		CHECK(f[0].array_len == 0 && f[0].size == 0,
		      "synthetic: flexible array args[]");
		CHECK(f[1].array_len == 16, "synthetic: symbolic bound, u8 elements");
		CHECK(f[2].array_len == 2, "synthetic: symbolic bound, u32 elements");
		CHECK(f[3].is_char_array && f[3].array_len == 32,
		      "synthetic: const char[32] is a string");
	}
	CHECK(tp_format_parse(a, "name: x\nID: 1\n", &f, &n, &size) == -EINVAL,
	      "no format section: -EINVAL");
	CHECK(tp_format_parse(a, "format:\n\tfield:int;\toffset:0;\tsize:4;\n",
			      &f, &n, &size) == -EINVAL,
	      "a field without a name: -EINVAL");
	CHECK(tp_format_parse(a, "format:\n\tfield:int x;\tsize:4;\n",
			      &f, &n, &size) == -EINVAL,
	      "a field without an offset: -EINVAL");
	errno = 0;
	CHECK(tp_format_type(a, "garbage") == NULL && errno == EINVAL,
	      "tp_format_type: NULL and errno on garbage");
}

/* Every format on this machine, when tracefs is readable. */
static void test_all_local(struct arena *a)
{
	glob_t g;
	if (glob("/sys/kernel/tracing/events/*/*/format", 0, NULL, &g) != 0) {
		printf("ok - local formats # SKIP tracefs not readable\n");
		return;
	}
	size_t bad = 0, read = 0;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		FILE *f = fopen(g.gl_pathv[i], "r");
		if (!f)
			continue;
		static char buf[65536];
		size_t n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[n] = '\0';
		read++;
		if (!tp_format_type(a, buf)) {
			if (bad++ < 5)
				printf("#   cannot parse %s\n", g.gl_pathv[i]);
		}
	}
	globfree(&g);
	if (!read)
		printf("ok - local formats # SKIP none readable\n");
	else
		CHECK(bad == 0, "every format file of this kernel parses");
}

int main(void)
{
	struct arena a;
	arena_init(&a);
	test_sys_enter_read(&a);
	test_sched_switch(&a);
	test_data_loc(&a);
	test_arrays_and_pointers(&a);
	test_edge_cases(&a);
	test_all_local(&a);
	arena_free(&a);
	return UNIT_DONE();
}
