/* usdt_stock.c - stock <sys/sdt.h> sites (a 1-byte nop each) for the
 * process engine: stk:ok in a plain loop, which it patches with a jump
 * right after the nop; stk:unsafe, where a branch elsewhere in its
 * function goes to the instruction right after the nop (never taken
 * here, but a jump over those bytes would break it), so the engine takes
 * that site with a breakpoint and says why under -v.
 *   usdt_stock N       passes each site N times, with arg0 = 0 .. N-1
 *   usdt_stock N US    passes stk:ok N times every US microseconds, until
 *                      killed
 *   usdt_stock fork N  passes stk:ok N times, then forks 3 children one
 *                      after the other, each passing it N times: the
 *                      first forks a grandchild that does too, the second
 *                      execs `true`, the third execs this program (which
 *                      passes both sites N times). Prints "forked" once
 *                      they all exited 0.
 *   usdt_stock forkloop N US
 *                      every US microseconds forks a child that passes
 *                      stk:ok N times and exits, until killed */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sdt.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noinline, noclone)) static long stock_ok(long n)
{
	long s = 0;
	for (long i = 0; i < n; i++) {
		DTRACE_PROBE1(stk, ok, i);
		s += i;
	}
	return s;
}

__attribute__((noinline, noclone)) static long stock_unsafe(long n)
{
	long s = 0;
	if (n < 0)   /* never: the branch only has to be there */
		__asm__ volatile("jmp .Lstk_unsafe_after");
	for (long i = 0; i < n; i++) {
		__asm__ volatile(STAP_PROBE_ASM(stk, unsafe, -8@%rax)
				 ".Lstk_unsafe_after:\n\t"
				 "nop\n\tnop\n\tnop\n\tnop\n\tnop\n\tnop");
		s += i;
	}
	return s;
}

static int reap(pid_t p)
{
	int st;
	return p > 0 && waitpid(p, &st, 0) == p && WIFEXITED(st) &&
	       WEXITSTATUS(st) == 0 ? 0 : -1;
}

static int forks(long n)
{
	char num[32];
	snprintf(num, sizeof(num), "%ld", n);
	stock_ok(n);
	int bad = 0;
	for (int k = 1; k <= 3; k++) {
		fflush(stdout);
		pid_t p = fork();
		if (p == 0) {
			stock_ok(n);
			if (k == 1) {
				pid_t g = fork();
				if (g == 0) {
					stock_ok(n);
					_exit(0);
				}
				_exit(reap(g) ? 1 : 0);
			}
			if (k == 2)
				execlp("true", "true", (char *)NULL);
			else
				execl("/proc/self/exe", "usdt_stock", num, (char *)NULL);
			_exit(127);
		}
		bad |= reap(p);
	}
	if (!bad)
		printf("forked\n");
	return bad;
}

int main(int argc, char **argv)
{
	if (argc > 2 && strcmp(argv[1], "fork") == 0)
		return forks(atol(argv[2])) ? 1 : 0;
	if (argc > 3 && strcmp(argv[1], "forkloop") == 0)
		for (;;) {
			pid_t p = fork();
			if (p == 0) {
				stock_ok(atol(argv[2]));
				_exit(0);
			}
			reap(p);
			usleep((useconds_t)atol(argv[3]));
		}
	long n = argc > 1 ? atol(argv[1]) : 10;
	if (argc > 2)
		for (;;) {
			stock_ok(n);
			usleep((useconds_t)atol(argv[2]));
		}
	printf("ok %ld unsafe %ld\n", stock_ok(n), stock_unsafe(n));
	return 0;
}
