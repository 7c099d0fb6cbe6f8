/* agent_dl.c - libraries the program loads or unloads while traced.
 *
 * The sites of a library that comes later (dlopen: a JVM's libjvm.so, a
 * plugin) are patched when it comes, and a library that goes (dlclose)
 * takes its patched code with it: the patches there are forgotten, so a
 * library mapped later at the same address is patched afresh and nothing
 * is written into it at detach. The preloaded agent interposes dlopen()
 * and dlclose() for that (an agent injected after start, -p, cannot:
 * its symbols come after the C library's). */
#include <dlfcn.h>

#include "agent_int.h"

#define EXPORT __attribute__((visibility("default")))

typedef void *(*dlopen_fn)(const char *, int);
typedef int (*dlclose_fn)(void *);

EXPORT void *dlopen(const char *file, int flags)
{
	static dlopen_fn real;
	if (!real)
		real = (dlopen_fn)dlsym(RTLD_NEXT, "dlopen");
	void *h = real ? real(file, flags) : NULL;
	if (h)
		agent_rescan();
	return h;
}

EXPORT int dlclose(void *handle)
{
	static dlclose_fn real;
	if (!real)
		real = (dlclose_fn)dlsym(RTLD_NEXT, "dlclose");
	int r = real ? real(handle) : -1;
	if (r == 0)
		agent_unmapped();
	return r;
}
