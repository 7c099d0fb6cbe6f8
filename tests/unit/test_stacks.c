/* test_stacks.c - output's stacks: copied user stacks (EV_USTACK records)
 * unwound and printed, map entries keyed by samples of one stack merged
 * when printed and compacted in the map, kernel stacks from the stack
 * map of their limit, and flame graphs of stack-keyed maps. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fake_maps.h"
#include "output/output_int.h"
#include "unit.h"

/* Text written since cap_reset: cap_new_text. */
static size_t cap_mark;

struct cap {
	char *buf;
	size_t len;
	FILE *mem;
	struct output *o;
};

static void cap_open(struct cap *c, struct fake *f)
{
	cap_mark = 0;
	c->buf = NULL;
	c->mem = open_memstream(&c->buf, &c->len);
	struct output_opts oo = { .format = "text", .out = c->mem };
	c->o = output_new(&f->prog, &oo, &f->reader);
	output_stacks_init(c->o);
}

static const char *cap_text(struct cap *c)
{
	fflush(c->mem);
	return c->buf ? c->buf : "";
}


static void cap_reset(struct cap *c)
{
	fflush(c->mem);
	cap_mark = c->len;
}

static const char *cap_new_text(struct cap *c)
{
	fflush(c->mem);
	return c->buf ? c->buf + cap_mark : "";
}

static void cap_close(struct cap *c)
{
	output_free(c->o);
	fclose(c->mem);
	free(c->buf);
}

static const struct type *t_ustack(struct fake *f, uint32_t limit)
{
	struct type *t = arena_new(&f->arena, struct type);
	t->kind = TYPE_USTACK;
	t->size = 16;
	t->stack_limit = limit;
	return t;
}

static const struct type *t_kstack(struct fake *f, uint32_t limit)
{
	struct type *t = arena_new(&f->arena, struct type);
	t->kind = TYPE_KSTACK;
	t->size = 8;
	t->stack_limit = limit;
	return t;
}

/* An EV_USTACK record; with regs NULL the task was not in user mode
 * (a kernel thread: an empty stack). */
static int send_sample(struct output *o, uint64_t ev, uint64_t id, int pid,
		       const uint64_t *regs, const void *stack, size_t len)
{
	static uint8_t rec[sizeof(struct sonde_ustack_record) + 16384];
	struct sonde_ustack_record r = {
		.event_id = ev, .id = id,
		.pid_tgid = ((uint64_t)pid << 32) | (uint32_t)pid,
		.limit = 127, .stack_len = len,
	};
	if (regs)
		memcpy(r.regs, regs, sizeof(r.regs));
	memcpy(rec, &r, sizeof(r));
	if (len)
		memcpy(rec + sizeof(r), stack, len);
	return output_event(o, rec, sizeof(r) + len);
}

static struct kb ukey(uint64_t id, uint64_t pid)
{
	struct kb k = { .n = 0 };
	kb_int(&k, (int64_t)id);
	kb_int(&k, (int64_t)pid);
	return k;
}

#define S(n) (USTACK_ID_SAMPLE | (n))

