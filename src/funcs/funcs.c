/* funcs.c - the table of families of functions, and lookup by name. */
#include "funcs_int.h"

#include <string.h>

const struct func *const func_families[] = {
	funcs_output, funcs_control, funcs_maps, funcs_strings,
	funcs_symbols, funcs_net, funcs_values, funcs_text, funcs_pointers,
	funcs_dtrace, funcs_dtrace_str,
	NULL,
};

const struct func *func_find(const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; func_families[i]; i++)
		for (const struct func *f = func_families[i]; f->name; f++)
			if (strcmp(f->name, name) == 0)
				return f;
	return NULL;
}
