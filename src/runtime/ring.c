/* ring.c - the event ring of the process engine: the BPF ring buffer's
 * reserve/submit/discard for many producers (the traced process's
 * threads, and sonde's own probes) and one reader (sonde).
 *
 * Positions count bytes from the start and only grow; the data is mapped
 * twice in a row, so a record at any position is contiguous. A producer
 * claims [prod, prod + len) with a compare-and-swap when the reader has
 * freed that much, then writes the record's header (length | BUSY), the
 * data, and the header again without BUSY (release). The reader reads
 * headers in order from cons: a zero header is space claimed but not yet
 * headed (the reader zeroes what it consumed, so reused space reads 0), a
 * BUSY one is still being written; either ends the batch. Then it hands
 * each record to its callback, zeroes it, and publishes the new cons.
 *
 * A producer can die between its claim and its submit (a thread killed
 * in the middle of a probe): its record would stop the reader forever, so
 * the reader skips a record that stayed BUSY for RING_STALL_NS, counting
 * it as lost.
 *
 * Trust. The traced process can write anything into the ring and its
 * positions. The reader (sonde) keeps its own read position, reads each
 * header once and checks the length it holds against the ring before
 * using it, hands every record over as a private copy, and bounds its
 * walk by the positions it checked: a ring that is not what producers
 * leave is reported (-EBADMSG), never followed. A producer's reservation
 * gives up after a bounded number of tries. */
#include <errno.h>
#include <linux/bpf.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "rt.h"
#include "rt_int.h"

#define RING_STALL_NS 1000000000ull
/* Compare-and-swaps a reservation tries before it counts as lost: many
 * threads contend for a few at most; only a writer of the shared
 * position that is not a producer (a hostile process) makes more fail. */
#define RESERVE_TRIES 100000

static uint32_t *header_at(const struct rt_ring *r, uint64_t pos)
{
	return (uint32_t *)(r->data + (pos & r->mask));
}

void *rt_ring_reserve(struct rt_ring *r, uint32_t size)
{
	if (!r->data || size == 0 || size > RT_RING_LEN_MASK)
		return NULL;
	uint64_t len = RT_ALIGN(size + RT_RING_HDR, 8);
	if (len > r->size / 2)     /* as the kernel: at most half the ring */
		return NULL;
	uint64_t p = __atomic_load_n(r->prod, __ATOMIC_RELAXED);
	for (unsigned tries = 0;; tries++) {
		uint64_t c = __atomic_load_n(r->cons, __ATOMIC_ACQUIRE);
		if (p - c > r->size || p + len - c > r->size ||
		    tries == RESERVE_TRIES)
			return NULL;   /* full (or positions not to be trusted) */
		if (__atomic_compare_exchange_n(r->prod, &p, p + len, true,
						__ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED))
			break;
	}
	uint32_t *h = header_at(r, p);
	__atomic_store_n(h, size | RT_RING_BUSY, __ATOMIC_RELAXED);
	return (uint8_t *)h + RT_RING_HDR;
}

/* The traced program may have closed the eventfd and reused its number
 * (a daemon closing every descriptor): never write into its files. */
static void wake(const struct rt_ring *r)
{
	struct stat st;
	if (r->wake_fd < 0 || fstat(r->wake_fd, &st) < 0 ||
	    (uint64_t)st.st_ino != r->wake_ino)
		return;
	uint64_t one = 1;
	/* an eventfd write of 1 cannot block or fail short of overflow */
	ssize_t n = write(r->wake_fd, &one, sizeof(one));
	(void)n;
}

void rt_ring_submit(struct rt_ring *r, void *rec, uint64_t flags, bool discard)
{
	if (!rec)
		return;
	uint32_t *h = (uint32_t *)((uint8_t *)rec - RT_RING_HDR);
	uint32_t v = __atomic_load_n(h, __ATOMIC_RELAXED) & RT_RING_LEN_MASK;
	if (discard)
		v |= RT_RING_DISCARD;
	__atomic_store_n(h, v, __ATOMIC_RELEASE);
	if (!r || flags & BPF_RB_NO_WAKEUP)
		return;
	/* BPF_RB_FORCE_WAKEUP, or no flag: the kernel then wakes the reader
	 * when it had caught up with this record; waking it is never wrong */
	if (flags & BPF_RB_FORCE_WAKEUP ||
	    (uint8_t *)h - r->data ==
	    (long)(__atomic_load_n(r->cons, __ATOMIC_RELAXED) & r->mask))
		wake(r);
}

