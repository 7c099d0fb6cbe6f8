/* lexer.h - turns script text into tokens, one at a time, on demand. */
#ifndef SONDE_LEXER_H
#define SONDE_LEXER_H

#include <stdbool.h>

#include "../base/arena.h"
#include "../base/diag.h"
#include "token.h"

/* The replacement text of an object-like macro of the script's C
 * definitions (lang/cdefs.h), or NULL if `name` is not one. */
typedef const char *(*lexer_macro_fn)(void *ctx, const char *name,
				      size_t len);

#define LEX_MAX_EXPANSION 32       /* macros expanding inside macros */
#define LEX_MAX_EXPANSIONS 100000  /* macros expanded in one script */

struct lex_frame {
	const char *src;
	size_t len, off;
	unsigned line, col;
	const char *name;
};

struct lexer {
	const char *src;
	size_t len;
	size_t off;              /* next byte to read */
	unsigned line, col;      /* of src[off] */
	struct arena *arena;
	struct diags *diags;
	bool quiet;              /* parser is skipping after an error */
	unsigned nerrors;        /* errors this lexer reported */
	lexer_macro_fn macro;    /* NULL: no macros */
	void *macro_ctx;
	struct lex_frame frames[LEX_MAX_EXPANSION]; /* the texts lexed */
	unsigned nframes;        /*   before src: macros being expanded */
	unsigned long expansions;
	bool expansion_failed;   /* reported once */
	struct pos expansion;    /* where the outermost macro was named */
};

void lexer_init(struct lexer *lx, struct arena *a, const char *text,
		struct diags *d);
/* Start lexing at byte `off` (line and column of it): after the C
 * definitions. */
void lexer_start_at(struct lexer *lx, size_t off, unsigned line,
		    unsigned col);
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
