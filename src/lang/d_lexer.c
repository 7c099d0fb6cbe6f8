/* d_lexer.c - D's tokens (d_lexer.h). Everything the script holds is
 * untrusted: a literal too large, an escape unknown, a comment or string
 * that never ends are errors with their place, and the lexer never reads
 * past the text's NUL. */
#include "d_lexer.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

void d_lex_init(struct d_lexer *l, struct arena *a, const char *text,
		struct diags *d)
{
	memset(l, 0, sizeof(*l));
	l->a = a;
	l->d = d;
	l->text = l->p = text ? text : "";
	l->line = l->col = 1;
	l->line_start = true;
}

struct pos d_lex_pos(const struct d_lexer *l)
{
	return (struct pos){ .line = l->line, .col = l->col, .len = 1 };
}

static void adv(struct d_lexer *l)
{
	if (!*l->p)
		return;
	if (*l->p == '\n') {
		l->line++;
		l->col = 1;
		l->line_start = true;
	} else {
		l->col++;
		if (!isspace((unsigned char)*l->p))
			l->line_start = false;
	}
	l->p++;
}

bool d_lex_skip(struct d_lexer *l)
{
	for (;;) {
		while (*l->p && isspace((unsigned char)*l->p))
			adv(l);
		if (l->p[0] == '/' && l->p[1] == '*') {
			struct pos at = d_lex_pos(l);
			adv(l);
			adv(l);
			while (*l->p && !(l->p[0] == '*' && l->p[1] == '/'))
				adv(l);
			if (!*l->p) {
				diag_error(l->d, at, "UNTERMINATED_COMMENT",
					   "end of file in a comment");
				return false;
			}
			adv(l);
			adv(l);
			continue;
		}
		if (l->p[0] == '/' && l->p[1] == '/') {
			while (*l->p && *l->p != '\n')
				adv(l);
			continue;
		}
		return *l->p != 0;
	}
}

const char *d_lex_line(struct d_lexer *l, struct pos *pos)
{
	*pos = d_lex_pos(l);
	const char *s = l->p;
	while (*l->p && *l->p != '\n')
		adv(l);
	const char *r = arena_strndup(l->a, s, (size_t)(l->p - s));
	adv(l);
	return r;
}

/* Probe description characters, as D's lexer takes them (globs, '-',
 * '.', '$' of $target and $1, '`' of module`function). */
static bool desc_char(char c)
{
	return isalnum((unsigned char)c) || strchr("_-.*?[]!$:`+~\\", c);
}

const char *d_lex_desc(struct d_lexer *l, struct pos *pos)
{
	d_lex_skip(l);
	*pos = d_lex_pos(l);
	const char *s = l->p;
	while (*l->p && desc_char(*l->p))
		adv(l);
	size_t n = (size_t)(l->p - s);
	pos->len = n ? (unsigned)(n < 1000 ? n : 1000) : 1;
	if (!n) {
		diag_error(l->d, *pos, "SYNTAX", "syntax error near \"%.20s\": "
			   "a probe description was expected", s);
		return NULL;
	}
	return arena_strndup(l->a, s, n);
}

static int escape(struct d_lexer *l, struct pos at)
{
	char c = *l->p;
	adv(l);
	switch (c) {
	case 'n': return '\n';
	case 't': return '\t';
	case 'r': return '\r';
	case 'a': return '\a';
	case 'b': return '\b';
	case 'f': return '\f';
	case 'v': return '\v';
	case '\\': return '\\';
	case '\'': return '\'';
	case '"': return '"';
	case '?': return '?';
	case '0': case '1': case '2': case '3':
	case '4': case '5': case '6': case '7': {
		int v = c - '0';
		for (int i = 0; i < 2 && *l->p >= '0' && *l->p <= '7'; i++) {
			v = v * 8 + (*l->p - '0');
			adv(l);
		}
		return v & 0xff;
	}
	case 'x': {
		int v = 0, k = 0;
		while (k < 2 && isxdigit((unsigned char)*l->p)) {
			char h = *l->p;
			v = v * 16 + (isdigit((unsigned char)h) ? h - '0' :
				      tolower((unsigned char)h) - 'a' + 10);
			adv(l);
			k++;
		}
		if (k)
			return v;
		break;
	}
	default:
		break;
	}
	diag_error(l->d, at, "BAD_ESCAPE", "invalid escape sequence \"\\%c\"",
		   isprint((unsigned char)c) ? c : '?');
	return -1;
}

static void lex_string(struct d_lexer *l, struct d_tok *t)
{
	adv(l);
	size_t cap = 16, n = 0;
	const char *s = l->p;
	while (*s && *s != '"' && *s != '\n')
		s++, cap++;
	char *out = arena_alloc(l->a, cap + 1);
	while (*l->p != '"') {
		if (!*l->p || *l->p == '\n') {
			diag_error(l->d, t->pos, "UNTERMINATED_STRING",
				   "newline or end of file in a string");
			t->kind = DT_ERROR;
			return;
		}
		if (*l->p == '\\') {
			struct pos at = d_lex_pos(l);
			adv(l);
			int c = escape(l, at);
			if (c < 0) {
				t->kind = DT_ERROR;
				return;
			}
			out[n++] = (char)c;
			continue;
		}
		out[n++] = *l->p;
		adv(l);
	}
	adv(l);
	out[n] = 0;
	t->kind = DT_STR;
	t->s = out;
	t->n = (uint32_t)n;
}

