/* test_runtime.c - the process engine's runtime without a traced
 * process: maps in a shared region (hash, per-CPU slots, arrays, stack
 * maps), the event ring (order, wrap-around, discards, a full ring, many
 * producers against one reader, a record whose writer died), exact
 * counts from threads racing on new keys, and reads of bad addresses. */
#include <errno.h>
#include <linux/bpf.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "process/guard.h"
#include "program.h"
#include "runtime/rt.h"
#include "runtime/rt_int.h"
#include "unit.h"

#define NSLOTS 8

struct spec {
	uint32_t kind, key, value, max;
};

/* A region with these maps and (ring_size != 0) a ring as map n. */
static int region(const struct spec *s, uint32_t n, uint64_t ring_size,
		  struct rt *rt)
{
	struct rt_header h = { .magic = RT_MAGIC, .version = RT_VERSION,
			       .header_size = sizeof(h), .nslots = NSLOTS,
			       .ring_map = -1, .globals_map = -1 };
	struct rt_map_desc d[8];
	uint32_t nmaps = n + (ring_size ? 1 : 0);
	uint64_t off = RT_ALIGN(sizeof(h), 64);
	h.maps_off = off;
	off += nmaps * sizeof(struct rt_map_desc);
	for (uint32_t i = 0; i < n; i++) {
		if (rt_map_geometry(s[i].kind, s[i].key, s[i].value, s[i].max,
				    NSLOTS, &d[i]) < 0)
			return -EINVAL;
		off = RT_ALIGN(off, 64);
		d[i].off = off;
		off += d[i].size;
	}
	if (ring_size) {
		rt_map_geometry(MAP_RINGBUF, 0, 0, 0, NSLOTS, &d[n]);
		h.ring_map = (int32_t)n;
		h.ring_off = RT_ALIGN(off, 4096);
		h.ring_size = ring_size;
		off = h.ring_off + ring_size;
	}
	h.prog_off = RT_ALIGN(off, 64);
	h.size = RT_ALIGN(h.prog_off + 64, 4096);
	h.nmaps = nmaps;
	int fd = memfd_create("test", 0);
	if (fd < 0 || ftruncate(fd, (off_t)h.size) < 0)
		return -errno;
	uint8_t *p = mmap(NULL, h.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	memcpy(p, &h, sizeof(h));
	memcpy(p + h.maps_off, d, nmaps * sizeof(*d));
	munmap(p, h.size);
	int r = rt_open(fd, h.size, rt);
	close(fd);
	return r;
}

static int count_entry(void *arg, const void *key, const void *val)
{
	(*(int *)arg)++;
	return 0;
}

static void test_hash(void)
{
	struct spec s = { MAP_HASH, 8, 16, 4 };
	struct rt rt;
	CHECK(region(&s, 1, 0, &rt) == 0, "hash: region");
	const struct rt_map *m = &rt.maps[0];
	uint64_t k = 7, v[2] = { 1, 2 };
	CHECK(rt_map_lookup(m, &k, 0) == NULL, "hash: empty");
	CHECK(rt_map_update(m, &k, v, BPF_ANY, 0) == 0, "hash: insert");
	uint64_t *got = rt_map_lookup(m, &k, 0);
	CHECK(got && got[0] == 1 && got[1] == 2, "hash: lookup finds it");
	CHECK(rt_map_update(m, &k, v, BPF_NOEXIST, 0) == -EEXIST, "hash: NOEXIST on a key");
	uint64_t k2 = 8;
	CHECK(rt_map_update(m, &k2, v, BPF_EXIST, 0) == -ENOENT, "hash: EXIST on no key");
	for (uint64_t i = 100; i < 103; i++)
		rt_map_update(m, &i, v, BPF_ANY, 0);
	uint64_t k5 = 200;
	CHECK(rt_map_update(m, &k5, v, BPF_ANY, 0) == -E2BIG, "hash: full at max_entries");
	CHECK(rt_map_delete(m, &k) == 0, "hash: delete");
	CHECK(rt_map_delete(m, &k) == -ENOENT, "hash: delete twice");
	CHECK(rt_map_lookup(m, &k, 0) == NULL, "hash: deleted is gone");
	CHECK(rt_map_update(m, &k5, v, BPF_ANY, 0) == 0, "hash: room again after a delete");
	int n = 0;
	rt_map_walk(m, count_entry, &n);
	CHECK(n == 4, "hash: walk sees every entry once");
	rt_close(&rt);
}

static void test_percpu(void)
{
	struct spec s[2] = { { MAP_PERCPU_HASH, 4, 8, 16 },
			     { MAP_PERCPU_ARRAY, 4, 12, 2 } };
	struct rt rt;
	CHECK(region(s, 2, 0, &rt) == 0, "percpu: region");
	const struct rt_map *h = &rt.maps[0], *a = &rt.maps[1];
	uint32_t k = 1;
	uint64_t v = 5;
	CHECK(rt_map_update(h, &k, &v, BPF_ANY, 3) == 0, "percpu hash: slot 3 writes");
	uint64_t *p3 = rt_map_lookup(h, &k, 3), *p0 = rt_map_lookup(h, &k, 0);
	CHECK(p3 && *p3 == 5 && p0 && *p0 == 0, "percpu hash: slots apart, new ones zero");
	uint64_t *all = rt_map_lookup(h, &k, RT_ALL_SLOTS);
	CHECK(all && all[3] == 5 && all + 3 == p3, "percpu hash: every slot, one after another");
	CHECK(rt_map_lookup(h, &k, NSLOTS) == NULL, "percpu hash: no slot past the last");
	uint32_t i = 1;
	uint8_t *e = rt_map_lookup(a, &i, 2);
	CHECK(e && a->stride == 16, "percpu array: 12-byte values at a stride of 16");
	i = 2;
	CHECK(rt_map_lookup(a, &i, 0) == NULL, "percpu array: index past the end");
	rt_close(&rt);
}

/* Threads count on new keys as codegen does (lookup, then insert 1 when
 * missing): every slot exact, nothing lost to the insert race. */
struct counter {
	const struct rt_map *m;
	uint32_t slot;
};

static void *count_thread(void *arg)
{
	struct counter *c = arg;
	for (uint64_t i = 0; i < 100000; i++) {
		uint64_t key = i % 64;
		uint64_t *p = rt_map_lookup(c->m, &key, c->slot);
		if (p) {
			(*p)++;
		} else {
			uint64_t one = 1;
			rt_map_update(c->m, &key, &one, BPF_ANY, c->slot);
		}
	}
	return NULL;
}

static void test_threads(void)
{
	struct spec s = { MAP_PERCPU_HASH, 8, 8, 128 };
	struct rt rt;
	CHECK(region(&s, 1, 0, &rt) == 0, "threads: region");
	pthread_t t[4];
	struct counter c[4];
	for (uint32_t i = 0; i < 4; i++) {
		c[i] = (struct counter){ &rt.maps[0], 1 + i };
		pthread_create(&t[i], NULL, count_thread, &c[i]);
	}
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	uint64_t total = 0, keys = 0;
	for (uint64_t k = 0; k < 64; k++) {
		uint64_t *v = rt_map_lookup(&rt.maps[0], &k, RT_ALL_SLOTS);
		keys += v != NULL;
		for (int sl = 0; v && sl < NSLOTS; sl++)
			total += v[sl];
	}
	CHECK(keys == 64, "threads: one entry per key");
	CHECK(total == 400000, "threads: 4 x 100000 counts, exactly");
	rt_close(&rt);
}

static int collect(void *arg, void *data, uint32_t size)
{
	uint64_t *sum = arg;
	sum[0]++;
	sum[1] += *(uint64_t *)data;
	sum[2] = size;
	return 0;
}

static void test_ring(void)
{
	struct rt rt;
	CHECK(region(NULL, 0, 4096, &rt) == 0, "ring: region");
	struct rt_ring *r = &rt.ring;
	uint64_t got[3] = { 0 };
	/* 24-byte records: 32 bytes each, 128 per ring; the ring has room
	 * for half of it per record, so go round it a few times */
	for (uint64_t i = 1; i <= 1000; i++) {
		uint64_t *rec = rt_ring_reserve(r, 24);
		if (!rec) {
			rt_ring_consume(r, collect, got, 1000, NULL);
			rec = rt_ring_reserve(r, 24);
		}
		rec[0] = i;
		rt_ring_submit(r, rec, 0, i % 10 == 0);
	}
	rt_ring_consume(r, collect, got, 1000, NULL);
	CHECK(got[0] == 900, "ring: every submitted record, none of the discarded");
	CHECK(got[1] == 500500 - 50500, "ring: their contents, across the wrap");
	CHECK(got[2] == 24, "ring: sizes as reserved");
	CHECK(rt_ring_avail(r) == 0, "ring: empty after reading");
	int n = 0;
	while (rt_ring_reserve(r, 24))
		n++;
	CHECK(n == 128, "ring: full after 4096 bytes");
	CHECK(rt_ring_reserve(r, 3000) == NULL, "ring: a record over half the ring");
	rt_close(&rt);
}

struct producer {
	struct rt_ring *r;
	uint64_t id;
};

static void *produce(void *arg)
{
	struct producer *p = arg;
	for (uint64_t i = 0; i < 50000;) {
		uint64_t *rec = rt_ring_reserve(p->r, 16);
		if (!rec)
			continue;      /* full: the reader catches up */
		rec[0] = p->id;
		rec[1] = i++;
		rt_ring_submit(p->r, rec, BPF_RB_NO_WAKEUP, false);
	}
	return NULL;
}

struct order {
	uint64_t next[4];
	uint64_t bad;
};

static int check_order(void *arg, void *data, uint32_t size)
{
	struct order *o = arg;
	uint64_t *rec = data;
	if (rec[0] >= 4 || rec[1] != o->next[rec[0]])
		o->bad++;
	else
		o->next[rec[0]]++;
	return 0;
}

static void test_ring_producers(void)
{
	struct rt rt;
	CHECK(region(NULL, 0, 16384, &rt) == 0, "ring producers: region");
	pthread_t t[4];
	struct producer p[4];
	for (uint32_t i = 0; i < 4; i++) {
		p[i] = (struct producer){ &rt.ring, i };
		pthread_create(&t[i], NULL, produce, &p[i]);
	}
	struct order o = { { 0 }, 0 };
	uint64_t total = 0;
	while (total < 200000) {
		int k = rt_ring_consume(&rt.ring, check_order, &o, 4096, NULL);
		total = o.next[0] + o.next[1] + o.next[2] + o.next[3] + o.bad;
		if (k == 0)
			sched_yield();
	}
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	CHECK(o.bad == 0 && total == 200000,
	      "ring: 4 producers x 50000 records, each producer's in order");
	rt_close(&rt);
}

static void test_ring_stall(void)
{
	struct rt rt;
	CHECK(region(NULL, 0, 4096, &rt) == 0, "ring stall: region");
	uint64_t *dead = rt_ring_reserve(&rt.ring, 8);  /* never submitted */
	uint64_t *live = rt_ring_reserve(&rt.ring, 8);
	*dead = 1;
	*live = 2;
	rt_ring_submit(&rt.ring, live, 0, false);
	uint64_t got[3] = { 0 }, stalled = 0;
	rt_ring_consume(&rt.ring, collect, got, 10, &stalled);
	CHECK(got[0] == 0, "ring stall: a reserved record holds the reader back");
	usleep(1100 * 1000);
	rt_ring_consume(&rt.ring, collect, got, 10, &stalled);
	CHECK(got[0] == 1 && got[1] == 2 && stalled == 1,
	      "ring stall: after a second it is skipped and counted");
	rt_close(&rt);
}

/* A reader out of time pauses after the record in hand: it is consumed,
 * counted, and the next read goes on from the one after. */
static int pause_after_two(void *arg, void *data, uint32_t size)
{
	uint64_t *got = arg;
	collect(got, data, size);
	return got[0] == 2 ? RT_RING_PAUSE : 0;
}

static void test_ring_pause(void)
{
	struct rt rt;
	CHECK(region(NULL, 0, 4096, &rt) == 0, "ring pause: region");
	for (uint64_t i = 1; i <= 4; i++) {
		uint64_t *rec = rt_ring_reserve(&rt.ring, 8);
		*rec = i;
		rt_ring_submit(&rt.ring, rec, 0, false);
	}
	uint64_t got[3] = { 0 };
	CHECK(rt_ring_consume(&rt.ring, pause_after_two, got, 10, NULL) == 2 &&
	      got[1] == 1 + 2, "ring pause: returns what it handled, the pausing record included");
	CHECK(rt_ring_consume(&rt.ring, collect, got, 10, NULL) == 2 &&
	      got[0] == 4 && got[1] == 1 + 2 + 3 + 4,
	      "ring pause: the next read goes on from the next record");
	rt_close(&rt);
}

/* The reader is handed a copy: the shared record changing under it (a
 * hostile writer) is not what it reads. */
static int change_under(void *arg, void *data, uint32_t size)
{
	uint64_t *shared = arg;
	uint64_t first;
	memcpy(&first, data, 8);
	*shared = 0x6666;
	uint64_t again;
	memcpy(&again, data, 8);
	return first == again && first == 42 ? 0 : -1;
}

/* A ring no producer could leave: the reader says so, stops, and stays
 * stopped; what it reads is its own copy, from its own position. */
static void test_ring_hostile(void)
{
	struct rt rt;
	CHECK(region(NULL, 0, 4096, &rt) == 0, "hostile ring: region");
	uint64_t *rec = rt_ring_reserve(&rt.ring, 8);
	*rec = 42;
	rt_ring_submit(&rt.ring, rec, 0, false);
	CHECK(rt_ring_consume(&rt.ring, change_under, rec, 10, NULL) == 1,
	      "hostile ring: a record changed while it is read is read as it was");
	/* the shared read position moved: the reader keeps its own */
	*rt.ring.cons = 1u << 20;
	rec = rt_ring_reserve(&rt.ring, 8);   /* full, by the moved position */
	CHECK(rec == NULL, "hostile ring: a moved position makes producers give up");
	*rt.ring.cons = rt.ring.read_pos;
	rec = rt_ring_reserve(&rt.ring, 8);
	*rec = 42;
	rt_ring_submit(&rt.ring, rec, 0, false);
	uint64_t at = rt.ring.read_pos;
	*rt.ring.cons = at + 4096;
	CHECK(rt_ring_consume(&rt.ring, change_under, rec, 10, NULL) == 1 &&
	      rt.ring.read_pos == at + 16,
	      "hostile ring: the reader goes on from its own position");
	/* a record longer than the ring */
	uint32_t *h = (uint32_t *)(rt.ring.data + (rt.ring.read_pos & rt.ring.mask));
	*h = 0x3ffffff0;
	*rt.ring.prod = rt.ring.read_pos + 64;
	CHECK(rt_ring_consume(&rt.ring, collect, (uint64_t[3]){ 0 }, 10, NULL) ==
	      -EBADMSG && rt.ring.bad && strstr(rt.ring.bad, "longer than the ring"),
	      "hostile ring: a record longer than the ring is reported, not read");
	*h = 8;
	CHECK(rt_ring_consume(&rt.ring, collect, (uint64_t[3]){ 0 }, 10, NULL) ==
	      -EBADMSG, "hostile ring: and the reader stays stopped");
	rt_close(&rt);
	CHECK(region(NULL, 0, 4096, &rt) == 0, "hostile ring: a second region");
	*rt.ring.prod = rt.ring.read_pos - 8;   /* behind the reader */
	CHECK(rt_ring_consume(&rt.ring, collect, (uint64_t[3]){ 0 }, 10, NULL) ==
	      -EBADMSG && strstr(rt.ring.bad, "out of the ring's reach"),
	      "hostile ring: a write position out of reach is reported");
	rt_close(&rt);
}

/* A region cut short under sonde (a memfd that could not be sealed): a
 * read of it is zeros, and the guard says so, instead of a SIGBUS. */
static void test_guard(void)
{
	int fd = memfd_create("guard", 0);
	CHECK(fd >= 0 && ftruncate(fd, 8192) == 0, "guard: a memfd");
	uint8_t *p = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(p != MAP_FAILED, "guard: mapped");
	if (p == MAP_FAILED)
		return;
	p[4096] = 7;
	guard_reset();
	CHECK(guard_add(p, 8192) == 0, "guard: on");
	CHECK(ftruncate(fd, 0) == 0, "guard: the memfd cut to nothing");
	volatile uint8_t v = p[4096];
	CHECK(v == 0 && guard_tripped(), "guard: the read gets zeros and is reported");
	guard_remove(p);
	munmap(p, 8192);
	close(fd);
	guard_reset();
}

struct find_stack {
	uint32_t id;
	int found;
};

static int find_frames(void *arg, const void *key, const void *val)
{
	struct find_stack *fs = arg;
	const uint64_t *f = val;
	fs->found += *(const uint32_t *)key == fs->id && f[2] == 3 && f[3] == 0;
	return 0;
}

static void test_stack(void)
{
	struct spec s = { MAP_STACK_TRACE, 4, 8 * 4, 4 };
	struct rt rt;
	CHECK(region(&s, 1, 0, &rt) == 0, "stack: region");
	uint64_t a[3] = { 1, 2, 3 }, b[3] = { 1, 2, 3 };
	int64_t ia = rt_stack_id(&rt.maps[0], a, 3, 0);
	CHECK(ia >= 0 && rt_stack_id(&rt.maps[0], b, 3, 0) == ia,
	      "stack: the same frames, the same id");
	struct find_stack f = { (uint32_t)ia, 0 };
	rt_map_walk(&rt.maps[0], find_frames, &f);
	int found = f.found;
	CHECK(found == 1, "stack: the walk gives the frames, zero after the last");
	uint32_t key = (uint32_t)ia;
	const uint64_t *fr = rt_map_lookup(&rt.maps[0], &key, 0);
	CHECK(fr && fr[0] == 1 && fr[3] == 0, "stack: lookup by id");
	key = (uint32_t)(ia + 1) % 4;
	CHECK(rt_map_lookup(&rt.maps[0], &key, 0) == NULL, "stack: an empty id");
	rt_close(&rt);
}

static void test_read(void)
{
	char buf[8] = "xxxxxxx";
	CHECK(rt_read(buf, (void *)16, 4) == -EFAULT && buf[0] == 0,
	      "read: a bad address is -EFAULT, zeroed");
	CHECK(rt_read_str(buf, "hello world", 6) == 6 && strcmp(buf, "hello") == 0,
	      "read_str: cut and terminated");
	CHECK(rt_read_str(buf, "hi", 8) == 3 && strcmp(buf, "hi") == 0,
	      "read_str: length with its NUL");
	CHECK(rt_read_str(buf, (void *)16, 8) == -EFAULT, "read_str: a bad address");
}

int main(void)
{
	test_hash();
	test_percpu();
	test_threads();
	test_ring();
	test_ring_producers();
	test_ring_stall();
	test_ring_pause();
	test_ring_hostile();
	test_guard();
	test_stack();
	test_read();
	return UNIT_DONE();
}
