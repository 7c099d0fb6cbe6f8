/* test_cg_ctype.c - C objects through codegen, run in the VM (interpreter
 * and JIT) against real memory: a struct laid out by this compiler (gcc),
 * described to sonde as the declaration parser or BTF would (offsets
 * from offsetof, bitfields as gcc packs them), then read by scripts with
 * ->, ., [], *p, bitfields, pointer chains and arithmetic, and printed
 * through output (text, map key and JSON). */
#include <stddef.h>

#include "cg_fixture.h"
#include "output/output.h"
#include "unit.h"

struct inner {
	short a;
	unsigned b : 3;
	int c : 5;
};

struct req {
	int x;
	long id;
	struct inner in;
	char name[8];
	unsigned char bytes[4];
	int arr[2][3];
	struct req *next;
	union {
		int u;
		char uc;
	};
};

static struct ctypes *types(struct arena *a)
{
	struct ctypes *r = ctypes_new(a);
	const struct ctype *i16 = ctype_int(a, 2, true, "short");
	const struct ctype *i32 = ctype_int(a, 4, true, "int");
	const struct ctype *u32 = ctype_int(a, 4, false, "unsigned int");
	const struct ctype *i64 = ctype_int(a, 8, true, "long");
	const struct ctype *chr = ctype_int(a, 1, true, "char");
	const struct ctype *u8 = ctype_int(a, 1, false, "unsigned char");
	struct ctype *in, *rq;
	ctypes_declare_tag(r, CT_STRUCT, "inner", &in);
	ctype_add_field(a, in, "a", i16, 0, 0);
	ctype_add_field(a, in, "b", u32, 16, 3);   /* gcc: after a, in a's unit */
	ctype_add_field(a, in, "c", i32, 19, 5);
	in->size = sizeof(struct inner);
	in->align = 4;
	in->complete = true;
	ctypes_declare_tag(r, CT_STRUCT, "req", &rq);
	struct ctype *un = ctype_new(a, CT_UNION, NULL);
	ctype_add_field(a, un, "u", i32, 0, 0);
	ctype_add_field(a, un, "uc", chr, 0, 0);
	un->size = un->align = 4;
	un->complete = true;
#define AT(f) (8 * (uint32_t)offsetof(struct req, f))
	ctype_add_field(a, rq, "x", i32, AT(x), 0);
	ctype_add_field(a, rq, "id", i64, AT(id), 0);
	ctype_add_field(a, rq, "in", in, AT(in), 0);
	ctype_add_field(a, rq, "name", ctype_array(a, chr, 8), AT(name), 0);
	ctype_add_field(a, rq, "bytes", ctype_array(a, u8, 4), AT(bytes), 0);
	ctype_add_field(a, rq, "arr",
			ctype_array(a, ctype_array(a, i32, 3), 2), AT(arr), 0);
	ctype_add_field(a, rq, "next", ctype_ptr(a, rq), AT(next), 0);
	ctype_add_field(a, rq, NULL, un, AT(u), 0);
	rq->size = sizeof(struct req);
	rq->align = 8;
	rq->complete = true;
	return r;
}

static struct req second = { .x = 42, .id = -7 };
static struct req first = {
	.x = 7, .id = 1234567890123, .in = { .a = -2, .b = 5, .c = -3 },
	.name = "alpha", .bytes = { 1, 2, 254, 4 },
	.arr = { { 1, 2, 3 }, { 4, 5, 6 } }, .next = &second, .u = 0x41,
};

/* Compile and run SCRIPT as a kprobe whose arg0 points at `first`. */
static int run(struct cgfx *f, struct emu *e, const char *script)
{
	memset(e, 0, sizeof(*e));   /* emu_free after a failed compile */
	if (cgfx_compile(f, script)) {
		diags_print(&f->d, stdout);
		return -1;
	}
	static uint64_t regs[21];
	regs[14] = (uint64_t)(uintptr_t)&first;   /* pt_regs di: arg0 */
	emu_init(e, &f->prog);
	e->tp_record = (const uint8_t *)regs;
	if (emu_run(e, 0) < 0) {
		printf("# %s\n", e->in.error);
		return -1;
	}
	return 0;
}

