// cxx_unwind.cc - C++ exceptions and longjmp crossing functions that
// return probes hook: catcher() calls middle() (through via_call()),
// which calls thrower(),
// which throws for every third n; the exception crosses middle() and is
// caught in catcher(). jumper() leaves through longjmp. The program checks
// every result and, on SIGTERM (or after ROUNDS rounds), prints its counts
// and exits 0 if all were right, 3 otherwise. THROW_US makes thrower()
// sleep before each throw (a tracer can then act while the exception's
// path is on the stack).
//
//   cxx_unwind [ROUNDS [SLEEP_US [THROW_US]]]     (ROUNDS 0: until SIGTERM)
#include <csetjmp>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <unistd.h>

static volatile std::sig_atomic_t stop;
static std::jmp_buf jb;
static long destructed;
static long throw_us;

struct Guard {
	~Guard() { destructed++; }
};

extern "C" __attribute__((noinline)) long thrower(long n)
{
	if (n % 3 == 0) {
		if (throw_us)
			usleep((useconds_t)throw_us);
		throw std::runtime_error("third");
	}
	return n * 2;
}

extern "C" __attribute__((noinline)) long middle(long n)
{
	Guard g;
	return thrower(n) + 1;
}

// via_call(n) is middle(n) through a frame whose first instructions
// include the call (as gcc -O1 and up lay out a function that only calls
// another): a tracer that moves those instructions elsewhere must keep
// middle's return address in via_call, where the unwinder finds its
// unwind information. Written in assembly so that any -O keeps the shape.
extern "C" long via_call(long n);
__asm__(".text\n"
	".globl via_call\n"
	".type via_call, @function\n"
	"via_call:\n"
	".cfi_startproc\n"
	"	sub $8, %rsp\n"
	".cfi_adjust_cfa_offset 8\n"
	"	call middle@PLT\n"
	"	add $8, %rsp\n"
	".cfi_adjust_cfa_offset -8\n"
	"	ret\n"
	".cfi_endproc\n"
	".size via_call, .-via_call\n");

extern "C" __attribute__((noinline)) long catcher(long n)
{
	try {
		return via_call(n);
	} catch (const std::exception &) {
		return -1;
	}
}

extern "C" __attribute__((noinline)) long jumper(long n)
{
	if (n % 2)
		std::longjmp(jb, 1);
	return n;
}

static void on_term(int) { stop = 1; }

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? std::atol(argv[1]) : 0;
	long sleep_us = argc > 2 ? std::atol(argv[2]) : 100;
	throw_us = argc > 3 ? std::atol(argv[3]) : 0;
	std::signal(SIGTERM, on_term);
	std::printf("ready\n");
	std::fflush(stdout);
	long calls = 0, caught = 0, jumps = 0, bad = 0;
	for (long i = 0; !stop && (!rounds || i < rounds); i++) {
		long want = i % 3 == 0 ? -1 : i * 2 + 1;
		long got = catcher(i);
		calls++;
		if (got == -1)
			caught++;
		if (got != want)
			bad++;
		volatile long j = i;
		if (setjmp(jb) == 0) {
			if (jumper(j) != j)
				bad++;
		} else {
			jumps++;
		}
		if (sleep_us)
			usleep((useconds_t)sleep_us);
	}
	if (destructed != calls)
		bad++;
	std::printf("calls %ld caught %ld jumps %ld bad %ld\n", calls, caught, jumps, bad);
	return bad ? 3 : 0;
}
