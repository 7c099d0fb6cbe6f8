/* test_sema.c - the semantic pass: expression types, variables, maps and
 * their specs, calls and their events, positional parameters, args
 * fields, and the error tags. */
#include "funcs/func.h"
#include "lang_fixture.h"
#include "unit.h"

static struct lang_fx F;

static int run(const char *text)
{
	lang_fx_free(&F);
	return lang_fx_run(&F, text, NULL, 0, false);
}

/* The statement i of probe block b. */
static struct node *stmt(uint32_t b, uint32_t i)
{
	return F.root->u.list.v[b]->u.probe.body->u.list.v[i];
}

/* The value of assignment statement i in block 0. */
static struct node *value(uint32_t i)
{
	return stmt(0, i)->u.assign.value;
}

static const char *tn(const struct type *t)
{
	return t ? type_name(&F.a, t) : "(null)";
}

static const struct map_spec *map(const char *name)
{
	int i = program_find_map(&F.prog, name);
	return i >= 0 ? &F.prog.maps[i] : NULL;
}

static bool fails(const char *text, const char *tag)
{
	run(text);
	bool r = F.rc < 0 && diags_has(&F.d, tag);
	if (!r) {
		printf("# rc %d for: %s\n", F.rc, text);
		diags_print(&F.d, stdout);
	}
	return r;
}

static bool passes(const char *text)
{
	run(text);
	if (F.rc)
		diags_print(&F.d, stdout);
	return F.rc == 0;
}

