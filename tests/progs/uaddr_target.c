/* uaddr_target.c - globals of each size and a function to probe, for
 * *uaddr("SYM"), which reads the symbol's size. Built -no-pie, as
 * bpftrace 0.17's uaddr() adds no load bias (tests/diff/uaddr_sizes).
 * It lingers 200 ms after the call, so a script's exit() comes while it
 * runs. */
#include <unistd.h>

int g_int = 0x55555555;
short g_short = 0x3333;
unsigned char g_byte = 0x77;
long g_long = 42;
/* neighbours that would show if too many bytes were read */
long g_after[4] = { -1, -1, -1, -1 };

__attribute__((noinline)) int probe_here(int x)
{
	return x + g_int;
}

int main(void)
{
	int r = probe_here(1) == 0;
	usleep(200 * 1000);
	return r;
}
