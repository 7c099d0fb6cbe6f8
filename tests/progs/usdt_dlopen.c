/* usdt_dlopen.c - a traced program that loads a library with USDT sites
 * after it started: usdt_dlopen LIB N dlopens LIB (with RTLD_NOW),
 * calls its lib_fire(N) (N hits of its site), dlcloses it, loads it
 * again and calls it again. Prints "fired 2N". */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	long n = atol(argv[2]), total = 0;
	for (int round = 0; round < 2; round++) {
		void *h = dlopen(argv[1], RTLD_NOW);
		if (!h) {
			fprintf(stderr, "%s\n", dlerror());
			return 1;
		}
		long (*fire)(long) = (long (*)(long))dlsym(h, "lib_fire");
		if (!fire)
			return 1;
		total += fire(n);
		dlclose(h);
	}
	printf("fired %ld\n", total);
	return 0;
}
