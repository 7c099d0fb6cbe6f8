/* floor_target.c - the running program bench/floor attaches a uprobe to:
 * it calls floor_fn() every 100 us or so, for ever (bench/floor ends
 * it), so the first hit after a tracer attaches comes within about that
 * long of the uprobe being armed. */
#include <time.h>

__attribute__((noinline)) long floor_fn(long x)
{
	__asm__ volatile("" ::: "memory");
	return x + 1;
}

int main(void)
{
	struct timespec pause = { 0, 100000 };
	long s = 0;
	for (;;) {
		s = floor_fn(s);
		nanosleep(&pause, NULL);
	}
}
