/* libinject_hello.c - the shared object test_inject loads into running
 * processes: its constructor must run in the target, and its functions
 * be callable there. */
#include <unistd.h>

int hello_ctor_pid;     /* the pid the constructor ran in */
int hello_ctor_runs;    /* how many times it ran (a second dlopen: none) */

__attribute__((constructor)) static void hello_init(void)
{
	hello_ctor_pid = getpid();
	hello_ctor_runs++;
}

long hello_add(long a, long b)
{
	return a + b;
}

/* A call that takes a while: a tracer killed in the middle of it. */
long hello_sleep(long ms)
{
	usleep((useconds_t)ms * 1000);
	return ms;
}
