/* uprobe_target.c - a program for the uprobe/uretprobe/usdt system tests.
 *   uprobe_target [N [MS [-a]]]   run N rounds (default 3), sleeping MS
 *                            ms after each; with -a, print the addresses
 *                            of its semaphore and g_text first; "done"
 *                            and a total last.
 * Each round i calls add(i, 10 * i), eight(i + 1, ..., i + 8),
 * greet(names[i % 3]), getpid(), and fires the USDT probes tgt:ping
 * (only while its semaphore is raised, with i) and tgt:tock (always, with
 * i and g_text). bad_site is never called: it starts with int3, which
 * the kernel refuses to probe, so a test can make an attachment fail. */
#include <sonde/sdt.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char g_text[32] = "global text";
long g_value = 42;

__attribute__((noinline)) int add(int a, int b)
{
	return a + b;
}

__attribute__((noinline)) long eight(long a, long b, long c, long d,
				     long e, long f, long g, long h)
{
	return a + b + c + d + e + f + g + h;
}

__attribute__((noinline)) size_t greet(const char *name)
{
	return strlen(name);
}

__asm__(".text\n"
	".globl bad_site\n"
	".type bad_site, @function\n"
	"bad_site:\n"
	"\tint3\n"
	"\tret\n"
	".size bad_site, .-bad_site\n");

int main(int argc, char **argv)
{
	static const char *names[] = { "ann", "bob", "cy" };
	int n = argc > 1 ? atoi(argv[1]) : 3;
	int ms = argc > 2 ? atoi(argv[2]) : 0;
	/* touch the strings so the tracer can read their page */
	volatile char touch = 0;
	for (int i = 0; i < 3; i++) {
		const char *volatile name = names[i];
		touch ^= name[0];
	}
	(void)SONDE_PROBE_ENABLED(tgt, ping);
	extern volatile unsigned short sonde_sem__tgt__ping
		__attribute__((visibility("hidden")));
	if (argc > 3 && strcmp(argv[3], "-a") == 0) {
		printf("sem=%p text=%p\n", (void *)&sonde_sem__tgt__ping,
		       (void *)g_text);
		fflush(stdout);
	}
	long total = 0;
	for (int i = 0; i < n; i++) {
		total += add(i, 10 * i);
		total += eight(i + 1, i + 2, i + 3, i + 4, i + 5, i + 6, i + 7,
			       i + 8);
		total += (long)greet(names[i % 3]);
		total += getpid() > 0;
		if (SONDE_PROBE_ENABLED(tgt, ping))
			SONDE_PROBE(tgt, ping, i);
		SONDE_PROBE(tgt, tock, i, g_text);
		if (ms)
			usleep((useconds_t)ms * 1000);
	}
	printf("done %ld\n", total);
	return 0;
}
