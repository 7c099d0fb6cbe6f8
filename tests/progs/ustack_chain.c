/* ustack_chain.c - main -> chain_a -> chain_b -> chain_c, which makes the
 * getppid system call itself (no libc wrapper in between), N times, then
 * sleeps so that its mappings are still there when a tracer prints.
 * Built with frame pointers: the kernel's frame-pointer walk and a CFI
 * unwinder must agree on the innermost frames.
 *   ustack_chain [N [SLEEP_MS [detach|noterm]]]
 * With "detach" the work is done by a child that outlives the parent
 * (which returns after SLEEP_MS / 2), so a tracer that kills its -c
 * command at exit still finds the process alive when it prints; with
 * "noterm" the process ignores SIGTERM for the same purpose (and stays
 * the process the tracer started). */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

__attribute__((noinline)) static long chain_c(long x)
{
	long r;
	asm volatile("syscall" : "=a"(r) : "0"((long)SYS_getppid)
		     : "rcx", "r11", "memory");
	return r + x;
}

__attribute__((noinline)) static long chain_b(long x)
{
	return chain_c(x + 1) * 2;
}

__attribute__((noinline)) long chain_a(long x)
{
	return chain_b(x + 2) + 1;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1;
	int ms = argc > 2 ? atoi(argv[2]) : 2000;
	long s = 0;
	if (argc > 3 && strcmp(argv[3], "noterm") == 0)
		signal(SIGTERM, SIG_IGN);
	if (argc > 3 && strcmp(argv[3], "detach") == 0 && fork() != 0) {
		usleep((useconds_t)ms * 500);
		return 0;
	}
	for (int i = 0; i < n; i++)
		s += chain_a(i);
	usleep((useconds_t)ms * 1000);
	return s == 42;
}
