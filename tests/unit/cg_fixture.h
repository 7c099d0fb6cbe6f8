/* cg_fixture.h - test helper for codegen: compile a script through the
 * parser, the semantic pass and codegen without providers (each attach
 * point becomes one probe with the program type its provider uses), and
 * run the result in the process engine's VM (src/vm) with emulated
 * helpers: hash/array maps, the ring buffer (records are captured), and
 * fixed pid/comm/time values.
 *
 * Every run happens twice, from the same emulated state: once in the
 * VM's interpreter and once in its JIT (native code). The two must
 * return the same value, call the same helpers in the same order with
 * the same results, and leave the same maps, records and globals behind;
 * any difference fails the run. So every codegen test checks the JIT
 * against the interpreter too. */
#ifndef SONDE_CG_FIXTURE_H
#define SONDE_CG_FIXTURE_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "codegen/codegen.h"
#include "compile.h"
#include "lang/parser.h"
#include "lang/sema.h"
#include "probes/provider.h"
#include "vm/vm.h"

static const struct record_field cgfx_fields[] = {
	{ .name = "fd", .offset = 16, .size = 4, .is_signed = true },
	{ .name = "buf", .offset = 24, .size = 8, .is_ptr = true },
	{ .name = "comm", .offset = 32, .size = 16, .is_char_array = true,
	  .array_len = 16 },
	{ .name = "filename", .offset = 48, .size = 4, .is_data_loc = true },
	{ .name = "small", .offset = 52, .size = 2, .is_signed = true },
	{ .name = "addr6", .offset = 56, .size = 16, .array_len = 16 },
	{ .name = "addr4", .offset = 72, .size = 4, .array_len = 4 },
};
static const struct type cgfx_rec = { .kind = TYPE_RECORD, .nfields = 7,
				      .rfields = cgfx_fields };

struct cgfx {
	struct arena a;
	struct diag_source src;
	struct diags d;
	struct program prog;
	struct node *root;
	int rc;
};

/* The provider an attach point names (BEGIN when none matches): its
 * program type and capabilities are what the probe gets. */
static inline const struct provider *cgfx_provider(const char *name)
{
	char pv[32];
	size_t len = strcspn(name, ":");
	if (len >= sizeof(pv))
		len = sizeof(pv) - 1;
	memcpy(pv, name, len);
	pv[len] = '\0';
	const struct provider *p = provider_find(pv);
	return p ? p : provider_find("BEGIN");
}

/* When set, every uprobe/usdt probe gets this location (cg_usdt.c). */
static const struct uprobe_info *cgfx_uprobe;
/* prog->ustack_copy for the next compilations (0: frame pointers). */
static uint32_t cgfx_ustack_copy;
/* When set, every probe's args record (else tracepoints get cgfx_rec). */
static const struct type *cgfx_args;
/* When set, the C types the scripts name (else none). */
static struct ctypes *cgfx_ctypes;
/* Add SONDE_MAPFAIL_MAP after sema, as compile() does. */
static bool cgfx_mapfails;

/* Returns 0 when the script compiled; diagnostics in f->d. */
static inline int cgfx_compile(struct cgfx *f, const char *text)
{
	memset(f, 0, sizeof(*f));
	arena_init(&f->a);
	f->src.name = "test";
	f->src.text = text;
	diags_init(&f->d, &f->src);
	f->prog.arena = &f->a;
	f->prog.strlen = 64;
	f->prog.ringbuf_map = f->prog.globals_map = -1;
	f->prog.ustack_copy = cgfx_ustack_copy;
	f->prog.ctypes = cgfx_ctypes;
	f->root = parse_program(&f->a, text, &f->d);
	if (!f->root || f->d.nerrors)
		return f->rc = -1;
	struct map_spec ring = { .name = ".events", .kind = MAP_RINGBUF,
				 .max_entries = 1u << 20 };
	f->prog.ringbuf_map = program_add_map(&f->prog, &ring);
	struct map_spec globals = {
		.name = ".globals", .kind = MAP_ARRAY, .key_size = 4,
		.value_size = sizeof(struct sonde_globals), .max_entries = 1,
	};
	f->prog.globals_map = program_add_map(&f->prog, &globals);
	uint32_t n = 0;
	for (uint32_t b = 0; b < f->root->u.list.n; b++)
		n += f->root->u.list.v[b]->u.probe.attach.n;
	f->prog.probes = arena_array(&f->a, struct probe, n ? n : 1);
	for (uint32_t b = 0; b < f->root->u.list.n; b++) {
		struct node *p = f->root->u.list.v[b];
		for (uint32_t i = 0; i < p->u.probe.attach.n; i++) {
			struct probe *pr = &f->prog.probes[f->prog.nprobes++];
			pr->block = b;
			pr->name = p->u.probe.attach.v[i]->u.attach.text;
			const struct provider *pv = cgfx_provider(pr->name);
			/* what the driver copies from its provider */
			pr->provider = pv;
			pr->kind = pv->name;
			pr->has_setup = pv->setup &&
				pv->setup(pr, &pr->setup) == 1;
			pr->prog_type = pv->prog_type;
			pr->caps = pv->caps;
			if (pr->prog_type == BPF_PROG_TYPE_TRACEPOINT)
				pr->args_type = &cgfx_rec;
			if (cgfx_args)
				pr->args_type = cgfx_args;
			if (pr->prog_type == BPF_PROG_TYPE_KPROBE)
				pr->uprobe = cgfx_uprobe;
		}
	}
	f->prog.nblocks = f->root->u.list.n;
	struct sema_opts o = { .unsafe = true };
	if (sema_check(f->root, &f->prog, &o, &f->d) || f->d.nerrors)
		return f->rc = -2;
	if (cgfx_mapfails) {
		struct map_spec fails = {
			.name = SONDE_MAPFAIL_MAP, .kind = MAP_ARRAY,
			.key_size = 4, .value_size = 8,
			.max_entries = f->prog.nmaps, .mmapable = true,
		};
		program_add_map(&f->prog, &fails);
	}
	if (codegen_program(f->root, &f->prog, &f->d) || f->d.nerrors)
		return f->rc = -3;
	return f->rc = 0;
}

