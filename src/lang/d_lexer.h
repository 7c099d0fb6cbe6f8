/* d_lexer.h - DTrace's D language, tokens (d_lexer.c): C's tokens plus
 * D's own (@aggregation, $macro and $$macro variables, ^^), and probe
 * descriptions, which the parser asks for by name because their
 * characters (globs, '-', '$') are not expression tokens. */
#ifndef SONDE_D_LEXER_H
#define SONDE_D_LEXER_H

#include <stdbool.h>
#include <stdint.h>

#include "../base/arena.h"
#include "../base/diag.h"

/* D's integer types as the front end tracks them: the size in bytes
 * (1, 2, 4 or 8) or'd with D_INT_UNSIGNED. long and long long are both
 * 8 bytes (LP64), so the size and the sign say all printing needs. */
#define D_INT_UNSIGNED 0x10
#define D_INT_SIZE(t) ((t) & 0xf)

enum d_tok_kind {
	DT_EOF,
	DT_IDENT,     /* s: the name */
	DT_INT,       /* ival; itype: its D type (d_int.h's D_INT_*) */
	DT_STR,       /* s: unescaped, n bytes */
	DT_CHAR,      /* 'c': ival */
	DT_AGG,       /* @name or @: s without the '@' */
	DT_MACRO,     /* $1, $target, $pid ...: s without '$'; dollar2: $$ */
	DT_OP,        /* op: the punctuation, NUL-terminated */
	DT_ERROR,     /* reported already */
};

struct d_tok {
	enum d_tok_kind kind;
	struct pos pos;
	const char *s;
	uint32_t n;
	uint64_t ival;
	uint8_t itype;     /* DT_INT: size in bytes | D_INT_UNSIGNED */
	bool dollar2;
	char op[4];
};

struct d_lexer {
	struct arena *a;
	struct diags *d;
	const char *text, *p;
	unsigned line, col;
	bool line_start;       /* only blanks since the last newline */
};

void d_lex_init(struct d_lexer *l, struct arena *a, const char *text,
		struct diags *d);
/* Skip blanks and comments; false at the end of the text. */
bool d_lex_skip(struct d_lexer *l);
/* The next token. */
void d_lex_next(struct d_lexer *l, struct d_tok *t);
/* A probe description (provider:module:function:name, any part may be
 * empty or a glob) at the current place; NULL (with an error) if none. */
const char *d_lex_desc(struct d_lexer *l, struct pos *pos);
/* The rest of the current line (a #pragma), the newline consumed. */
const char *d_lex_line(struct d_lexer *l, struct pos *pos);
struct pos d_lex_pos(const struct d_lexer *l);

/* Whether op is the token's punctuation. */
static inline bool d_tok_is(const struct d_tok *t, const char *op)
{
	if (t->kind != DT_OP)
		return false;
	for (int i = 0; i < 4; i++) {
		if (t->op[i] != op[i])
			return false;
		if (!op[i])
			return true;
	}
	return true;
}

#endif
