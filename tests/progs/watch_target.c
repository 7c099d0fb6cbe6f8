/* watch_target.c - a program for the watchpoint tests: built without PIE
 * so g_watched sits at a fixed address (nm gives it); it writes it N
 * times (default 5), reads it once, and prints "done" and the value. */
#include <stdio.h>
#include <stdlib.h>

volatile long g_watched;

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 5;
	for (int i = 0; i < n; i++)
		g_watched = g_watched + 1;
	printf("done %ld\n", g_watched);
	return 0;
}