static inline void cgfx_free(struct cgfx *f)
{
	diags_free(&f->d);
	arena_free(&f->a);
}

/* ---- emulated kernel ---- */

#define EMU_MAX_ENTRIES 256
#define EMU_MAX_RECORDS 64
#define EMU_MAX_CALLS 4096

struct emu_map {
	uint32_t n;
	uint8_t *keys[EMU_MAX_ENTRIES];
	uint8_t *vals[EMU_MAX_ENTRIES];
};

struct emu {
	/* The last run's failure, or NULL (`in` for the tests that read
	 * E.in.error since the days of a separate test interpreter). */
	struct { const char *error; char msg[512]; } in;
	/* helpers called by the last run, and what they returned */
	uint32_t ncalls;
	uint16_t call_id[EMU_MAX_CALLS];
	uint64_t call_ret[EMU_MAX_CALLS];
	const struct program *prog;
	struct emu_map maps[16];
	struct sonde_globals globals;
	uint8_t *records[EMU_MAX_RECORDS];
	uint32_t record_size[EMU_MAX_RECORDS];
	uint32_t nrecords;
	uint8_t scratch[4096] __attribute__((aligned(8)));
	/* other (per-CPU) array maps, one value each */
	uint8_t arrays[16][512] __attribute__((aligned(8)));
	uint64_t pid_tgid, ktime;
	const uint8_t *tp_record;     /* tracepoint context */
	/* delivery: what bpf_ringbuf_query answers, the flags each record
	 * was submitted with, and failures to inject */
	uint64_t rb_avail, rb_size;
	uint64_t submit_flags[EMU_MAX_RECORDS];
	bool reserve_fails, update_fails;
	uint64_t mapfails[64];
};

static struct emu *emu_cur;

static inline uint8_t *emu_find(struct emu *e, uint32_t map, const uint8_t *key)
{
	const struct map_spec *s = &e->prog->maps[map];
	struct emu_map *m = &e->maps[map];
	if (s->kind == MAP_ARRAY || s->kind == MAP_PERCPU_ARRAY) {
		if (map == (uint32_t)e->prog->globals_map)
			return (uint8_t *)&e->globals;
		if (!strcmp(s->name, SONDE_MAPFAIL_MAP)) {
			uint32_t i;
			memcpy(&i, key, 4);
			return i < 64 && i < s->max_entries ?
				(uint8_t *)&e->mapfails[i] : NULL;
		}
		if (strcmp(s->name, ".scratch") && map < 16 && s->value_size <= 512)
			return e->arrays[map];
		return e->scratch;
	}
	for (uint32_t i = 0; i < m->n; i++)
		if (!memcmp(m->keys[i], key, s->key_size))
			return m->vals[i];
	return NULL;
}

/* Copies n bytes at addr of this process as bpf_probe_read does: a bad
 * address is an error, never a crash (the corpus tests run scripts
 * whose pointers are made up). Returns the bytes copied. */
