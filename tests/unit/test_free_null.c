/* test_free_null.c - x_free(NULL) and x_close(NULL) are no-ops (STYLE
 * convention 2), for the release functions of the parts' public headers
 * that sonde links (the agent's are built into the agent only). Each
 * call below crashed before; reaching the end is the test. */
#include <stdio.h>

#include "base/arena.h"
#include "base/strmap.h"
#include "export/xbuf.h"
#include "output/output_int.h"
#include "probes/probe_util.h"
#include "runtime/rt.h"
#include "vm/vm_int.h"
#include "unit.h"

int main(void)
{
	arena_free(NULL);
	CHECK(1, "arena_free(NULL)");
	strmap_free(NULL);
	CHECK(1, "strmap_free(NULL)");
	xbuf_free(NULL);
	CHECK(1, "xbuf_free(NULL)");
	sbuf_free(NULL);
	CHECK(1, "sbuf_free(NULL)");
	kfuncs_free(NULL);
	CHECK(1, "kfuncs_free(NULL)");
	rt_close(NULL);
	CHECK(1, "rt_close(NULL)");
	rt_ring_private_close(NULL);
	CHECK(1, "rt_ring_private_close(NULL)");
	vm_jit_free(NULL);
	CHECK(1, "vm_jit_free(NULL)");
	return UNIT_DONE();
}
