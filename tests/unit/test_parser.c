/* test_parser.c - the parser: tree shapes (through ast_dump), precedence,
 * attach point splitting, positions, and error recovery. */
#include <stdlib.h>

#include "lang/parser.h"
#include "unit.h"

struct pfx {
	struct arena a;
	struct diag_source src;
	struct diags d;
	struct node *root;
};

static struct node *parse(struct pfx *f, const char *text)
{
	arena_init(&f->a);
	f->src.name = "test";
	f->src.text = text;
	diags_init(&f->d, &f->src);
	f->root = parse_program(&f->a, text, &f->d);
	return f->root;
}

static void pfx_free(struct pfx *f)
{
	diags_free(&f->d);
	arena_free(&f->a);
}

/* The dump of `text`'s first statement in its first probe, with the
 * positions stripped, on one line ("|" between lines). */
static char *dump_stmt(const char *text)
{
	struct pfx f;
	static char out[4096];
	parse(&f, text);
	out[0] = 0;
	if (f.d.nerrors || !f.root->u.list.n) {
		snprintf(out, sizeof(out), "(errors: %u)", f.d.nerrors);
		pfx_free(&f);
		return out;
	}
	struct node *body = f.root->u.list.v[0]->u.probe.body;
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	ast_dump(m, body->u.list.v[0], &f.a);
	fclose(m);
	size_t o = 0;
	for (char *p = buf; *p && o + 2 < sizeof(out); p++) {
		if (*p == ' ' && p[1] == '@' && p[2] >= '0' && p[2] <= '9') {
			while (*p && *p != '\n')
				p++;
			if (!*p)
				break;
		}
		if (*p == '\n') {
			if (p[1])
				out[o++] = '|';
			continue;
		}
		if (*p == ' ' && (o == 0 || out[o - 1] == '|'))
			continue; /* indentation */
		out[o++] = *p;
	}
	out[o] = 0;
	free(buf);
	pfx_free(&f);
	return out;
}

static bool fails_with(const char *text, const char *tag, unsigned nerr)
{
	struct pfx f;
	parse(&f, text);
	bool r = diags_has(&f.d, tag) && (nerr == 0 || f.d.nerrors == nerr);
	if (!r) {
		printf("# %u errors for: %s\n", f.d.nerrors, text);
		diags_print(&f.d, stdout);
	}
	pfx_free(&f);
	return r;
}

