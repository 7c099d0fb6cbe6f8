/* usdt_closefrom.c - a traced program that closes every descriptor but
 * the standard ones first thing, as daemons do, then opens files of its
 * own on descriptors 3 and up (and on 512 to 1023, where the agent keeps
 * its own), passes dm:hit 3 times, writes one byte into each of its files
 * and checks that each holds exactly that byte: nothing else may have
 * written there. Prints "files ok". */
#include <sonde/sdt.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(void)
{
	char path[] = "/tmp/sonde-closefrom.XXXXXX";
	closefrom(3);
	int fd = mkstemp(path);
	if (fd < 0)
		return 1;
	unlink(path);
	for (int i = 512; i < 1024; i++)
		dup2(fd, i);
	for (long i = 0; i < 3; i++)
		SONDE_PROBE(dm, hit, i);
	if (write(fd, "x", 1) != 1)
		return 2;
	off_t size = lseek(fd, 0, SEEK_END);
	printf("files %s\n", size == 1 ? "ok" : "written by someone else");
	return 0;
}
