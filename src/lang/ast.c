/* ast.c - node construction, operator names, and the --dump=ast
 * printer. */
#include "ast.h"

#include <ctype.h>
#include <inttypes.h>
#include <string.h>

#define OPS(X) \
	X(OP_ADD, "+") X(OP_SUB, "-") X(OP_MUL, "*") X(OP_DIV, "/") \
	X(OP_MOD, "%") X(OP_BAND, "&") X(OP_BOR, "|") X(OP_BXOR, "^") \
	X(OP_SHL, "<<") X(OP_SHR, ">>") X(OP_LAND, "&&") X(OP_LOR, "||") \
	X(OP_EQ, "==") X(OP_NE, "!=") X(OP_LT, "<") X(OP_LE, "<=") \
	X(OP_GT, ">") X(OP_GE, ">=") X(OP_NEG, "-") X(OP_BNOT, "~") \
	X(OP_LNOT, "!") X(OP_DEREF, "*") X(OP_ADDROF, "&") \
	X(OP_PREINC, "pre++") X(OP_PREDEC, "pre--") \
	X(OP_POSTINC, "post++") X(OP_POSTDEC, "post--") X(OP_NONE, "")

const char *op_name(enum op op)
{
	switch (op) {
#define X(o, s) case o: return s;
	OPS(X)
#undef X
	}
	return "?";
}

struct node *node_new(struct arena *a, enum node_kind kind, struct pos pos)
{
	struct node *n = arena_new(a, struct node);
	n->kind = kind;
	n->pos = pos;
	switch (kind) {
	case N_VAR: n->u.var.slot = -1; break;
	case N_MAP: n->u.map.map_id = -1; break;
	case N_CALL:
		n->u.call.event_id = -1;
		break;
	case N_FIELD: n->u.field.field = -1; break;
	default: break;
	}
	return n;
}

/* Lists grow by doubling inside the arena (capacity = n rounded up to a
 * power of two), so they need no capacity field. */
int node_list_push(struct arena *a, struct node_list *l, struct node *n)
{
	if ((l->n & (l->n - 1)) == 0) {
		uint32_t cap = l->n ? l->n * 2 : 1;
		struct node **v = arena_array(a, struct node *, cap);
		if (l->n)
			memcpy(v, l->v, l->n * sizeof(*v));
		l->v = v;
	}
	l->v[l->n++] = n;
	return 0;
}

static void dump_escaped(FILE *out, const char *s, uint32_t len)
{
	fputc('"', out);
	for (uint32_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		switch (c) {
		case '\n': fputs("\\n", out); break;
		case '\t': fputs("\\t", out); break;
		case '\r': fputs("\\r", out); break;
		case '\\': fputs("\\\\", out); break;
		case '"': fputs("\\\"", out); break;
		default:
			if (isprint(c))
				fputc(c, out);
			else
				fprintf(out, "\\x%02x", c);
		}
	}
	fputc('"', out);
}

static void dump(FILE *out, const struct node *n, struct arena *a, int depth);

static void dump_list(FILE *out, const struct node_list *l, struct arena *a,
		      int depth)
{
	for (uint32_t i = 0; i < l->n; i++)
		dump(out, l->v[i], a, depth);
}

static void indent(FILE *out, int depth)
{
	for (int i = 0; i < depth; i++)
		fputs("  ", out);
}

