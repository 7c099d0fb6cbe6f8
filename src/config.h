/* config.h - bpftrace 0.2x's script config block (`config = { stack_mode
 * = perf; max_map_keys = 2 }`): the variables it may set and where each
 * goes. */
#ifndef SONDE_CONFIG_H
#define SONDE_CONFIG_H

#include "base/diag.h"
#include "lang/ast.h"
#include "program.h"

/* Take the N_CONFIG nodes out of root's list and apply them to prog
 * (*map_keys_max too): 0, or -EINVAL with a diagnostic at each bad name
 * or value. A variable also set in the environment (BPFTRACE_NAME) keeps
 * the environment's value, as bpftrace's documentation says. */
int config_apply(struct node *root, struct program *prog,
		 uint32_t *map_keys_max, struct diags *d);

/* After sema: the declared maps (`let @m = lruhash(N);`) get their size
 * and kind. A declared map the script never uses is no map at all, and
 * a warning (bpftrace 0.24's "Unused map: @m"). */
void config_map_decls(struct program *prog, struct diags *d);

#endif
