// cxx_stack.cc - a C++ program with namespaced, templated, overloaded and
// static functions, for ustack/usym demangling tests.
//   cxx_stack [N [MS]]   call the chain N times, sleeping MS ms before each
//   cxx_stack addrs      print the six return addresses above the innermost
//                        function (work ... main's caller), then wait to be killed
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

static bool print_addrs;

namespace shapes {
struct Widget {
	int n;
	__attribute__((noinline)) int leaf(int x);
	__attribute__((noinline)) int work(int x);
};

__attribute__((noinline)) int Widget::leaf(int x)
{
	asm volatile("" ::: "memory");
	if (print_addrs) {
		// -O0 with frame pointers: the builtin can walk up to main's caller
		printf("%p %p %p %p %p %p\n", __builtin_return_address(0),
		       __builtin_return_address(1), __builtin_return_address(2),
		       __builtin_return_address(3), __builtin_return_address(4),
		       __builtin_return_address(5));
		fflush(stdout);
		pause();
	}
	return x + n;
}

__attribute__((noinline)) int Widget::work(int x)
{
	return leaf(x) * 2;
}
} // namespace shapes

template <typename T>
__attribute__((noinline)) T twice(T v)
{
	shapes::Widget w{1};
	return (T)w.work((int)v) + v;
}

__attribute__((noinline)) static int overloaded(int a) { return twice<long>(a); }
__attribute__((noinline)) static int overloaded(double a) { return overloaded((int)a); }

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "addrs") == 0) {
		print_addrs = true;
		return overloaded(1.0) > 0 ? 0 : 1;
	}
	int n = argc > 1 ? atoi(argv[1]) : 3;
	long s = 0;
	for (int i = 0; i < n; i++) {
		if (argc > 2)
			usleep(atoi(argv[2]) * 1000);
		s += overloaded((double)i);
	}
	printf("%ld\n", s);
	return 0;
}
