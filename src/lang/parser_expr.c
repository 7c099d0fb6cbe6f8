/* parser_expr.c - the expressions of the bpftrace parser: primaries,
 * casts, postfix and unary operators, binary operators by precedence,
 * the ternary (LANGUAGE.md §3). */
#include "parser_int.h"
#include "../types.h"

/* ---------------------------------------------------------------- */
/* expressions                                                       */

static const char *const cast_types[] = {
	"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
	"uint64", "bool", NULL,     /* bool: bpftrace 0.24 */
};

bool is_cast_type(const char *s)
{
	for (int i = 0; cast_types[i]; i++)
		if (strcmp(cast_types[i], s) == 0)
			return true;
	return false;
}

static struct node *parse_block_expr(struct parser *p);

/* Does an operand start at s (after spaces)? `(NAME) x` is a cast to the
 * typedef NAME only then, so `(pid) - 1` stays arithmetic on a builtin.
 * After a name that is no builtin, a unary -, ~ or ! starts the operand
 * of a cast too, as in bpftrace 0.17's grammar: `(u32)-1`. */
static bool operand_follows(const char *name, const char *s)
{
	uint32_t index;
	while (*s == ' ' || *s == '\t')
		s++;
	if ((*s == '-' || *s == '~' || (*s == '!' && s[1] != '=')) &&
	    builtin_lookup(name, &index) < 0)
		return s[1] != '-' && s[1] != '=';   /* not -- or -= */
	return *s == '$' || *s == '@' || *s == '"' || *s == '(' ||
	       *s == '_' || (*s >= 'a' && *s <= 'z') ||
	       (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9');
}

/* '(' already seen at the current token: is this a cast? Looks ahead in
 * the raw text without consuming: "(uint32)", "(struct x *)", and a
 * typedef name, "(pid_t *)" or "(u32) x" (sema resolves it: the script's
 * and its headers' typedefs, then BTF's). */
static const char *cast_ahead(struct parser *p, size_t *skip)
{
	const char *s = p->lx.src + p->tok.offset + 1;
	const char *q = s;
	while (*q == ' ' || *q == '\t')
		q++;
	const char *w = q;
	while ((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') ||
	       (*q >= '0' && *q <= '9') || *q == '_')
		q++;
	if (q == w)
		return NULL;
	char *word = arena_strndup(p->a, w, (size_t)(q - w));
	const char *name = NULL;
	bool typedef_name = false;
	if (is_cast_type(word)) {
		name = word;
		if (*q == '[') {
			/* (int8[8])x, (uint8[])x: an array cast (bpftrace
			 * 0.19), its size from the value when omitted */
			const char *d = q + 1;
			while (*d >= '0' && *d <= '9')
				d++;
			if (*d != ']' || d - q > 8)
				return NULL;
			name = arena_printf(p->a, "%s%.*s", word,
					    (int)(d + 1 - q), q);
			q = d + 1;
		}
	} else if (strcmp(word, "struct") == 0 || strcmp(word, "union") == 0 ||
		   strcmp(word, "enum") == 0) {
		while (*q == ' ' || *q == '\t')
			q++;
		const char *w2 = q;
		while ((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') ||
		       (*q >= '0' && *q <= '9') || *q == '_')
			q++;
		if (q == w2)
			return NULL;
		name = arena_printf(p->a, "%s %.*s", word, (int)(q - w2), w2);
	} else if (!(*w >= '0' && *w <= '9')) {
		name = word;      /* a typedef name, resolved by sema */
		typedef_name = true;
	} else {
		return NULL;
	}
	unsigned stars = 0;
	for (;;) {
		while (*q == ' ' || *q == '\t')
			q++;
		if (*q != '*')
			break;
		stars++;
		q++;
	}
	if (*q != ')')
		return NULL;
	if (typedef_name && !stars && !operand_follows(name, q + 1))
		return NULL;      /* (NAME) alone: a parenthesised name */
	if (stars)
		name = arena_printf(p->a, "%s %.*s", name, (int)stars, "********");
	*skip = (size_t)(q + 1 - s) + 1;
	return name;
}

/* Skip `n` bytes of raw text from the current token's start, then lex. */
static void skip_raw(struct parser *p, size_t n)
{
	size_t target = p->tok.offset + n;
	while (p->lx.off < target && p->lx.off < p->lx.len) {
		if (p->lx.src[p->lx.off] == '\n') {
			p->lx.line++;
			p->lx.col = 1;
		} else {
			p->lx.col++;
		}
		p->lx.off++;
	}
	next(p);
}

static struct node *new_ident_or_builtin(struct parser *p, const char *name,
					 struct pos pos)
{
	/* bpftrace 0.24's boolean literals: an integer typed bool */
	if (strcmp(name, "true") == 0 || strcmp(name, "false") == 0) {
		struct node *b = node_new(p->a, N_INT, pos);
		b->u.ival = name[0] == 't';
		b->type = type_bool();
		return b;
	}
	struct node *n = node_new(p->a, N_BUILTIN, pos);
	uint32_t index;
	int id = builtin_lookup(name, &index);
	/* bpftrace 0.24 names each builtin __builtin_NAME too */
	if (id < 0 && strncmp(name, "__builtin_", 10) == 0)
		id = builtin_lookup(name + 10, &index);
	if (id >= 0) {
		n->u.builtin.id = (enum builtin_id)id;
		n->u.builtin.index = index;
		return n;
	}
	n->kind = N_IDENT;
	n->u.str.s = name;
	n->u.str.len = (uint32_t)strlen(name);
	return n;
}

/* args -> [ expr { ',' expr } ] ')'   (after '(') */
static void parse_args(struct parser *p, struct node_list *l, struct pos open)
{
	bool pred = p->in_pred;
	p->in_pred = false;
	if (p->tok.kind != T_RPAREN) {
		do {
			struct node *e = parse_expr(p);
			if (e)
				node_list_push(p->a, l, e);
		} while (!p->panic && accept(p, T_COMMA));
	}
	p->in_pred = pred;
	expect_close(p, T_RPAREN, T_LPAREN, open);
}

/* blockexpr -> '{' [ stat { ';' stat } ] [ expr ] '}'   (bpftrace 0.24)
 * The last statement, an expression with no ';' after it, is the value. */

static struct node *parse_block_expr(struct parser *p)
{
	return parse_block_expr_(p, false);
}

/* (top: a macro's body, after which the next probe is read) */
struct node *parse_block_expr_(struct parser *p, bool top)
{
	if (!enter(p))
		return NULL;
	struct node *bx = node_new(p->a, N_BLOCK_EXPR, p->tok.pos);
	struct node *b = node_new(p->a, N_BLOCK, p->tok.pos);
	struct pos open = p->tok.pos;
	bool pred = p->in_pred;
	p->in_pred = false;
	next(p);
	bool semi = true;
	while (p->tok.kind != T_RBRACE && p->tok.kind != T_EOF && !p->panic) {
		bool blocky;
		struct node *s = parse_statement(p, &blocky);
		if (s)
			node_list_push(p->a, &b->u.list, s);
		semi = blocky;
		if (p->panic || p->tok.kind == T_RBRACE)
			break;
		if (!blocky && !accept(p, T_SEMI)) {
			expected(p, "';' or '}'");
			break;
		}
		semi = true;
	}
	p->in_pred = pred;
	p->depth--;
	if (p->panic)
		return NULL;
	if (top && p->tok.kind == T_RBRACE)
		next_attach(p);
	else if (!expect_close(p, T_RBRACE, T_LBRACE, open))
		return NULL;
	struct node *last = b->u.list.n ? b->u.list.v[b->u.list.n - 1] : NULL;
	if (!semi && last && last->kind == N_EXPR_STMT) {
		bx->u.blockx.value = last->u.expr_stmt.expr;
		b->u.list.n--;
	}
	bx->u.blockx.body = b;
	span_end(p, bx);
	return bx;
}

/* After '(': `name =` starts a record (bpftrace 0.26), which a tuple or
 * parenthesized expression never does. A copy of the lexer looks one
 * token further, quietly and without macro expansion. */
static bool starts_record(struct parser *p)
{
	if (p->tok.kind != T_IDENT)
		return false;
	struct lexer *peek = arena_new(p->a, struct lexer);
	*peek = p->lx;
	peek->quiet = true;
	peek->macro = NULL;
	return lexer_next(peek).kind == T_ASSIGN;
}

/* record -> '(' NAME '=' expr { ',' NAME '=' expr } ')': an N_TUPLE with
 * names; the ')' is the caller's. */
static struct node *parse_record(struct parser *p, struct pos open)
{
	struct node *rec = node_new(p->a, N_TUPLE, open);
	do {
		if (p->tok.kind != T_IDENT) {
			expected(p, "a record field's name");
			return rec;
		}
		const char *name = p->tok.sval;
		struct pos at = p->tok.pos;
		next(p);
		if (!expect(p, T_ASSIGN))
			return rec;
		for (uint32_t i = 0; i < rec->u.list.n; i++)
			if (strcmp(rec->u.tup.names[i], name) == 0) {
				error_at(p, at, "SYNTAX", "record field '%s' is "
					 "named twice", name);
				return rec;
			}
		struct node *e = parse_expr(p);
		if (!e)
			return rec;
		uint32_t k = rec->u.list.n;
		if (node_list_push(p->a, &rec->u.list, e) < 0)
			return rec;
		const char **nm = arena_array(p->a, const char *, k + 1);
		if (k)
			memcpy(nm, rec->u.tup.names, k * sizeof(*nm));
		nm[k] = name;
		rec->u.tup.names = nm;
	} while (!p->panic && accept(p, T_COMMA));
	return rec;
}

/* primary -> INT | STR | $var | $N | $# | @map ['[' args ']'] | NAME
 *          | NAME '(' args ')' | '(' expr {',' expr} ')' */
struct node *parse_primary(struct parser *p)
{
	struct token t = p->tok;
	struct node *n;

	switch (t.kind) {
	case T_INT:
		n = node_new(p->a, N_INT, t.pos);
		n->u.ival = t.ival;
		next(p);
		return n;
	case T_STR:
		n = node_new(p->a, N_STR, t.pos);
		n->u.str.s = t.sval;
		n->u.str.len = t.slen;
		next(p);
		return n;
	case T_VAR:
		n = node_new(p->a, N_VAR, t.pos);
		n->u.var.name = t.sval;
		next(p);
		return n;
	case T_POSITIONAL:
		n = node_new(p->a, N_POSITIONAL, t.pos);
		n->u.positional.index = (uint32_t)t.ival;
		next(p);
		return n;
	case T_POSCOUNT:
		n = node_new(p->a, N_POSITIONAL, t.pos);
		n->u.positional.is_count = true;
		next(p);
		return n;
	case T_MAP:
		n = node_new(p->a, N_MAP, t.pos);
		n->u.map.name = t.sval;
		next(p);
		if (p->tok.kind == T_LBRACKET) {
			struct pos open = p->tok.pos;
			bool pred = p->in_pred;
			p->in_pred = false;
			next(p);
			do {
				struct node *k = parse_expr(p);
				if (k)
					node_list_push(p->a, &n->u.map.keys, k);
			} while (!p->panic && accept(p, T_COMMA));
			p->in_pred = pred;
			struct pos close = p->tok.pos;
			if (expect_close(p, T_RBRACKET, T_LBRACKET, open))
				span_to(n, close);
		}
		return n;
	case T_IDENT:
		next(p);
		if (p->tok.kind == T_LPAREN) {
			n = node_new(p->a, N_CALL, t.pos);
			n->u.call.name = t.sval;
			struct pos open = p->tok.pos;
			next(p);
			parse_args(p, &n->u.call.args, open);
			span_end(p, n);
			return n;
		}
		if ((strcmp(t.sval, "struct") == 0 ||
		     strcmp(t.sval, "union") == 0 ||
		     strcmp(t.sval, "enum") == 0) && p->tok.kind == T_IDENT) {
			/* sizeof(struct x), sizeof(union x) */
			n = node_new(p->a, N_IDENT, t.pos);
			n->u.str.s = arena_printf(p->a, "%s %s", t.sval,
						  p->tok.sval);
			n->u.str.len = (uint32_t)strlen(n->u.str.s);
			span_to(n, p->tok.pos);
			next(p);
			return n;
		}
		return new_ident_or_builtin(p, t.sval, t.pos);
	case T_LBRACE:
		return parse_block_expr(p);
	case T_IF:     /* an if expression (bpftrace 0.25) */
		return parse_if_expr(p);
	case T_LPAREN: {
		struct pos open = t.pos;
		bool pred = p->in_pred;
		p->in_pred = false;
		next(p);
		n = starts_record(p) ? parse_record(p, open) : parse_expr(p);
		if (p->tok.kind == T_COMMA) {
			struct node *tup = node_new(p->a, N_TUPLE, open);
			if (n)
				node_list_push(p->a, &tup->u.list, n);
			while (!p->panic && accept(p, T_COMMA)) {
				struct node *e = parse_expr(p);
				if (e)
					node_list_push(p->a, &tup->u.list, e);
			}
			n = tup;
		}
		p->in_pred = pred;
		struct pos close = p->tok.pos;
		if (expect_close(p, T_RPAREN, T_LPAREN, open) && n &&
		    n->kind == N_TUPLE)
			span_to(n, close);
		return n;
	}
	default:
		expected(p, "expression");
		return NULL;
	}
}

/* postfix -> primary { '++' | '--' | '.' NAME | '.' INT | '->' NAME
 *                    | '[' expr ']' } */
static struct node *parse_postfix(struct parser *p)
{
	/* where the operand starts, its parentheses included: a postfix
	 * node spans from there, as in bpftrace (`((struct foo *)0)->a`
	 * is reported from its first '(') */
	struct pos start = p->tok.pos;
	start.len = 1;
	struct node *n = parse_primary(p);
	unsigned depth = p->depth;
	while (n && !p->panic) {
		struct token t = p->tok;
		if ((t.kind == T_INC || t.kind == T_DEC || t.kind == T_DOT ||
		     t.kind == T_ARROW || t.kind == T_LBRACKET) && !enter(p)) {
			n = NULL;
			break;
		}
		if (t.kind == T_INC || t.kind == T_DEC) {
			if (n->kind != N_VAR && n->kind != N_MAP) {
				error_at(p, t.pos, "SYNTAX",
					 "'%s' needs a variable or a map",
					 token_name(t.kind));
				{ n = NULL; break; }
			}
			struct node *m = node_new(p->a, N_INCDEC, start);
			m->u.incdec.op = t.kind == T_INC ? OP_POSTINC : OP_POSTDEC;
			m->u.incdec.target = n;
			span_to(m, t.pos);
			next(p);
			n = m;
		} else if (t.kind == T_DOT || t.kind == T_ARROW) {
			next(p);
			struct token f = p->tok;
			if (t.kind == T_DOT && f.kind == T_INT) {
				struct node *m = node_new(p->a, N_TUPLE_INDEX, start);
				m->u.tindex.base = n;
				m->u.tindex.index = f.ival > UINT32_MAX ?
					UINT32_MAX : (uint32_t)f.ival;
				span_to(m, f.pos);
				next(p);
				n = m;
				continue;
			}
			if (f.kind != T_IDENT) {
				expected(p, arena_printf(p->a, "field name after '%s'",
							 token_name(t.kind)));
				{ n = NULL; break; }
			}
			struct node *m = node_new(p->a, N_FIELD, start);
			m->u.field.base = n;
			m->u.field.name = f.sval;
			m->u.field.arrow = t.kind == T_ARROW;
			span_to(m, f.pos);
			next(p);
			n = m;
		} else if (t.kind == T_LBRACKET) {
			bool pred = p->in_pred;
			p->in_pred = false;
			next(p);
			struct node *m = node_new(p->a, N_INDEX, start);
			m->u.index.base = n;
			m->u.index.index = parse_expr(p);
			p->in_pred = pred;
			struct pos close = p->tok.pos;
			if (!expect_close(p, T_RBRACKET, T_LBRACKET, t.pos))
				{ n = NULL; break; }
			span_to(m, close);
			n = m;
		} else {
			break;
		}
	}
	p->depth = depth;
	return n;
}


/* unary -> ('!' | '~' | '-' | '*' | '&' | '++' | '--') unary
 *        | '(' TYPE ')' unary | postfix */
struct node *parse_unary(struct parser *p)
{
	struct token t = p->tok;
	enum op op;
	struct node *n;

	if (!enter(p))
		return NULL;
	switch (t.kind) {
	case T_BANG: op = OP_LNOT; goto unop;
	case T_TILDE: op = OP_BNOT; goto unop;
	case T_MINUS: op = OP_NEG; goto unop;
	case T_STAR: op = OP_DEREF; goto unop;
	case T_AMP: op = OP_ADDROF; goto unop;
	unop:
		next(p);
		struct node *e = parse_unary(p);
		if (!e) {
			n = NULL;
			break;
		}
		if (op == OP_NEG && e->kind == N_INT) {
			/* "-5" is a literal, as in bpftrace; typed signed
			 * here, so sema tells it from a literal past int64's
			 * range (a uint64 in 0.26) */
			e->u.ival = (uint64_t)-e->u.ival;
			e->type = type_s64();
			if (e->pos.line == t.pos.line) {
				unsigned end = e->pos.col + e->pos.len;
				e->pos.col = t.pos.col;
				e->pos.len = end - t.pos.col;
			}
			n = e;
			break;
		}
		n = node_new(p->a, N_UNOP, t.pos);
		n->u.unop.op = op;
		n->u.unop.operand = e;
		span_end(p, n);
		break;
	case T_INC:
	case T_DEC:
		next(p);
		n = parse_unary(p);
		if (!n)
			break;
		if (n->kind != N_VAR && n->kind != N_MAP) {
			error_at(p, t.pos, "SYNTAX",
				 "'%s' needs a variable or a map",
				 token_name(t.kind));
			n = NULL;
			break;
		} else {
			struct node *m = node_new(p->a, N_INCDEC, t.pos);
			m->u.incdec.op = t.kind == T_INC ? OP_PREINC : OP_PREDEC;
			m->u.incdec.target = n;
			span_end(p, m);
			n = m;
		}
		break;
	case T_LPAREN: {
		size_t skip;
		const char *ty = cast_ahead(p, &skip);
		if (ty) {
			skip_raw(p, skip);
			n = node_new(p->a, N_CAST, t.pos);
			n->u.cast.type_name = ty;
			n->u.cast.expr = parse_unary(p);
			if (!n->u.cast.expr)
				n = NULL;
			span_end(p, n);
			break;
		}
		n = parse_postfix(p);
		break;
	}
	default:
		n = parse_postfix(p);
	}
	p->depth--;
	return n;
}

/* Binary operators by precedence level, loosest first. */
static const struct binop_level {
	enum tok t[4];
	enum op op[4];
} levels[] = {
	{ { T_LOR }, { OP_LOR } },
	{ { T_LAND }, { OP_LAND } },
	{ { T_PIPE }, { OP_BOR } },
	{ { T_CARET }, { OP_BXOR } },
	{ { T_AMP }, { OP_BAND } },
	{ { T_EQ, T_NE }, { OP_EQ, OP_NE } },
	{ { T_LT, T_LE, T_GT, T_GE }, { OP_LT, OP_LE, OP_GT, OP_GE } },
	{ { T_SHL, T_SHR }, { OP_SHL, OP_SHR } },
	{ { T_PLUS, T_MINUS }, { OP_ADD, OP_SUB } },
	{ { T_STAR, T_SLASH, T_PERCENT }, { OP_MUL, OP_DIV, OP_MOD } },
};
#define NLEVELS (sizeof(levels) / sizeof(levels[0]))

/* In a predicate, a '/' followed by '{' closes it (as in bpftrace). */
static bool ends_predicate(struct parser *p)
{
	if (!p->in_pred || p->tok.kind != T_SLASH)
		return false;
	const char *s = p->lx.src + p->tok.offset + 1;
	for (;;) {
		while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
			s++;
		if (s[0] == '/' && s[1] == '/') {
			while (*s && *s != '\n')
				s++;
		} else if (s[0] == '/' && s[1] == '*') {
			const char *e = strstr(s + 2, "*/");
			if (!e)
				return false;
			s = e + 2;
		} else {
			break;
		}
	}
	return *s == '{' || *s == 0;
}

/* binary(k) -> binary(k+1) { OP(k) binary(k+1) } */
static struct node *parse_binary(struct parser *p, size_t level)
{
	if (level == NLEVELS)
		return parse_unary(p);
	struct node *lhs = parse_binary(p, level + 1);
	unsigned depth = p->depth;
	while (lhs && !p->panic) {
		int i;
		for (i = 0; i < 4 && levels[level].t[i]; i++)
			if (p->tok.kind == levels[level].t[i])
				break;
		if (i == 4 || !levels[level].t[i] || ends_predicate(p))
			break;
		/* the node spans both operands, as the caret should */
		struct node *n = node_new(p->a, N_BINOP, lhs->pos);
		n->u.binop.op = levels[level].op[i];
		next(p);
		n->u.binop.lhs = lhs;
		n->u.binop.rhs = parse_binary(p, level + 1);
		if (!n->u.binop.rhs) {
			p->depth = depth;
			return NULL;
		}
		span_end(p, n);
		lhs = n;
		/* a chain a+b+c... deepens the tree on its left */
		if (!enter(p)) {
			lhs = NULL;
			break;
		}
	}
	p->depth = depth;
	return lhs;
}

/* expr -> binary(0) [ '?' [ expr ] ':' expr ] */
struct node *parse_expr(struct parser *p)
{
	if (!enter(p))
		return NULL;
	struct node *c = parse_binary(p, 0);
	if (c && p->tok.kind == T_QUESTION) {
		struct node *n = node_new(p->a, N_TERNARY, c->pos);
		next(p);
		n->u.ternary.cond = c;
		/* a ?: b, bpftrace 0.26's: a if it is non-zero, else b (a
		 * is read twice, as its one node in both places) */
		if (p->tok.kind == T_COLON)
			n->u.ternary.then = c;
		else
			n->u.ternary.then = parse_expr(p);
		if (n->u.ternary.then && expect(p, T_COLON))
			n->u.ternary.els = parse_expr(p);
		span_end(p, n);
		c = n->u.ternary.els ? n : NULL;
	}
	p->depth--;
	return c;
}

