/* usdt_stock.c - stock <sys/sdt.h> sites (a 1-byte nop each) for the
 * process engine: stk:ok in a plain loop, which it patches with a jump
 * right after the nop; stk:unsafe, where a branch elsewhere in its
 * function goes to the instruction right after the nop (never taken
 * here, but a jump over those bytes would break it), so the engine takes
 * that site with a breakpoint and says why under -v.
 *   usdt_stock N       passes each site N times, with arg0 = 0 .. N-1
 *   usdt_stock N US    passes stk:ok N times every US microseconds, until
 *                      killed */
#include <stdio.h>
#include <stdlib.h>
#include <sys/sdt.h>
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

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10;
	if (argc > 2)
		for (;;) {
			stock_ok(n);
			usleep((useconds_t)atol(argv[2]));
		}
	printf("ok %ld unsafe %ld\n", stock_ok(n), stock_unsafe(n));
	return 0;
}
