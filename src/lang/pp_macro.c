/* pp_macro.c - macros: the table, #define, and expansion.
 *
 * Expansion follows Prosser's algorithm as chibicc writes it: every token
 * carries a hide set, the macros whose expansion produced it; a name in
 * its own token's hide set is not expanded again, which is what stops
 * `#define A A` and mutual recursion. An object-like macro's tokens get
 * the name's hide set plus the name; a function-like macro's get the
 * intersection of the name's and the closing parenthesis's, plus the
 * name. Arguments are expanded fully before substitution, except next to
 * # (stringizing) and ## (pasting). Every token made counts against the
 * run's token bound, so a macro that expands exponentially stops with an
 * error instead of eating the machine. */
#include "pp_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t hash_name(const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}

static struct macro **slot(struct pp *pp, const char *name, size_t len)
{
	size_t mask = pp->mcap - 1;
	for (size_t i = hash_name(name, len) & mask;; i = (i + 1) & mask) {
		struct macro *m = pp->mtab[i];
		if (!m || (m->len == len && !memcmp(m->name, name, len)))
			return &pp->mtab[i];
	}
}

struct macro *pp_find_macro(struct pp *pp, const char *name, size_t len)
{
	if (!pp->mcap)
		return NULL;
	struct macro *m = *slot(pp, name, len);
	return m && !m->dead ? m : NULL;
}

static int grow(struct pp *pp)
{
	size_t cap = pp->mcap ? pp->mcap * 2 : 1024;
	struct macro **old = pp->mtab;
	size_t ocap = pp->mcap;
	pp->mtab = calloc(cap, sizeof(*pp->mtab));
	if (!pp->mtab) {
		pp->mtab = old;
		return -1;
	}
	pp->mcap = cap;
	for (size_t i = 0; i < ocap; i++)
		if (old[i])
			*slot(pp, old[i]->name, old[i]->len) = old[i];
	free(old);
	return 0;
}

struct macro *pp_add_macro(struct pp *pp, const char *name, size_t len)
{
	if ((pp->mcount + 1) * 2 > pp->mcap && grow(pp) < 0)
		return NULL;
	struct macro **s = slot(pp, name, len);
	if (!*s) {
		*s = arena_new(&pp->arena, struct macro);
		pp->mcount++;
	}
	struct macro *m = *s;
	memset(m, 0, sizeof(*m));
	m->name = arena_strndup(&pp->arena, name, len);
	m->len = (uint32_t)len;
	return m;
}

void pp_undef(struct pp *pp, const char *name, size_t len)
{
	struct macro *m = pp_find_macro(pp, name, len);
	if (m)
		m->dead = true;
}

/* ---- hide sets ---- */

static bool hs_has(const struct hideset *hs, const char *s, size_t len)
{
	for (; hs; hs = hs->next)
		if (hs->len == len && !memcmp(hs->name, s, len))
			return true;
	return false;
}

static const struct hideset *hs_add(struct pp *pp, const struct hideset *hs,
				    const char *name, uint32_t len)
{
	if (hs_has(hs, name, len))
		return hs;
	struct hideset *h = arena_new(&pp->arena, struct hideset);
	h->name = name;
	h->len = len;
	h->next = hs;
	return h;
}

static const struct hideset *hs_union(struct pp *pp, const struct hideset *a,
				      const struct hideset *b)
{
	for (; b; b = b->next)
		a = hs_add(pp, a, b->name, b->len);
	return a;
}

static const struct hideset *hs_intersect(struct pp *pp,
					  const struct hideset *a,
					  const struct hideset *b)
{
	const struct hideset *r = NULL;
	for (; a; a = a->next)
		if (hs_has(b, a->name, a->len))
			r = hs_add(pp, r, a->name, a->len);
	return r;
}

/* ---- spelling ---- */

char *pp_spell(struct pp *pp, const struct ptok *t, const struct ptok *end,
	       size_t *len)
{
	size_t n = 0;
	for (const struct ptok *u = t; u && u != end && u->kind != PT_EOF;
	     u = u->next)
		n += u->len + 1;
	char *buf = arena_alloc(&pp->arena, n + 1), *w = buf;
	for (const struct ptok *u = t; u && u != end && u->kind != PT_EOF;
	     u = u->next) {
		if (u != t && u->space)
			*w++ = ' ';
		memcpy(w, u->text, u->len);
		w += u->len;
	}
	*w = '\0';
	*len = (size_t)(w - buf);
	return buf;
}

/* ---- #define ---- */

static bool is_p(const struct ptok *t, const char *s)
{
	return t->kind == PT_PUNCT && ptok_is(t, s);
}

