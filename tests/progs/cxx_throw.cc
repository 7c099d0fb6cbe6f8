// cxx_throw.cc - throws and catches a C++ exception N times, for the
// libstdc++ USDT probes (libstdcxx:throw, libstdcxx:catch).
//   cxx_throw [N [MS]]   N throws (default 3), sleeping MS ms after each
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <unistd.h>

__attribute__((noinline)) static void fail(int i)
{
	throw std::runtime_error(i % 2 ? "odd" : "even");
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 3;
	int ms = argc > 2 ? atoi(argv[2]) : 0;
	int caught = 0;
	for (int i = 0; i < n; i++) {
		try {
			fail(i);
		} catch (const std::exception &) {
			caught++;
		}
		if (ms)
			usleep(ms * 1000);
	}
	printf("caught %d\n", caught);
	return 0;
}
