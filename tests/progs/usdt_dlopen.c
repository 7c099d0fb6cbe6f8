/* usdt_dlopen.c - a traced program that loads a library with USDT sites
 * after it started: usdt_dlopen LIB N dlopens LIB (with RTLD_NOW),
 * calls its lib_fire(N) (N hits of its site), dlcloses it, loads it
 * again and calls it again. Prints "fired 2N". With a third argument
 * GO it first prints "waiting" and waits (up to a minute) until the
 * file GO exists (a tracer attaches with -p meanwhile), and after each
 * dlopen until GO.1, then GO.2 exists (the tracer has seen the library:
 * a -p agent notices one within milliseconds, not at once). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static void wait_for(const char *go, int round)
{
	char path[4096];
	if (round)
		snprintf(path, sizeof(path), "%s.%d", go, round);
	else
		snprintf(path, sizeof(path), "%s", go);
	struct timespec nap = { 0, 5000000 };
	for (int i = 0; i < 12000 && access(path, F_OK) != 0; i++)
		nanosleep(&nap, NULL);
}

int main(int argc, char **argv)
{
	if (argc != 3 && argc != 4)
		return 2;
	if (argc == 4) {
		printf("waiting\n");
		fflush(stdout);
		wait_for(argv[3], 0);
	}
	long n = atol(argv[2]), total = 0;
	for (int round = 0; round < 2; round++) {
		void *h = dlopen(argv[1], RTLD_NOW);
		if (!h) {
			fprintf(stderr, "%s\n", dlerror());
			return 1;
		}
		if (argc == 4)
			wait_for(argv[3], round + 1);
		long (*fire)(long) = (long (*)(long))dlsym(h, "lib_fire");
		if (!fire)
			return 1;
		total += fire(n);
		dlclose(h);
	}
	printf("fired %ld\n", total);
	return 0;
}