/* The text output makes of record `rec` (format 0 text, 1 json). */
static char *output_of(struct cgfx *f, struct emu *e, uint32_t rec, int json)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	struct output_opts oo = { .format = json ? "json" : "text",
				  .out = mem };
	struct output *o = output_new(&f->prog, &oo, NULL);
	if (rec < e->nrecords)
		output_event(o, e->records[rec], e->record_size[rec]);
	output_free(o);
	fclose(mem);
	return buf;
}

int main(void)
{
	struct arena ta;
	arena_init(&ta);
	cgfx_ctypes = types(&ta);
	struct cgfx f;
	struct emu e;

	int r = run(&f, &e, "kprobe:f { $r = (struct req *)arg0; "
		    "printf(\"%d %d %d %d %d %d %d %d %d %d %d %d\", "
		    "$r->x, $r->id, $r->in.a, $r->in.b, $r->in.c, $r->arr[1][2], "
		    "$r->next->x, $r->next->id, $r->uc, $r->bytes[2], "
		    "(*$r).arr[0][1], ($r + 1) - $r); }");
	CHECK(r == 0 && e.nrecords == 1, "members, bitfields, arrays, chains run");
	if (r == 0 && e.nrecords == 1) {
		int64_t want[] = { 7, 1234567890123, -2, 5, -3, 6, 42, -7, 0x41,
				   254, 2, (int64_t)sizeof(struct req) };
		for (unsigned i = 0; i < sizeof(want) / sizeof(*want); i++) {
			char name[64];
			snprintf(name, sizeof(name), "value %u is %lld", i,
				 (long long)want[i]);
			CHECK((int64_t)rec_u64(&e, 0, 8 + 8 * i) == want[i], name);
		}
	}
	bool user = false;
	for (uint32_t i = 0; i < e.ncalls && i < EMU_MAX_CALLS; i++)
		user = user || e.call_id[i] == BPF_FUNC_probe_read_kernel;
	CHECK(user, "a cast in a kprobe reads kernel memory");
	emu_free(&e);
	cgfx_free(&f);

	/* a variable index into a struct's array (remote memory) */
	r = run(&f, &e, "kprobe:f { $r = (struct req *)arg0; $i = 2; "
		"printf(\"%d %s\", $r->arr[1][$i], $r->name); }");
	CHECK(r == 0 && rec_u64(&e, 0, 8) == 6 &&
	      strcmp(rec_str(&e, 0, 16), "alpha") == 0,
	      "a variable index; a char array as a string");
	emu_free(&e);
	cgfx_free(&f);

	/* variable indices are bounded: outside [0, n) (negatives too) the
	 * element reads 0, never the memory beside the array; arrays the
	 * script holds (a struct value, an array variable, a map value) are
	 * indexed by variables too */
	r = run(&f, &e, "kprobe:f { $r = (struct req *)arg0; $i = 1; $j = 2; "
		"$big = 3; $neg = -1; $v = *$r; $a = $r->arr[1]; @m = $r->arr[0]; "
		"$row = @m; "
		"printf(\"%d %d %d %d %d %d %d %d %d %d\", $r->arr[$i][$j], "
		"$r->arr[$big][0], $r->arr[0][$neg], $r->bytes[$j + 2], "
		"$v.arr[$i][$j - 1], $v.arr[$i][$big], $a[$j], $a[$big], "
		"$row[$i], $v.bytes[$j - 1]); }");
	CHECK(r == 0 && e.nrecords == 1, "bounded variable indices run");
	if (r == 0 && e.nrecords == 1) {
		int64_t want[] = { 6, 0, 0, 0, 5, 0, 6, 0, 2, 2 };
		for (unsigned i = 0; i < sizeof(want) / sizeof(*want); i++) {
			char name[64];
			snprintf(name, sizeof(name), "bounded index value %u is %lld",
				 i, (long long)want[i]);
			CHECK((int64_t)rec_u64(&e, 0, 8 + 8 * i) == want[i], name);
		}
	}
	emu_free(&e);
	cgfx_free(&f);

	/* print(*p): the struct copied whole, printed as bpftrace prints */
	r = run(&f, &e, "kprobe:f { print(*(struct req *)arg0); }");
	CHECK(r == 0 && e.nrecords == 1, "print(*p) runs");
	if (r == 0 && e.nrecords == 1) {
		CHECK(e.record_size[0] >= 8 + sizeof(struct req) &&
		      memcmp(e.records[0] + 8, &first, offsetof(struct req, next)) == 0,
		      "the struct's bytes are copied in C layout");
		char *t = output_of(&f, &e, 0, 0);
		char want[512];
		snprintf(want, sizeof(want), "{ .x = 7, .id = 1234567890123, .in = "
			 "{ .a = -2, .b = 5, .c = -3 }, .name = alpha, .bytes = "
			 "[1,2,254,4], .arr = [[1,2,3],[4,5,6]], .next = %lld, "
			 ".u = 65, .uc = 65 }\n", (long long)(intptr_t)&second);
		CHECK_STR(t, want, "struct text");
		free(t);
		t = output_of(&f, &e, 0, 1);
		snprintf(want, sizeof(want), "{\"type\": \"value\", \"data\": "
			 "{ \"x\": 7, \"id\": 1234567890123, \"in\": { \"a\": -2, "
			 "\"b\": 5, \"c\": -3 }, \"name\": \"alpha\", \"bytes\": "
			 "[1,2,254,4], \"arr\": [[1,2,3],[4,5,6]], \"next\": %lld, "
			 "\"u\": 65, \"uc\": 65 }}\n", (long long)(intptr_t)&second);
		CHECK_STR(t, want, "struct json");
		free(t);
	}
	emu_free(&e);
	cgfx_free(&f);

	/* a struct value in a variable: '.' reads the copy */
	r = run(&f, &e, "kprobe:f { $s = ((struct req *)arg0)->in; "
		"printf(\"%d %d\", $s.a, $s.c); }");
	CHECK(r == 0 && (int64_t)rec_u64(&e, 0, 8) == -2 &&
	      (int64_t)rec_u64(&e, 0, 16) == -3, "members of a struct variable");
	emu_free(&e);
	cgfx_free(&f);

	/* uprobes: a cast points into user memory; uptr/kptr override */
	r = run(&f, &e, "uprobe:/bin/true:main { $r = (struct req *)arg0; "
		"printf(\"%d\", $r->x); }");
	user = false;
	for (uint32_t i = 0; i < e.ncalls && i < EMU_MAX_CALLS; i++)
		user = user || e.call_id[i] == BPF_FUNC_probe_read_user;
	CHECK(r == 0 && rec_u64(&e, 0, 8) == 7 && user,
	      "a cast in a uprobe reads user memory");
	emu_free(&e);
	cgfx_free(&f);
	r = run(&f, &e, "kprobe:f { printf(\"%d\", uptr((struct req *)arg0)->x); }");
	user = false;
	for (uint32_t i = 0; i < e.ncalls && i < EMU_MAX_CALLS; i++)
		user = user || e.call_id[i] == BPF_FUNC_probe_read_user;
	CHECK(r == 0 && rec_u64(&e, 0, 8) == 7 && user,
	      "uptr(): read with probe_read_user");
	emu_free(&e);
	cgfx_free(&f);

	/* a uprobe's args typed from DWARF (as cdecl's reader fills them):
	 * args->req->id follows the pointer into the target's memory */
	struct record_field rf = { .name = "req", .offset = 112, .size = 8,
				   .is_ptr = true, .decl = "struct req * req" };
	rf.ctype = ctype_ptr(&ta, ctypes_find_tag(cgfx_ctypes, CT_STRUCT, "req"));
	struct type rec = { .kind = TYPE_RECORD, .nfields = 1, .rfields = &rf };
	cgfx_args = &rec;
	r = run(&f, &e, "uprobe:/bin/true:main { printf(\"%d %s\", "
		"args->req->id, args->req->next->name); }");
	user = false;
	for (uint32_t i = 0; i < e.ncalls && i < EMU_MAX_CALLS; i++)
		user = user || e.call_id[i] == BPF_FUNC_probe_read_user;
	CHECK(r == 0 && rec_u64(&e, 0, 8) == 1234567890123 && user,
	      "uprobe args->req->id from a typed record reads user memory");
	emu_free(&e);
	cgfx_free(&f);
	cgfx_args = NULL;

	arena_free(&ta);
	return UNIT_DONE();
}
