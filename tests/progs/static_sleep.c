/* static_sleep.c - a statically linked program that sleeps: the process
 * engine cannot load its agent into it, and must say so. */
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	sleep(argc > 1 ? (unsigned)atoi(argv[1]) : 10);
	return 0;
}
