/* dwarf_args.c - a program with debug information whose function takes
 * typed arguments (tests/system/cdecl: uprobe args->NAME from DWARF, and
 * -lv). Built -O0 -g; the test also splits its DWARF into a separate
 * debug file. Calls handle() N times (argv[1], default 3), 10 ms apart. */
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

struct inner {
	int id;
	char name[8];
};

enum color { RED = 1, GREEN = 2 };

struct req {
	long id;
	struct inner *in;
	const char *path;
	unsigned flags : 3;
	enum color color;
};

typedef struct req req_t;

__attribute__((noinline)) int handle(req_t *req, int count, const char *msg,
				     unsigned long big, double ratio, char c,
				     int16_t small)
{
	return (int)req->id + count + msg[0] + (int)big + (int)ratio + c +
	       small;
}

int main(int argc, char **argv)
{
	static struct inner in = { 42, "inner" };
	static req_t r = { 7, &in, "/some/path", 5, GREEN };
	static const char msg[] = "hello";
	int n = argc > 1 ? atoi(argv[1]) : 3;
	volatile int sink = 0;
	for (int i = 0; i < n; i++) {
		sink += handle(&r, i, msg, 1ul << 40, 0.5, 'x', -3);
		usleep(10000);
	}
	return sink == 12345;
}
