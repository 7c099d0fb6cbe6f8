/* parser.h - hand-written recursive-descent parser for the script
 * language (LANGUAGE.md §1, §3). */
#ifndef SONDE_PARSER_H
#define SONDE_PARSER_H

#include "../base/arena.h"
#include "../base/diag.h"
#include "ast.h"
#include "lexer.h"

/* Parse a whole script. Every syntax error is recorded in `d` (the parser
 * recovers at statement and probe boundaries to report more than one);
 * returns the N_PROGRAM node, or NULL if nothing could be parsed. */
struct node *parse_program(struct arena *a, const char *text, struct diags *d);

/* Where the probes begin (after the C definitions, lang/cdefs.h) and the
 * macros they may use. */
struct parse_env {
	size_t start;
	unsigned line, col;
	lexer_macro_fn macro;      /* NULL: none */
	void *macro_ctx;
};

/* The probes alone, the C definitions before env->start handled by the
 * caller; parse_program runs both (cdefs_parse_script, with no -I and
 * no C types kept). */
struct node *parse_program_env(struct arena *a, const char *text,
			       const struct parse_env *env, struct diags *d);

#endif
