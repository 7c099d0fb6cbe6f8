/* lexer.c - the scanner: comments, names, keywords, integers (decimal,
 * octal, hex, `_` separators, exponents, C suffixes as bpftrace 0.17
 * accepts them), strings with C escapes, punctuation (longest match). */
#include "lexer.h"

#include <ctype.h>
#include <string.h>

const char *const token_names[T_COUNT_] = {
#define X(id, s) s,
	TOKENS(X)
#undef X
};

const char *token_name(enum tok t)
{
	return t < T_COUNT_ ? token_names[t] : "?";
}

void lexer_init(struct lexer *lx, struct arena *a, const char *text,
		struct diags *d)
{
	memset(lx, 0, sizeof(*lx));
	lx->src = text ? text : "";
	lx->len = strlen(lx->src);
	lx->line = lx->col = 1;
	lx->arena = a;
	lx->diags = d;
}

void lexer_start_at(struct lexer *lx, size_t off, unsigned line, unsigned col)
{
	if (off > lx->len)
		return;
	lx->off = off;
	lx->line = line;
	lx->col = col;
}


static void lex_error(struct lexer *lx, struct pos pos, const char *tag,
		      const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void lex_error(struct lexer *lx, struct pos pos, const char *tag,
		      const char *fmt, ...)
{
	if (lx->quiet)
		return;
	lx->nerrors++;
	va_list ap;
	va_start(ap, fmt);
	diag_vadd(lx->diags, DIAG_ERROR, pos, tag, fmt, ap);
	va_end(ap);
}

/* Is `name` being expanded already (C's rule: a macro's own name in its
 * replacement stays a name)? */
static bool expanding(const struct lexer *lx, const char *name)
{
	for (unsigned i = 0; i < lx->nframes; i++)
		if (!strcmp(lx->frames[i].name, name))
			return true;
	return false;
}

/* Lex a macro's replacement text next, as bpftrace 0.17 does: the text
 * goes back through the lexer, so a macro naming another expands too. */
static bool push_macro(struct lexer *lx, const char *name, struct pos at)
{
	if (!lx->macro || expanding(lx, name))
		return false;
	const char *text = lx->macro(lx->macro_ctx, name, strlen(name));
	if (!text)
		return false;
	if (lx->nframes >= LEX_MAX_EXPANSION ||
	    lx->expansions >= LEX_MAX_EXPANSIONS) {
		if (!lx->expansion_failed)
			lex_error(lx, lx->nframes ? lx->expansion : at,
				  "PP_LIMIT", "macro '%s' expands too deep or "
				  "too often (%d nested, %d in a script)", name,
				  LEX_MAX_EXPANSION, LEX_MAX_EXPANSIONS);
		lx->expansion_failed = true;
		return false;
	}
	if (!lx->nframes)
		lx->expansion = at;
	lx->expansions++;
	lx->frames[lx->nframes++] = (struct lex_frame){
		.src = lx->src, .len = lx->len, .off = lx->off,
		.line = lx->line, .col = lx->col, .name = name,
	};
	lx->src = text;
	lx->len = strlen(text);
	lx->off = 0;
	lx->line = lx->col = 1;
	return true;
}

static void pop_macro(struct lexer *lx)
{
	const struct lex_frame *f = &lx->frames[--lx->nframes];
	lx->src = f->src;
	lx->len = f->len;
	lx->off = f->off;
	lx->line = f->line;
	lx->col = f->col;
}

static int peek(const struct lexer *lx, size_t k)
{
	return lx->off + k < lx->len ? (unsigned char)lx->src[lx->off + k] : 0;
}

static void advance(struct lexer *lx)
{
	if (lx->off >= lx->len)
		return;
	if (lx->src[lx->off] == '\n') {
		lx->line++;
		lx->col = 1;
	} else {
		lx->col++;
	}
	lx->off++;
}

static struct pos here(const struct lexer *lx)
{
	if (lx->nframes) /* in a macro's text: where the macro was named */
		return lx->expansion;
	return (struct pos){ lx->line, lx->col, 1 };
}

/* Length of a token on its first line, for the caret. */
static unsigned span(const struct lexer *lx, size_t start, size_t end)
{
	size_t n = 0;
	while (start + n < end && lx->src[start + n] != '\n')
		n++;
	return n ? (unsigned)n : 1;
}

/* Only blanks between the start of the line and the current byte? */
static bool at_line_start(const struct lexer *lx)
{
	for (size_t i = lx->off; i > 0; i--) {
		char c = lx->src[i - 1];
		if (c == '\n')
			return true;
		if (c != ' ' && c != '\t')
			return false;
	}
	return true;
}

/* A '#' first on a line of the probes. bpftrace runs the preprocessor
 * only over the definitions before the first probe (lang/cdefs.h), and so
 * does sonde: a directive after that is an error, as it is in bpftrace. */
static void directive(struct lexer *lx)
{
	struct pos p = here(lx);
	size_t s = lx->off;
	bool shebang = s == 0 && peek(lx, 1) == '!';
	while (peek(lx, 0) && peek(lx, 0) != '\n')
		advance(lx);
	if (shebang)
		return;
	p.len = span(lx, s, lx->off);
	lex_error(lx, p, "SYNTAX", "preprocessor directive after the first "
		  "probe: #include, #define, #if and C definitions go before "
		  "the probes");
}

static void skip_space(struct lexer *lx)
{
	for (;;) {
		int c = peek(lx, 0);
		if (c == '#' && !lx->nframes && at_line_start(lx)) {
			directive(lx);
		} else if (c == ' ' || c == '\t' || c == '\n' || c == '\r' ||
		    c == '\f' || c == '\v') {
			advance(lx);
		} else if (c == '/' && peek(lx, 1) == '/') {
			while (peek(lx, 0) && peek(lx, 0) != '\n')
				advance(lx);
		} else if (c == '/' && peek(lx, 1) == '*') {
			struct pos p = here(lx);
			p.len = 2;
			advance(lx);
			advance(lx);
			while (peek(lx, 0) &&
			       !(peek(lx, 0) == '*' && peek(lx, 1) == '/'))
				advance(lx);
			if (!peek(lx, 0)) {
				lex_error(lx, p, "UNTERMINATED_COMMENT",
					   "unterminated comment '/*'");
				return;
			}
			advance(lx);
			advance(lx);
		} else {
			return;
		}
	}
}

static bool is_ident_start(int c)
{
	return isalpha(c) || c == '_';
}

static bool is_ident(int c)
{
	return isalnum(c) || c == '_';
}

static const struct { const char *s; enum tok t; } keywords[] = {
	{ "if", T_IF }, { "else", T_ELSE }, { "unroll", T_UNROLL },
	{ "while", T_WHILE }, { "break", T_BREAK },
	{ "continue", T_CONTINUE }, { "return", T_RETURN },
};

/* Multiply-add with overflow detection. */
static bool mul_add(uint64_t *v, uint64_t base, uint64_t digit)
{
	if (*v > (UINT64_MAX - digit) / base)
		return false;
	*v = *v * base + digit;
	return true;
}

/* A duration unit right after a number (ns us ms s m h d, and nothing
 * more of a name after it): *v becomes nanoseconds, the unit is read. */
static bool duration(struct lexer *lx, uint64_t *v, bool *ok)
{
	static const struct { const char *unit; uint64_t ns; } units[] = {
		{ "ns", 1 }, { "us", 1000 }, { "ms", 1000000 },
		{ "s", 1000000000ull }, { "m", 60000000000ull },
		{ "h", 3600000000000ull }, { "d", 86400000000000ull },
	};
	size_t n = 0;
	while (n < 3 && is_ident(peek(lx, n)))
		n++;
	if (n == 0 || n > 2)
		return false;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strlen(units[i].unit) != n ||
		    strncmp(lx->src + lx->off, units[i].unit, n) != 0)
			continue;
		*ok = *ok && mul_add(v, units[i].ns, 0);
		while (n--)
			advance(lx);
		return true;
	}
	return false;
}