static inline uint64_t emu_read(void *dst, uint64_t addr, uint64_t n)
{
	if (!n)
		return 0;
	struct iovec to = { dst, n };
	struct iovec from = { (void *)(uintptr_t)addr, n };
	ssize_t k = process_vm_readv(getpid(), &to, 1, &from, 1, 0);
	return k < 0 ? 0 : (uint64_t)k;
}

static inline uint64_t emu_helper(int id, const uint64_t *r)
{
	struct emu *e = emu_cur;
	switch (id) {
	case BPF_FUNC_map_lookup_elem:
		return (uint64_t)(uintptr_t)emu_find(e, (uint32_t)r[1],
						     (uint8_t *)(uintptr_t)r[2]);
	case BPF_FUNC_map_update_elem: {
		uint32_t map = (uint32_t)r[1];
		const struct map_spec *s = &e->prog->maps[map];
		uint8_t *v = emu_find(e, map, (uint8_t *)(uintptr_t)r[2]);
		if (e->update_fails)
			return (uint64_t)-7;      /* -E2BIG: the map is full */
		if (!v) {
			struct emu_map *m = &e->maps[map];
			if (m->n == EMU_MAX_ENTRIES)
				return (uint64_t)-7;
			m->keys[m->n] = malloc(s->key_size);
			memcpy(m->keys[m->n], (void *)(uintptr_t)r[2], s->key_size);
			v = m->vals[m->n++] = malloc(s->value_size);
		}
		memcpy(v, (void *)(uintptr_t)r[3], s->value_size);
		return 0;
	}
	case BPF_FUNC_map_delete_elem: {
		uint32_t map = (uint32_t)r[1];
		struct emu_map *m = &e->maps[map];
		const struct map_spec *s = &e->prog->maps[map];
		for (uint32_t i = 0; i < m->n; i++)
			if (!memcmp(m->keys[i], (void *)(uintptr_t)r[2],
				    s->key_size)) {
				free(m->keys[i]);
				free(m->vals[i]);
				m->keys[i] = m->keys[m->n - 1];
				m->vals[i] = m->vals[--m->n];
				return 0;
			}
		return (uint64_t)-2;
	}
	case BPF_FUNC_ringbuf_reserve:
		if (e->nrecords == EMU_MAX_RECORDS || e->reserve_fails)
			return 0;
		e->record_size[e->nrecords] = (uint32_t)r[2];
		e->records[e->nrecords] = malloc(r[2]);
		memset(e->records[e->nrecords], 0xa5, r[2]);
		return (uint64_t)(uintptr_t)e->records[e->nrecords++];
	case BPF_FUNC_ringbuf_submit:
		for (uint32_t i = 0; i < e->nrecords; i++)
			if (e->records[i] == (uint8_t *)(uintptr_t)r[1])
				e->submit_flags[i] = r[2];
		return 0;
	case BPF_FUNC_ringbuf_query:
		return r[2] == BPF_RB_AVAIL_DATA ? e->rb_avail :
		       r[2] == BPF_RB_RING_SIZE ? e->rb_size : 0;
	case BPF_FUNC_get_current_pid_tgid:
		return e->pid_tgid;
	case BPF_FUNC_get_current_uid_gid:
		return (5ull << 32) | 7;
	case BPF_FUNC_ktime_get_ns:
		return e->ktime;
	case BPF_FUNC_get_smp_processor_id:
		return 1;
	case BPF_FUNC_get_current_comm:
		memset((void *)(uintptr_t)r[1], 0, r[2]);
		memcpy((void *)(uintptr_t)r[1], "tester", r[2] < 7 ? r[2] : 7);
		return 0;
	case BPF_FUNC_probe_read:
	case BPF_FUNC_probe_read_kernel:
	case BPF_FUNC_probe_read_user:
		if (emu_read((void *)(uintptr_t)r[1], r[3], r[2]) == r[2])
			return 0;
		memset((void *)(uintptr_t)r[1], 0, r[2]);
		return (uint64_t)-EFAULT;
	case BPF_FUNC_probe_read_str:
	case BPF_FUNC_probe_read_kernel_str:
	case BPF_FUNC_probe_read_user_str: {
		char *dst = (char *)(uintptr_t)r[1];
		uint64_t i = 0;
		if (!r[2])
			return 0;
		while (i + 1 < r[2]) {         /* a page at most at a time */
			uint64_t at = r[3] + i, want = r[2] - 1 - i;
			uint64_t page = 4096 - (at & 4095);
			uint64_t k = emu_read(dst + i, at, want < page ? want : page);
			if (!k) {
				memset(dst, 0, r[2]);
				return (uint64_t)-EFAULT;
			}
			char *nul = memchr(dst + i, 0, k);
			if (nul)
				return (uint64_t)(nul - dst) + 1;
			i += k;
		}
		dst[i] = 0;
		return i + 1;
	}
	default:
		return 0;
	}
}

