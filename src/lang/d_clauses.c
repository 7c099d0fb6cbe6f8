/* d_clauses.c - what a D clause becomes once parsed (d.c): the record
 * line a clause that records data begins and ends with ("CPU ID
 * FUNCTION:NAME " ... newline, unless quiet), clauses with the same
 * descriptions run as one probe block (sharing this->, as a probe's
 * clauses do in DTrace), and exit() deferred to the block's end (DTrace
 * lets the rest of the clause and the later clauses run). */
#include "d_int.h"

#include <string.h>

static struct node *stmt_call(struct d_parser *p, struct pos pos,
			      struct node *call)
{
	struct node *s = node_new(p->a, N_EXPR_STMT, pos);
	s->u.expr_stmt.expr = call;
	return s;
}

static bool is_exit(const struct node *s)
{
	return s->kind == N_EXPR_STMT && s->u.expr_stmt.expr->kind == N_CALL &&
		strcmp(s->u.expr_stmt.expr->u.call.name, "exit") == 0;
}

static struct node *var(struct d_parser *p, struct pos pos, const char *name)
{
	struct node *v = node_new(p->a, N_VAR, pos);
	v->u.var.name = name;
	return v;
}

static struct node *assign(struct d_parser *p, struct pos pos,
			   const char *name, struct node *value)
{
	struct node *s = node_new(p->a, N_ASSIGN, pos);
	s->u.assign.op = OP_NONE;
	s->u.assign.target = var(p, pos, name);
	s->u.assign.value = value;
	return s;
}

/* exit(n) in D lets the rest of the clause run (its records too): each
 * one notes the status, and the clause's last statement exits. Whether
 * the clause calls exit(). */
static bool defer_exits(struct d_parser *p, struct node *block)
{
	if (!block || block->kind != N_BLOCK)
		return false;
	bool any = false;
	for (uint32_t i = 0; i < block->u.list.n; i++) {
		struct node *s = block->u.list.v[i];
		if (is_exit(s)) {
			struct node *call = s->u.expr_stmt.expr;
			struct node *b = node_new(p->a, N_BLOCK, s->pos);
			node_list_push(p->a, &b->u.list, assign(p, s->pos,
				       "__dtrace_exit", d_int(p, s->pos, 1)));
			node_list_push(p->a, &b->u.list, assign(p, s->pos,
				       "__dtrace_status", call->u.call.args.v[0]));
			/* an if's branch (a block already) or a statement */
			block->u.list.v[i] = b;
			any = true;
		} else if (s->kind == N_IF) {
			any |= defer_exits(p, s->u.if_.then);
			struct node *e = s->u.if_.els;
			if (e && e->kind == N_IF) {
				struct node *w = node_new(p->a, N_BLOCK, e->pos);
				node_list_push(p->a, &w->u.list, e);
				s->u.if_.els = e = w;
			}
			any |= defer_exits(p, e);
		}
	}
	return any;
}

/* Blocks that defer_exits made in a statement list are spliced in. */
static void splice_blocks(struct d_parser *p, struct node *block)
{
	if (!block || block->kind != N_BLOCK)
		return;
	struct node_list out = { 0 };
	for (uint32_t i = 0; i < block->u.list.n; i++) {
		struct node *s = block->u.list.v[i];
		if (s->kind == N_BLOCK) {
			for (uint32_t k = 0; k < s->u.list.n; k++)
				node_list_push(p->a, &out, s->u.list.v[k]);
			continue;
		}
		if (s->kind == N_IF) {
			splice_blocks(p, s->u.if_.then);
			splice_blocks(p, s->u.if_.els);
		}
		node_list_push(p->a, &out, s);
	}
	block->u.list = out;
}

/* The clause's exits, deferred to its end (after its record's newline,
 * which add_record puts there first). */
void d_add_exit(struct d_parser *p, struct node *probe)
{
	struct node *body = probe->u.probe.body;
	struct pos pos = body->pos;
	if (!defer_exits(p, body))
		return;
	splice_blocks(p, body);
	struct node_list l = { 0 };
	node_list_push(p->a, &l, assign(p, pos, "__dtrace_exit",
					d_int(p, pos, 0)));
	node_list_push(p->a, &l, assign(p, pos, "__dtrace_status",
					d_int(p, pos, 0)));
	for (uint32_t i = 0; i < body->u.list.n; i++)
		node_list_push(p->a, &l, body->u.list.v[i]);
	struct node *then = node_new(p->a, N_BLOCK, pos);
	node_list_push(p->a, &then->u.list, stmt_call(p, pos, d_call(p, pos,
		       "exit", var(p, pos, "__dtrace_status"), NULL, NULL)));
	struct node *test = node_new(p->a, N_IF, pos);
	test->u.if_.cond = var(p, pos, "__dtrace_exit");
	test->u.if_.then = then;
	node_list_push(p->a, &l, test);
	body->u.list = l;
}

