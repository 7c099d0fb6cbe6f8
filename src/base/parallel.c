/* parallel.c - see parallel.h. */
#include "parallel.h"

#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#define PARALLEL_THREADS_MAX 32

struct parallel_work {
	unsigned n;
	int (*fn)(void *ctx, unsigned i);
	void *ctx;
	atomic_uint next;
	atomic_int result;        /* the first non-zero return */
};

static void *parallel_run(void *arg)
{
	struct parallel_work *w = arg;
	for (;;) {
		if (atomic_load(&w->result))
			break;
		unsigned i = atomic_fetch_add(&w->next, 1);
		if (i >= w->n)
			break;
		int r = w->fn(w->ctx, i);
		if (r) {
			int expect = 0;
			atomic_compare_exchange_strong(&w->result, &expect, r);
		}
	}
	return NULL;
}

int parallel_for(unsigned n, unsigned threads,
		 int (*fn)(void *ctx, unsigned i), void *ctx)
{
	struct parallel_work w = { .n = n, .fn = fn, .ctx = ctx };
	if (threads == 0) {
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);
		threads = cpus > 0 ? (unsigned)cpus : 1;
	}
	if (threads > n)
		threads = n;
	if (threads > PARALLEL_THREADS_MAX)
		threads = PARALLEL_THREADS_MAX;
	pthread_t tid[PARALLEL_THREADS_MAX];
	unsigned started = 0;
	for (; started + 1 < threads; started++)
		if (pthread_create(&tid[started], NULL, parallel_run, &w))
			break;
	parallel_run(&w);         /* the caller works too */
	for (unsigned k = 0; k < started; k++)
		pthread_join(tid[k], NULL);
	return atomic_load(&w.result);
}