static void lex_number(struct lexer *lx, struct token *t)
{
	size_t s = lx->off;
	uint64_t v = 0;
	bool ok = true;
	const char *why = NULL;

	if (peek(lx, 0) == '0' && (peek(lx, 1) == 'x' || peek(lx, 1) == 'X')) {
		advance(lx);
		advance(lx);
		if (!isxdigit(peek(lx, 0)))
			why = "hexadecimal digits expected after '0x'";
		while (isxdigit(peek(lx, 0))) {
			int c = peek(lx, 0);
			int d = isdigit(c) ? c - '0' : (tolower(c) - 'a' + 10);
			ok = ok && mul_add(&v, 16, (uint64_t)d);
			advance(lx);
		}
	} else {
		bool octal = peek(lx, 0) == '0' && isdigit(peek(lx, 1));
		uint64_t base = octal ? 8 : 10;
		while (isdigit(peek(lx, 0)) ||
		       (peek(lx, 0) == '_' && isdigit(peek(lx, 1)))) {
			int c = peek(lx, 0);
			advance(lx);
			if (c == '_')
				continue;
			if (c - '0' >= (int)base)
				why = "invalid digit in octal number";
			ok = ok && mul_add(&v, base, (uint64_t)(c - '0'));
		}
		/* 1e3: an integer times a power of ten, as bpftrace allows */
		if ((peek(lx, 0) == 'e' || peek(lx, 0) == 'E') &&
		    isdigit(peek(lx, 1)) && !octal) {
			advance(lx);
			uint64_t e = 0;
			while (isdigit(peek(lx, 0))) {
				ok = ok && mul_add(&e, 10,
						   (uint64_t)(peek(lx, 0) - '0'));
				advance(lx);
			}
			/* 0eN is 0; past 10^19 anything else overflows
			 * (and the loop must not run 2^64 times) */
			if (v && e > 19)
				ok = false;
			for (uint64_t i = 0; v && ok && i < e; i++)
				ok = mul_add(&v, 10, 0);
		}
		/* bpftrace 0.24's durations, in nanoseconds: 100ms, 1s */
		if (!octal && duration(lx, &v, &ok))
			;
		/* C suffixes: u, l, ll, ul, ull (any case) */
		else if (peek(lx, 0) == 'u' || peek(lx, 0) == 'U')
			advance(lx);
		if (peek(lx, 0) == 'l' || peek(lx, 0) == 'L') {
			advance(lx);
			if (peek(lx, 0) == 'l' || peek(lx, 0) == 'L')
				advance(lx);
		}
	}
	if (is_ident(peek(lx, 0))) {
		why = "trailing characters after a number";
		while (is_ident(peek(lx, 0)))
			advance(lx);
	}
	t->kind = T_INT;
	t->len = lx->off - s;
	t->pos.len = span(lx, s, lx->off);
	t->ival = v;
	if (!why && !ok)
		why = "integer does not fit in 64 bits";
	if (why)
		lex_error(lx, t->pos, "BAD_INT", "%s in '%.*s'", why,
			   (int)t->len, t->start);
}