/* #define NAME body | NAME(params) body; tok follows "define". */
void pp_read_define(struct pp *pp, struct ptok **rest, struct ptok *tok)
{
	if (tok->kind != PT_IDENT || tok->bol) {
		pp_error(pp, tok->bol ? NULL : tok, "PP_DIRECTIVE",
			 "macro name expected after #define");
		*rest = pp_skip_line(pp, tok);
		return;
	}
	struct ptok *name = tok;
	tok = tok->next;
	const char *params[PP_MAX_MACRO_ARGS];
	uint32_t np = 0;
	bool funclike = false, variadic = false;
	if (!tok->bol && !tok->space && is_p(tok, "(")) {
		funclike = true;
		tok = tok->next;
		while (!tok->bol && !is_p(tok, ")")) {
			if (np && !is_p(tok, ",")) {
				goto bad;
			} else if (np) {
				tok = tok->next;
			}
			if (is_p(tok, "...")) {
				params[np++] = "__VA_ARGS__";
				variadic = true;
				tok = tok->next;
				break;
			}
			if (tok->kind != PT_IDENT || tok->bol ||
			    np >= PP_MAX_MACRO_ARGS)
				goto bad;
			params[np++] = arena_strndup(&pp->arena, tok->text,
						     tok->len);
			tok = tok->next;
			if (is_p(tok, "...")) { /* GNU: NAME... */
				variadic = true;
				tok = tok->next;
				break;
			}
		}
		if (tok->bol || !is_p(tok, ")"))
			goto bad;
		tok = tok->next;
	}
	struct ptok *body = pp_copy_line(pp, rest, tok);
	struct macro *m = pp_add_macro(pp, name->text, name->len);
	if (!m) {
		pp_fatal(pp, name, "PP_LIMIT", "out of memory");
		return;
	}
	m->funclike = funclike;
	m->variadic = variadic;
	m->nparams = np;
	m->params = arena_array(&pp->arena, const char *, np ? np : 1);
	memcpy(m->params, params, np * sizeof(*params));
	m->body = body;
	return;
bad:
	pp_error(pp, name, "PP_DIRECTIVE", "malformed parameter list in "
		 "#define %.*s", (int)name->len, name->text);
	*rest = pp_skip_line(pp, tok);
}

/* ---- expansion ---- */

struct arg {
	const char *name;
	bool va;
	struct ptok *tok;       /* the argument as written, EOF-ended */
	struct ptok *expanded;  /* fully expanded, made on first use */
};

static struct ptok *eof_like(struct pp *pp, const struct ptok *at)
{
	struct ptok *e = pp_new_tok(pp, at);
	if (!e)
		return &pp->eof;
	e->kind = PT_EOF;
	e->len = 0;
	e->text = "";
	return e;
}

/* One argument: tokens up to a ',' or ')' at depth 0 (for the variadic
 * one, only ')'). */
static struct ptok *read_arg(struct pp *pp, struct ptok **rest,
			     struct ptok *tok, bool va, bool *ok)
{
	struct ptok head = { 0 }, *cur = &head;
	int depth = 0;
	for (;; tok = tok->next) {
		if (tok->kind == PT_EOF || tok->kind == PT_END_FILE) {
			*ok = false;
			break;
		}
		if (depth == 0 && (is_p(tok, ")") || (!va && is_p(tok, ","))))
			break;
		if (is_p(tok, "("))
			depth++;
		else if (is_p(tok, ")"))
			depth--;
		struct ptok *c = pp_new_tok(pp, tok);
		if (!c) {
			*ok = false;
			break;
		}
		c->bol = false;
		cur = cur->next = c;
	}
	cur->next = eof_like(pp, tok);
	*rest = tok;
	return head.next;
}