/* A constant's D type, as the guide's "Constants" gives it: the first of
 * int, long and long long (and, for an octal or hexadecimal constant or
 * a value past the signed range, their unsigned versions) that holds
 * the value, as C's rules have it; a 'u' suffix keeps only the unsigned
 * ones, 'l' or 'll' starts at long. */
static uint8_t constant_type(uint64_t v, bool decimal, bool uns, bool lng)
{
	if (!lng && !uns && v <= 0x7fffffff)
		return 4;
	if (!lng && v <= 0xffffffff && (uns || !decimal))
		return 4 | D_INT_UNSIGNED;
	if (!uns && v <= 0x7fffffffffffffffull)
		return 8;
	return 8 | D_INT_UNSIGNED;
}

static void lex_number(struct d_lexer *l, struct d_tok *t)
{
	const char *s = l->p;
	errno = 0;
	char *end;
	unsigned long long v = strtoull(s, &end, 0);
	bool bad = errno == ERANGE;
	while (end > l->p)
		adv(l);
	/* u, l, ll in either case and order: ul, llu, ... */
	int nu = 0, nl = 0;
	char lc = 0;
	while (*l->p == 'u' || *l->p == 'U' || *l->p == 'l' || *l->p == 'L') {
		if (*l->p == 'u' || *l->p == 'U') {
			nu++;
		} else {
			/* "lL" is not a suffix: the two l's match */
			if (nl && (lc != *l->p || l->p[-1] != lc))
				bad = true;
			lc = *l->p;
			nl++;
		}
		adv(l);
	}
	if (nu > 1 || nl > 2)
		bad = true;
	if (bad || isalnum((unsigned char)*l->p) || *l->p == '_') {
		while (isalnum((unsigned char)*l->p) || *l->p == '_')
			adv(l);
		diag_error(l->d, t->pos, "BAD_INT", "invalid integer constant "
			   "\"%.*s\"", (int)(l->p - s < 40 ? l->p - s : 40), s);
		t->kind = DT_ERROR;
		return;
	}
	t->kind = DT_INT;
	t->ival = v;
	t->itype = constant_type(v, s[0] != '0', nu > 0, nl > 0);
}

/* Punctuation, longest first. */
static const char *const ops[] = {
	"<<=", ">>=", "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=",
	"&&", "||", "^^", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=",
	"+", "-", "*", "/", "%", "<", ">", "=", "!", "~", "&", "|", "^",
	"?", ":", ";", ",", ".", "(", ")", "[", "]", "{", "}", NULL,
};

void d_lex_next(struct d_lexer *l, struct d_tok *t)
{
	memset(t, 0, sizeof(*t));
	if (!d_lex_skip(l)) {
		t->kind = DT_EOF;
		t->pos = d_lex_pos(l);
		return;
	}
	t->pos = d_lex_pos(l);
	const char *s = l->p;
	char c = *s;
	if (isalpha((unsigned char)c) || c == '_') {
		while (isalnum((unsigned char)*l->p) || *l->p == '_')
			adv(l);
		t->kind = DT_IDENT;
		t->s = arena_strndup(l->a, s, (size_t)(l->p - s));
	} else if (isdigit((unsigned char)c)) {
		lex_number(l, t);
	} else if (c == '"') {
		lex_string(l, t);
	} else if (c == '\'') {
		adv(l);
		int v = *l->p;
		if (v == '\\') {
			struct pos at = d_lex_pos(l);
			adv(l);
			v = escape(l, at);
		} else if (v) {
			adv(l);
		}
		if (v < 0 || *l->p != '\'') {
			if (v >= 0)
				diag_error(l->d, t->pos, "SYNTAX",
					   "invalid character constant");
			t->kind = DT_ERROR;
			return;
		}
		adv(l);
		t->kind = DT_CHAR;
		t->ival = (uint64_t)v;
	} else if (c == '@') {
		adv(l);
		const char *n = l->p;
		while (isalnum((unsigned char)*l->p) || *l->p == '_')
			adv(l);
		t->kind = DT_AGG;
		t->s = arena_strndup(l->a, n, (size_t)(l->p - n));
	} else if (c == '$') {
		adv(l);
		if (*l->p == '$') {
			t->dollar2 = true;
			adv(l);
		}
		const char *n = l->p;
		while (isalnum((unsigned char)*l->p) || *l->p == '_')
			adv(l);
		if (l->p == n) {
			diag_error(l->d, t->pos, "SYNTAX",
				   "a macro variable name must follow '$'");
			t->kind = DT_ERROR;
			return;
		}
		t->kind = DT_MACRO;
		t->s = arena_strndup(l->a, n, (size_t)(l->p - n));
	} else {
		for (int i = 0; ops[i]; i++) {
			size_t n = strlen(ops[i]);
			if (strncmp(l->p, ops[i], n) == 0) {
				memcpy(t->op, ops[i], n + 1);
				for (size_t k = 0; k < n; k++)
					adv(l);
				t->kind = DT_OP;
				t->pos.len = (unsigned)n;
				return;
			}
		}
		diag_error(l->d, t->pos, "SYNTAX", "invalid input character "
			   "'%c' (0x%02x)", isprint((unsigned char)c) ? c : '?',
			   (unsigned char)c);
		adv(l);
		t->kind = DT_ERROR;
		return;
	}
	size_t n = (size_t)(l->p - s);
	t->pos.len = n ? (unsigned)(n < 1000 ? n : 1000) : 1;
}
