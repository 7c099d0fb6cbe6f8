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
 * it as lost. */
#include <errno.h>
#include <linux/bpf.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "rt.h"
#include "rt_int.h"

#define RING_STALL_NS 1000000000ull

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
	for (;;) {
		uint64_t c = __atomic_load_n(r->cons, __ATOMIC_ACQUIRE);
		if (p - c > r->size || p + len - c > r->size)
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

/* The reader's memory of a BUSY record, to skip it once it is stale. */
static uint64_t stuck_pos = UINT64_MAX, stuck_since;

int rt_ring_consume(struct rt_ring *r,
		    int (*fn)(void *arg, void *data, uint32_t size),
		    void *arg, unsigned budget, uint64_t *stalled)
{
	if (!r->data)
		return 0;
	uint64_t c = __atomic_load_n(r->cons, __ATOMIC_RELAXED);
	uint64_t p = __atomic_load_n(r->prod, __ATOMIC_ACQUIRE);
	int handled = 0, ret = 0;
	while (c < p && (unsigned)handled < budget) {
		uint32_t *h = header_at(r, c);
		uint32_t v = __atomic_load_n(h, __ATOMIC_ACQUIRE);
		uint32_t size = v & RT_RING_LEN_MASK;
		uint64_t len = RT_ALIGN(size + RT_RING_HDR, 8);
		if (v == 0 || len > p - c)
			break;         /* claimed, not headed yet (or garbage) */
		if (v & RT_RING_BUSY) {
			uint64_t t = now_ns();
			if (stuck_pos != c) {
				stuck_pos = c;
				stuck_since = t;
				break;
			}
			if (t - stuck_since < RING_STALL_NS)
				break;
			if (stalled)
				(*stalled)++;
			v |= RT_RING_DISCARD;
		}
		if (!(v & RT_RING_DISCARD)) {
			handled++;
			ret = fn(arg, (uint8_t *)h + RT_RING_HDR, size);
		}
		rt_memset(h, 0, len);
		c += len;
		__atomic_store_n(r->cons, c, __ATOMIC_RELEASE);
		if (ret)
			return ret;
	}
	return handled;
}
