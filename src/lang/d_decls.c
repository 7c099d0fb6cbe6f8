/* d_decls.c - D's top-level declarations: `inline` constants (folded
 * here), variables' integer types (`uint64_t x;`, `self int t;`), and
 * struct, union, enum and typedef definitions, kept on their own lines
 * and run through the C declaration parser (cdefs.h) into the
 * program's types when the script is read; translator and provider
 * definitions are read over. */
#include "d_int.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "cdefs.h"


static const char *const decl_words[] = {
	"inline", "self", "this", "static", "extern", "typedef", "struct",
	"union", "enum", "translator", "provider", "int", "char", "short",
	"long", "unsigned", "signed", "string", "float", "double", "void",
	"const", "volatile", "int8_t", "int16_t", "int32_t", "int64_t",
	"uint8_t", "uint16_t", "uint32_t", "uint64_t", "uintptr_t",
	"intptr_t", "size_t", "ssize_t", "pid_t", "uid_t", "gid_t", NULL,
};

/* Whether the text at the lexer starts a declaration rather than a
 * probe description: a type or storage word, then a blank. */
bool d_at_declaration(const struct d_lexer *l)
{
	const char *s = l->p;
	size_t n = 0;
	while (isalnum((unsigned char)s[n]) || s[n] == '_')
		n++;
	if (!n || (s[n] != ' ' && s[n] != '\t' && s[n] != '\n' && s[n] != '*'))
		return false;
	for (int i = 0; decl_words[i]; i++)
		if (strlen(decl_words[i]) == n && !strncmp(decl_words[i], s, n))
			return true;
	return false;
}

/* A constant expression's value, folded: integers and strings only. */
static struct node *fold(struct d_parser *p, struct node *n)
{
	if (!n || n->kind == N_INT || n->kind == N_STR)
		return n;
	if (n->kind == N_CAST)
		return fold(p, n->u.cast.expr);
	if (n->kind == N_UNOP) {
		struct node *x = fold(p, n->u.unop.operand);
		if (!x || x->kind != N_INT)
			return NULL;
		uint64_t v = x->u.ival;
		switch (n->u.unop.op) {
		case OP_NEG: return d_int(p, n->pos, -v);
		case OP_BNOT: return d_int(p, n->pos, ~v);
		case OP_LNOT: return d_int(p, n->pos, !v);
		default: return NULL;
		}
	}
	if (n->kind == N_TERNARY) {   /* D's signed division (d_parser.c) */
		struct node *c = fold(p, n->u.ternary.cond);
		if (!c || c->kind != N_INT)
			return NULL;
		return fold(p, c->u.ival ? n->u.ternary.then : n->u.ternary.els);
	}
	if (n->kind != N_BINOP)
		return NULL;
	struct node *l = fold(p, n->u.binop.lhs), *r = fold(p, n->u.binop.rhs);
	if (!l || !r || l->kind != N_INT || r->kind != N_INT)
		return NULL;
	uint64_t a = l->u.ival, b = r->u.ival, v;
	switch (n->u.binop.op) {
	case OP_ADD: v = a + b; break;
	case OP_SUB: v = a - b; break;
	case OP_MUL: v = a * b; break;
	case OP_DIV: if (!b) return NULL; v = (uint64_t)((int64_t)a / (int64_t)b); break;
	case OP_MOD: if (!b) return NULL; v = (uint64_t)((int64_t)a % (int64_t)b); break;
	case OP_SHL: v = b < 64 ? a << b : 0; break;
	case OP_SHR: v = b < 64 ? a >> b : 0; break;
	case OP_BAND: v = a & b; break;
	case OP_BOR: v = a | b; break;
	case OP_BXOR: v = a ^ b; break;
	case OP_LT: v = (int64_t)a < (int64_t)b; break;
	case OP_NE: v = a != b; break;
	default: return NULL;
	}
	return d_int(p, n->pos, v);
}

/* A declaration at top level: variables are typed by what they are
 * assigned, so `int x;`, `self string s;` and struct, typedef,
 * translator and provider definitions are read over; `inline TYPE NAME
 * = constant;` names its value. The lexer stops after the ';'. */
/* `[self|this] INTTYPE a, b;`: the variables' D integer type, for
 * trace() and keys (d_int_type); the tokens after what it reads are
 * read over by the caller. */
static void declare_vars(struct d_parser *p)
{
	const char *scope = "@.";
	if (p->tok.kind == DT_IDENT && (!strcmp(p->tok.s, "self") ||
					!strcmp(p->tok.s, "this"))) {
		scope = p->tok.s[0] == 's' ? "@.self." : "this_";
		d_next(p);
	}
	if (p->tok.kind == DT_IDENT && (!strcmp(p->tok.s, "struct") ||
					!strcmp(p->tok.s, "union") ||
					!strcmp(p->tok.s, "enum")))
		return;
	bool is_string, is_ptr;
	const char *ty = d_cast_type(p, &is_string, &is_ptr);
	if (!ty || is_string)
		return;
	int type = is_ptr ? 8 | D_INT_UNSIGNED :
		(strstr(ty, "64") ? 8 : strstr(ty, "32") ? 4 :
		 strstr(ty, "16") ? 2 : 1) | (ty[0] == 'u' ? D_INT_UNSIGNED : 0);
	while (p->tok.kind == DT_IDENT) {
		d_declare_int(p, arena_printf(p->a, "%s%s", scope, p->tok.s),
			      type);
		d_next(p);
		if (!d_tok_is(&p->tok, ","))
			return;
		d_next(p);
	}
}

