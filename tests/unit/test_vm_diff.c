/* test_vm_diff.c - the interpreter and the JIT on a few thousand random
 * programs of a verified shape (tests/fuzz/vm_gen.h, the generator the
 * fuzz target fuzz_vm uses), from a fixed seed so a failure repeats.
 * Also checks that the programs reach what they are meant to: loops cut
 * by the budget, helper calls, every exit path. */
#include "unit.h"
#include "../fuzz/vm_gen.h"

#define PROGRAMS 20000

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

int main(void)
{
	static uint8_t bytes[8192];
	static struct vg_prog p;
	static struct vg_result ri, rj;
	char why[256];
	unsigned agree = 0, budget = 0, calls = 0, refused = 0;
	for (int k = 0; k < PROGRAMS; k++) {
		size_t n = VG_BUF + next() % (sizeof(bytes) - VG_BUF);
		for (size_t i = 0; i < n; i++)
			bytes[i] = (uint8_t)next();
		vg_generate(bytes, n, &p);
		const char *diff = vg_compare(&p, &ri, &rj, why, sizeof(why));
		if (!diff) {
			agree++;
			budget += ri.rc == -E2BIG;
			calls += ri.log.n > 0;
			continue;
		}
		if (refused++ < 3) {
			printf("# program %d: %s %s\n", k, diff, why);
			printf("#   interp rc %d r0 %#llx, jit rc %d r0 %#llx\n",
			       ri.rc, (unsigned long long)ri.r0, rj.rc,
			       (unsigned long long)rj.r0);
			if (refused == 1)
				vg_dump(stdout, &p);
		}
	}
	printf("# %u of %d programs agree; %u ran out of budget, %u called helpers\n",
	       agree, PROGRAMS, budget, calls);
	CHECK(agree == PROGRAMS, "interpreter and JIT agree on every random program");
	CHECK(budget > PROGRAMS / 50, "some random programs loop until the budget stops them");
	CHECK(calls > PROGRAMS / 4, "most random programs call helpers");
	CHECK(agree - budget > PROGRAMS / 4, "many random programs reach their exit");
	return UNIT_DONE();
}