static int hexval(int c)
{
	return isdigit(c) ? c - '0' : tolower(c) - 'a' + 10;
}

static void lex_string(struct lexer *lx, struct token *t)
{
	size_t s = lx->off;
	/* the unescaped text is never longer than the raw one */
	size_t raw = 1;
	while (s + raw < lx->len && lx->src[s + raw] != '"' &&
	       lx->src[s + raw] != '\n')
		raw += lx->src[s + raw] == '\\' && s + raw + 1 < lx->len ? 2 : 1;
	char *buf = arena_alloc(lx->arena, raw + 1);
	uint32_t n = 0;

	advance(lx); /* the opening quote */
	for (;;) {
		int c = peek(lx, 0);
		if (c == 0 || c == '\n') {
			t->pos.len = span(lx, s, lx->off);
			lex_error(lx, t->pos, "UNTERMINATED_STRING",
				   "unterminated string");
			break;
		}
		if (c == '"') {
			advance(lx);
			break;
		}
		if (c != '\\') {
			buf[n++] = (char)c;
			advance(lx);
			continue;
		}
		struct pos ep = here(lx);
		ep.len = 2;
		advance(lx);
		c = peek(lx, 0);
		switch (c) {
		case 'n': buf[n++] = '\n'; advance(lx); break;
		case 't': buf[n++] = '\t'; advance(lx); break;
		case 'r': buf[n++] = '\r'; advance(lx); break;
		case '\\': buf[n++] = '\\'; advance(lx); break;
		case '"': buf[n++] = '"'; advance(lx); break;
		case 'x':
			advance(lx);
			if (!isxdigit(peek(lx, 0))) {
				lex_error(lx, ep, "BAD_ESCAPE",
					   "'\\x' needs hexadecimal digits");
				break;
			} else {
				int v = 0;
				for (int k = 0; k < 2 && isxdigit(peek(lx, 0)); k++) {
					v = v * 16 + hexval(peek(lx, 0));
					advance(lx);
				}
				buf[n++] = (char)v;
			}
			break;
		default:
			if (c >= '0' && c <= '7') {
				int v = 0;
				for (int k = 0; k < 3 && peek(lx, 0) >= '0' &&
				     peek(lx, 0) <= '7'; k++) {
					v = v * 8 + peek(lx, 0) - '0';
					advance(lx);
				}
				buf[n++] = (char)v;
			} else if (c == 0 || c == '\n') {
				/* reported as unterminated on the next turn */
			} else {
				lex_error(lx, ep, "BAD_ESCAPE",
					   "invalid escape character '\\%c'",
					   isprint(c) ? c : '?');
				advance(lx);
			}
		}
	}
	buf[n] = 0;
	t->kind = T_STR;
	t->sval = buf;
	t->slen = n;
	t->len = lx->off - s;
	if (t->pos.len <= 1)
		t->pos.len = span(lx, s, lx->off);
}