/* One line: "<what> [details] [: type] @line:col", children below. */
static void dump(FILE *out, const struct node *n, struct arena *a, int depth)
{
	if (!n)
		return;
	indent(out, depth);
	const struct node *kids[3] = { 0 };
	const struct node_list *kidlist = NULL;
	switch (n->kind) {
	case N_INT:
		if (!n->type || n->type->is_signed)
			fprintf(out, "int %" PRId64, (int64_t)n->u.ival);
		else
			fprintf(out, "int %" PRIu64, n->u.ival);
		break;
	case N_STR:
		fputs("str ", out);
		dump_escaped(out, n->u.str.s, n->u.str.len);
		break;
	case N_IDENT:
		fprintf(out, "ident %s", n->u.str.s);
		break;
	case N_BUILTIN:
		if (n->u.builtin.id == BI_ARG || n->u.builtin.id == BI_SARG)
			fprintf(out, "builtin %s%u", builtins[n->u.builtin.id].name,
				n->u.builtin.index);
		else
			fprintf(out, "builtin %s", builtins[n->u.builtin.id].name);
		break;
	case N_VAR:
		fprintf(out, "var $%s", n->u.var.name);
		if (n->u.var.slot >= 0)
			fprintf(out, " slot=%d", n->u.var.slot);
		break;
	case N_POSITIONAL:
		if (n->u.positional.is_count)
			fputs("positional $#", out);
		else
			fprintf(out, "positional $%u", n->u.positional.index);
		break;
	case N_MAP:
		fprintf(out, "map %s", n->u.map.name);
		if (n->u.map.map_id >= 0)
			fprintf(out, " id=%d", n->u.map.map_id);
		kidlist = &n->u.map.keys;
		break;
	case N_BINOP:
		fprintf(out, "binop %s", op_name(n->u.binop.op));
		kids[0] = n->u.binop.lhs;
		kids[1] = n->u.binop.rhs;
		break;
	case N_UNOP:
		fprintf(out, "unop %s", op_name(n->u.unop.op));
		kids[0] = n->u.unop.operand;
		break;
	case N_TERNARY:
		fputs("ternary", out);
		kids[0] = n->u.ternary.cond;
		kids[1] = n->u.ternary.then;
		kids[2] = n->u.ternary.els;
		break;
	case N_CALL:
		fprintf(out, "call %s", n->u.call.name);
		if (n->u.call.event_id >= 0)
			fprintf(out, " event=%d", n->u.call.event_id);
		kidlist = &n->u.call.args;
		break;
	case N_FIELD:
		fprintf(out, "field %s%s", n->u.field.arrow ? "->" : ".",
			n->u.field.name);
		if (n->u.field.field >= 0)
			fprintf(out, " index=%d", n->u.field.field);
		kids[0] = n->u.field.base;
		break;
	case N_TUPLE_INDEX:
		fprintf(out, "tuple_index .%u", n->u.tindex.index);
		kids[0] = n->u.tindex.base;
		break;
	case N_INDEX:
		fputs("index", out);
		kids[0] = n->u.index.base;
		kids[1] = n->u.index.index;
		break;
	case N_TUPLE:
		fputs("tuple", out);
		kidlist = &n->u.list;
		break;
	case N_CAST:
		fprintf(out, "cast (%s)", n->u.cast.type_name);
		kids[0] = n->u.cast.expr;
		break;
	case N_INCDEC:
		fprintf(out, "incdec %s", op_name(n->u.incdec.op));
		kids[0] = n->u.incdec.target;
		break;
	case N_EXPR_STMT:
		fputs("expr", out);
		kids[0] = n->u.expr_stmt.expr;
		break;
	case N_ASSIGN:
		fprintf(out, "assign %s=", op_name(n->u.assign.op));
		kids[0] = n->u.assign.target;
		kids[1] = n->u.assign.value;
		break;
	case N_IF:
		fputs("if", out);
		kids[0] = n->u.if_.cond;
		kids[1] = n->u.if_.then;
		kids[2] = n->u.if_.els;
		break;
	case N_UNROLL:
		fprintf(out, "unroll %" PRIu64, n->u.loop.count);
		kids[0] = n->u.loop.body;
		break;
	case N_WHILE:
		fputs("while", out);
		kids[0] = n->u.loop.cond;
		kids[1] = n->u.loop.body;
		break;
	case N_FOR_MAP:
		fputs("for_map", out);
		kids[0] = n->u.loop.step;
		kids[1] = n->u.loop.cond;
		kids[2] = n->u.loop.body;
		break;
	case N_RETURN: fputs("return", out); break;
	case N_BREAK: fputs("break", out); break;
	case N_CONTINUE: fputs("continue", out); break;
	case N_BLOCK:
		fputs("block", out);
		kidlist = &n->u.list;
		break;
	case N_ATTACH:
		fprintf(out, "attach %s", n->u.attach.text);
		break;
	case N_PROBE:
		fputs("probe", out);
		if (n->u.probe.var_types)
			fprintf(out, " vars=%u", n->u.probe.nvars);
		break;
	case N_PROGRAM:
		fputs("program", out);
		kidlist = &n->u.list;
		break;
	case N_CONFIG:
		fputs("config", out);
		kidlist = &n->u.list;
		break;
	case N_BLOCK_EXPR:
		fputs("block_expr", out);
		kids[0] = n->u.blockx.body;
		kids[1] = n->u.blockx.value;
		break;
	case N_MAP_DECL:
		fputs("map_decl", out);
		kids[0] = n->u.assign.target;
		kids[1] = n->u.assign.value;
		break;
	case N_MACRO:
		fprintf(out, "macro %s", n->u.macro.name);
		kids[0] = n->u.macro.body;
		break;
	}
	if (n->type)
		fprintf(out, " : %s", type_name(a, n->type));
	if (n->pos.line)
		fprintf(out, " @%u:%u", n->pos.line, n->pos.col);
	fputc('\n', out);

	if (n->kind == N_PROBE) {
		dump_list(out, &n->u.probe.attach, a, depth + 1);
		if (n->u.probe.var_types)
			for (uint32_t i = 0; i < n->u.probe.nvars; i++) {
				indent(out, depth + 1);
				fprintf(out, "slot %u : %s\n", i,
					n->u.probe.var_types[i] ?
					type_name(a, n->u.probe.var_types[i]) :
					"?");
			}
		if (n->u.probe.predicate) {
			indent(out, depth + 1);
			fputs("predicate\n", out);
			dump(out, n->u.probe.predicate, a, depth + 2);
		}
		dump(out, n->u.probe.body, a, depth + 1);
		return;
	}
	for (int i = 0; i < 3; i++)
		dump(out, kids[i], a, depth + 1);
	if (kidlist)
		dump_list(out, kidlist, a, depth + 1);
}

