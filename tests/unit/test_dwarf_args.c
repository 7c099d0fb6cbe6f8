/* test_dwarf_args.c - a function's parameters and their C types from
 * DWARF (elf/dwarf_args.c), on tests/progs/dwarf_args (built -O0 -g):
 * names and bpftrace-style type names, struct members at gcc's offsets,
 * bitfields, enums, arrays, typedefs and qualifiers followed, and what
 * happens without DWARF or without the function. */
#include <errno.h>

#include "base/arena.h"
#include "elf/elf.h"
#include "types.h"
#include "elf_testutil.h"
#include "unit.h"

int main(void)
{
	char path[4096];
	if (!test_prog_beside("dwarf_args", path, sizeof(path))) {
		printf("ok - dwarf_args # SKIP tests/progs/dwarf_args not built\n");
		return 0;
	}
	struct arena a;
	arena_init(&a);
	struct elf_param *p;
	uint32_t n;
	int r = elf_func_params(path, "handle", 0, &a, &p, &n);
	CHECK(r == 0 && n == 7, "handle has 7 parameters");
	if (r || n != 7)
		return UNIT_DONE();
	const char *names[] = { "req", "count", "msg", "big", "ratio", "c",
				"small" };
	const char *decls[] = { "req_t*", "int", "const char*",
				"long unsigned int", "double", "char",
				"int16_t" };
	bool same = true;
	for (int i = 0; i < 7; i++)
		same = same && !strcmp(p[i].name, names[i]) &&
			!strcmp(p[i].decl, decls[i]);
	CHECK(same, "names and types as bpftrace -lv shows them");

	const struct ctype *req = p[0].type;
	CHECK(req->kind == CT_PTR && req->size == 8, "req_t* is a pointer");
	const struct ctype *s = req->elem;
	CHECK(s && s->kind == CT_STRUCT && s->complete && s->size == 32 &&
	      !strcmp(s->name, "req"), "through the typedef: struct req, 32 bytes");
	uint32_t bits;
	const struct ctype_field *f = ctype_field_find(s, "path", &bits);
	CHECK(f && bits == 128 && f->type->kind == CT_PTR &&
	      f->type->elem->kind == CT_INT && f->type->elem->is_char,
	      "const char *path at 16: qualifier followed");
	f = ctype_field_find(s, "flags", &bits);
	CHECK(f && f->bit_size == 3 && bits == 192, "flags : 3 at bit 192");
	f = ctype_field_find(s, "color", &bits);
	CHECK(f && f->type->kind == CT_ENUM && f->type->size == 4 &&
	      bits == 224 && f->type->nvalues == 2 &&
	      f->type->values[1].value == 2, "enum color at 28, values");
	f = ctype_field_find(s, "in", &bits);
	const struct ctype *in = f ? f->type->elem : NULL;
	CHECK(in && in->kind == CT_STRUCT && in->size == 12,
	      "struct inner through a pointer member");
	f = in ? ctype_field_find(in, "name", &bits) : NULL;
	CHECK(f && ctype_is_char_array(f->type) && f->type->nelems == 8 &&
	      bits == 32, "char name[8] at 4");
	CHECK(p[1].type->kind == CT_INT && p[1].type->size == 4 &&
	      p[1].type->is_signed, "int count");
	CHECK(p[4].type->kind == CT_FLOAT && p[4].type->size == 8,
	      "double ratio");
	CHECK(p[6].type->kind == CT_INT && p[6].type->size == 2 &&
	      p[6].type->is_signed, "int16_t through its typedefs");

	r = elf_func_params(path, "no_such_function", 0, &a, &p, &n);
	CHECK(r == -ENOENT, "a function DWARF does not describe: -ENOENT");
	r = elf_func_params("/proc/self/status", "handle", 0, &a, &p, &n);
	CHECK(r == -ENODATA, "not an ELF file: -ENODATA");
	arena_free(&a);
	return UNIT_DONE();
}