int main(void)
{
	lang_fx_run(&F, "BEGIN {}", NULL, 0, false);

	/* expression types */
	CHECK(passes("BEGIN { $a = 1; $b = pid; $c = 1 < 2; $d = -1 + pid; "
		     "$e = (int8)5; $f = comm; $g = \"abc\"; $h = nsecs; "
		     "$i = !1; $j = (uint16)pid * 2; $k = \"a\" == \"b\"; "
		     "$l = elapsed; $m = cpu; $n = rand; $o = cgroup }"),
	      "builtins and operators check");
	CHECK_STR(tn(value(0)->type), "int64", "literal is int64");
	CHECK_STR(tn(value(1)->type), "uint64", "pid is uint64");
	CHECK_STR(tn(value(2)->type), "int64", "int64 < int64 is int64");
	CHECK_STR(tn(value(3)->type), "uint64", "signed + unsigned is uint64");
	CHECK_STR(tn(value(4)->type), "int8", "cast sets bits and sign");
	CHECK_STR(tn(value(5)->type), "string[16]", "comm is string[16]");
	CHECK_STR(tn(value(6)->type), "string[4]", "literal is string[len+1]");
	CHECK_STR(tn(value(8)->type), "int64", "! keeps int64");
	CHECK_STR(tn(value(9)->type), "uint64", "uint16 * int64 is uint64");
	CHECK_STR(tn(value(10)->type), "uint64", "string == string is uint64");
	struct node *p0 = F.root->u.list.v[0];
	CHECK(p0->u.probe.nvars == 15, "one slot per variable");
	CHECK(stmt(0, 4)->u.assign.target->u.var.slot == 4, "slots in order");

	CHECK(passes("BEGIN { $s = \"ab\"; print($s); $s = comm; }"),
	      "strings of different sizes unify");
	CHECK_STR(tn(F.root->u.list.v[0]->u.probe.var_types[0]), "string[16]",
		  "variable widened to the larger string");
	CHECK_STR(tn(stmt(0, 1)->u.expr_stmt.expr->u.call.args.v[0]->type),
		  "string[16]", "reads see the unified type");

	CHECK(passes("BEGIN { $t = (1, \"two\", pid); $x = $t.1; $y = $t.2 }"),
	      "tuples");
	CHECK_STR(tn(value(0)->type), "(int64, string[4], uint64)", "tuple type");
	CHECK(value(0)->type->size == 24 && value(0)->type->offsets[2] == 16,
	      "tuple layout");
	CHECK_STR(tn(value(1)->type), "string[4]", "tuple index type");

	/* variables */
	CHECK(fails("BEGIN { $x = $y }", "UNDEF_VAR"), "undefined variable");
	CHECK(fails("BEGIN { $x = 1 } END { $y = $x }", "UNDEF_VAR"),
	      "variables are per probe");
	CHECK(fails("BEGIN { $x += 1 }", "UNDEF_VAR"),
	      "compound assignment needs a defined variable");
	CHECK(passes("BEGIN { if (1) { $y = 1; } $x = $y; }"),
	      "assignment in an earlier branch defines (textual order)");
	CHECK(fails("BEGIN { $z = \"a\"; $z = 1 }", "TYPE_MISMATCH"),
	      "variable type mismatch");
	run("BEGIN { $z = \"a\";\n  $z = 1 }");
	CHECK(F.d.list.n == 1 && F.d.list.v[0].pos.line == 2 &&
	      F.d.list.v[0].pos.col == 3, "mismatch reported at the second "
	      "assignment");
	CHECK(fails("BEGIN { $x = exit() }", "TYPE_MISMATCH"),
	      "no value to assign");

	/* maps */
	CHECK(passes("BEGIN { @b = 1; @a[1, \"x\"] = \"s\"; @c = count(); "
		     "@ = sum(-5); @h[comm] = hist(3); @l = lhist(5, 0, 100, 10);"
		     " @m = min(pid); @v = avg(1); @st = stats(2); @x = max(2) }"),
	      "maps of every kind");
	const struct map_spec *m = map("@a");
	CHECK(m && m->nkeys == 2 && m->key_size == 16 &&
	      !strcmp(tn(m->key_type), "(int64, string[2])") &&
	      m->kind == MAP_HASH && m->value_size == 2 &&
	      m->max_entries == 4096, "keyed map spec");
	m = map("@b");
	CHECK(m && m->nkeys == 0 && !m->key_type && m->key_size == 8 &&
	      m->value_size == 8 && m->kind == MAP_HASH, "scalar map spec");
	m = map("@c");
	CHECK(m && m->kind == MAP_PERCPU_ARRAY && m->value_type->kind ==
	      TYPE_COUNT && m->value_size == 8 && m->key_size == 4 &&
	      m->max_entries == 1, "keyless count(): a per-CPU array's slot");
	m = map("@");
	CHECK(m && m->value_type->kind == TYPE_SUM && m->value_type->is_signed,
	      "anonymous sum map, signed");
	m = map("@h");
	CHECK(m && m->key_size == 16 + 8 && m->value_size == 8 &&
	      m->value_type->kind == TYPE_HIST, "hist key carries a bucket");
	m = map("@l");
	CHECK(m && m->key_size == 16 && m->value_type->lhist_min == 0 &&
	      m->value_type->lhist_max == 100 && m->value_type->lhist_step == 10,
	      "lhist parameters");
	/* keyless maps hold one entry, or one per bucket */
	CHECK(map("@b")->max_entries == 1 && map("@c")->max_entries == 1 &&
	      map("@st")->max_entries == 1, "keyless maps: one entry");
	CHECK(map("@h")->max_entries == 4096, "keyed hist: default size");
	CHECK(map("@l")->max_entries == 12, "keyless lhist: (100-0)/10 + 2 "
	      "buckets");
	m = map("@m");
	CHECK(m && m->value_size == 16 && !m->value_type->is_signed,
	      "min of unsigned");
	CHECK(map("@v")->value_size == 16 && map("@st")->value_size == 16 &&
	      map("@x")->value_type->is_signed, "avg, stats, max sizes");
	/* order: by name, as bpftrace prints them */
	const char *order[] = { "@", "@a", "@b", "@c", "@h", "@l", "@m", "@st",
				"@v", "@x" };
	bool sorted = F.prog.nmaps == 12;
	for (uint32_t i = 0; sorted && i < 10; i++)
		sorted = !strcmp(F.prog.maps[i + 2].name, order[i]);
	CHECK(sorted, "user maps sorted by name, after the internal ones");
	CHECK(stmt(0, 0)->u.assign.target->u.map.map_id ==
	      program_find_map(&F.prog, "@b"), "map_id annotation");

	CHECK(passes("BEGIN { if (@x > 1) { exit() } } END { @x = 2 }"),
	      "map read before its assignment in the source");
	CHECK(fails("BEGIN { $x = @y }", "UNDEF_MAP"), "map never assigned");
	CHECK(fails("BEGIN { @x = count(); @x = 5 }", "TYPE_MISMATCH"),
	      "aggregation then value");
	CHECK(fails("BEGIN { @x = 5; @x = count() }", "TYPE_MISMATCH"),
	      "value then aggregation");
	CHECK(fails("BEGIN { @x = count(); @x = sum(1) }", "TYPE_MISMATCH"),
	      "two aggregations");
	CHECK(fails("BEGIN { @x = count(); @x++ }", "TYPE_MISMATCH"),
	      "++ on an aggregation");
	/* bpftrace 0.22 reads avg() as an integer (0.17 refused it) */
	CHECK(passes("BEGIN { @a = avg(1); $x = @a + 1 }"), "avg() as a value");
	CHECK(fails("BEGIN { @a = stats(1); $x = @a + 1 }", "AGG_READ"),
	      "stats() as a value");
	CHECK(fails("BEGIN { @h = hist(1); $x = @h }", "AGG_READ"),
	      "hist() as a value");
	CHECK(passes("BEGIN { @c = count(); @s = sum(-1); @m = min(2); "
		     "@n = max((uint32)3); $a = @c + 1; $b = @s; $c = @m; $d = @n; }"),
	      "count/sum/min/max read as integers");
	CHECK_STR(tn(stmt(0, 4)->u.assign.value->u.binop.lhs->type), "uint64",
		  "count() reads as uint64");
	CHECK_STR(tn(value(5)->type), "int64", "sum() of signed reads as int64");
	CHECK_STR(tn(value(7)->type), "uint64", "max() of unsigned reads as uint64");
	CHECK(fails("BEGIN { $x = count() }", "AGG_CONTEXT"),
	      "aggregation into a variable");
	CHECK(fails("BEGIN { count() }", "AGG_CONTEXT"),
	      "aggregation as a statement");
	CHECK(fails("BEGIN { @m[1] = 1; @m[\"a\"] = 2 }", "MAP_KEY_MISMATCH"),
	      "key type mismatch");
	CHECK(fails("BEGIN { @m[1] = 1; @m[1, 2] = 2 }", "MAP_KEY_MISMATCH"),
	      "key count mismatch");
	CHECK(fails("BEGIN { @m = 1; @m[1] = 2 }", "MAP_KEY_MISMATCH"),
	      "scalar then keyed");
	/* bpftrace 0.2x: @m[(a, b)] is @m[a, b]; tuples nest in keys */
	CHECK(passes("BEGIN { @m[(1, 2)] = 1; @m[3, 4] = 2; "
		     "@n[1, ((uint8)2, \"s\")] = 3 }"), "tuple key");
	CHECK_STR(tn(map("@m")->key_type), "(int64, int64)",
		  "a tuple key is the map's keys");
	CHECK_STR(tn(map("@n")->key_type), "(int64, (int64, string[2]))",
		  "nested tuple key, its integers int64");
	CHECK(fails("BEGIN { @m[(1, 2)] = 1; @m[1] = 2 }", "MAP_KEY_MISMATCH"),
	      "tuple key then one key");
	CHECK(passes("BEGIN { @k[\"a\"] = 1; @k[comm] = 2 }"),
	      "string keys unify");
	CHECK_STR(tn(map("@k")->key_type), "(string[16])", "key widened");
	CHECK(passes("BEGIN { @x = pid; @x = -1; @y = -1; @y = pid; "
		     "@z = (int8)-1; @k[(uint8)1] = 1; $s = (uint16)5; "
		     "$s = 70000; }"), "integer slots keep their first type");
	CHECK_STR(tn(map("@x")->value_type), "uint64", "map keeps unsigned");
	CHECK_STR(tn(map("@y")->value_type), "int64", "map keeps signed");
	CHECK_STR(tn(map("@z")->value_type), "int64", "map ints are 64-bit");
	CHECK_STR(tn(map("@k")->key_type), "(int64)",
		  "integer keys are int64, as bpftrace prints them");
	CHECK_STR(tn(F.root->u.list.v[0]->u.probe.var_types[0]), "uint16",
		  "a variable keeps its first integer type");
	CHECK(passes("BEGIN { @x += 3; @y++; @z -= 1 }"),
	      "compound and ++ create int maps");
	CHECK_STR(tn(map("@y")->value_type), "int64", "++ map is int64");
	CHECK(passes("BEGIN { @m[1] = 1; delete(@m[1]); @n = 2; clear(@n); "
		     "zero(@n); }"), "delete, clear, zero");
	CHECK(F.prog.nevents == 2 && F.prog.events[0].kind == EV_CLEAR_MAP &&
	      F.prog.events[1].kind == EV_ZERO_MAP &&
	      F.prog.events[0].map_id == program_find_map(&F.prog, "@n"),
	      "clear/zero events");
	CHECK(stmt(0, 1)->u.expr_stmt.expr->u.call.event_id == -1,
	      "delete has no event");
	CHECK(fails("BEGIN { @m[1] = 1; delete(@m) }", "MAP_KEY_MISMATCH"),
	      "delete without the key");
	CHECK(fails("BEGIN { @m = 1; clear(@m[1]) }", "ARG_TYPE"),
	      "clear of an element");
	CHECK(fails("BEGIN { clear(@q) }", "UNDEF_MAP"), "clear unknown map");

	/* calls and events */
	CHECK(passes("BEGIN { printf(\"%d %s %5.2lu %-3x %c %p %%\\n\", 1, comm,"
		     " pid, 3, 65, 0) }"), "printf conversions");
	struct event_spec *e = &F.prog.events[0];
	CHECK(F.prog.nevents == 1 && e->kind == EV_PRINTF &&
	      !strcmp(e->fmt, "%d %s %5.2lu %-3x %c %p %%\n") &&
	      !strcmp(tn(e->args), "(int64, string[16], uint64, int64, int64, "
		      "int64)"), "printf event");
	CHECK(stmt(0, 0)->u.expr_stmt.expr->u.call.event_id == 0 &&
	      stmt(0, 0)->u.expr_stmt.expr->u.call.fn == func_find("printf"),
	      "call annotations");
	CHECK(fails("BEGIN { $f = \"%d\"; printf($f, 1) }", "PRINTF_FORMAT"),
	      "printf needs a literal format");
	CHECK(fails("BEGIN { printf(\"%d %d\\n\", 1) }", "PRINTF_FORMAT"),
	      "too few arguments");
	CHECK(fails("BEGIN { printf(\"%d\\n\", 1, 2) }", "PRINTF_FORMAT"),
	      "too many arguments");
	CHECK(fails("BEGIN { printf(\"%s\\n\", 1) }", "PRINTF_FORMAT"),
	      "%s with an integer");
	CHECK(fails("BEGIN { printf(\"%d\\n\", \"a\") }", "PRINTF_FORMAT"),
	      "%d with a string");
	CHECK(fails("BEGIN { printf(\"%q\\n\", 1) }", "PRINTF_FORMAT"),
	      "unknown conversion");
	CHECK(fails("BEGIN { printf(\"50%\") }", "PRINTF_FORMAT"),
	      "dangling %");
	CHECK(fails("BEGIN { printf() }", "ARG_COUNT"), "printf without args");
	CHECK(fails("BEGIN { foo(1) }", "BAD_CALL"), "unknown function");
	/* exit(CODE): bpftrace 0.21 */
	CHECK(fails("BEGIN { exit(1, 2) }", "ARG_COUNT"), "exit takes one at most");
	CHECK(passes("BEGIN { exit(1) }"), "exit takes a code");
	CHECK(fails("BEGIN { @x = count(1) }", "ARG_COUNT"), "count takes none");
	CHECK(passes("BEGIN { @n = @n + 1 }") &&
	      map("@n")->value_type->kind == TYPE_INT &&
	      !map("@n")->value_type->is_signed, "a map assigned from itself "
	      "is uint64, as in bpftrace");
	CHECK(fails("BEGIN { @x = @y + 1 }", "UNDEF_MAP"),
	      "a map read but never assigned");
	CHECK(passes("BEGIN { $b = buf(\"abc\", 10) }") &&
	      value(0)->type->kind == TYPE_BUF && value(0)->type->size == 4 + 10,
	      "buf of a string: the length asked for, as bpftrace sizes it");
	CHECK(fails("BEGIN { $b = buf((1, 2), 10) }", "ARG_TYPE"),
	      "buf of a tuple");
	CHECK(passes("BEGIN { @kh = hist(3) }") && map("@kh")->max_entries == 34,
	      "keyless hist: one entry per log2 bucket");
	CHECK(fails("BEGIN { @x = hist() }", "ARG_COUNT"), "hist needs one");
	CHECK(fails("BEGIN { @x = sum(\"a\") }", "ARG_TYPE"), "sum of a string");
	CHECK(fails("BEGIN { $m = 1; @x = lhist(1, $m, 10, 1) }", "ARG_TYPE"),
	      "lhist bounds must be literals");
	CHECK(fails("BEGIN { @x = lhist(1, 0, 10, 0) }", "ARG_TYPE"),
	      "lhist step 0");
	CHECK(fails("BEGIN { @x = lhist(1, 0, 10) }", "ARG_COUNT"),
	      "lhist arity");
	CHECK(fails("BEGIN { system(\"ls\") }", "UNSAFE"), "system is unsafe");
	CHECK(fails("BEGIN { signal(9) }", "UNSAFE"), "signal is unsafe");
	lang_fx_free(&F);
	lang_fx_run(&F, "BEGIN { system(\"echo %d\", 1); signal(\"SIGUSR1\") }",
		    NULL, 0, true);
	CHECK(F.rc == 0 && F.prog.nevents == 1 &&
	      F.prog.events[0].kind == EV_SYSTEM, "system with --unsafe");
	struct node *sig = stmt(0, 1)->u.expr_stmt.expr->u.call.args.v[0];
	CHECK(sig->kind == N_INT && sig->u.ival == 10, "signal name to number");
	CHECK(fails("BEGIN { $x = kaddr(1) }", "ARG_TYPE"), "kaddr literal");
	CHECK(fails("uprobe:/bin/sh:main { $x = reg(\"xyz\") }", "ARG_TYPE"),
	      "bad register");
	CHECK(fails("BEGIN { print(1, 2) }", "ARG_COUNT"), "print value arity");
	CHECK(fails("BEGIN { @m[1] = 1; print(@m[1]) }", "ARG_TYPE"),
	      "print of a map element");

	CHECK(passes("BEGIN { @m[1] = count(); print(@m, 10, 2); print(@m); "
		     "print(\"s\"); time(); time(\"%Y\"); exit(); "
		     "$x = str(arg0); join(arg1); join(arg1, \",\") }") == false,
	      "arg0 in BEGIN is refused");
	CHECK(diags_has(&F.d, "BAD_BUILTIN"), "BAD_BUILTIN for arg0 in BEGIN");
	CHECK(passes("uprobe:/bin/sh:main { @m[1] = count(); print(@m, 10, 2); "
		     "print(@m); print(\"s\"); time(); time(\"%Y\"); exit(); "
		     "$x = str(arg0); join(arg1); join(arg1, \",\") }"),
	      "output calls");
	e = F.prog.events;
	CHECK(F.prog.nevents == 8, "eight events");
	CHECK(e[0].kind == EV_PRINT_MAP && e[0].top == 10 && e[0].div == 2 &&
	      e[0].map_id == program_find_map(&F.prog, "@m"), "print map");
	CHECK(e[1].kind == EV_PRINT_MAP && e[1].top == 0, "print map defaults");
	CHECK(e[2].kind == EV_PRINT_VALUE && !strcmp(tn(e[2].args),
						      "(string[2])"),
	      "print value");
	CHECK(e[3].kind == EV_TIME && !strcmp(e[3].fmt, "%H:%M:%S\n"),
	      "time default format");
	CHECK(e[4].kind == EV_TIME && !strcmp(e[4].fmt, "%Y"), "time format");
	CHECK(e[5].kind == EV_EXIT, "exit event");
	CHECK(e[6].kind == EV_JOIN && !strcmp(e[6].fmt, " ") &&
	      e[6].args->nfields == SEMA_JOIN_MAX, "join default delimiter");
	CHECK(e[7].kind == EV_JOIN && !strcmp(e[7].fmt, ","), "join delimiter");
	CHECK_STR(tn(value(7)->type), "string[64]", "str() is string[strlen]");

	CHECK(passes("uprobe:/bin/sh:main { $a = ksym(arg0); $b = usym(arg0); "
		     "$c = kaddr(\"x\"); $d = sizeof(uint32); $e = sizeof($a); "
		     "$f = strncmp(\"a\", \"b\", 1); $g = strcontains(\"ab\", "
		     "\"b\"); $h = kstack(perf, 3); $i = ustack(5); "
		     "$j = buf(arg0, 4); $k = ntop(2, arg0); $l = func; "
		     "$m = json(\"{}\", \"a.b\"); $n = username; $o = probe; "
		     "$p = curtask }"), "value functions");
	CHECK(value(0)->type->kind == TYPE_KSYM && value(1)->type->kind ==
	      TYPE_USYM, "ksym/usym");
	CHECK(value(3)->kind == N_INT && value(3)->u.ival == 4,
	      "sizeof folded to a literal");
	CHECK(value(4)->kind == N_INT && value(4)->u.ival == 8,
	      "sizeof of an expression");
	CHECK(value(7)->type->kind == TYPE_KSTACK &&
	      value(7)->type->stack_mode == 1 &&
	      value(7)->type->stack_limit == 3, "kstack(perf, 3)");
	CHECK(value(8)->type->kind == TYPE_USTACK &&
	      value(8)->type->stack_limit == 5, "ustack(5)");
	CHECK(value(9)->type->kind == TYPE_BUF && value(9)->type->size == 8,
	      "buf size");
	CHECK(value(10)->type->kind == TYPE_INET, "ntop");
	CHECK(value(11)->type->kind == TYPE_USYM, "func in uprobe is usym");
	CHECK_STR(tn(value(12)->type), "string[64]", "json returns a string");
	CHECK(value(13)->type->kind == TYPE_USERNAME, "username");
	CHECK_STR(tn(value(14)->type), "string[20]",
		  "probe is a string as long as the probe name");
	CHECK(value(15)->type->is_ptr, "curtask is a pointer");
	CHECK(passes("tracepoint:a:b { $a = ntop(args->addr); "
		     "$b = ntop(10, args->addr); $c = ntop(0x0100007f); }"),
	      "ntop of an integer and of a 16-byte array");
	CHECK(fails("tracepoint:a:b { $a = ntop(args->ports); }", "UNSUPPORTED"),
	      "ntop of an array that is not bytes");
	CHECK(fails("tracepoint:a:b { $a = args->addr; }", "UNSUPPORTED"),
	      "a byte array outside ntop()");
	CHECK(fails("BEGIN { $a = ntop(\"abcdefgh\"); }", "ARG_TYPE"),
	      "ntop of 9 bytes");
	CHECK(fails("BEGIN { $a = ntop(\"a\", 1); }", "ARG_TYPE"),
	      "ntop with a string family");

	/* builtins per probe type */
	CHECK(fails("BEGIN { $x = retval }", "BAD_BUILTIN"), "retval in BEGIN");
	CHECK(fails("BEGIN { $x = func }", "BAD_BUILTIN"), "func in BEGIN");
	CHECK(fails("interval:s:1 { $x = args->fd }", "BAD_BUILTIN"),
	      "args without a record");
	CHECK(passes("uretprobe:/bin/sh:main { $x = retval }"),
	      "retval in uretprobe");
	CHECK(fails("BEGIN { $x = foo }", "UNKNOWN_BUILTIN"), "unknown name");

	/* args */
	CHECK(passes("tracepoint:a:b { $a = args->fd; $b = args.buf; "
		     "$c = args->comm; $d = args->filename; $e = str(args->buf) }"),
	      "args fields");
	CHECK_STR(tn(value(0)->type), "int32", "s32 field");
	CHECK(value(1)->type->is_ptr && value(1)->type->bits == 64,
	      "pointer field");
	CHECK_STR(tn(value(2)->type), "string[16]", "char array field");
	CHECK_STR(tn(value(3)->type), "string[64]", "data_loc string field");
	CHECK(value(3)->u.field.field == 3, "field index annotation");
	CHECK(fails("tracepoint:a:b { $a = args->nope }", "BAD_FIELD"),
	      "missing field");
	CHECK(fails("tracepoint:a:b, tracepoint:other:c { $a = args->filename }",
		    "BAD_FIELD"), "field missing in one probe of the block");
	CHECK(passes("tracepoint:a:b, tracepoint:other:c { $a = args->fd }"),
	      "field in every probe");
	CHECK_STR(tn(value(0)->type), "int64", "field widths unify");
	CHECK(fails("BEGIN { $t = (1, 2); $x = $t.5 }", "BAD_FIELD"),
	      "tuple index out of range");
	CHECK(fails("BEGIN { $x = pid->foo }", "BAD_FIELD"),
	      "field of a non-record");

	/* positional parameters */
	lang_fx_free(&F);
	char *pos[] = { "42", "hello", "0x10" };
	lang_fx_run(&F, "BEGIN { $a = $1; $b = str($2); $c = $#; $d = $3; "
		    "$e = $4; $f = str($5); $g = str($1) }", pos, 3, false);
	CHECK(F.rc == 0, "positionals check");
	CHECK(value(0)->kind == N_INT && value(0)->u.ival == 42,
	      "$1 becomes a literal");
	struct node *s2 = value(1)->u.call.args.v[0];
	CHECK(s2->kind == N_STR && !strcmp(s2->u.str.s, "hello"),
	      "str($2) becomes a string literal");
	CHECK(value(2)->kind == N_INT && value(2)->u.ival == 3, "$# is 3");
	CHECK(value(3)->u.ival == 16, "hex positional");
	CHECK(value(4)->kind == N_INT && value(4)->u.ival == 0,
	      "missing positional is 0");
	CHECK(!strcmp(value(5)->u.call.args.v[0]->u.str.s, ""),
	      "missing positional string is empty");
	CHECK(!strcmp(value(6)->u.call.args.v[0]->u.str.s, "42"),
	      "str($1) is the text");
	lang_fx_free(&F);
	lang_fx_run(&F, "BEGIN { $a = $2 + 1 }", pos, 2, false);
	CHECK(F.rc < 0 && diags_has(&F.d, "BAD_POSITIONAL"),
	      "string positional used as a number");
	lang_fx_free(&F);
	lang_fx_run(&F, "BEGIN { $a = $99999999999 + $0; $b = str($4294967295) }",
		    pos, 2, false);
	CHECK(F.rc == 0 && value(0)->u.binop.lhs->u.ival == 0,
	      "huge positional index is missing, not out of bounds (fuzz)");

	/* statements */
	CHECK(fails("BEGIN { break }", "BAD_CONTROL"), "break outside loop");
	CHECK(fails("BEGIN { unroll(2) { continue } }", "BAD_CONTROL"),
	      "continue in unroll");
	CHECK(passes("BEGIN { $i = 0; while ($i < 5) { $i++; if ($i == 2) "
		     "{ continue } if ($i > 3) { break } } }"), "while loop");
	CHECK(fails("BEGIN { if (\"a\") {} }", "TYPE_MISMATCH"),
	      "string condition");
	CHECK(fails("BEGIN /comm/ {}", "TYPE_MISMATCH"), "string predicate");
	CHECK(fails("BEGIN { $x = \"a\" < \"b\" }", "TYPE_MISMATCH"),
	      "string ordering");
	CHECK(fails("BEGIN { $x = 1 + \"a\" }", "TYPE_MISMATCH"),
	      "int plus string");
	CHECK(fails("BEGIN { $x = 1 ? 2 : \"a\" }", "TYPE_MISMATCH"),
	      "ternary branches");
	CHECK(fails("BEGIN { $x = (uint8)\"a\" }", "TYPE_MISMATCH"),
	      "cast of a string");
	CHECK(fails("BEGIN { $x = (struct task *)curtask }", "UNKNOWN_TYPE"),
	      "cast to an unknown struct");
	CHECK(fails("BEGIN { $x = (struct task)curtask }", "UNKNOWN_TYPE"),
	      "cast to an unknown struct by value");
	CHECK(fails("BEGIN { $s = \"a\"; $s += 1 }", "TYPE_MISMATCH"),
	      "compound on a string");

	/* bpftrace 0.17's sign warnings (its binop_int), and its ternary
	 * of integers: 64 bits, signed as the first branch */
	const struct { const char *text; unsigned warnings; } signs[] = {
		{ "BEGIN { $a = 5; $b = $a / 2; }", 1 },
		{ "BEGIN { $b = 7 / 2; $c = 7 % 2; }", 0 },
		{ "BEGIN { $b = -7 / 2; }", 1 },
		{ "BEGIN { $a = (uint64)5; $b = $a / -2; }", 2 },
		{ "BEGIN { $a = (uint64)5; $c = $a < -1; }", 1 },
		{ "BEGIN { $c = pid > 0; $d = 0 < pid; $e = pid + 1; }", 0 },
		{ "BEGIN { $a = (int8)1; $c = $a * (uint16)2; $d = $a & (uint16)2; }", 1 },
		{ "BEGIN { $a = 3; $a %= 2; }", 1 },
		{ "BEGIN { $s = nsecs; $l = $s ? (nsecs - $s) / 1000 : 0; "
		  "$m = $l / 1000; }", 0 },
		{ "BEGIN { $l = 1 ? 0 : (uint64)5; $m = $l / 1000; }", 1 },
	};
	for (size_t i = 0; i < sizeof(signs) / sizeof(signs[0]); i++) {
		run(signs[i].text);
		unsigned n = 0;
		for (size_t k = 0; k < F.d.list.n; k++)
			n += strcmp(F.d.list.v[k].tag, "SIGNS") == 0 &&
			     F.d.list.v[k].level == DIAG_WARNING;
		if (F.rc || n != signs[i].warnings)
			printf("# %u SIGNS warnings (want %u), rc %d: %s\n", n,
			       signs[i].warnings, F.rc, signs[i].text);
		CHECK(F.rc == 0 && n == signs[i].warnings,
		      "sign warnings as bpftrace 0.17 gives them");
	}
	run("BEGIN { $s = nsecs; $l = $s ? nsecs - $s : 0; $m = 1 ? -1 : pid; }");
	CHECK_STR(tn(value(1)->type), "uint64", "ternary: unsigned as its first branch");
	CHECK_STR(tn(value(2)->type), "int64", "ternary: signed as its first branch");

	/* all errors reported, one each */
	run("BEGIN { $a = $b; @c = hist(1); $d = @c + 1; foo(); }\n"
	    "END { printf(\"%s\", 1); $e = \"a\"; $e = 2 }");
	CHECK(F.d.nerrors == 5 && diags_has(&F.d, "UNDEF_VAR") &&
	      diags_has(&F.d, "AGG_READ") && diags_has(&F.d, "BAD_CALL") &&
	      diags_has(&F.d, "PRINTF_FORMAT") &&
	      diags_has(&F.d, "TYPE_MISMATCH"), "every error, once");
	lang_fx_free(&F);
	return UNIT_DONE();
}
