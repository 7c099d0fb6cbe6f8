/* usdt_quoted.c - a sys/sdt.h probe whose name is a string literal, so
 * the note holds the name with its quotes ("probe1"), as bpftrace 0.17's
 * usdt_quoted_probe does: passes it N times (argv[1], default 3). */
#include <stdlib.h>
#include <sys/sdt.h>

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 3;
	for (int i = 0; i < n; i++)
		DTRACE_PROBE1(quoted, "probe1", i);
	return 0;
}
