/* vm_jit.c - the x86-64 JIT (not written yet: every program runs in the
 * interpreter, and says so through vm_prog_jit_error). */
#include "vm_int.h"

#include <errno.h>

int vm_jit_compile(struct vm_prog *p)
{
	p->jit_error = "the JIT is not built yet";
	return -ENOTSUP;
}

void vm_jit_free(struct vm_prog *p)
{
	(void)p;
}
