/* watch_func.c - for watchpoint:FUNCTION+argN. set(0, p) is passed a
 * heap int and writes it; main then pauses argv[2] ms (default 0:
 * unwatch() is asynchronous, so a test gives it that time) and writes it
 * N more times (argv[1], default 3); then watch_0 .. watch_5 each get a
 * fresh int and write it once: two more functions than a CPU has debug
 * registers (4 on x86-64). With N < 0 it calls set() and writes every
 * millisecond until killed (for -p). Prints nothing. */
#include <stdlib.h>
#include <unistd.h>

__attribute__((noinline)) void set(int unused, int *p)
{
	(void)unused;
	*(volatile int *)p = 0;
}

#define WATCH(n) \
	__attribute__((noinline)) void watch_##n(int *p) \
	{ \
		(*(volatile int *)p)++; \
	}
WATCH(0) WATCH(1) WATCH(2) WATCH(3) WATCH(4) WATCH(5)

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 3;
	int pause_ms = argc > 2 ? atoi(argv[2]) : 0;
	int *p = malloc(sizeof(int));
	if (!p)
		return 1;
	while (n < 0) {
		set(0, p);
		(*(volatile int *)p)++;
		usleep(1000);
	}
	set(0, p);
	if (pause_ms)
		usleep((useconds_t)pause_ms * 1000);
	for (int i = 0; i < n; i++)
		(*(volatile int *)p)++;
	watch_0(malloc(sizeof(int)));
	watch_1(malloc(sizeof(int)));
	watch_2(malloc(sizeof(int)));
	watch_3(malloc(sizeof(int)));
	watch_4(malloc(sizeof(int)));
	watch_5(malloc(sizeof(int)));
	return 0;
}
