/* maps.c - the kernel engine's maps: creation from the program's map
 * specs, the .globals record, and the map_reader output reads them by
 * (dump, clear, zero). */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "../base/log.h"
#include "../base/parallel.h"
#include "engine_int.h"

#define DEFAULT_MAX_ENTRIES 4096

/* The event ring. At half a million records a second (16 MB/s of 32-byte
 * printf records) the reader's 10 ms timer leaves about 160 KiB in the
 * ring, and the quarter-full wake-up comes at a quarter of the ring; the
 * rest is headroom for the reader's own stalls (printing a big map, a
 * slow disk). 512 KiB per CPU, 4 MiB at least (unless every probe runs
 * once, below): 250 ms of stall at that rate before a record is lost. BPFTRACE_PERF_RB_PAGES (bpftrace's pages
 * per CPU) overrides it. The kernel wants a power of two. */
#define RING_PER_CPU (512u * 1024)
#define RING_MIN (4u << 20)
#define RING_MAX (256u << 20)
/* When every probe runs once: what one run of BEGIN (or END) writes
 * before the reader runs, as much as bpftrace 0.17's BEGIN can write
 * (its perf buffer of one CPU, 64 pages). A larger ring cost `BEGIN
 * { exit(); }` its allocation, zeroing and mapping twice over (the
 * reader maps the data pages twice, all counted in its RSS: 2 MiB of
 * its 5 for 1 MiB). */
#define RING_ONCE (256u * 1024)

/* True when every probe runs once, in sonde's own thread (BEGIN, END):
 * nothing writes to the ring while the reader waits, so it only has to
 * hold what one run writes and the throughput floor above is waste
 * (twice over in RSS: the kernel maps the ring's data pages twice). */
static bool program_runs_once(const struct program *prog)
{
	for (uint32_t i = 0; i < prog->nprobes; i++)
		if (!(prog->probes[i].caps & PROBE_RUNS_ONCE))
			return false;
	return true;
}

static uint32_t ring_size(const struct program *prog)
{
	long page = sysconf(_SC_PAGESIZE);
	int ncpus = libbpf_num_possible_cpus();
	if (page <= 0)
		page = 4096;
	if (ncpus < 1)
		ncpus = 1;
	uint64_t want = (uint64_t)RING_PER_CPU * (uint64_t)ncpus;
	if (program_runs_once(prog))
		want = RING_ONCE;
	else if (want < RING_MIN)
		want = RING_MIN;
	const char *env = getenv("BPFTRACE_PERF_RB_PAGES");
	if (env) {
		char *end;
		unsigned long pages = strtoul(env, &end, 10);
		if (*env && !*end && pages > 0 && pages <= RING_MAX / (uint64_t)page)
			want = (uint64_t)pages * (uint64_t)page * (uint64_t)ncpus;
		else
			log_warn("BPFTRACE_PERF_RB_PAGES=%s ignored", env);
	}
	uint64_t size = (uint64_t)page;
	while (size < want && size < RING_MAX)
		size <<= 1;
	return (uint32_t)size;
}