/* Punctuation, longest first within each leading character. */
static const struct { const char *s; enum tok t; } puncts[] = {
	{ "<<=", T_SHL_ASSIGN }, { ">>=", T_SHR_ASSIGN },
	{ "->", T_ARROW }, { "++", T_INC }, { "--", T_DEC },
	{ "<<", T_SHL }, { ">>", T_SHR }, { "<=", T_LE }, { ">=", T_GE },
	{ "==", T_EQ }, { "!=", T_NE }, { "&&", T_LAND }, { "||", T_LOR },
	{ "+=", T_ADD_ASSIGN }, { "-=", T_SUB_ASSIGN },
	{ "*=", T_MUL_ASSIGN }, { "/=", T_DIV_ASSIGN },
	{ "%=", T_MOD_ASSIGN }, { "&=", T_AND_ASSIGN },
	{ "|=", T_OR_ASSIGN }, { "^=", T_XOR_ASSIGN },
	{ "{", T_LBRACE }, { "}", T_RBRACE }, { "(", T_LPAREN },
	{ ")", T_RPAREN }, { "[", T_LBRACKET }, { "]", T_RBRACKET },
	{ ";", T_SEMI }, { ",", T_COMMA }, { "..", T_DOTDOT }, { ".", T_DOT },
	{ "?", T_QUESTION }, { ":", T_COLON }, { "=", T_ASSIGN },
	{ "+", T_PLUS }, { "-", T_MINUS }, { "*", T_STAR }, { "/", T_SLASH },
	{ "%", T_PERCENT }, { "&", T_AMP }, { "|", T_PIPE },
	{ "^", T_CARET }, { "~", T_TILDE }, { "!", T_BANG },
	{ "<", T_LT }, { ">", T_GT },
};

static const char *name_of(struct lexer *lx, size_t s)
{
	return arena_strndup(lx->arena, lx->src + s, lx->off - s);
}

struct token lexer_next(struct lexer *lx)
{
	struct token t;
	skip_space(lx);
	while (lx->nframes && lx->off >= lx->len) {
		pop_macro(lx);
		skip_space(lx);
	}
	memset(&t, 0, sizeof(t));
	t.pos = here(lx);
	t.offset = lx->off;
	t.start = lx->src + lx->off;
	int c = peek(lx, 0);
	size_t s = lx->off;