/* Text [s, e) from line `line` on into p->decls, after the blank
 * lines that keep it on its own lines (cdecl's errors name them). */
static void keep_decl(struct d_parser *p, const char *s, const char *e,
		      unsigned line)
{
	size_t pad = line > p->decls_line ? line - p->decls_line : 0;
	size_t need = p->ndecls + pad + (size_t)(e - s) + 2;
	if (need > p->decls_cap) {
		size_t cap = need * 2;
		char *v = realloc(p->decls, cap);
		if (!v)
			return;
		p->decls = v;
		p->decls_cap = cap;
	}
	memset(p->decls + p->ndecls, '\n', pad);
	p->ndecls += pad;
	p->decls_line += (unsigned)pad;
	memcpy(p->decls + p->ndecls, s, (size_t)(e - s));
	p->ndecls += (size_t)(e - s);
	for (const char *c = s; c < e; c++)
		p->decls_line += *c == '\n';
	p->decls[p->ndecls] = 0;
}

void d_declaration(struct d_parser *p)
{
	const char *start = p->lx.p;
	unsigned line = p->lx.line;
	d_next(p);
	bool is_inline = p->tok.kind == DT_IDENT && !strcmp(p->tok.s, "inline");
	bool is_typedef = p->tok.kind == DT_IDENT && !strcmp(p->tok.s, "typedef");
	bool is_tag = p->tok.kind == DT_IDENT && (!strcmp(p->tok.s, "struct") ||
		!strcmp(p->tok.s, "union") || !strcmp(p->tok.s, "enum"));
	bool body = false, var = false;
	if (!is_inline)
		declare_vars(p);
	const char *last = NULL;
	int depth = 0;
	/* an enum's body: its enumerators are names of constants */
	bool enum_next = false, enumerator = false;
	int enum_depth = -1;
	while (!p->bail && p->tok.kind != DT_EOF) {
		if (p->tok.kind == DT_IDENT && !strcmp(p->tok.s, "enum"))
			enum_next = true;
		if (d_tok_is(&p->tok, "{")) {
			depth++;
			body = true;
			if (enum_next) {
				enum_depth = depth;
				enumerator = true;
			}
			enum_next = false;
		} else if (d_tok_is(&p->tok, "}")) {
			if (depth == enum_depth)
				enum_depth = -1;
			depth--;
		} else if (depth == enum_depth && d_tok_is(&p->tok, ",")) {
			enumerator = true;
		} else if (depth == enum_depth && p->tok.kind == DT_IDENT &&
			   enumerator) {
			strmap_put(&p->enumerators, p->tok.s, 1);
			enumerator = false;
		} else if (d_tok_is(&p->tok, ";") && depth <= 0) {
			/* a type's definition, for the C declarations (a
			 * variable of a struct type is read over) */
			if (is_typedef && last)
				strmap_put(&p->typedefs, last, 1);
			if (is_typedef || (is_tag && body && !var))
				keep_decl(p, start, p->lx.p, line);
			return;
		} else if (p->tok.kind == DT_IDENT && is_tag && body &&
			   depth == 0) {
			var = true;   /* struct foo { } var; */
			d_next(p);
			continue;
		} else if (p->tok.kind == DT_IDENT)
			last = p->tok.s;
		else if (is_inline && d_tok_is(&p->tok, "=") && !depth && last) {
			struct pos pos = p->tok.pos;
			d_next(p);
			struct node *v = fold(p, d_parse_expr(p));
			if (!v) {
				if (!p->bail)
					d_error(p, pos, "inline %s: only constant "
						"integers and strings are "
						"supported yet", last);
				p->bail = true;
				return;
			}
			if ((p->ninlines & (p->ninlines - 1)) == 0) {
				uint32_t cap = p->ninlines ? p->ninlines * 2 : 1;
				struct d_inline *nv = arena_array(p->a,
					struct d_inline, cap);
				if (p->ninlines)
					memcpy(nv, p->inlines,
					       p->ninlines * sizeof(*nv));
				p->inlines = nv;
			}
			p->inlines[p->ninlines++] = (struct d_inline){ last, v };
			if (!d_tok_is(&p->tok, ";"))
				d_expect(p, ";");
			return;
		}
		d_next(p);
	}
	if (!p->bail)
		d_error(p, p->tok.pos, "syntax error: end of input in a "
			"declaration (';' expected)");
	p->bail = true;
}

void d_declare_types(struct d_parser *p)
{
	if (!p->ndecls || !p->reg)
		return;
	struct cdefs *defs = cdefs_new();
	struct cdefs_opts co = { .have_btf = p->o->have_btf };
	const char *name = p->d->src && p->d->src->name ? p->d->src->name :
		"stdin";
	if (!defs || cdefs_run(defs, name, p->decls, p->ndecls, &co, p->reg,
			       p->d) < 0) {
		struct pos none = { 0 };
		if (!p->d->nerrors)
			diag_error(p->d, none, "SYNTAX", "the script's type "
				   "declarations failed");
	}
	cdefs_free(defs);
}