void engine_obj_name(char *out, size_t size, const char *name)
{
	size_t n = 0;
	if (size == 0)
		return;
	for (const char *s = name; *s && n + 1 < size; s++) {
		if (*s == '@') {
			for (const char *t = "AT_"; *t && n + 1 < size; t++)
				out[n++] = *t;
			continue;
		}
		bool ok = (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
			  (*s >= '0' && *s <= '9') || *s == '_' || *s == '.';
		out[n++] = ok ? *s : '_';
	}
	out[n] = '\0';
}

static int map_create(const struct program *prog, const struct map_spec *m)
{
	enum bpf_map_type type;
	uint32_t key = m->key_size, value = m->value_size;
	uint32_t max = m->max_entries ? m->max_entries : DEFAULT_MAX_ENTRIES;

	switch (m->kind) {
	/* lru: `let @m = lruhash(N)` (bpftrace 0.24), evicting */
	case MAP_HASH:
		type = m->lru ? BPF_MAP_TYPE_LRU_HASH : BPF_MAP_TYPE_HASH;
		break;
	case MAP_PERCPU_HASH:
		type = m->lru ? BPF_MAP_TYPE_LRU_PERCPU_HASH :
			BPF_MAP_TYPE_PERCPU_HASH;
		break;
	case MAP_ARRAY:        type = BPF_MAP_TYPE_ARRAY; break;
	case MAP_PERCPU_ARRAY: type = BPF_MAP_TYPE_PERCPU_ARRAY; break;
	case MAP_STACK_TRACE:  type = BPF_MAP_TYPE_STACK_TRACE; break;
	case MAP_PERF_EVENT_ARRAY:
		/* a perf buffer per CPU, opened by engine.c (skb_open) */
		type = BPF_MAP_TYPE_PERF_EVENT_ARRAY;
		key = value = 4;
		max = libbpf_num_possible_cpus() > 0 ?
			(uint32_t)libbpf_num_possible_cpus() : 1;
		break;
	case MAP_RINGBUF:
		type = BPF_MAP_TYPE_RINGBUF;
		key = value = 0;
		max = m->max_entries ? m->max_entries : ring_size(prog);
		break;
	default:
		return -EINVAL;
	}
	uint32_t flags = 0;
	if (type == BPF_MAP_TYPE_HASH || type == BPF_MAP_TYPE_PERCPU_HASH) {
		if (!key)
			key = 8;    /* a map without keys uses one u64 zero key */
		/* Preallocating max_entries elements (per CPU, for per-CPU
		 * maps) costs milliseconds per map at load time, which a
		 * script with hundreds of maps pays in full before its first
		 * event; elements allocated on insert cost only on new keys. */
		flags = BPF_F_NO_PREALLOC;
		/* ... except tseries(): one call may start several interval
		 * slots, and an interval probe (hard interrupt) that inserts
		 * a few in a row finds the allocator's per-CPU cache empty
		 * (-ENOMEM after the first) */
		if (m->value_type && m->value_type->kind == TYPE_TSERIES)
			flags = 0;
	}
	if (m->mmapable && type == BPF_MAP_TYPE_ARRAY)
		flags = BPF_F_MMAPABLE;
	if ((type == BPF_MAP_TYPE_ARRAY || type == BPF_MAP_TYPE_PERCPU_ARRAY ||
	     type == BPF_MAP_TYPE_STACK_TRACE) && key != 4)
		return -EINVAL;
	char name[16];
	engine_obj_name(name, sizeof(name), m->name);
	/* bpfsys.c: no feature probes, RLIMIT_MEMLOCK raised if refused */
	return engine_map_create(type, name, key, value, max, flags);
}

/* Creating a map is kernel work (allocation, zeroing, memcg charging) of
 * 5 us to 0.1 ms; a script with hundreds of maps pays it hundreds of
 * times before its first event. The creations are independent, so they
 * are spread over the CPUs. */
#define MAPS_PARALLEL_MIN 32

/* parallel_for's work: a failure stops it, returning its index + 1. */
static int create_one(void *ctx, unsigned i)
{
	struct engine *e = ctx;
	int fd = map_create(e->prog, &e->prog->maps[i]);
	e->map_fds[i] = fd;
	return fd < 0 ? (int)i + 1 : 0;
}

int engine_maps_create(struct engine *e)
{
	const struct program *prog = e->prog;
	e->map_fds = calloc(prog->nmaps ? prog->nmaps : 1, sizeof(int));
	if (!e->map_fds)
		return -ENOMEM;
	for (uint32_t i = 0; i < prog->nmaps; i++)
		e->map_fds[i] = -1;

	unsigned threads = prog->nmaps < MAPS_PARALLEL_MIN ? 1 : 0;
	int bad = parallel_for(prog->nmaps, threads, create_one, e) - 1;
	if (bad < 0)
		return 0;
	const struct map_spec *m = &prog->maps[bad];
	int fd = e->map_fds[bad];
	if (fd == -E2BIG)   /* strerror says "argument list too long" */
		log_error("cannot create map %s: too large for the kernel "
			  "(%u-byte keys, %u-byte values, %u entries)",
			  m->name, m->key_size, m->value_size, m->max_entries);
	else if (m->kind == MAP_STACK_TRACE && fd == -EINVAL)
		log_error("cannot create map %s: the kernel refuses stacks of "
			  "%u frames (kernel.perf_event_max_stack is smaller; "
			  "raise it with sysctl or ask for fewer frames)",
			  m->name, m->value_size / 8);
	else
		log_error("cannot create map %s: %s", m->name, strerror(-fd));
	/* Leave only valid descriptors for the engine's cleanup. */
	for (uint32_t i = 0; i < prog->nmaps; i++)
		if (e->map_fds[i] < 0)
			e->map_fds[i] = -1;
	return fd;
}

int engine_globals_write(struct engine *e)
{
	const struct program *prog = e->prog;
	if (prog->globals_map < 0)
		return 0;
	if ((uint32_t)prog->globals_map >= prog->nmaps)
		return -EINVAL;
	const struct map_spec *m = &prog->maps[prog->globals_map];
	if (m->value_size < sizeof(struct sonde_globals))
		return -EINVAL;
	uint8_t *value = calloc(1, m->value_size);
	if (!value)
		return -ENOMEM;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);   /* bpf_ktime_get_ns's clock */
	struct sonde_globals g = {
		.start_ns = (uint64_t)ts.tv_sec * 1000000000ull +
			    (uint64_t)ts.tv_nsec,
		.cpid = (uint64_t)(e->opts.cpid > 0 ? e->opts.cpid : 0),
		.filter_pid = (uint64_t)(e->opts.pid > 0 ? e->opts.pid : 0),
	};
	memcpy(value, &g, sizeof(g));
	uint32_t key = 0;
	int r = bpf_map_update_elem(e->map_fds[prog->globals_map], &key, value,
				    BPF_ANY);
	free(value);
	if (r < 0)
		log_error("cannot write map %s: %s", m->name, strerror(-r));
	return r < 0 ? r : 0;
}