/* The arguments of a call whose '(' is `tok`; NULL on error. */
static struct arg *read_args(struct pp *pp, struct ptok **rest,
			     struct ptok *tok, const struct macro *m,
			     const struct ptok *name)
{
	struct arg *args = arena_array(&pp->arena, struct arg,
				       m->nparams + 1);
	bool ok = true;
	tok = tok->next;
	uint32_t i = 0;
	uint32_t fixed = m->variadic ? m->nparams - 1 : m->nparams;
	for (; i < fixed; i++) {
		if (i > 0) {
			if (!is_p(tok, ","))
				break;
			tok = tok->next;
		}
		args[i].name = m->params[i];
		args[i].tok = read_arg(pp, &tok, tok, false, &ok);
		if (!ok)
			goto unterminated;
	}
	if (m->variadic) {
		args[i].name = m->params[i];
		args[i].va = true;
		if (is_p(tok, ")")) {
			args[i].tok = eof_like(pp, tok);
		} else {
			if (i > 0) {
				if (!is_p(tok, ","))
					goto count;
				tok = tok->next;
			}
			args[i].tok = read_arg(pp, &tok, tok, true, &ok);
			if (!ok)
				goto unterminated;
		}
		i++;
	}
	/* F() for a macro of one parameter: that argument is empty */
	if (i < m->nparams && m->nparams == 1 && is_p(tok, ")")) {
		args[0].name = m->params[0];
		args[0].tok = eof_like(pp, tok);
		i = 1;
	}
	if (i != m->nparams || !is_p(tok, ")"))
		goto count;
	*rest = tok;
	return args;
count:
	pp_error(pp, name, "MACRO_ARGS", "wrong number of arguments to "
		 "macro '%s' (it takes %u%s)", m->name, fixed,
		 m->variadic ? " or more" : "");
	return NULL;
unterminated:
	if (!pp->fatal)
		pp_error(pp, name, "MACRO_ARGS", "unterminated call of macro "
			 "'%s'", m->name);
	return NULL;
}

static struct arg *find_arg(struct arg *args, const struct macro *m,
			    const struct ptok *t)
{
	if (t->kind != PT_IDENT)
		return NULL;
	for (uint32_t i = 0; i < m->nparams; i++)
		if (ptok_is(t, args[i].name))
			return &args[i];
	return NULL;
}

static struct ptok *expand_all(struct pp *pp, struct ptok *tok)
{
	struct ptok head = { 0 }, *cur = &head;
	while (tok->kind != PT_EOF && !pp->fatal) {
		if (pp_expand(pp, &tok, tok))
			continue;
		struct ptok *c = pp_new_tok(pp, tok);
		if (!c) {
			pp_over_budget(pp, tok);
			break;
		}
		cur = cur->next = c;
		tok = tok->next;
	}
	cur->next = tok->kind == PT_EOF ? tok : eof_like(pp, tok);
	return head.next;
}

static struct ptok *stringize(struct pp *pp, const struct ptok *at,
			      const struct ptok *arg)
{
	size_t len;
	const char *s = pp_spell(pp, arg, NULL, &len);
	char *buf = arena_alloc(&pp->arena, len * 2 + 3), *w = buf;
	*w++ = '"';
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '"' || s[i] == '\\')
			*w++ = '\\';
		*w++ = s[i];
	}
	*w++ = '"';
	struct ptok *t = pp_tokenize_one(pp, buf, (size_t)(w - buf), at);
	if (!t)
		t = eof_like(pp, at);
	return t;
}

static struct ptok *paste(struct pp *pp, const struct ptok *l,
			  const struct ptok *r)
{
	char *buf = arena_printf(&pp->arena, "%.*s%.*s", (int)l->len, l->text,
				 (int)r->len, r->text);
	struct ptok *t = pp_tokenize_one(pp, buf, strlen(buf), l);
	if (!t) {
		pp_error(pp, l, "MACRO_ARGS", "pasting forms '%s', an invalid "
			 "preprocessing token", buf);
		t = pp_new_tok(pp, l);
		if (!t)
			return &pp->eof;
	}
	t->space = l->space;
	t->hs = l->hs;
	return t;
}

static struct ptok *copy(struct pp *pp, const struct ptok *t)
{
	struct ptok *c = pp_new_tok(pp, t);
	return c ? c : &pp->eof;
}

static bool empty(const struct ptok *t)
{
	return t->kind == PT_EOF;
}