	if (c == 0) {
		t.kind = T_EOF;
		return t;
	}
	if (isdigit(c)) {
		lex_number(lx, &t);
		return t;
	}
	if (c == '"') {
		lex_string(lx, &t);
		return t;
	}
	if (is_ident_start(c)) {
		while (is_ident(peek(lx, 0)))
			advance(lx);
		t.kind = T_IDENT;
		t.sval = name_of(lx, s);
		for (size_t i = 0; i < sizeof(keywords) / sizeof(keywords[0]); i++)
			if (strcmp(keywords[i].s, t.sval) == 0)
				t.kind = keywords[i].t;
		if (t.kind == T_IDENT) {
			struct pos at = t.pos;
			at.len = span(lx, s, lx->off);
			if (push_macro(lx, t.sval, at))
				return lexer_next(lx);
		}
	} else if (c == '$') {
		advance(lx);
		if (isdigit(peek(lx, 0))) {
			uint64_t v = 0;
			bool ok = true;
			while (isdigit(peek(lx, 0))) {
				ok = ok && mul_add(&v, 10,
						   (uint64_t)(peek(lx, 0) - '0'));
				advance(lx);
			}
			t.kind = T_POSITIONAL;
			t.ival = ok && v <= UINT32_MAX ? v : UINT32_MAX;
		} else if (peek(lx, 0) == '#') {
			advance(lx);
			t.kind = T_POSCOUNT;
		} else if (is_ident_start(peek(lx, 0))) {
			while (is_ident(peek(lx, 0)))
				advance(lx);
			t.kind = T_VAR;
			t.sval = arena_strndup(lx->arena, lx->src + s + 1,
					       lx->off - s - 1);
		} else {
			t.kind = T_ERROR;
			lex_error(lx, t.pos, "SYNTAX",
				   "variable name expected after '$'");
		}
	} else if (c == '@') {
		advance(lx);
		while (is_ident(peek(lx, 0)))
			advance(lx);
		t.kind = T_MAP;
		t.sval = name_of(lx, s);
	} else {
		for (size_t i = 0; i < sizeof(puncts) / sizeof(puncts[0]); i++) {
			size_t n = strlen(puncts[i].s);
			if (lx->len - lx->off >= n &&
			    memcmp(lx->src + lx->off, puncts[i].s, n) == 0) {
				for (size_t k = 0; k < n; k++)
					advance(lx);
				t.kind = puncts[i].t;
				t.len = n;
				t.pos.len = (unsigned)n;
				return t;
			}
		}
		advance(lx);
		t.kind = T_ERROR;
		if (isprint(c))
			lex_error(lx, t.pos, "SYNTAX",
				   "unexpected character '%c'", c);
		else
			lex_error(lx, t.pos, "SYNTAX",
				   "unexpected byte 0x%02x", c);
	}
	t.len = lx->off - s;
	t.pos.len = span(lx, s, lx->off);
	return t;
}

struct token lexer_attach(struct lexer *lx)
{
	struct token t;
	skip_space(lx);
	memset(&t, 0, sizeof(t));
	size_t offset = lx->off;
	t.pos = here(lx);
	t.offset = offset;
	t.start = lx->src + offset;
	bool colon = false, quoted = false;
	for (;;) {
		int c = peek(lx, 0);
		if (c == 0 || c == '\n')
			break;
		if (quoted) {
			if (c == '"')
				quoted = false;
			else if (c == '\\' && peek(lx, 1) &&
				 peek(lx, 1) != '\n')
				advance(lx);     /* an escaped byte: \" stays in */
			advance(lx);
			continue;
		}
		if (c == ' ' || c == '\t' || c == '\r' || c == ',' || c == '{' ||
		    c == '}' || c == ';' || (c == '/' && !colon))
			break;
		if (c == '"')
			quoted = true;
		if (c == ':')
			colon = true;
		advance(lx);
	}
	t.len = lx->off - offset;
	if (t.len == 0) {
		t.kind = peek(lx, 0) ? T_ERROR : T_EOF;
		t.len = peek(lx, 0) ? 1 : 0;
		return t;
	}
	t.kind = T_ATTACH;
	t.sval = arena_strndup(lx->arena, t.start, t.len);
	t.pos.len = (unsigned)t.len;
	if (quoted)
		lex_error(lx, t.pos, "UNTERMINATED_STRING",
			   "unterminated string in probe '%s'", t.sval);
	return t;
}
