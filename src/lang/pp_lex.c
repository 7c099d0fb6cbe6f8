/* pp_lex.c - C preprocessing tokens from a file's text: identifiers,
 * pp-numbers, character and string literals, punctuators; comments and
 * backslash-newlines are white space. It never fails: a stray byte or an
 * unterminated quote becomes a PT_OTHER token, an error only if active
 * code uses it (`don't` in an #if 0 comment-like block is fine). */
#include "pp_int.h"

#include <ctype.h>
#include <string.h>

bool pp_is_ident_start(int c)
{
	return isalpha(c) || c == '_' || c == '$' || c >= 0x80;
}

bool pp_is_ident(int c)
{
	return pp_is_ident_start(c) || isdigit(c);
}

static const char *const puncts[] = {
	"<<=", ">>=", "...", "->", "++", "--", "<<", ">>", "<=", ">=", "==",
	"!=", "&&", "||", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=",
	"##", "::",
};

static size_t punct_len(const char *p, const char *end)
{
	for (size_t i = 0; i < sizeof(puncts) / sizeof(puncts[0]); i++) {
		size_t n = strlen(puncts[i]);
		if ((size_t)(end - p) >= n && !memcmp(p, puncts[i], n))
			return n;
	}
	return strchr("[](){}.&*+-~!/%<>^|?:;=,#", *p) ? 1 : 0;
}

struct scan {
	const char *p, *end;
	uint32_t line, col;
};

static void step(struct scan *s)
{
	if (*s->p == '\n') {
		s->line++;
		s->col = 1;
	} else {
		s->col++;
	}
	s->p++;
}

/* A quoted literal from its opening quote: to the closing one, or to the
 * end of the line if there is none (false). */
static bool scan_quoted(struct scan *s, char q)
{
	step(s);
	while (s->p < s->end && *s->p != q && *s->p != '\n') {
		if (*s->p == '\\' && s->p + 1 < s->end)
			step(s);
		step(s);
	}
	if (s->p < s->end && *s->p == q) {
		step(s);
		return true;
	}
	return false;
}

/* Tokenize text[0..len) as if it were in `file`; `bol` for the first. */
static struct ptok *tokenize(struct pp *pp, const char *text, size_t len,
			     uint32_t file, uint32_t line, uint32_t col)
{
	struct scan s = { text, text + len, line, col };
	struct ptok head = { 0 }, *tail = &head;
	bool bol = true, space = false;

	while (s.p < s.end) {
		char c = *s.p;
		if (c == '\n') {
			step(&s);
			bol = true;
			space = false;
			continue;
		}
		if (c == ' ' || c == '\t' || c == '\r' || c == '\f' ||
		    c == '\v') {
			step(&s);
			space = true;
			continue;
		}
		if (c == '\\' && s.p + 1 < s.end &&
		    (s.p[1] == '\n' || (s.p[1] == '\r' && s.p + 2 < s.end &&
					s.p[2] == '\n'))) {
			/* a line splice: the logical line goes on */
			while (*s.p != '\n')
				step(&s);
			step(&s);
			space = true;
			continue;
		}
		if (c == '/' && s.p + 1 < s.end && s.p[1] == '/') {
			while (s.p < s.end && *s.p != '\n') {
				if (*s.p == '\\' && s.p + 1 < s.end &&
				    s.p[1] == '\n')
					step(&s);
				step(&s);
			}
			space = true;
			continue;
		}
		if (c == '/' && s.p + 1 < s.end && s.p[1] == '*') {
			struct ptok at = { .file = file, .line = s.line,
					   .col = s.col, .len = 2, .text = s.p };
			step(&s);
			step(&s);
			while (s.p < s.end &&
			       !(*s.p == '*' && s.p + 1 < s.end && s.p[1] == '/'))
				step(&s);
			if (s.p >= s.end) {
				pp_error(pp, &at, "UNTERMINATED_COMMENT",
					 "unterminated /* comment");
				break;
			}
			step(&s);
			step(&s);
			space = true;
			continue;
		}
		struct ptok *t = pp_new_tok(pp, NULL);
		if (!t)
			break;
		t->file = file;
		t->line = s.line;
		t->col = s.col;
		t->bol = bol;
		t->space = space;
		t->text = s.p;
		bol = space = false;
		const char *q = s.p;
		/* literal prefixes: L, u, U, u8 */
		size_t pre = 0;
		if (c == 'L' || c == 'U' || c == 'u')
			pre = (c == 'u' && s.p + 1 < s.end && s.p[1] == '8') ?
				2 : 1;
		if (pre && s.p + pre < s.end &&
		    (s.p[pre] == '"' || s.p[pre] == '\'')) {
			for (size_t k = 0; k < pre; k++)
				step(&s);
			c = *s.p;
		}
		if (c == '"' || c == '\'') {
			bool ok = scan_quoted(&s, c);
			t->kind = !ok ? PT_OTHER : c == '"' ? PT_STR : PT_CHAR;
		} else if (isdigit((unsigned char)c) ||
			   (c == '.' && s.p + 1 < s.end &&
			    isdigit((unsigned char)s.p[1]))) {
			step(&s);
			while (s.p < s.end) {
				char d = *s.p;
				if (strchr("eEpP", d) && s.p + 1 < s.end &&
				    (s.p[1] == '+' || s.p[1] == '-')) {
					step(&s);
					step(&s);
				} else if (isalnum((unsigned char)d) ||
					   d == '.' || d == '_') {
					step(&s);
				} else {
					break;
				}
			}
			t->kind = PT_NUM;
		} else if (pp_is_ident_start((unsigned char)c)) {
			while (s.p < s.end && pp_is_ident((unsigned char)*s.p))
				step(&s);
			t->kind = PT_IDENT;
		} else {
			size_t n = punct_len(s.p, s.end);
			t->kind = n ? PT_PUNCT : PT_OTHER;
			for (size_t k = 0; k < (n ? n : 1); k++)
				step(&s);
		}
		t->len = (uint32_t)(s.p - q);
		tail = tail->next = t;
	}
	struct ptok *e = pp_new_tok(pp, NULL);
	if (!e)
		e = &pp->eof;
	e->kind = PT_EOF;
	e->file = file;
	e->line = s.line;
	e->col = s.col;
	e->bol = true;
	e->text = "";
	tail->next = e;
	return head.next;
}

struct ptok *pp_tokenize(struct pp *pp, uint32_t file)
{
	const struct pp_file *f = &pp->files.v[file];
	size_t skip = 0;
	if (file == 0 && f->len >= 2 && f->text[0] == '#' && f->text[1] == '!')
		while (skip < f->len && f->text[skip] != '\n')
			skip++; /* the script's #! line */
	return tokenize(pp, f->text + skip, f->len - skip, file, 1, 1);
}

struct ptok *pp_tokenize_one(struct pp *pp, const char *s, size_t len,
			     const struct ptok *at)
{
	struct ptok *t = tokenize(pp, s, len, at->file, at->line, at->col);
	if (!t || t->kind == PT_EOF || t->next->kind != PT_EOF)
		return NULL;
	return t;
}
