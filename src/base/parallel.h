/* parallel.h - run independent pieces of work on a few threads.
 *
 * The kernel engine's set-up and teardown are many independent system
 * calls (create a map, load a program, close a link), each of which the
 * kernel serves without a lock shared between them, so spreading them over
 * threads divides the wait. */
#ifndef SONDE_PARALLEL_H
#define SONDE_PARALLEL_H

/* Call fn(ctx, i) for every i in [0, n), from up to `threads` threads
 * (the caller's among them), each taking the next index. threads == 0
 * means one per online CPU. A call that returns non-zero stops the others
 * from starting new indexes (those already running finish); the first
 * such value is returned, 0 if every call returned 0. Work that cannot
 * get a thread runs on the caller's. */
int parallel_for(unsigned n, unsigned threads,
		 int (*fn)(void *ctx, unsigned i), void *ctx);

#endif
