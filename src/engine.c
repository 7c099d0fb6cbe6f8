/* engine.c - the engines by name (engine.h). */
#include "engine.h"

#include <string.h>

static const struct engine_ops *const engines[] = {
	&engine_kernel,
	&engine_process,
	NULL,
};

const struct engine_ops *engine_find(const char *name)
{
	for (const struct engine_ops *const *e = engines; name && *e; e++)
		if (strcmp((*e)->name, name) == 0)
			return *e;
	return NULL;
}
