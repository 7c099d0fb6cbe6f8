/* demangle.c - C++ demangling through the C++ runtime's __cxa_demangle. */

/*
 * sonde is C and does not link the C++ runtime: libstdc++ is opened at
 * run time, once, the first time a mangled name is met. Every Debian
 * system has libstdc++.so.6 (apt needs it), and it is the same
 * demangler bcc uses, so names read exactly as bpftrace prints them
 * ("long twice<long>(long)", "shapes::Widget::work(int)"). Without the
 * library, names stay mangled, which is still correct output.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "demangle.h"

typedef char *(*cxa_demangle_fn)(const char *mangled, char *buf, size_t *len,
				 int *status);

static pthread_once_t demangle_once = PTHREAD_ONCE_INIT;
static cxa_demangle_fn demangle_fn;     /* process-wide: set once, read-only after */

static void demangle_load(void)
{
	void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);

	if (!h)
		return;
	/* dlsym returns void *; the cast through a union keeps -Wpedantic quiet */
	union { void *p; cxa_demangle_fn f; } u = { .p = dlsym(h, "__cxa_demangle") };
	demangle_fn = u.f;
}

char *elf_demangle(const char *mangled)
{
	int status = -1;
	char *out;

	/* only Itanium-ABI names: "_Z..." (and "___Z" block invocations) */
	if (!mangled || strncmp(mangled, "_Z", 2) != 0)
		return NULL;
	pthread_once(&demangle_once, demangle_load);
	if (!demangle_fn)
		return NULL;
	out = demangle_fn(mangled, NULL, NULL, &status);
	if (status != 0) {
		free(out);
		return NULL;
	}
	return out;
}
