/* parser.h - hand-written recursive-descent parser for the script
 * language (LANGUAGE.md §1, §3). */
#ifndef SONDE_PARSER_H
#define SONDE_PARSER_H

#include "../base/arena.h"
#include "../base/diag.h"
#include "ast.h"

/* Parse a whole script. Every syntax error is recorded in `d` (the parser
 * recovers at statement and probe boundaries to report more than one);
 * returns the N_PROGRAM node, or NULL if nothing could be parsed. */
struct node *parse_program(struct arena *a, const char *text, struct diags *d);

#endif