/* Arrays marked mmapable are mapped once, so the reader can watch the
 * globals (wake-up flag, lost records, exit) and the failed-update
 * counters on every poll without a syscall. */
static void *map_mmap(struct engine *e, int map_id, size_t *len)
{
	*len = 0;
	if (map_id < 0 || (uint32_t)map_id >= e->prog->nmaps ||
	    e->map_fds[map_id] < 0)
		return NULL;
	const struct map_spec *m = &e->prog->maps[map_id];
	if (!m->mmapable || m->kind != MAP_ARRAY)
		return NULL;
	long page = sysconf(_SC_PAGESIZE);
	size_t bytes = (size_t)((m->value_size + 7) & ~7u) * m->max_entries;
	size_t n = (bytes + (size_t)page - 1) / (size_t)page * (size_t)page;
	void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED,
		       e->map_fds[map_id], 0);
	if (p == MAP_FAILED) {
		log_info("map %s: cannot map it into memory: %s; reading it "
			 "with syscalls", m->name, strerror(errno));
		return NULL;
	}
	*len = n;
	return p;
}

void engine_maps_mmap(struct engine *e)
{
	e->globals = map_mmap(e, e->prog->globals_map, &e->globals_len);
	e->mapfail_map = -1;
	for (uint32_t i = 0; i < e->prog->nmaps; i++)
		if (strcmp(e->prog->maps[i].name, SONDE_MAPFAIL_MAP) == 0)
			e->mapfail_map = (int)i;
	e->mapfails = map_mmap(e, e->mapfail_map, &e->mapfails_len);
}

void engine_maps_close(struct engine *e)
{
	if (!e)
		return;
	if (e->globals)
		munmap((void *)e->globals, e->globals_len);
	if (e->mapfails)
		munmap((void *)e->mapfails, e->mapfails_len);
	e->globals = NULL;
	e->mapfails = NULL;
	if (!e->map_fds)
		return;
	for (uint32_t i = 0; i < e->prog->nmaps; i++)
		if (e->map_fds[i] >= 0)
			close(e->map_fds[i]);
	free(e->map_fds);
	e->map_fds = NULL;
}

