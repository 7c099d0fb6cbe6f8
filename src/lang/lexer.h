/* lexer.h - turns script text into tokens, one at a time, on demand. */
#ifndef SONDE_LEXER_H
#define SONDE_LEXER_H

#include <stdbool.h>

#include "../base/arena.h"
#include "../base/diag.h"
#include "token.h"

struct lexer {
	const char *src;
	size_t len;
	size_t off;              /* next byte to read */
	unsigned line, col;      /* of src[off] */
	struct arena *arena;
	struct diags *diags;
	bool quiet;              /* parser is skipping after an error */
	unsigned nerrors;        /* errors this lexer reported */
	unsigned cond_depth;     /* open, active #if[n]def regions */
};

void lexer_init(struct lexer *lx, struct arena *a, const char *text,
		struct diags *d);
/* The next token. Errors (bad characters, unterminated strings, bad
 * integers) are recorded in the diagnostics; the token returned is then
 * still usable (a T_ERROR, or the literal with a best-effort value) so the
 * parser can carry on. */
struct token lexer_next(struct lexer *lx);
/* Attach points are raw text, not tokens: after white space and
 * comments, read up to white space, ',', '{', '}', ';' or a '/' that
 * cannot be part of a path (one before any ':'), keeping double-quoted
 * parts whole. Returns a T_ATTACH token, or T_EOF, or a T_ERROR that has
 * consumed nothing (its len is 1 only so messages can show the byte). */
struct token lexer_attach(struct lexer *lx);
const char *token_name(enum tok t);

#endif