int main(void)
{
	struct pfx f;

	CHECK_STR(dump_stmt("BEGIN { $x = 1 + 2 * 3 }"),
		  "assign =|var $x|binop +|int 1|binop *|int 2|int 3",
		  "* binds tighter than +");
	CHECK_STR(dump_stmt("BEGIN { $x = 1 - 2 - 3 }"),
		  "assign =|var $x|binop -|binop -|int 1|int 2|int 3",
		  "left associativity");
	CHECK_STR(dump_stmt("BEGIN { $x = 1 < 2 == 3 & 4 ^ 5 | 6 && 7 || 8 }"),
		  "assign =|var $x|binop |||binop &&|binop ||binop ^|binop &|"
		  "binop ==|binop <|int 1|int 2|int 3|int 4|int 5|int 6|int 7|int 8",
		  "C precedence ladder");
	CHECK_STR(dump_stmt("BEGIN { $x = 1 << 2 + 3 }"),
		  "assign =|var $x|binop <<|int 1|binop +|int 2|int 3",
		  "shift below additive");
	CHECK_STR(dump_stmt("BEGIN { $x = $a ? 1 : $b ? 2 : 3 }"),
		  "assign =|var $x|ternary|var $a|int 1|ternary|var $b|int 2|int 3",
		  "ternary is right associative");
	/* typed signed by the parser: sema tells it from a literal past
	 * int64's range, a uint64 under --dialect=0.26 */
	CHECK_STR(dump_stmt("BEGIN { $x = -5 }"),
		  "assign =|var $x|int -5 : int64", "negative literal folds");
	CHECK_STR(dump_stmt("BEGIN { $x = !~-$y }"),
		  "assign =|var $x|unop !|unop ~|unop -|var $y", "unary chain");
	CHECK_STR(dump_stmt("BEGIN { $x = (uint32)arg0 }"),
		  "assign =|var $x|cast (uint32)|builtin arg0", "cast");
	CHECK_STR(dump_stmt("BEGIN { $x = (struct task_struct *)curtask }"),
		  "assign =|var $x|cast (struct task_struct *)|builtin curtask",
		  "pointer cast");
	CHECK_STR(dump_stmt("BEGIN { $x = (1, \"a\", pid) }"),
		  "assign =|var $x|tuple|int 1|str \"a\"|builtin pid", "tuple");
	CHECK_STR(dump_stmt("BEGIN { $x = ($y) }"), "assign =|var $x|var $y",
		  "parentheses are not a tuple");
	CHECK_STR(dump_stmt("BEGIN { print($t.1) }"),
		  "expr|call print|tuple_index .1|var $t", "tuple index");
	CHECK_STR(dump_stmt("t:a:b { @[args->fd, args.x] = count() }"),
		  "assign =|map @|field ->fd|builtin args|field .x|builtin args|"
		  "call count", "anonymous map with two keys, fields");
	CHECK_STR(dump_stmt("BEGIN { @m[1]++ }"),
		  "expr|incdec post++|map @m|int 1", "map post-increment");
	CHECK_STR(dump_stmt("BEGIN { --$x }"), "expr|incdec pre--|var $x",
		  "pre-decrement");
	CHECK_STR(dump_stmt("BEGIN { $x <<= 2 }"),
		  "assign <<=|var $x|int 2", "compound assignment");
	CHECK_STR(dump_stmt("BEGIN { if ($x) { } else if ($y) { return } else { break } }"),
		  "if|var $x|block|if|var $y|block|return|block|break",
		  "if / else if / else");
	CHECK_STR(dump_stmt("BEGIN { unroll(5) { continue } }"),
		  "unroll 5|block|continue", "unroll");
	CHECK_STR(dump_stmt("BEGIN { while ($i < 3) { $i++; } }"),
		  "while|binop <|var $i|int 3|block|expr|incdec post++|var $i",
		  "while");
	CHECK_STR(dump_stmt("BEGIN { delete(@m[1, 2]) }"),
		  "expr|call delete|map @m|int 1|int 2", "delete");
	CHECK_STR(dump_stmt("BEGIN { $x = kstack(perf, 3) }"),
		  "assign =|var $x|call kstack|ident perf|int 3",
		  "identifier argument");
	CHECK_STR(dump_stmt("BEGIN { $x = sizeof(struct foo) }"),
		  "assign =|var $x|call sizeof|ident struct foo", "sizeof struct");
	CHECK_STR(dump_stmt("BEGIN { $x = $1 + $# + arg12 + sarg1 + retval }"),
		  "assign =|var $x|binop +|binop +|binop +|binop +|positional $1|"
		  "positional $#|builtin arg12|builtin sarg1|builtin retval",
		  "positionals and indexed builtins");
	CHECK_STR(dump_stmt("BEGIN { $x = *(&$y) }"),
		  "assign =|var $x|unop *|unop &|var $y", "deref and address-of");
	CHECK_STR(dump_stmt("BEGIN { $x = $a[1][2] }"),
		  "assign =|var $x|index|index|var $a|int 1|int 2", "indexing");

	/* probes, attach splitting, predicates */
	parse(&f, "tracepoint:syscalls:sys_enter_read, uprobe:/x:\"a:b\" "
		  "/pid == 1 && 4/2 > 1/ { }\nBEGIN{}usdt:./a.out:prov:name {}");
	CHECK(f.d.nerrors == 0, "probes parse");
	CHECK(f.root->u.list.n == 3, "three probe blocks");
	struct node *p0 = f.root->u.list.v[0];
	struct node *a0 = p0->u.probe.attach.v[0], *a1 = p0->u.probe.attach.v[1];
	CHECK(p0->u.probe.attach.n == 2, "two attach points");
	CHECK_STR(a0->u.attach.provider, "tracepoint", "provider split");
	CHECK_STR(a0->u.attach.target, "syscalls", "target split");
	CHECK_STR(a0->u.attach.func, "sys_enter_read", "func split");
	CHECK(a0->u.attach.extra == NULL, "no extra");
	CHECK_STR(a1->u.attach.text, "uprobe:/x:\"a:b\"", "text as written");
	CHECK_STR(a1->u.attach.func, "\"a:b\"", "quoted part kept whole");
	CHECK(a1->pos.line == 1 && a1->pos.col == 37 && a1->pos.len == 15,
	      "attach position");
	CHECK(p0->u.probe.predicate && p0->u.probe.predicate->kind == N_BINOP &&
	      p0->u.probe.predicate->u.binop.op == OP_LAND,
	      "predicate with division inside");
	struct node *a2 = f.root->u.list.v[2]->u.probe.attach.v[0];
	CHECK_STR(a2->u.attach.extra, "name", "usdt fourth part");
	CHECK(f.root->u.list.v[1]->pos.line == 2, "second probe on line 2");
	pfx_free(&f);

	parse(&f, "BEGIN { printf(\"%d\\n\", $x) }");
	struct node *call = f.root->u.list.v[0]->u.probe.body->u.list.v[0]
		->u.expr_stmt.expr;
	CHECK(call->kind == N_CALL && call->pos.col == 9 &&
	      !call->u.call.fn && call->u.call.event_id == -1,
	      "call position and unset annotations");
	CHECK(call->u.call.args.v[1]->pos.col == 24 &&
	      call->u.call.args.v[1]->pos.len == 2, "argument position");
	pfx_free(&f);

	/* errors and recovery */
	CHECK(fails_with("BEGIN { $x = 1;; $y = 2 }", "SYNTAX", 1),
	      "empty statement rejected (as bpftrace does)");
	CHECK(fails_with("BEGIN { $x = ; } END { $y = ; }", "SYNTAX", 2),
	      "recovery: one error per probe");
	CHECK(fails_with("BEGIN { $x = ; $y = (1 ; $z = 3 }", "SYNTAX", 2),
	      "recovery: one error per statement");
	CHECK(fails_with("BEGIN { if (1) { $x = 1 }", "SYNTAX", 1),
	      "unclosed block: one error");
	CHECK(fails_with("BEGIN { x = 1 }", "SYNTAX", 1), "assign to a name");
	CHECK(fails_with("BEGIN { 1++ }", "SYNTAX", 1), "++ on a literal");
	CHECK(fails_with("BEGIN { unroll(0) {} }", "BAD_UNROLL", 1), "unroll 0");
	CHECK(fails_with("BEGIN { unroll($x) {} }", "BAD_UNROLL", 1),
	      "unroll variable");
	/* bpftrace 0.24: one operand needs no parentheses, more do */
	CHECK(fails_with("BEGIN { if 1 + 1 {} }", "SYNTAX", 1),
	      "if without parens around a binary expression");
	CHECK(fails_with("BEGIN { if (1) {} ; }", "SYNTAX", 1),
	      "';' after a block statement");
	CHECK(fails_with("BEGIN { {} + }", "SYNTAX", 1),
	      "a block as an operand, unfinished");
	CHECK(fails_with("BEGIN { $x = 1 $y = 2 }", "SYNTAX", 1),
	      "missing separator");
	CHECK(fails_with("BEGIN", "SYNTAX", 1), "probe without body");
	CHECK(fails_with("BEGIN /1 { }", "SYNTAX", 1), "unterminated predicate");
	CHECK(fails_with("} BEGIN { }", "SYNTAX", 1), "stray brace");
	CHECK(fails_with("", "SYNTAX", 1), "empty program");
	CHECK(fails_with("BEGIN { $x = \"a }", "UNTERMINATED_STRING", 0),
	      "lexer error surfaces");
	CHECK(fails_with("BEGIN { $x = $t. }", "SYNTAX", 1), "field name missing");

	parse(&f, "BEGIN {\n  $x = (1 +\n}");
	CHECK(f.d.nerrors == 1, "one error for a broken expression");
	pfx_free(&f);
	parse(&f, "BEGIN {\n  $x = 1;\n");
	CHECK(f.d.nerrors == 1 && f.d.list.v[0].msg &&
	      strstr(f.d.list.v[0].msg, "to close '{' at line 1"),
	      "Lua-style context for a missing '}'");
	pfx_free(&f);

	/* deep nesting is refused, not a stack overflow */
	size_t n = 100000;
	char *deep = malloc(n * 2 + 64);
	strcpy(deep, "BEGIN { $x = ");
	size_t o = strlen(deep);
	for (size_t i = 0; i < n; i++)
		deep[o++] = '(';
	deep[o++] = '1';
	for (size_t i = 0; i < n; i++)
		deep[o++] = ')';
	strcpy(deep + o, " }");
	CHECK(fails_with(deep, "SYNTAX", 1), "deep nesting refused");
	memset(deep + 13, '-', n);
	CHECK(fails_with(deep, "SYNTAX", 0), "deep unary nesting refused");
	free(deep);

	/* long chains deepen the tree too (later passes recurse over it) */
	const char *unit[] = { " + 1", ".0", " else if (1) {}", "if (1) { " };
	const char *names[] = { "long + chain refused", "long .0 chain refused",
				"long else-if chain refused",
				"deeply nested ifs refused" };
	for (int k = 0; k < 4; k++) {
		size_t reps = 50000, ul = strlen(unit[k]);
		char *b = malloc(reps * (ul + 2) + 64);
		strcpy(b, k == 2 ? "BEGIN { if (1) {}" : "BEGIN { $x = 1");
		if (k == 3)
			strcpy(b, "BEGIN { ");
		size_t o2 = strlen(b);
		for (size_t i = 0; i < reps; i++) {
			memcpy(b + o2, unit[k], ul);
			o2 += ul;
		}
		if (k == 3)
			for (size_t i = 0; i < reps; i++)
				b[o2++] = '}';
		strcpy(b + o2, " }");
		CHECK(fails_with(b, "SYNTAX", 0), names[k]);
		free(b);
	}
	CHECK_STR(dump_stmt("BEGIN { $x = 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 "
			    "+ 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1"
			    " + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 }")[0] == 'a'
		  ? "ok" : "no", "ok", "a reasonable chain passes");
	/* no definitions: the predefined macros run at the first one named */
	CHECK_STR(dump_stmt("BEGIN { $x = __x86_64__ + BPFTRACE_HAVE_BTF + linux }"),
		  "assign =|var $x|binop +|binop +|int 1|int 1|int 1",
		  "predefined macros expand in a script without definitions");
	CHECK_STR(dump_stmt("#define N 3\nBEGIN { $x = N + __x86_64__ }"),
		  "assign =|var $x|binop +|int 3|int 1",
		  "and beside the script's own");
	return UNIT_DONE();
}
