/* getppid_loop.c - makes N getppid() calls and N two-byte writes to
 * /dev/null on a fresh descriptor, so tracepoint tests can count exact
 * syscalls from a known process. */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1;
	int fd = open("/dev/null", O_WRONLY);
	for (int i = 0; i < n; i++) {
		getppid();
		if (fd >= 0 && write(fd, "xy", 2) < 0)
			return 1;
	}
	return 0;
}