/* Key and value sizes as the kernel sees them. Per-CPU values come back
 * one per possible CPU, each rounded up to 8 bytes. */
struct map_geom {
	int fd;
	uint32_t key_size, value_size, stride, nvalues;
	uint32_t max_entries;
	bool percpu, array;
};

static int map_geom(struct engine *e, uint32_t map_id, struct map_geom *g)
{
	if (map_id >= e->prog->nmaps || !e->map_fds || e->map_fds[map_id] < 0)
		return -EINVAL;
	const struct map_spec *m = &e->prog->maps[map_id];
	if (m->kind == MAP_RINGBUF || m->kind == MAP_PERF_EVENT_ARRAY)
		return -EINVAL;
	g->fd = e->map_fds[map_id];
	g->key_size = m->key_size ? m->key_size : 8;
	g->value_size = m->value_size;
	g->percpu = map_kind_percpu(m->kind);
	g->array = m->kind == MAP_ARRAY || m->kind == MAP_PERCPU_ARRAY;
	g->stride = g->percpu ? (m->value_size + 7) & ~7u : m->value_size;
	g->nvalues = g->percpu ? (uint32_t)e->ncpus : 1;
	g->max_entries = m->max_entries ? m->max_entries : DEFAULT_MAX_ENTRIES;
	return 0;
}

static int reader_dump(void *ctx, uint32_t map_id, struct map_snapshot *out)
{
	struct engine *e = ctx;
	struct map_geom g;
	memset(out, 0, sizeof(*out));
	int r = map_geom(e, map_id, &g);
	if (r < 0)
		return r;
	size_t vbytes = (size_t)g.stride * g.nvalues;
	uint32_t cap = 64;
	uint8_t *keys = malloc((size_t)cap * g.key_size);
	uint8_t *values = malloc(cap * vbytes);
	uint8_t *cur = malloc(g.key_size), *next = malloc(g.key_size);
	uint32_t n = 0;
	if (!keys || !values || !cur || !next) {
		r = -ENOMEM;
		goto fail;
	}
	/* Keys deleted while we walk restart the walk from the start; the
	 * bound keeps that from looping forever under heavy churn. */
	void *prev = NULL;
	for (uint64_t steps = 0; steps < 2ull * g.max_entries + 16; steps++) {
		r = bpf_map_get_next_key(g.fd, prev, next);
		if (r == -ENOENT)
			break;
		if (r < 0)
			goto fail;
		memcpy(cur, next, g.key_size);
		prev = cur;
		if (n == cap) {
			cap *= 2;
			uint8_t *nk = realloc(keys, (size_t)cap * g.key_size);
			if (nk)
				keys = nk;
			uint8_t *nv = nk ? realloc(values, cap * vbytes) : NULL;
			if (!nv) {
				r = -ENOMEM;
				goto fail;
			}
			values = nv;
		}
		r = bpf_map_lookup_elem(g.fd, cur, values + n * vbytes);
		if (r == -ENOENT)
			continue;    /* deleted under our feet */
		if (r < 0)
			goto fail;
		memcpy(keys + (size_t)n * g.key_size, cur, g.key_size);
		n++;
	}
	free(cur);
	free(next);
	out->n = n;
	out->key_size = g.key_size;
	out->value_size = g.value_size;
	out->value_stride = g.stride;
	out->nvalues = g.nvalues;
	out->keys = keys;
	out->values = values;
	return 0;
fail:
	free(keys);
	free(values);
	free(cur);
	free(next);
	return r;
}

