/* cg_stmt.c - statements: assignments, if/else, while, unroll, break,
 * continue, return; stack objects are released after each statement. */
#include "cg.h"

#include <string.h>

static void assign_var(struct cg *cg, const struct node *st)
{
	const struct node *t = st->u.assign.target;
	const struct node *v = st->u.assign.value;
	int32_t slot = t->u.var.slot;
	const struct type *vt = cg->pnode->u.probe.var_types[slot];
	if (!type_is_int(vt)) {
		cg_expr_to(cg, v, cg->var_mem[slot], vt);
		return;
	}
	vreg r = cg->var_reg[slot];
	struct cval x = cg_expr(cg, v);
	if (st->u.assign.op == OP_NONE) {
		if (x.kind == CV_IMM)
			ir_movi(cg->ir, r, x.imm);
		else
			ir_mov(cg->ir, r, cg_reg(cg, x));
		cg_var_home(cg, slot);
		return;
	}
	x = cg_scale_step(cg, st->u.assign.op, vt, x);
	if (x.kind == CV_IMM && x.imm >= INT32_MIN && x.imm <= INT32_MAX)
		ir_alui(cg->ir, cg_alu_code(st->u.assign.op), r, r, x.imm);
	else
		ir_alu(cg->ir, cg_alu_code(st->u.assign.op), r, r, cg_reg(cg, x));
	cg_normalize(cg, r, vt);
	cg_var_home(cg, slot);
}

static void loop_push(struct cg *cg, uint32_t brk, uint32_t cont)
{
	if (cg->nloops < sizeof(cg->loops) / sizeof(*cg->loops))
		cg->loops[cg->nloops] = (struct cg_loop){ brk, cont };
	cg->nloops++;
}

static void jump_loop(struct cg *cg, const struct node *n, bool brk)
{
	if (!cg->nloops || cg->nloops > sizeof(cg->loops) / sizeof(*cg->loops)) {
		cg_error(cg, n->pos, "%s outside a loop",
			 brk ? "break" : "continue");
		return;
	}
	struct cg_loop *l = &cg->loops[cg->nloops - 1];
	ir_ja(cg->ir, brk ? l->brk : l->cont);
}

void cg_stmt(struct cg *cg, const struct node *n)
{
	struct cg_mark mk = cg_mark(cg);
	cg->pos = n->kind == N_EXPR_STMT ? n->u.expr_stmt.expr->pos : n->pos;
	switch (n->kind) {
	case N_EXPR_STMT: {
		const struct node *e = n->u.expr_stmt.expr;
		if (e->kind == N_CALL)
			cg_call_stmt(cg, e);
		else
			cg_expr(cg, e);
		break;
	}
	case N_ASSIGN:
		if (n->u.assign.target->kind == N_MAP)
			cg_map_assign(cg, n);
		else
			assign_var(cg, n);
		break;
	case N_IF: {
		uint32_t els = ir_label(cg->ir), done = ir_label(cg->ir);
		bool was_in = cg->in_clause;
		uint32_t was_l = cg->l_clause, was_action = cg->d_action;
		if (n->u.if_.clause) {   /* D: a fault leaves the clause */
			cg->in_clause = true;
			cg->l_clause = els;
			cg->d_action = 0;    /* its predicate */
		}
		cg_cond_jump(cg, n->u.if_.cond, false, els);
		cg_release(cg, mk);
		if (n->u.if_.clause)
			cg_clause_body(cg, n->u.if_.then);
		else
			cg_block(cg, n->u.if_.then);
		cg->in_clause = was_in;
		cg->l_clause = was_l;
		cg->d_action = was_action;
		if (n->u.if_.els) {
			ir_ja(cg->ir, done);
			ir_place(cg->ir, els);
			if (n->u.if_.els->kind == N_IF)
				cg_stmt(cg, n->u.if_.els);
			else
				cg_block(cg, n->u.if_.els);
			ir_place(cg->ir, done);
		} else {
			ir_place(cg->ir, els);
		}
		break;
	}
	case N_WHILE: {
		if (n->u.loop.step) {   /* for ($i : a..b), cg_formap.c */
			cg_for_map(cg, n);
			break;
		}
		uint32_t top = ir_label(cg->ir), done = ir_label(cg->ir);
		uint32_t next = n->u.loop.step ? ir_label(cg->ir) : top;
		ir_place(cg->ir, top);
		cg_cond_jump(cg, n->u.loop.cond, false, done);
		cg_release(cg, mk);
		loop_push(cg, done, next);
		cg_block(cg, n->u.loop.body);
		cg->nloops--;
		if (n->u.loop.step) {   /* a for loop's increment */
			ir_place(cg->ir, next);
			cg_stmt(cg, n->u.loop.step);
		}
		ir_ja(cg->ir, top);
		ir_place(cg->ir, done);
		break;
	}
	case N_UNROLL: {
		uint32_t done = ir_label(cg->ir);
		for (uint64_t i = 0; i < n->u.loop.count; i++) {
			uint32_t next = ir_label(cg->ir);
			loop_push(cg, done, next);
			cg_block(cg, n->u.loop.body);
			cg->nloops--;
			ir_place(cg->ir, next);
		}
		ir_place(cg->ir, done);
		break;
	}
	case N_BREAK:
		jump_loop(cg, n, true);
		break;
	case N_CONTINUE:
		jump_loop(cg, n, false);
		break;
	case N_RETURN:
		ir_ja(cg->ir, cg->l_exit);
		break;
	case N_BLOCK:
		cg_block(cg, n);
		break;
	case N_FOR_MAP:
		cg_for_map(cg, n);
		break;
	default:
		cg_error(cg, n->pos, "statement cannot be compiled");
	}
	cg_release(cg, mk);
}

/* A statement D's front end added to a clause (its record line, its
 * deferred exit's variables): not one of the script's actions. */
static bool d_internal(const struct node *s)
{
	if (s->kind == N_ASSIGN && s->u.assign.target->kind == N_VAR)
		return strncmp(s->u.assign.target->u.var.name, "__dtrace_",
			       9) == 0;
	if (s->kind == N_EXPR_STMT && s->u.expr_stmt.expr->kind == N_CALL)
		return strcmp(s->u.expr_stmt.expr->u.call.name,
			      "__dtrace_probe_line") == 0;
	return false;
}

void cg_clause_body(struct cg *cg, const struct node *body)
{
	if (!body || body->kind != N_BLOCK) {
		cg_block(cg, body);
		return;
	}
	cg->d_action = 0;
	for (uint32_t i = 0; i < body->u.list.n; i++) {
		if (!d_internal(body->u.list.v[i]))
			cg->d_action++;
		cg_stmt(cg, body->u.list.v[i]);
	}
}

void cg_block(struct cg *cg, const struct node *n)
{
	if (!n)
		return;
	if (n->kind != N_BLOCK) {
		cg_stmt(cg, n);
		return;
	}
	for (uint32_t i = 0; i < n->u.list.n; i++)
		cg_stmt(cg, n->u.list.v[i]);
}
