/* leader_exit - a process whose main thread calls pthread_exit while a
 * worker thread runs on, calling work() every millisecond: the leader
 * is a zombie in /proc (no root, exe or maps) but the process lives.
 * Prints "ready" once the worker runs. */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

__attribute__((noinline)) int work(int i)
{
	return i + 1;
}

static void *run(void *arg)
{
	for (int i = 0;; i = work(i))
		usleep(1000);
	return arg;
}

int main(void)
{
	pthread_t t;
	if (pthread_create(&t, NULL, run, NULL) != 0)
		return 1;
	printf("ready\n");
	fflush(stdout);
	pthread_exit(NULL);
}