uint64_t rt_ring_avail(const struct rt_ring *r)
{
	if (!r->data)
		return 0;
	uint64_t p = __atomic_load_n(r->prod, __ATOMIC_ACQUIRE);
	uint64_t c = __atomic_load_n(r->cons, __ATOMIC_ACQUIRE);
	return p - c <= r->size ? p - c : 0;
}

uint64_t rt_ring_query(const struct rt_ring *r, uint64_t what)
{
	switch (what) {
	case BPF_RB_AVAIL_DATA:
		return rt_ring_avail(r);
	case BPF_RB_RING_SIZE:
		return r->size;
	case BPF_RB_CONS_POS:
		return __atomic_load_n(r->cons, __ATOMIC_ACQUIRE);
	case BPF_RB_PROD_POS:
		return __atomic_load_n(r->prod, __ATOMIC_ACQUIRE);
	default:
		return 0;
	}
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The ring is corrupt: say where and how, and stop reading it. */
static int corrupt(struct rt_ring *r, const char *what, uint64_t pos,
		   uint64_t value)
{
	r->bad = what;
	r->bad_pos = pos;
	r->bad_value = value;
	return -EBADMSG;
}

/* The reader's copy of one record: every record is handed over from
 * private memory, so what it holds cannot change while it is decoded. */
static void *copy_buffer(struct rt_ring *r)
{
	if (!r->copy) {
		void *p = mmap(NULL, r->size / 2, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (p == MAP_FAILED)
			return NULL;
		r->copy = p;
		r->copy_len = r->size / 2;
	}
	return r->copy;
}

int rt_ring_consume(struct rt_ring *r,
		    int (*fn)(void *arg, void *data, uint32_t size),
		    void *arg, unsigned budget, uint64_t *stalled)
{
	if (!r->data)
		return 0;
	if (r->bad)
		return -EBADMSG;
	/* The reader's position is its own: the traced process can write
	 * the shared one, but not make the reader skip or repeat. */
	uint64_t c = r->read_pos;
	uint64_t p = __atomic_load_n(r->prod, __ATOMIC_ACQUIRE);
	if (p - c > r->size)
		return corrupt(r, "a write position out of the ring's reach of "
			       "the read position", c, p);
	uint8_t *copy = copy_buffer(r);
	if (!copy)
		return -ENOMEM;
	int handled = 0, ret = 0;
	while (c < p && (unsigned)handled < budget) {
		uint32_t *h = header_at(r, c);
		/* each header is read once: its copy is what is checked and
		 * used */
		uint32_t v = __atomic_load_n(h, __ATOMIC_ACQUIRE);
		uint32_t size = v & RT_RING_LEN_MASK;
		uint64_t len = RT_ALIGN((uint64_t)size + RT_RING_HDR, 8);
		if (v != 0 && (len > r->size / 2 || len > p - c))
			return corrupt(r, "a record longer than the ring holds",
				       c, size);
		if (v == 0 || v & RT_RING_BUSY) {
			/* claimed and not written yet: a writer that died or
			 * stopped there holds the reader up for RING_STALL_NS,
			 * then its record is skipped (a header never written is
			 * not a writer's: the ring is corrupt) */
			uint64_t t = now_ns();
			if (r->stuck_pos != c || !r->stuck_since) {
				r->stuck_pos = c;
				r->stuck_since = t;
				break;
			}
			if (t - r->stuck_since < RING_STALL_NS)
				break;
			if (v == 0)
				return corrupt(r, "a record that is never written",
					       c, 0);
			if (stalled)
				(*stalled)++;
			v |= RT_RING_DISCARD;
		}
		r->stuck_since = 0;
		if (!(v & RT_RING_DISCARD)) {
			handled++;
			rt_memcpy(copy, (uint8_t *)h + RT_RING_HDR, size);
			ret = fn(arg, copy, size);
		}
		rt_memset(h, 0, len);
		c += len;
		r->read_pos = c;
		__atomic_store_n(r->cons, c, __ATOMIC_RELEASE);
		if (ret)
			return ret == RT_RING_PAUSE ? handled : ret;
	}
	return handled;
}
