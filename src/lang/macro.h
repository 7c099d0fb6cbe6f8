/* macro.h - bpftrace 0.24's hygienic macros, expanded in the AST. */
#ifndef SONDE_LANG_MACRO_H
#define SONDE_LANG_MACRO_H

#include "../base/diag.h"
#include "ast.h"

/* Take the N_MACRO definitions out of the program's list and expand
 * every call of one in the probes (predicates and bodies): 0, or
 * -EINVAL with a diagnostic at each bad call. */
int macro_expand(struct arena *a, struct node *program, struct diags *d);

#endif