/* Replace the parameters in a function-like macro's body. */
static struct ptok *subst(struct pp *pp, const struct macro *m,
			  struct arg *args)
{
	struct ptok head = { 0 }, *cur = &head;
	struct ptok *tok = m->body;
	while (tok->kind != PT_EOF && !pp->fatal) {
		struct arg *arg;
		if (is_p(tok, "#")) {
			arg = find_arg(args, m, tok->next);
			if (!arg) {
				pp_error(pp, tok, "PP_DIRECTIVE", "'#' is not "
					 "followed by a macro parameter");
				return NULL;
			}
			cur = cur->next = stringize(pp, tok, arg->tok);
			cur->space = tok->space;
			tok = tok->next->next;
			continue;
		}
		/* GNU: , ## __VA_ARGS__ drops the comma when it is empty */
		if (is_p(tok, ",") && is_p(tok->next, "##")) {
			arg = find_arg(args, m, tok->next->next);
			if (arg && arg->va) {
				if (empty(arg->tok)) {
					tok = tok->next->next->next;
				} else {
					cur = cur->next = copy(pp, tok);
					tok = tok->next->next;
				}
				continue;
			}
		}
		if (is_p(tok, "##")) {
			if (cur == &head || empty(tok->next)) {
				pp_error(pp, tok, "PP_DIRECTIVE", "'##' cannot "
					 "be at either end of a macro body");
				return NULL;
			}
			arg = find_arg(args, m, tok->next);
			if (arg) {
				if (!empty(arg->tok)) {
					struct ptok *n = cur->next;
					*cur = *paste(pp, cur, arg->tok);
					cur->next = n;
					for (struct ptok *t = arg->tok->next;
					     !empty(t); t = t->next)
						cur = cur->next = copy(pp, t);
				}
				tok = tok->next->next;
				continue;
			}
			*cur = *paste(pp, cur, tok->next);
			cur->next = NULL;
			tok = tok->next->next;
			continue;
		}
		arg = find_arg(args, m, tok);
		if (arg && is_p(tok->next, "##")) {
			struct ptok *rhs = tok->next->next;
			if (empty(arg->tok)) {
				struct arg *a2 = find_arg(args, m, rhs);
				if (a2) {
					for (struct ptok *t = a2->tok; !empty(t);
					     t = t->next)
						cur = cur->next = copy(pp, t);
				} else {
					cur = cur->next = copy(pp, rhs);
				}
				tok = rhs->next;
				continue;
			}
			for (struct ptok *t = arg->tok; !empty(t); t = t->next)
				cur = cur->next = copy(pp, t);
			tok = tok->next;
			continue;
		}
		/* __VA_OPT__(x): x if the variadic argument is not empty */
		if (tok->kind == PT_IDENT && ptok_is(tok, "__VA_OPT__") &&
		    is_p(tok->next, "(") && m->variadic) {
			struct arg *va = &args[m->nparams - 1];
			struct ptok *t = tok->next->next;
			int depth = 0;
			for (; !empty(t); t = t->next) {
				if (is_p(t, "("))
					depth++;
				else if (is_p(t, ")") && depth-- == 0)
					break;
				else if (!empty(va->tok))
					cur = cur->next = copy(pp, t);
			}
			tok = empty(t) ? t : t->next;
			continue;
		}
		if (arg) {
			if (!arg->expanded)
				arg->expanded = expand_all(pp, arg->tok);
			for (struct ptok *t = arg->expanded; !empty(t);
			     t = t->next) {
				cur = cur->next = copy(pp, t);
				if (t == arg->expanded)
					cur->space = tok->space;
			}
			tok = tok->next;
			continue;
		}
		cur = cur->next = copy(pp, tok);
		tok = tok->next;
	}
	cur->next = NULL;
	return head.next;
}

/* Copy `body` (NULL- or EOF-ended) with hs added to every token, placed
 * where the macro was used, and link it in front of `rest`. */
static struct ptok *splice(struct pp *pp, const struct ptok *body,
			   const struct hideset *hs, const struct ptok *use,
			   struct ptok *rest)
{
	struct ptok head = { 0 }, *cur = &head;
	for (const struct ptok *t = body; t && t->kind != PT_EOF; t = t->next) {
		struct ptok *c = pp_new_tok(pp, t);
		if (!c) {
			pp_over_budget(pp, use);
			return rest;
		}
		c->hs = hs_union(pp, c->hs, hs);
		c->file = use->file;
		c->line = use->line;
		c->col = use->col;
		c->bol = false;
		if (t == body)
			c->space = use->space;
		cur = cur->next = c;
	}
	cur->next = rest;
	return head.next ? head.next : rest;
}

bool pp_expand(struct pp *pp, struct ptok **rest, struct ptok *tok)
{
	if (tok->kind != PT_IDENT || hs_has(tok->hs, tok->text, tok->len))
		return false;
	struct macro *m = pp_find_macro(pp, tok->text, tok->len);
	if (!m)
		return false;
	if (pp_over_budget(pp, tok)) {
		*rest = &pp->eof;
		return true;
	}
	if (m->builtin) {
		*rest = m->builtin(pp, tok);
		return true;
	}
	if (!m->funclike) {
		const struct hideset *hs = hs_add(pp, tok->hs, m->name, m->len);
		*rest = splice(pp, m->body, hs, tok, tok->next);
		return true;
	}
	if (!is_p(tok->next, "("))
		return false; /* a function-like macro's name alone */
	struct ptok *rparen;
	struct arg *args = read_args(pp, &rparen, tok->next, m, tok);
	if (!args) {
		/* drop the name and carry on after it */
		*rest = tok->next;
		return true;
	}
	const struct hideset *hs = hs_intersect(pp, tok->hs, rparen->hs);
	hs = hs_add(pp, hs, m->name, m->len);
	struct ptok *body = subst(pp, m, args);
	*rest = splice(pp, body, hs, tok, rparen->next);
	return true;
}

