/* libfprobe_test.c - a stand-in agent for test_livepatch: the function
 * probe code of src/agent/fprobe.c as it is, with a probe runner that
 * counts what each probe id saw instead of running a program. */
#include "../../src/agent/fprobe.c"

#include <pthread.h>

#define TEST_PROBES 64
EXPORT uint64_t fprobe_test_hits[TEST_PROBES];
EXPORT uint64_t fprobe_test_ax[TEST_PROBES];
EXPORT uint64_t fprobe_test_di[TEST_PROBES];

void agent_fprobe_run(uint32_t id, struct fprobe_regs *regs)
{
	if (id >= TEST_PROBES)
		return;
	__atomic_fetch_add(&fprobe_test_hits[id], 1, __ATOMIC_RELAXED);
	fprobe_test_ax[id] = regs->ax;
	fprobe_test_di[id] = regs->di;
}

/* As the agent does: a child of fork() is not traced. */
__attribute__((constructor)) static void fprobe_test_init(void)
{
	pthread_atfork(NULL, NULL, fprobe_restore_child);
}
