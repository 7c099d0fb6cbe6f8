/* struct_target.c - a program that passes a struct to a function, for
 * the C-type system tests: a script declares the same struct and reads
 * it through the uprobe's argument (user memory). */
#include <unistd.h>

struct pair {
	short a, b;
};

struct req {
	int id;
	char name[8];
	long val;
	struct pair pair;
	unsigned flag : 1;
	unsigned level : 3;
	int arr[2][2];
	struct req *next;
};

__attribute__((noinline)) int handle(struct req *r)
{
	return r->id;
}

/* Member kinds printing must get right: enums, bools, unions, arrays
 * of structs, function pointers, unsigned and 64-bit extremes. */
enum color { RED, GREEN = 5, BLUE = -1 };

struct mix {
	enum color c;
	_Bool ok;
	union ub {          /* named: bpftrace 0.17 aborts on anonymous
			     * types in a probed function's DWARF */
		int i;
		unsigned char b[4];
	} u;
	struct pair ps[2];
	int (*fn)(struct req *);
	unsigned long long big;
	long long neg;
	unsigned char uc;
	signed char sc;
	enum color blue;    /* bpftrace 0.17 prints -1 as 4294967295 */
};

__attribute__((noinline)) int handle_mix(struct mix *m)
{
	return m->c;
}

int main(void)
{
	struct req last = { .id = 2, .name = "beta", .val = 9 };
	struct req r = { .id = 7, .name = "alpha", .val = -5,
			 .pair = { 3, -4 }, .flag = 1, .level = 5,
			 .arr = { { 1, 2 }, { 3, 4 } }, .next = &last };
	struct mix m = { .c = GREEN, .ok = 1, .u = { .i = 0x01020304 },
			 .ps = { { 1, -1 }, { 2, -2 } }, .fn = 0,
			 .big = 18446744073709551615ull,
			 .neg = -9223372036854775807ll - 1, .uc = 255, .sc = -128,
			 .blue = BLUE };
	for (int i = 0; i < 50; i++) {
		handle_mix(&m);
		handle(&r);
		usleep(20000);
	}
	return 0;
}