static int reader_zero(void *ctx, uint32_t map_id)
{
	struct engine *e = ctx;
	struct map_geom g;
	int r = map_geom(e, map_id, &g);
	if (r < 0)
		return r;
	uint8_t *zero = calloc(g.nvalues, g.stride ? g.stride : 1);
	uint8_t *cur = malloc(g.key_size), *next = malloc(g.key_size);
	if (!zero || !cur || !next) {
		r = -ENOMEM;
		goto out;
	}
	void *prev = NULL;
	r = 0;
	for (uint64_t steps = 0; steps < 2ull * g.max_entries + 16; steps++) {
		int k = bpf_map_get_next_key(g.fd, prev, next);
		if (k == -ENOENT)
			break;
		if (k < 0) {
			r = k;
			break;
		}
		memcpy(cur, next, g.key_size);
		prev = cur;
		/* BPF_EXIST: a key deleted meanwhile stays deleted. */
		k = bpf_map_update_elem(g.fd, cur, zero,
					g.array ? BPF_ANY : BPF_EXIST);
		if (k < 0 && k != -ENOENT) {
			r = k;
			break;
		}
	}
out:
	free(zero);
	free(cur);
	free(next);
	return r;
}

static int reader_clear(void *ctx, uint32_t map_id)
{
	struct engine *e = ctx;
	struct map_geom g;
	int r = map_geom(e, map_id, &g);
	if (r < 0)
		return r;
	if (g.array)
		return reader_zero(ctx, map_id);   /* array slots cannot go */
	uint8_t *key = malloc(g.key_size);
	if (!key)
		return -ENOMEM;
	/* Always take the first key and delete it: no walk to invalidate. */
	r = 0;
	for (uint64_t steps = 0; steps < 2ull * g.max_entries + 16; steps++) {
		int k = bpf_map_get_next_key(g.fd, NULL, key);
		if (k == -ENOENT)
			break;
		if (k < 0) {
			r = k;
			break;
		}
		k = bpf_map_delete_elem(g.fd, key);
		if (k < 0 && k != -ENOENT) {
			r = k;
			break;
		}
	}
	free(key);
	return r;
}

static uint64_t reader_failures(void *ctx, uint32_t map_id)
{
	struct engine *e = ctx;
	if (e->mapfail_map < 0 ||
	    map_id >= e->prog->maps[e->mapfail_map].max_entries)
		return 0;
	if (e->mapfails)
		return __atomic_load_n(&e->mapfails[map_id], __ATOMIC_RELAXED);
	uint64_t v = 0;
	if (bpf_map_lookup_elem(e->map_fds[e->mapfail_map], &map_id, &v) < 0)
		return 0;
	return v;
}

static uint32_t reader_capacity(void *ctx, uint32_t map_id)
{
	struct engine *e = ctx;
	struct map_geom g;
	return map_geom(e, map_id, &g) < 0 ? 0 : g.max_entries;
}

static int reader_lookup(void *ctx, uint32_t map_id, const void *key,
			 void *value)
{
	struct engine *e = ctx;
	struct map_geom g;
	int r = map_geom(e, map_id, &g);
	if (r < 0)
		return r;
	r = bpf_map_lookup_elem(g.fd, key, value);
	return r < 0 ? r : 0;
}

static int reader_update(void *ctx, uint32_t map_id, const void *key,
			 const void *value)
{
	struct engine *e = ctx;
	struct map_geom g;
	int r = map_geom(e, map_id, &g);
	if (r < 0)
		return r;
	r = bpf_map_update_elem(g.fd, key, value, BPF_ANY);
	return r < 0 ? r : 0;
}

static int reader_remove(void *ctx, uint32_t map_id, const void *key)
{
	struct engine *e = ctx;
	struct map_geom g;
	int r = map_geom(e, map_id, &g);
	if (r < 0)
		return r;
	r = bpf_map_delete_elem(g.fd, key);
	return r < 0 ? r : 0;
}

void engine_reader_init(struct engine *e)
{
	e->reader.ctx = e;
	e->reader.dump = reader_dump;
	e->reader.clear = reader_clear;
	e->reader.zero = reader_zero;
	e->reader.failures = reader_failures;
	e->reader.capacity = reader_capacity;
	e->reader.lookup = reader_lookup;
	e->reader.update = reader_update;
	e->reader.remove = reader_remove;
}
