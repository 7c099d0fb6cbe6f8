/* test_btf_types.c - kernel types from BTF through the program's type
 * registry: nothing is read for a script that names no type; struct
 * layouts, pointees (one C type per BTF type), enum constants and
 * typedefs come from the kernel's BTF; BPFTRACE_BTF names another file.
 * Skips (ok # SKIP) where the kernel has no BTF. */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compile.h"
#include "host/btf.h"
#include "unit.h"

static struct program *build(const char *text, struct diags *d,
			     struct diag_source *src)
{
	src->name = "test";
	src->text = text;
	diags_init(d, src);
	struct compile_opts o = { .name = "test", .text = text };
	return compile(&o, d);
}

/* In a child: with BPFTRACE_BTF=path, does sizeof(struct task_struct)
 * compile? Exit 0 yes, 1 no. */
static int with_btf_file(const char *path)
{
	pid_t pid = fork();
	if (pid == 0) {
		setenv("BPFTRACE_BTF", path, 1);
		struct diags d;
		struct diag_source src;
		struct program *p = build("BEGIN { print(sizeof(struct task_struct)); }",
					  &d, &src);
		int ok = p != NULL;
		program_free(p);
		diags_free(&d);
		_exit(ok ? 0 : 1);
	}
	int st = 0;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int main(void)
{
	if (access("/sys/kernel/btf/vmlinux", R_OK) != 0) {
		printf("ok - btf types # SKIP no /sys/kernel/btf/vmlinux\n");
		return 0;
	}
	/* first, in children: this process has not read BTF yet */
	CHECK(with_btf_file("/sys/kernel/btf/vmlinux") == 0,
	      "BPFTRACE_BTF names the file to read");
	CHECK(with_btf_file("/nonexistent/btf") == 1,
	      "BPFTRACE_BTF naming a missing file: the type is unknown");
	struct diags d;
	struct diag_source src;
	struct program *p = build("BEGIN { @x = 1; exit(); }", &d, &src);
	CHECK(p && !kbtf_loaded(), "a script without C types does not read BTF");
	program_free(p);
	diags_free(&d);

	p = build("BEGIN { print(curtask->pid); }", &d, &src);
	CHECK(p && kbtf_loaded(), "curtask->pid reads BTF");
	if (!p) {
		diags_print(&d, stdout);
		return UNIT_DONE();
	}
	struct ctypes *r = p->ctypes;
	const struct ctype *task = ctypes_find_tag(r, CT_STRUCT, "task_struct");
	CHECK(task && task->complete && task->size > 1000,
	      "struct task_struct is complete");
	uint32_t bits;
	const struct ctype_field *f = ctype_field_find(task, "pid", &bits);
	CHECK(f && f->type->kind == CT_INT && f->type->size == 4 &&
	      f->type->is_signed && bits % 32 == 0, "task_struct.pid is an int");
	f = ctype_field_find(task, "real_parent", &bits);
	CHECK(f && f->type->kind == CT_PTR && ctypes_pointee(r, f->type) == task,
	      "real_parent points to the same struct task_struct");
	const struct ctype *lh = ctypes_find_tag(r, CT_STRUCT, "list_head");
	const struct ctype_field *next = lh ? ctype_field_find(lh, "next", &bits) : NULL;
	CHECK(lh && lh->size == 16 && next && bits == 0 &&
	      ctype_field_find(lh, "prev", &bits) && bits == 64,
	      "struct list_head: next at 0, prev at 8");
	f = ctype_field_find(task, "comm", &bits);
	CHECK(f && ctype_is_char_array(f->type) && f->type->nelems == 16,
	      "task_struct.comm is char[16]");
	int64_t v = -1;
	CHECK(ctypes_find_const(r, "BPF_MAP_TYPE_HASH", &v) == 0 && v == 1,
	      "enum constant BPF_MAP_TYPE_HASH is 1");
	const struct ctype *u32 = ctypes_find_typedef(r, "u32");
	CHECK(u32 && u32->kind == CT_INT && u32->size == 4 && !u32->is_signed,
	      "typedef u32");
	CHECK(!ctypes_find_tag(r, CT_STRUCT, "no_such_struct_sonde"),
	      "an unknown struct is not found");
	program_free(p);
	diags_free(&d);

	return UNIT_DONE();
}
