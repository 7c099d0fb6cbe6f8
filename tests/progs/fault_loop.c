/* fault_loop.c - page faults until killed, and nothing printed: a quiet
 * machine may go seconds without a fault, and a test of software:faults
 * (tests/diff/software_order) waits for several. Each round maps a fresh
 * anonymous page, touches it (one fault) and unmaps it. */
#include <sys/mman.h>
#include <unistd.h>

int main(void)
{
	for (;;) {
		volatile char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
					MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return 1;
		p[0] = 1;
		munmap((void *)p, 4096);
		usleep(1000);
	}
}