/* Samples of one stack (here: empty stacks of one pid) are one key. */
static void t_merge_print(void)
{
	struct fake fk, *f = &fk;
	fake_init(f);
	f->prog.ustack_copy = 8192;
	uint64_t ev = ev_simple(f, EV_USTACK, NULL, NULL, -1);
	struct fmap *m = fake_map(f, "@", t_ustack(f, 127),
				  t_agg(f, TYPE_COUNT, false));
	struct fmap *mx = fake_map(f, "@mx", t_tuple(f, 2, t_ustack(f, 127),
						   t_int(f, 64, true)),
				   t_agg(f, TYPE_MAX, true));
	struct cap c;
	cap_open(&c, f);
	CHECK(send_sample(c.o, ev, S(1), 100, NULL, NULL, 0) == 0 &&
	      send_sample(c.o, ev, S(2), 100, NULL, NULL, 0) == 0 &&
	      send_sample(c.o, ev, S(3), 200, NULL, NULL, 0) == 0,
	      "stacks: EV_USTACK records accepted");
	CHECK(send_sample(c.o, ev, 5, 100, NULL, NULL, 0) < 0,
	      "stacks: a record without the sample bit is refused");
	for (int i = 0; i < 3; i++)
		op_count(f, m, ukey(S(1), 100));
	for (int i = 0; i < 4; i++)
		op_count(f, m, ukey(S(2), 100));
	for (int i = 0; i < 5; i++)
		op_count(f, m, ukey(S(3), 200));
	op_count(f, m, ukey(S(9), 100));    /* its record was lost */
	struct kb k = ukey(S(1), 100);
	kb_int(&k, 1);
	op_minmax(f, mx, k, 10, false);
	k = ukey(S(2), 100);
	kb_int(&k, 1);
	op_minmax(f, mx, k, 30, false);
	k = ukey(S(2), 100);
	kb_int(&k, 1);
	op_minmax(f, mx, k, -4, false);
	output_print_maps(c.o);
	CHECK_STR(cap_text(&c), "\n\n@[]: 1\n@[]: 5\n@[]: 7\n@mx[, 1]: 30\n",
		  "stacks: sample keys of one stack merge when printed "
		  "(count adds, max keeps the largest); pids stay apart");
	CHECK(m->n == 4, "stacks: printing leaves the map alone");

	/* Compaction: entries move into canonical keys only once their
	 * sample is a generation old. */
	output_compact(c.o);
	CHECK(m->n == 4, "stacks: fresh samples are not compacted yet");
	output_compact(c.o);
	CHECK(m->n == 3, "stacks: compaction folds samples into one entry "
	      "per stack (the lost sample stays)");
	bool canon = true;
	for (size_t i = 0; i < m->n; i++) {
		uint64_t id;
		memcpy(&id, m->keys + i * m->ksize, 8);
		if (id != S(9) && !(id & USTACK_ID_CANON))
			canon = false;
	}
	CHECK(canon, "stacks: compacted keys are canonical ids");
	op_count(f, m, ukey(S(1), 100));     /* a late update of a sample */
	cap_reset(&c);
	output_print_maps(c.o);
	CHECK_STR(cap_new_text(&c), "\n\n@[]: 1\n@[]: 5\n@[]: 8\n@mx[, 1]: 30\n",
		  "stacks: canonical and sample entries merge when printed");
	output_compact(c.o);
	output_compact(c.o);
	CHECK(m->n == 3, "stacks: a late sample entry joins its canonical one");
	cap_close(&c);
	fake_fini(f);
}

/* A real sample of this very process: the registers and stack as a
 * probe copies them, unwound with this binary's CFI. */
static struct sonde_ustack_record cap_rec;
static uint8_t cap_stack[8192];
static size_t cap_len;

/* The stack as bpf_probe_read_user sees it: raw bytes, redzones and all
 * (a plain memcpy would trip AddressSanitizer on its own stack). */
__attribute__((no_sanitize("address"), noinline))
static void raw_copy(uint8_t *dst, const volatile uint8_t *src, size_t n)
{
	for (size_t i = 0; i < n; i++)
		dst[i] = src[i];
}