void ast_dump(FILE *out, const struct node *n, struct arena *a)
{
	dump(out, n, a, 0);
}

/* The children of N: up to three in KIDS, and a list in *KIDLIST (or
 * NULL); false for a leaf. */
static bool node_kids(const struct node *n, const struct node *kids[3],
		      const struct node_list **kidlist)
{
	kids[0] = kids[1] = kids[2] = NULL;
	*kidlist = NULL;
	switch (n->kind) {
	case N_MAP: *kidlist = &n->u.map.keys; break;
	case N_BINOP:
		kids[0] = n->u.binop.lhs;
		kids[1] = n->u.binop.rhs;
		break;
	case N_UNOP: kids[0] = n->u.unop.operand; break;
	case N_TERNARY:
		kids[0] = n->u.ternary.cond;
		kids[1] = n->u.ternary.then;
		kids[2] = n->u.ternary.els;
		break;
	case N_CALL: *kidlist = &n->u.call.args; break;
	case N_FIELD: kids[0] = n->u.field.base; break;
	case N_TUPLE_INDEX: kids[0] = n->u.tindex.base; break;
	case N_INDEX:
		kids[0] = n->u.index.base;
		kids[1] = n->u.index.index;
		break;
	case N_TUPLE:
	case N_BLOCK:
	case N_PROGRAM:
	case N_CONFIG:
		*kidlist = &n->u.list;
		break;
	case N_BLOCK_EXPR:
		kids[0] = n->u.blockx.body;
		kids[1] = n->u.blockx.value;
		break;
	case N_MAP_DECL:
		kids[0] = n->u.assign.target;
		kids[1] = n->u.assign.value;
		break;
	case N_MACRO:
		kids[0] = n->u.macro.body;
		break;
	case N_CAST: kids[0] = n->u.cast.expr; break;
	case N_INCDEC: kids[0] = n->u.incdec.target; break;
	case N_EXPR_STMT: kids[0] = n->u.expr_stmt.expr; break;
	case N_ASSIGN:
		kids[0] = n->u.assign.target;
		kids[1] = n->u.assign.value;
		break;
	case N_IF:
		kids[0] = n->u.if_.cond;
		kids[1] = n->u.if_.then;
		kids[2] = n->u.if_.els;
		break;
	case N_UNROLL: kids[0] = n->u.loop.body; break;
	case N_WHILE:
	case N_FOR_MAP:
		kids[0] = n->u.loop.cond;
		kids[1] = n->u.loop.body;
		kids[2] = n->u.loop.step;
		break;
	case N_PROBE:
		kids[0] = n->u.probe.predicate;
		kids[1] = n->u.probe.body;
		break;
	default:
		return false;
	}
	return true;
}

