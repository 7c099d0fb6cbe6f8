/* test_ctypes.c - C types and the registry: declaration, completion of a
 * forward declaration, lookups through anonymous members, suggestions,
 * names, the resolver chain (asked once per name, declared names first)
 * and lazy pointees. */
#include <errno.h>
#include <stdlib.h>

#include "types.h"
#include "unit.h"

static int calls;

static const struct ctype *fake_tag(void *ctx, struct ctypes *reg,
				    enum ctype_kind kind, const char *name)
{
	calls++;
	if (strcmp(name, "task") != 0 || kind != CT_STRUCT)
		return NULL;
	struct arena *a = ctypes_arena(reg);
	struct ctype *t = ctype_new(a, CT_STRUCT, "task");
	const struct ctype *i32 = ctype_int(a, 4, true, "int");
	ctype_add_field(a, t, "pid", i32, 0, 0);
	/* a pointer whose pointee is left to the resolver */
	struct ctype *p = (struct ctype *)ctype_ptr(a, NULL);
	p->ref = 7;
	p->resolver = ctx;
	ctype_add_field(a, t, "parent", p, 64, 0);
	t->size = 16;
	t->align = 8;
	t->complete = true;
	return t;
}

static const struct ctype *fake_pointee(void *ctx, struct ctypes *reg,
					const struct ctype *ptr)
{
	calls++;
	return ptr->ref == 7 ? ctypes_find_tag(reg, CT_STRUCT, "task") : NULL;
}

static int fake_const(void *ctx, const char *name, int64_t *v)
{
	calls++;
	if (strcmp(name, "TASK_COMM_LEN") != 0)
		return -ENOENT;
	*v = 16;
	return 0;
}

