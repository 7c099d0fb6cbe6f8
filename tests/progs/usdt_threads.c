/* usdt_threads.c - threads hammering one sonde/sdt.h site, for exact
 * counts under concurrency and for the process engine's detach while
 * threads run.
 *   usdt_threads [THREADS [HITS [MS [WAVES]]]]   each of THREADS threads
 *   (default 4) passes thr:hit HITS times (default 250000) with its index
 *   and the iteration, then sleeps MS ms (default 0) and does it all again
 *   once more if MS is not 0; with WAVES (default 1), that many waves of
 *   THREADS threads, each wave started when the last one has exited;
 *   "done THREADS x HITS" at the end. */
#include <sonde/sdt.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define THREADS_MAX 256

static long hits;
static int pause_ms;

static void *worker(void *arg)
{
	long id = (long)arg;
	for (int round = 0; round < (pause_ms ? 2 : 1); round++) {
		for (long i = 0; i < hits; i++)
			SONDE_PROBE(thr, hit, id, i);
		if (pause_ms)
			usleep((useconds_t)pause_ms * 1000);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 4;
	hits = argc > 2 ? atol(argv[2]) : 250000;
	pause_ms = argc > 3 ? atoi(argv[3]) : 0;
	if (n < 1 || n > THREADS_MAX)
		n = 4;
	int waves = argc > 4 ? atoi(argv[4]) : 1;
	pthread_t t[THREADS_MAX];
	for (int w = 0; w < waves; w++) {
		for (long i = 0; i < n; i++)
			if (pthread_create(&t[i], NULL, worker, (void *)i) != 0)
				return 1;
		for (int i = 0; i < n; i++)
			pthread_join(t[i], NULL);
	}
	printf("done %d x %ld\n", n, hits);
	return 0;
}