__attribute__((noinline)) static void capture_here(void)
{
	uint64_t r[USTACK_NREGS] = { 0 };
	__asm__ volatile(
		"lea 0(%%rip), %%rax\n\t"
		"mov %%rax, %c[ip](%0)\n\t"
		"mov %%rsp, %c[sp](%0)\n\t"
		"mov %%rbp, %c[bp](%0)\n\t"
		"mov %%rbx, %c[bx](%0)\n\t"
		"mov %%r12, %c[r12](%0)\n\t"
		"mov %%r13, %c[r13](%0)\n\t"
		"mov %%r14, %c[r14](%0)\n\t"
		"mov %%r15, %c[r15](%0)\n\t"
		: : "r"(r), [ip] "i"(8 * USTACK_REG_IP),
		  [sp] "i"(8 * USTACK_REG_SP), [bp] "i"(8 * USTACK_REG_BP),
		  [bx] "i"(8 * USTACK_REG_BX), [r12] "i"(8 * USTACK_REG_R12),
		  [r13] "i"(8 * USTACK_REG_R13), [r14] "i"(8 * USTACK_REG_R14),
		  [r15] "i"(8 * USTACK_REG_R15)
		: "rax", "memory");
	r[USTACK_REG_CS] = 0x33;
	memcpy(cap_rec.regs, r, sizeof(r));
	/* up to the end of the stack mapping, like page-wise reads would */
	FILE *fm = fopen("/proc/self/maps", "r");
	char line[512];
	uint64_t end = r[USTACK_REG_SP];
	while (fm && fgets(line, sizeof(line), fm)) {
		unsigned long long lo, hi;
		if (sscanf(line, "%llx-%llx", &lo, &hi) == 2 &&
		    r[USTACK_REG_SP] >= lo && r[USTACK_REG_SP] < hi)
			end = hi;
	}
	if (fm)
		fclose(fm);
	cap_len = end - r[USTACK_REG_SP];
	if (cap_len > sizeof(cap_stack))
		cap_len = sizeof(cap_stack);
	raw_copy(cap_stack, (const volatile uint8_t *)(uintptr_t)r[USTACK_REG_SP],
		 cap_len);
}

__attribute__((noinline)) static void capture_caller(void)
{
	capture_here();
	__asm__ volatile("" ::: "memory");
}

static void t_unwind_self(void)
{
	struct fake fk, *f = &fk;
	fake_init(f);
	f->prog.ustack_copy = 8192;
	uint64_t ev = ev_simple(f, EV_USTACK, NULL, NULL, -1);
	const struct type *ut = t_ustack(f, 127), *u2 = t_ustack(f, 2);
	uint64_t pv = ev_simple(f, EV_PRINT_VALUE, NULL, t_tuple(f, 1, ut), -1);
	uint64_t pv2 = ev_simple(f, EV_PRINT_VALUE, NULL, t_tuple(f, 1, u2), -1);
	struct cap c;
	cap_open(&c, f);
	capture_caller();
	int pid = getpid();
	CHECK(send_sample(c.o, ev, S(7), pid, cap_rec.regs, cap_stack,
			  cap_len) == 0, "stacks: a sample of this process");
	uint64_t v[2] = { S(7), (uint64_t)pid };
	fake_send(c.o, pv, v, 16);
	const char *t = cap_text(&c);
	const char *a = strstr(t, "        capture_here+");
	const char *b = strstr(t, "        capture_caller+");
	const char *mn = strstr(t, "        main+");
	CHECK(t[0] == '\n' && a && b && mn && a < b && b < mn,
	      "stacks: the copied stack unwinds through the callers to main, "
	      "indented by 8");
	if (!(a && b && mn))
		printf("#   got: [%s]\n", t);
	cap_reset(&c);
	fake_send(c.o, pv2, v, 16);
	int lines = 0;
	for (const char *p = cap_new_text(&c); *p; p++)
		lines += *p == '\n';
	CHECK(lines == 4, "stacks: ustack(2) prints two frames");
	cap_reset(&c);
	v[0] = S(8);    /* no record: printed as an empty stack */
	fake_send(c.o, pv, v, 16);
	CHECK_STR(cap_new_text(&c), "\n", "stacks: an unknown sample is empty");
	cap_close(&c);
	fake_fini(f);
}