int main(void)
{
	struct arena a;
	arena_init(&a);
	struct ctypes *r = ctypes_new(&a);

	/* struct s { int a; union { short x; char y; }; unsigned b:3, c:5; }; */
	struct ctype *s;
	CHECK(ctypes_declare_tag(r, CT_STRUCT, "s", &s) == 0 && s,
	      "declare struct s");
	CHECK(!ctypes_find_tag(r, CT_STRUCT, "s")->complete,
	      "a forward declaration is found, incomplete");
	struct ctype *again;
	CHECK(ctypes_declare_tag(r, CT_STRUCT, "s", &again) == 0 && again == s,
	      "declaring it again gives the same type to complete");
	CHECK(ctypes_declare_tag(r, CT_UNION, "s", &again) == -EEXIST,
	      "the tag taken by another kind is refused");
	const struct ctype *i32 = ctype_int(&a, 4, true, "int");
	const struct ctype *u32 = ctype_int(&a, 4, false, "unsigned int");
	struct ctype *u = ctype_new(&a, CT_UNION, NULL);
	ctype_add_field(&a, u, "x", ctype_int(&a, 2, true, "short"), 0, 0);
	ctype_add_field(&a, u, "y", ctype_int(&a, 1, true, "char"), 0, 0);
	u->size = u->align = 2;
	u->complete = true;
	ctype_add_field(&a, s, "a", i32, 0, 0);
	ctype_add_field(&a, s, NULL, u, 32, 0);
	ctype_add_field(&a, s, "b", u32, 64, 3);
	ctype_add_field(&a, s, "c", u32, 67, 5);
	s->size = 12;
	s->align = 4;
	s->complete = true;

	uint32_t bits = 0;
	const struct ctype_field *f = ctype_field_find(s, "y", &bits);
	CHECK(f && bits == 32 && f->type->is_char,
	      "a field of an anonymous union is found at its offset");
	f = ctype_field_find(s, "c", &bits);
	CHECK(f && bits == 67 && f->bit_size == 5 && f->offset == 8,
	      "bitfield: bit offset and width");
	CHECK(!ctype_field_find(s, "z", &bits), "no field z");
	CHECK_STR(ctype_field_suggest(s, "cc"), "c", "suggest c for cc");
	CHECK(ctype_field_suggest(s, "completely_else") == NULL,
	      "no suggestion when nothing is close");

	CHECK_STR(ctype_name(&a, ctype_ptr(&a, s)), "struct s *", "pointer name");
	CHECK_STR(ctype_name(&a, ctype_ptr(&a, ctype_ptr(&a, i32))), "int **",
		  "pointer to pointer name");
	const struct ctype *m = ctype_array(&a, ctype_array(&a, i32, 3), 2);
	CHECK(m->size == 24 && m->elem->nelems == 3, "int[2][3] is 24 bytes");
	CHECK(ctype_is_char_array(ctype_array(&a, ctype_int(&a, 1, true, "char"), 4)),
	      "char[4] is a char array");

	const struct type *vt = type_of_ctype(&a, s, AS_KERNEL);
	CHECK(vt && vt->kind == TYPE_STRUCT && vt->size == 12 && vt->ctype == s,
	      "a struct value keeps its C layout");
	vt = type_of_ctype(&a, ctype_array(&a, ctype_int(&a, 1, true, "char"), 16),
			   AS_KERNEL);
	CHECK(vt && vt->kind == TYPE_STR && vt->size == 16, "char[16] is a string");
	vt = type_of_ctype(&a, ctype_ptr(&a, s), AS_USER);
	CHECK(vt && vt->kind == TYPE_INT && vt->is_ptr && vt->space == AS_USER &&
	      vt->size == 8, "a pointer is an 8-byte integer with its C type");
	vt = type_of_ctype(&a, ctype_int(&a, 2, true, "short"), AS_KERNEL);
	CHECK(vt && vt->kind == TYPE_INT && vt->bits == 16 && vt->is_signed &&
	      vt->size == 8, "a short widens to the 8-byte layout");

	/* the resolver chain */
	struct ctype_resolver res = { .find_tag = fake_tag,
				      .pointee = fake_pointee,
				      .find_const = fake_const };
	res.ctx = &res;
	ctypes_add_resolver(r, &res);
	calls = 0;
	CHECK(ctypes_find_tag(r, CT_STRUCT, "s") == s && calls == 0,
	      "a declared complete type does not ask the resolvers");
	const struct ctype *task = ctypes_find_tag(r, CT_STRUCT, "task");
	CHECK(task && task->complete && calls == 1, "the resolver supplies task");
	CHECK(ctypes_find_tag(r, CT_STRUCT, "task") == task && calls == 1,
	      "and is asked once");
	CHECK(!ctypes_find_tag(r, CT_STRUCT, "nothere") && calls == 2 &&
	      !ctypes_find_tag(r, CT_STRUCT, "nothere") && calls == 2,
	      "a miss is remembered");
	f = ctype_field_find(task, "parent", &bits);
	CHECK(f && ctypes_pointee(r, f->type) == task,
	      "a lazy pointee is resolved on demand");
	int64_t v = 0;
	CHECK(ctypes_find_const(r, "TASK_COMM_LEN", &v) == 0 && v == 16,
	      "enum constants come from the resolver");
	CHECK(ctypes_add_const(r, "MINE", -3) == 0 &&
	      ctypes_find_const(r, "MINE", &v) == 0 && v == -3,
	      "declared enum constants");

	/* a header's forward declaration is completed from the resolver */
	struct arena b;
	arena_init(&b);
	struct ctypes *r2 = ctypes_new(&b);
	struct ctype *fwd;
	ctypes_declare_tag(r2, CT_STRUCT, "task", &fwd);
	ctypes_add_resolver(r2, &res);
	const struct ctype *c = ctypes_find_tag(r2, CT_STRUCT, "task");
	CHECK(c && c->complete && c != fwd,
	      "struct task; then a use: the resolver's complete type");
	CHECK(ctypes_complete(r2, fwd) == c, "ctypes_complete of the stub");
	CHECK(ctypes_add_typedef(r2, "task_t", c) == 0 &&
	      ctypes_find_typedef(r2, "task_t") == c, "typedef");
	arena_free(&b);
	arena_free(&a);
	return UNIT_DONE();
}
