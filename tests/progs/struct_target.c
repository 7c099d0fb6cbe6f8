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

int main(void)
{
	struct req last = { .id = 2, .name = "beta", .val = 9 };
	struct req r = { .id = 7, .name = "alpha", .val = -5,
			 .pair = { 3, -4 }, .flag = 1, .level = 5,
			 .arr = { { 1, 2 }, { 3, 4 } }, .next = &last };
	for (int i = 0; i < 50; i++) {
		handle(&r);
		usleep(20000);
	}
	return 0;
}