/* Whether MATCH holds for n or any node under it: the one walk the
 * questions below share. */
static bool ast_any(const struct node *n,
		    bool (*match)(const struct node *, const void *), const void *arg)
{
	if (!n)
		return false;
	if (match(n, arg))
		return true;
	const struct node *kids[3];
	const struct node_list *kidlist;
	if (!node_kids(n, kids, &kidlist))
		return false;
	for (int i = 0; i < 3; i++)
		if (ast_any(kids[i], match, arg))
			return true;
	for (uint32_t i = 0; kidlist && i < kidlist->n; i++)
		if (ast_any(kidlist->v[i], match, arg))
			return true;
	return false;
}

static bool is_builtin(const struct node *n, const void *id)
{
	return n->kind == N_BUILTIN &&
	       n->u.builtin.id == *(const enum builtin_id *)id;
}

bool ast_uses_builtin(const struct node *n, enum builtin_id id)
{
	return ast_any(n, is_builtin, &id);
}

static bool is_kind(const struct node *n, const void *k)
{
	return n->kind == *(const enum node_kind *)k;
}

bool ast_has_kind(const struct node *n, enum node_kind k)
{
	return ast_any(n, is_kind, &k);
}

static bool is_addr_of(const struct node *n, const void *slot)
{
	return n->kind == N_UNOP && n->u.unop.op == OP_ADDROF &&
	       n->u.unop.operand && n->u.unop.operand->kind == N_VAR &&
	       n->u.unop.operand->u.var.slot == *(const int32_t *)slot;
}

bool ast_takes_address(const struct node *n, int32_t slot)
{
	return ast_any(n, is_addr_of, &slot);
}

static bool is_for_range(const struct node *n, const void *unused)
{
	return n->kind == N_WHILE && n->u.loop.step;
}

bool ast_has_for_range(const struct node *n)
{
	return ast_any(n, is_for_range, NULL);
}

uint64_t ast_unrolled_size(const struct node *n, uint64_t cap)
{
	if (!n)
		return 0;
	const struct node *kids[3];
	const struct node_list *kidlist;
	uint64_t size = 1;
	if (!node_kids(n, kids, &kidlist))
		return size;
	for (int i = 0; i < 3 && size <= cap; i++)
		size += ast_unrolled_size(kids[i], cap);
	for (uint32_t i = 0; kidlist && i < kidlist->n && size <= cap; i++)
		size += ast_unrolled_size(kidlist->v[i], cap);
	if (n->kind == N_UNROLL && size > 1) {
		uint64_t body = size - 1, count = n->u.loop.count;
		if (!count && n->u.loop.cond)
			count = 100;   /* unroll ($N) not yet read: its most */
		/* saturate: nested counts multiply */
		size = count && body > cap / count ? cap + 1 : 1 + body * count;
	}
	return size > cap ? cap + 1 : size;
}

const char *unroll_count_error(int64_t count)
{
	if (count > 100)
		return "unroll maximum value is 100";
	if (count < 1)
		return "unroll minimum value is 1";
	return NULL;
}
