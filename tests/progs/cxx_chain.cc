// cxx_chain.cc - C++ frames around a system call, for ustack demangling
// tests without uprobes: main -> app::Runner::run -> app::step<int> ->
// (anonymous namespace)::leaf(int), which calls getppid() itself.
//   cxx_chain [N [US]]   N calls (default 3), sleeping US microseconds
//                        between them (default 0)
#include <cstdlib>
#include <sys/syscall.h>
#include <unistd.h>

namespace {
__attribute__((noinline)) long leaf(int x)
{
	long r;
	asm volatile("syscall" : "=a"(r) : "0"((long)SYS_getppid)
		     : "rcx", "r11", "memory");
	return r + x;
}
} // namespace

namespace app {
template <typename T>
__attribute__((noinline)) long step(T v)
{
	return leaf((int)v) + 1;
}

struct Runner {
	int us;
	__attribute__((noinline)) long run(int n)
	{
		long s = 0;
		for (int i = 0; i < n; i++) {
			s += step<int>(i);
			if (us)
				usleep((useconds_t)us);
		}
		return s;
	}
};
} // namespace app

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 3;
	app::Runner r{argc > 2 ? atoi(argv[2]) : 0};
	return r.run(n) == 42;
}