/* ---- built-in macros ---- */

static struct ptok *make(struct pp *pp, struct ptok *use, const char *text,
			 enum ptok_kind kind)
{
	struct ptok *t = pp_new_tok(pp, use);
	if (!t)
		return use->next;
	t->kind = kind;
	t->text = text;
	t->len = (uint32_t)strlen(text);
	t->next = use->next;
	t->bol = false;
	return t;
}

static struct ptok *b_line(struct pp *pp, struct ptok *use)
{
	return make(pp, use, arena_printf(&pp->arena, "%u", use->line),
		    PT_NUM);
}

static struct ptok *b_file(struct pp *pp, struct ptok *use)
{
	return make(pp, use, arena_printf(&pp->arena, "\"%s\"",
					  pp_file_name(pp, use->file)), PT_STR);
}

static struct ptok *b_counter(struct pp *pp, struct ptok *use)
{
	return make(pp, use, arena_printf(&pp->arena, "%u", pp->counter++),
		    PT_NUM);
}

static struct ptok *b_level(struct pp *pp, struct ptok *use)
{
	return make(pp, use, arena_printf(&pp->arena, "%u",
					  pp->depth ? pp->depth - 1 : 0),
		    PT_NUM);
}

static struct ptok *b_date(struct pp *pp, struct ptok *use)
{
	time_t now = time(NULL);
	struct tm tm;
	char buf[32];
	localtime_r(&now, &tm);
	strftime(buf, sizeof(buf), "\"%b %e %Y\"", &tm);
	return make(pp, use, arena_strdup(&pp->arena, buf), PT_STR);
}

static struct ptok *b_time(struct pp *pp, struct ptok *use)
{
	time_t now = time(NULL);
	struct tm tm;
	char buf[32];
	localtime_r(&now, &tm);
	strftime(buf, sizeof(buf), "\"%T\"", &tm);
	return make(pp, use, arena_strdup(&pp->arena, buf), PT_STR);
}

/* __has_attribute(x) and friends outside #if: 0, the arguments eaten.
 * (#if evaluates __has_include itself, pp_expr.c.) */
static struct ptok *b_has(struct pp *pp, struct ptok *use)
{
	struct ptok *t = use->next;
	if (is_p(t, "(")) {
		int depth = 0;
		for (; t->kind != PT_EOF && t->kind != PT_END_FILE;
		     t = t->next) {
			if (is_p(t, "("))
				depth++;
			else if (is_p(t, ")") && --depth == 0)
				break;
		}
		if (t->kind == PT_EOF || t->kind == PT_END_FILE)
			return make(pp, use, "0", PT_NUM);
		struct ptok *z = make(pp, use, "0", PT_NUM);
		z->next = t->next;
		return z;
	}
	return make(pp, use, "0", PT_NUM);
}

static const struct { const char *name; pp_builtin_fn fn; } builtins[] = {
	{ "__LINE__", b_line }, { "__FILE__", b_file },
	{ "__BASE_FILE__", b_file }, { "__COUNTER__", b_counter },
	{ "__INCLUDE_LEVEL__", b_level }, { "__DATE__", b_date },
	{ "__TIME__", b_time },
	{ "__has_include", b_has }, { "__has_include_next", b_has },
	{ "__has_attribute", b_has }, { "__has_builtin", b_has },
	{ "__has_feature", b_has }, { "__has_extension", b_has },
	{ "__has_cpp_attribute", b_has }, { "__has_c_attribute", b_has },
	{ "__has_declspec_attribute", b_has }, { "__has_warning", b_has },
	{ "__is_identifier", b_has },
};

void pp_define_builtins(struct pp *pp)
{
	for (size_t i = 0; i < sizeof(builtins) / sizeof(builtins[0]); i++) {
		struct macro *m = pp_add_macro(pp, builtins[i].name,
					       strlen(builtins[i].name));
		if (m)
			m->builtin = builtins[i].fn;
	}
}

const char *pp_object_macro(struct pp *pp, const char *name, size_t len)
{
	struct macro *m = pp_find_macro(pp, name, len);
	if (!m || m->funclike || m->builtin)
		return NULL;
	if (!m->text) {
		size_t n;
		m->text = pp_spell(pp, m->body, NULL, &n);
	}
	return m->text;
}