/* The VM calls helpers by id through a table of plain functions: one
 * thunk per id, all ending in emu_helper, which logs the call. */
static inline uint64_t emu_call(int id, uint64_t r1, uint64_t r2,
				uint64_t r3, uint64_t r4, uint64_t r5)
{
	const uint64_t r[6] = { 0, r1, r2, r3, r4, r5 };
	uint64_t ret = emu_helper(id, r);
	struct emu *e = emu_cur;
	if (e->ncalls < EMU_MAX_CALLS) {
		e->call_id[e->ncalls] = (uint16_t)id;
		e->call_ret[e->ncalls] = ret;
	}
	e->ncalls++;
	return ret;
}

#define EMU_THUNK(id) \
	static uint64_t emu_thunk_##id(uint64_t a, uint64_t b, uint64_t c, \
				       uint64_t d, uint64_t f) \
	{ return emu_call(id, a, b, c, d, f); }
#define EMU_THUNK_REF(id) [id] = emu_thunk_##id,
/* X(0x00) ... X(0xff) */
#define EMU_ROW(X, h) X(0x##h##0) X(0x##h##1) X(0x##h##2) X(0x##h##3) \
	X(0x##h##4) X(0x##h##5) X(0x##h##6) X(0x##h##7) X(0x##h##8) \
	X(0x##h##9) X(0x##h##a) X(0x##h##b) X(0x##h##c) X(0x##h##d) \
	X(0x##h##e) X(0x##h##f)
#define EMU_IDS(X) EMU_ROW(X, 0) EMU_ROW(X, 1) EMU_ROW(X, 2) EMU_ROW(X, 3) \
	EMU_ROW(X, 4) EMU_ROW(X, 5) EMU_ROW(X, 6) EMU_ROW(X, 7) \
	EMU_ROW(X, 8) EMU_ROW(X, 9) EMU_ROW(X, a) EMU_ROW(X, b) \
	EMU_ROW(X, c) EMU_ROW(X, d) EMU_ROW(X, e) EMU_ROW(X, f)
EMU_IDS(EMU_THUNK)
static const vm_helper_fn emu_helpers[256] = { EMU_IDS(EMU_THUNK_REF) };

static inline void emu_init(struct emu *e, const struct program *prog)
{
	memset(e, 0, sizeof(*e));
	e->prog = prog;
	e->pid_tgid = (1234ull << 32) | 1235;
	e->ktime = 1000000;
	e->globals.start_ns = 400000;
	e->rb_size = 4u << 20;
}

static inline void emu_free(struct emu *e)
{
	for (int m = 0; m < 16; m++)
		for (uint32_t i = 0; i < e->maps[m].n; i++) {
			free(e->maps[m].keys[i]);
			free(e->maps[m].vals[i]);
		}
	for (uint32_t i = 0; i < e->nrecords; i++)
		free(e->records[i]);
}

static inline void *emu_dup(const void *p, size_t n)
{
	void *c = malloc(n ? n : 1);
	if (c)
		memcpy(c, p, n);
	return c;
}

/* A deep copy of e (NULL when out of memory). */
static inline struct emu *emu_clone(const struct emu *e)
{
	struct emu *c = malloc(sizeof(*c));
	if (!c)
		return NULL;
	memcpy(c, e, sizeof(*c));
	for (uint32_t m = 0; m < 16 && m < e->prog->nmaps; m++) {
		const struct map_spec *s = &e->prog->maps[m];
		for (uint32_t i = 0; i < e->maps[m].n; i++) {
			c->maps[m].keys[i] = emu_dup(e->maps[m].keys[i], s->key_size);
			c->maps[m].vals[i] = emu_dup(e->maps[m].vals[i],
						     s->value_size);
		}
	}
	for (uint32_t i = 0; i < e->nrecords; i++)
		c->records[i] = emu_dup(e->records[i], e->record_size[i]);
	return c;
}

/* What differs between two emulated states after a run, or NULL.
 * Helpers that return pointers into the emulator (a map value, a ring
 * record) return different addresses in the two copies: only whether
 * they returned NULL is compared. */
static inline const char *emu_diff(const struct emu *a, const struct emu *b)
{
	if (a->ncalls != b->ncalls)
		return "the number of helper calls";
	for (uint32_t i = 0; i < a->ncalls && i < EMU_MAX_CALLS; i++) {
		if (a->call_id[i] != b->call_id[i])
			return "the helpers called";
		bool ptr = a->call_id[i] == BPF_FUNC_map_lookup_elem ||
			   a->call_id[i] == BPF_FUNC_ringbuf_reserve;
		if (ptr ? !a->call_ret[i] != !b->call_ret[i] :
		    a->call_ret[i] != b->call_ret[i])
			return "what a helper returned";
	}
	if (a->nrecords != b->nrecords)
		return "the number of ring records";
	for (uint32_t i = 0; i < a->nrecords; i++)
		if (a->record_size[i] != b->record_size[i] ||
		    a->submit_flags[i] != b->submit_flags[i] ||
		    memcmp(a->records[i], b->records[i], a->record_size[i]))
			return "a ring record";
	for (uint32_t m = 0; m < 16 && m < a->prog->nmaps; m++) {
		const struct map_spec *s = &a->prog->maps[m];
		if (a->maps[m].n != b->maps[m].n)
			return "the number of map entries";
		for (uint32_t i = 0; i < a->maps[m].n; i++)
			if (memcmp(a->maps[m].keys[i], b->maps[m].keys[i],
				   s->key_size) ||
			    memcmp(a->maps[m].vals[i], b->maps[m].vals[i],
				   s->value_size))
				return "a map entry";
	}
	if (memcmp(&a->globals, &b->globals, sizeof(a->globals)))
		return ".globals";
	if (memcmp(a->arrays, b->arrays, sizeof(a->arrays)) ||
	    memcmp(a->scratch, b->scratch, sizeof(a->scratch)))
		return "an array map";
	if (memcmp(a->mapfails, b->mapfails, sizeof(a->mapfails)))
		return ".mapfails";
	return NULL;
}

/* Run probe i in the interpreter and the JIT (see the top); returns its
 * r0, or -1 with in.error set. E keeps the interpreter's effects. */
static inline int64_t emu_run(struct emu *e, uint32_t probe)
{
	const struct probe *p = &e->prog->probes[probe];
	static uint8_t ctx[256];
	void *c = e->tp_record ? (void *)(uintptr_t)e->tp_record : ctx;
	uint32_t nmaps = e->prog->nmaps;
	uint64_t *maps = calloc(nmaps ? nmaps : 1, sizeof(*maps));
	for (uint32_t i = 0; maps && i < nmaps; i++)
		maps[i] = i;      /* the emulated helpers take map indices */
	struct vm_env env = { .helpers = emu_helpers, .nhelpers = 256,
			      .maps = maps, .nmaps = nmaps };
	e->in.error = NULL;
	struct vm_prog *vp = maps ? vm_prog_load(p->insns, p->ninsns, &env,
						 e->in.msg, sizeof(e->in.msg))
				  : NULL;
	free(maps);
	if (!vp) {
		e->in.error = e->in.msg;
		return -1;
	}
	if (!vm_prog_native(vp)) {
		snprintf(e->in.msg, sizeof(e->in.msg), "the JIT refused it: %s",
			 vm_prog_jit_error(vp));
		e->in.error = e->in.msg;
		vm_prog_free(vp);
		return -1;
	}
	struct emu *j = emu_clone(e);
	uint64_t ri = 0, rj = 0;
	int rci, rcj = 0;
	emu_cur = e;
	e->ncalls = 0;
	rci = vm_prog_interp(vp, c, &ri);
	if (j) {
		emu_cur = j;
		j->ncalls = 0;
		rcj = vm_prog_run(vp, c, &rj);
		emu_cur = e;
	}
	const char *diff = !j ? "out of memory" :
			   rci != rcj ? "the run's status" :
			   ri != rj ? "r0" : emu_diff(e, j);
	if (diff) {
		snprintf(e->in.msg, sizeof(e->in.msg),
			 "interpreter and JIT disagree on %s", diff);
		e->in.error = e->in.msg;
	} else if (rci) {
		snprintf(e->in.msg, sizeof(e->in.msg), "run failed (%d)", rci);
		e->in.error = e->in.msg;
	}
	if (j) {
		emu_free(j);
		free(j);
	}
	vm_prog_free(vp);
	return e->in.error ? -1 : (int64_t)ri;
}

static inline uint64_t rec_u64(const struct emu *e, uint32_t rec, uint32_t off)
{
	uint64_t v = 0;
	if (rec < e->nrecords && off + 8 <= e->record_size[rec])
		memcpy(&v, e->records[rec] + off, 8);
	return v;
}

static inline const char *rec_str(const struct emu *e, uint32_t rec, uint32_t off)
{
	if (rec >= e->nrecords || off >= e->record_size[rec])
		return "";
	return (const char *)e->records[rec] + off;
}

#endif