static bool is_speculate(const struct node *s)
{
	return s->kind == N_EXPR_STMT && s->u.expr_stmt.expr->kind == N_CALL &&
		strcmp(s->u.expr_stmt.expr->u.call.name,
		       "__dtrace_speculate") == 0;
}

/* The index of the clause's speculate() statement, or -1. */
static int speculate_at(const struct node *body)
{
	for (uint32_t i = 0; i < body->u.list.n; i++)
		if (is_speculate(body->u.list.v[i]))
			return (int)i;
	return -1;
}

/* A clause that speculates stops at its end: the clauses after it in
 * the same probe record as usual (speculate(0) is "none"). */
void d_end_speculation(struct d_parser *p, struct node *probe)
{
	struct node *body = probe->u.probe.body;
	if (speculate_at(body) < 0)
		return;
	node_list_push(p->a, &body->u.list, stmt_call(p, body->pos,
		       d_call(p, body->pos, "__dtrace_speculate",
			      d_int(p, body->pos, 0), NULL, NULL)));
}

/* The clause's record line: "CPU ID FUNCTION:NAME " first (after its
 * speculate(), so that the line is part of the speculation), '\n'
 * last. */
void d_add_record(struct d_parser *p, struct node *probe)
{
	struct node *body = probe->u.probe.body;
	struct pos pos = body->pos;
	struct node_list l = { 0 };
	int spec = speculate_at(body);
	for (int i = 0; i <= spec; i++)
		node_list_push(p->a, &l, body->u.list.v[i]);
	struct node *line = d_call(p, pos, "__dtrace_probe_line",
				   d_str(p, pos, "%3d %6d %32s "),
				   d_builtin(p, pos, BI_CPU, 0),
				   d_builtin(p, pos, BI_DPROBE, 5));
	node_list_push(p->a, &line->u.call.args,
		       d_builtin(p, pos, BI_DPROBE, 4));
	node_list_push(p->a, &l, stmt_call(p, pos, line));
	for (uint32_t i = (uint32_t)(spec + 1); i < body->u.list.n; i++)
		node_list_push(p->a, &l, body->u.list.v[i]);
	node_list_push(p->a, &l, stmt_call(p, pos, d_call(p, pos, "printf",
		       d_str(p, pos, "\n"), NULL, NULL)));
	body->u.list = l;
}

static const char *clause_key(struct d_parser *p, const struct node *c)
{
	const char *k = "";
	for (uint32_t i = 0; i < c->u.probe.attach.n; i++) {
		const struct attach_point *ap = &c->u.probe.attach.v[i]->u.attach;
		k = arena_printf(p->a, "%s\n%s\t%s", k, ap->desc ? ap->desc : "",
				 ap->text);
	}
	return k;
}

/* The clause's predicate and body as a statement of one block: if
 * (predicate) { body } (if (1) without one), marked as a clause: a
 * fault in it ends it, and the later clauses run (codegen). */
static void append_clause(struct d_parser *p, struct node_list *l,
			  struct node *c)
{
	struct node *body = c->u.probe.body;
	struct node *s = node_new(p->a, N_IF, body->pos);
	s->u.if_.cond = c->u.probe.predicate ? c->u.probe.predicate :
		d_int(p, body->pos, 1);
	s->u.if_.then = body;
	s->u.if_.clause = true;
	node_list_push(p->a, l, s);
}

/* Clauses with the same descriptions run, in order, as one program:
 * as in DTrace they then share this-> variables, and an exit() in one
 * lets the later ones run. Each keeps its predicate (an if) and its
 * record line. set->clauses[i] counts the clauses block i holds, for
 * the matched line. */
void d_merge_clauses(struct d_parser *p, struct node *root,
		     struct frontend_settings *set)
{
	uint32_t n = root->u.list.n;
	uint32_t *count = arena_array(p->a, uint32_t, n ? n : 1);
	struct node_list out = { 0 };
	struct strmap keys = { 0 };
	for (uint32_t i = 0; i < n; i++) {
		struct node *c = root->u.list.v[i];
		const char *k = clause_key(p, c);
		int64_t found = strmap_get(&keys, k);
		if (found < 0) {
			strmap_put(&keys, k, out.n);
			count[out.n] = 1;
			node_list_push(p->a, &out, c);
			continue;
		}
		uint32_t j = (uint32_t)found;
		struct node *first = out.v[j];
		if (count[j] == 1) {   /* the first clause, made a block */
			struct node_list l = { 0 };
			append_clause(p, &l, first);
			struct node *b = node_new(p->a, N_BLOCK,
						  first->u.probe.body->pos);
			b->u.list = l;
			first->u.probe.body = b;
			first->u.probe.predicate = NULL;
		}
		append_clause(p, &first->u.probe.body->u.list, c);
		count[j]++;
	}
	strmap_free(&keys);
	root->u.list = out;
	set->clauses = count;
	set->nclauses = out.n;
}