/* kstack values read their frames from the stack map of their limit. */
static void t_kstack_map(void)
{
	struct fake fk, *f = &fk;
	fake_init(f);
	struct fmap *sm = fake_map(f, ".stacks_3", t_int(f, 32, false),
				   t_int(f, 64, false));
	/* a stack map: u32 key, 3 frames */
	sm->ksize = 4;
	sm->vsize = sm->stride = 24;
	f->prog.maps[sm->id].kind = MAP_STACK_TRACE;
	f->prog.maps[sm->id].key_size = 4;
	f->prog.maps[sm->id].value_size = 24;
	struct kb key = { .n = 4 };
	uint32_t id = 5;
	memcpy(key.b, &id, 4);
	struct kb frames = { .n = 24 };
	uint64_t ips[3] = { 0x1000, 0x2000, 0 };
	memcpy(frames.b, ips, 24);
	op_set(f, sm, key, &frames);
	const struct type *kt = t_kstack(f, 3);
	uint64_t pv = ev_simple(f, EV_PRINT_VALUE, NULL, t_tuple(f, 1, kt), -1);
	struct cap c;
	cap_open(&c, f);
	int64_t sid = 5;
	fake_send(c.o, pv, &sid, 8);
	/* addresses below every kernel symbol print as addresses */
	CHECK_STR(cap_text(&c), "\n        0x1000\n        0x2000\n\n",
		  "stacks: kstack(3) frames come from .stacks_3, up to the "
		  "first zero");
	cap_reset(&c);
	sid = -14;
	fake_send(c.o, pv, &sid, 8);
	CHECK_STR(cap_new_text(&c), "\n", "stacks: a failed stack id is empty");
	cap_close(&c);
	fake_fini(f);
}

/* Flame graphs: the key's other fields below the user stack. */
static void t_flame(void)
{
	struct fake fk, *f = &fk;
	fake_init(f);
	f->prog.ustack_copy = 8192;
	uint64_t ev = ev_simple(f, EV_USTACK, NULL, NULL, -1);
	struct fmap *m = fake_map(f, "@", t_tuple(f, 2, t_str(f),
						  t_ustack(f, 127)),
				  t_agg(f, TYPE_COUNT, false));
	fake_map(f, "@other", t_str(f), t_agg(f, TYPE_COUNT, false));
	struct cap c;
	cap_open(&c, f);
	capture_caller();
	int pid = getpid();
	send_sample(c.o, ev, S(1), pid, cap_rec.regs, cap_stack, cap_len);
	struct kb k = keys_("comm1");
	kb_int(&k, (int64_t)S(1));
	kb_int(&k, pid);
	for (int i = 0; i < 3; i++)
		op_count(f, m, k);
	char *buf = NULL;
	size_t len = 0;
	FILE *folded = open_memstream(&buf, &len);
	CHECK(output_flamegraph(c.o, NULL, folded, NULL) == 0,
	      "flame: a map keyed by (comm, ustack) is drawn");
	fclose(folded);
	const char *cm = buf ? strstr(buf, "comm1;") : NULL;
	const char *mn = buf ? strstr(buf, ";main;") : NULL;
	const char *leaf = buf ? strstr(buf, ";capture_caller;capture_here 3\n")
			       : NULL;
	CHECK(buf && buf == cm && mn && leaf && mn < leaf,
	      "flame: folded line is comm, then the stack root first, "
	      "function names without offsets, and the count");
	if (!(cm && mn && leaf))
		printf("#   got: [%s]\n", buf ? buf : "");
	free(buf);
	cap_close(&c);
	fake_fini(f);

	fake_init(f);
	fake_map(f, "@", t_str(f), t_agg(f, TYPE_COUNT, false));
	cap_open(&c, f);
	CHECK(output_flamegraph(c.o, NULL, stdout, NULL) == -ENOENT,
	      "flame: no stack-keyed map: -ENOENT");
	cap_close(&c);
	fake_fini(f);
}

int main(void)
{
	t_merge_print();
	t_unwind_self();
	t_kstack_map();
	t_flame();
	return UNIT_DONE();
}
