/* cg_json.c - json(document, "a.b[2].c"): the value at a path of a JSON
 * text, extracted in BPF so that it works wherever a string does
 * (printf, map keys, comparisons, predicates).
 *
 * How. The path is compiled now into steps (object key or array index;
 * keys are compared by a 64-bit hash computed as the key streams by).
 * The document (a string of N bytes, N = its type's size) is then
 * scanned ONCE by a state machine, a loop whose counter stays in a
 * register so that the verifier walks it round by round with the counter
 * known (every load is at a known offset). The state lives in a per-CPU map value (".json"), not in registers: the
 * verifier does not track what a map holds, so every test of the state
 * is a branch with two outcomes whose values it does not know, nothing
 * becomes "precise", and the paths through one byte's code meet again as
 * one state at the next round (verification costs about N times the paths
 * through one round). Constants in registers would instead let it
 * decide each branch, mark the state precise, and keep every path apart:
 * an earlier version was refused at a million instructions. State:
 *   depth   containers open;       lvl   path steps matched so far
 *   str     0 outside a string, 1 inside, 2 after a backslash
 *   want    the next value is the one the last matched step named
 *   expkey  the next string at the search depth is an object key
 *   iskey   the string being read is such a key;  h  its hash
 *   kmatch  the key just read is the one step `lvl` wants
 *   aidx    element index in the array step `lvl` searches
 *   cap     what is captured: 0 none, 1 string, 2 scalar, 3 container
 *   cs, ce, cdepth   capture start, end, and where a container capture ends
 * Step `lvl` is looked for in the container at depth lvl + 1; when that
 * container closes without a match the path does not exist. The result
 * is the value's text: a string without its quotes (escapes kept as
 * written), a number/true/false/null as written, an object or array as
 * its whole text. A missing path, a malformed document or a value cut
 * off by the string size gives what could be read, or "". */
#include "cg.h"

#include <string.h>

#include "../program.h"

#define JSON_MAX_STEPS 16
#define JSON_MAX_KEY 128
#define HASH_INIT 0x811c9dc5ll
#define HASH_MUL 16777619

struct json_step {
	bool index;         /* [N] rather than .key */
	uint64_t n;         /* the index, or the key's hash */
};

static uint64_t hash_byte(uint64_t h, unsigned char c)
{
	return (h ^ c) * HASH_MUL;
}

/* path := [step] { '.' key | '[' digits ']' }, the first step may be a
 * key without a dot. Returns the number of steps or -1 (*why set). */
static int path_parse(const char *s, struct json_step *st, const char **why)
{
	int n = 0;
	bool first = true;
	while (*s) {
		if (n == JSON_MAX_STEPS) {
			*why = "has too many steps (at most 16)";
			return -1;
		}
		if (*s == '[') {
			s++;
			if (*s < '0' || *s > '9') {
				*why = "has '[' without an index";
				return -1;
			}
			uint64_t v = 0;
			while (*s >= '0' && *s <= '9') {
				v = v * 10 + (uint64_t)(*s++ - '0');
				if (v > 1000000) {
					*why = "has an index that is too large";
					return -1;
				}
			}
			if (*s++ != ']') {
				*why = "has an index without its ']'";
				return -1;
			}
			st[n++] = (struct json_step){ .index = true, .n = v };
		} else {
			if (*s == '.' && !first)
				s++;
			else if (*s == '.') {
				*why = "starts with '.'";
				return -1;
			}
			size_t len = strcspn(s, ".[");
			if (!len) {
				*why = "has an empty key";
				return -1;
			}
			if (len > JSON_MAX_KEY) {
				*why = "has a key longer than 128 bytes";
				return -1;
			}
			uint64_t h = (uint64_t)HASH_INIT;
			for (size_t i = 0; i < len; i++)
				h = hash_byte(h, (unsigned char)s[i]);
			st[n++] = (struct json_step){ .index = false, .n = h };
			s += len;
		}
		first = false;
	}
	return n;
}

/* The scanner's state: u64 words of the ".json" map's value. */
enum {
	S_DEPTH, S_LVL, S_STR, S_WANT, S_EXPKEY, S_ISKEY, S_H, S_KMATCH,
	S_AIDX, S_CAP, S_CS, S_CE, S_CDEPTH, S_WORDS
};

struct scan {
	struct cg *cg;
	struct ir *ir;
	const struct json_step *steps;
	int nsteps;
	vreg st;            /* the map value */
	uint32_t found, fail;
};

static vreg ld(struct scan *s, int w)
{
	vreg r = ir_vreg(s->ir);
	ir_ldx(s->ir, BPF_DW, r, s->st, (int16_t)(8 * w));
	return r;
}

static void set(struct scan *s, int w, int64_t v)
{
	if (v >= INT32_MIN && v <= INT32_MAX) {
		ir_st(s->ir, BPF_DW, s->st, (int16_t)(8 * w), v);
		return;
	}
	vreg r = ir_vreg(s->ir);
	ir_movi(s->ir, r, v);
	ir_stx(s->ir, BPF_DW, s->st, (int16_t)(8 * w), r);
}

static void put(struct scan *s, int w, vreg r)
{
	ir_stx(s->ir, BPF_DW, s->st, (int16_t)(8 * w), r);
}

/* Jump to `l` unless word w == v / unless word w != v. */
static void unless_eq(struct scan *s, int w, int64_t v, uint32_t l)
{
	ir_jcci(s->ir, BPF_JNE, ld(s, w), v, l);
}

static void when_eq(struct scan *s, int w, int64_t v, uint32_t l)
{
	ir_jcci(s->ir, BPF_JEQ, ld(s, w), v, l);
}

static void add(struct scan *s, int w, int64_t v)
{
	vreg r = ld(s, w);
	ir_alui(s->ir, BPF_ADD, r, r, v);
	put(s, w, r);
}

/* lvl += 1, want = 1: a step matched, its value comes next. */
static void step_matched(struct scan *s)
{
	add(s, S_LVL, 1);
	set(s, S_WANT, 1);
}

/* Jump to `l` unless depth == lvl + 1 (the depth step lvl searches). */
static void unless_search_depth(struct scan *s, uint32_t l)
{
	vreg t = ld(s, S_LVL);
	ir_alui(s->ir, BPF_ADD, t, t, 1);
	ir_jcc(s->ir, BPF_JNE, ld(s, S_DEPTH), t, l);
}

/* word w = k + delta */
static void put_k(struct scan *s, int w, vreg k, int64_t delta)
{
	if (!delta) {
		put(s, w, k);
		return;
	}
	vreg t = ir_vreg(s->ir);
	ir_mov(s->ir, t, k);
	ir_alui(s->ir, BPF_ADD, t, t, delta);
	put(s, w, t);
}

/* ce = k + delta; the value is complete. */
static void finish(struct scan *s, vreg k, int64_t delta)
{
	put_k(s, S_CE, k, delta);
	ir_ja(s->ir, s->found);
}

/* The loop body for byte k (a vreg) of the document: c holds the byte.
 * Everything the branches test is loaded from the map, so the verifier
 * knows none of it; only k is a known constant in each round. */
static void scan_byte(struct scan *s, vreg c, vreg k, uint32_t next)
{
	struct ir *ir = s->ir;
	uint32_t out = ir_label(ir), nul = ir_label(ir);
	ir_jcci(ir, BPF_JEQ, c, 0, nul);
	vreg str = ld(s, S_STR);
	ir_jcci(ir, BPF_JEQ, str, 0, out);

	/* inside a string: hash every byte, watch for \ and the end */
	uint32_t not_esc = ir_label(ir), not_bs = ir_label(ir);
	vreg h = ld(s, S_H);
	ir_alu(ir, BPF_XOR, h, h, c);
	ir_alui(ir, BPF_MUL, h, h, HASH_MUL);
	put(s, S_H, h);
	ir_jcci(ir, BPF_JNE, str, 2, not_esc);
	set(s, S_STR, 1);
	ir_ja(ir, next);
	ir_place(ir, not_esc);
	ir_jcci(ir, BPF_JNE, c, '\\', not_bs);
	set(s, S_STR, 2);
	ir_ja(ir, next);
	ir_place(ir, not_bs);
	ir_jcci(ir, BPF_JNE, c, '"', next);
	/* the closing quote is in the hash: keys are hashed with it at
	 * compile time too */
	set(s, S_STR, 0);
	uint32_t not_cap = ir_label(ir);
	unless_eq(s, S_CAP, 1, not_cap);
	finish(s, k, 0);
	ir_place(ir, not_cap);
	when_eq(s, S_ISKEY, 0, next);
	set(s, S_ISKEY, 0);
	set(s, S_KMATCH, 0);
	for (int j = 0; j < s->nsteps; j++) {
		if (s->steps[j].index)
			continue;
		uint32_t skip = ir_label(ir);
		unless_eq(s, S_LVL, j, skip);
		vreg want = ir_vreg(ir);
		ir_movi(ir, want, (int64_t)hash_byte(s->steps[j].n, '"'));
		ir_jcc(ir, BPF_JNE, ld(s, S_H), want, skip);
		set(s, S_KMATCH, 1);
		ir_place(ir, skip);
	}
	ir_ja(ir, next);

	/* outside strings */
	ir_place(ir, out);
	uint32_t ws = ir_label(ir), quote = ir_label(ir), comma = ir_label(ir),
		 colon = ir_label(ir), open_o = ir_label(ir),
		 open_a = ir_label(ir), close = ir_label(ir);
	ir_jcci(ir, BPF_JLE, c, ' ', ws);
	ir_jcci(ir, BPF_JEQ, c, '"', quote);
	ir_jcci(ir, BPF_JEQ, c, ',', comma);
	ir_jcci(ir, BPF_JEQ, c, ':', colon);
	ir_jcci(ir, BPF_JEQ, c, '{', open_o);
	ir_jcci(ir, BPF_JEQ, c, '[', open_a);
	ir_jcci(ir, BPF_JEQ, c, '}', close);
	ir_jcci(ir, BPF_JEQ, c, ']', close);
	/* a scalar's byte: its first one may start the value wanted */
	when_eq(s, S_WANT, 0, next);
	set(s, S_WANT, 0);
	unless_eq(s, S_LVL, s->nsteps, s->fail);
	set(s, S_CAP, 2);
	put_k(s, S_CS, k, 0);
	ir_ja(ir, next);

	/* blanks end a scalar */
	ir_place(ir, ws);
	unless_eq(s, S_CAP, 2, next);
	finish(s, k, 0);

	ir_place(ir, quote);
	set(s, S_STR, 1);
	set(s, S_H, HASH_INIT);
	uint32_t no_want = ir_label(ir);
	when_eq(s, S_WANT, 0, no_want);
	set(s, S_WANT, 0);
	unless_eq(s, S_LVL, s->nsteps, s->fail);
	set(s, S_CAP, 1);
	put_k(s, S_CS, k, 1);
	ir_ja(ir, next);
	ir_place(ir, no_want);
	when_eq(s, S_EXPKEY, 0, next);
	unless_search_depth(s, next);
	set(s, S_EXPKEY, 0);
	set(s, S_ISKEY, 1);
	ir_ja(ir, next);

	ir_place(ir, comma);
	uint32_t comma_go = ir_label(ir);
	unless_eq(s, S_CAP, 2, comma_go);
	finish(s, k, 0);
	ir_place(ir, comma_go);
	unless_eq(s, S_CAP, 0, next);
	unless_search_depth(s, next);
	set(s, S_EXPKEY, 1);
	add(s, S_AIDX, 1);
	for (int j = 0; j < s->nsteps; j++) {
		if (!s->steps[j].index || !s->steps[j].n)
			continue;
		uint32_t skip = ir_label(ir);
		unless_eq(s, S_LVL, j, skip);
		unless_eq(s, S_AIDX, (int64_t)s->steps[j].n, skip);
		step_matched(s);
		ir_ja(ir, next);
		ir_place(ir, skip);
	}
	ir_ja(ir, next);

	ir_place(ir, colon);
	when_eq(s, S_KMATCH, 0, next);
	set(s, S_KMATCH, 0);
	step_matched(s);
	ir_ja(ir, next);

	for (int obj = 1; obj >= 0; obj--) {
		ir_place(ir, obj ? open_o : open_a);
		add(s, S_DEPTH, 1);
		when_eq(s, S_WANT, 0, next);
		set(s, S_WANT, 0);
		uint32_t search = ir_label(ir);
		unless_eq(s, S_LVL, s->nsteps, search);
		set(s, S_CAP, 3);
		put_k(s, S_CS, k, 0);
		vreg d = ld(s, S_DEPTH);
		ir_alui(ir, BPF_SUB, d, d, 1);
		put(s, S_CDEPTH, d);
		ir_ja(ir, next);
		/* this container is where step lvl is looked for */
		ir_place(ir, search);
		if (obj)
			set(s, S_EXPKEY, 1);
		else
			set(s, S_AIDX, 0);
		for (int j = 0; j < s->nsteps; j++) {
			uint32_t skip = ir_label(ir);
			unless_eq(s, S_LVL, j, skip);
			if (s->steps[j].index == obj) {
				ir_ja(ir, s->fail);   /* [N] on an object, .k on an array */
			} else if (!obj && s->steps[j].n == 0) {
				step_matched(s);      /* [0]: the first element */
				ir_ja(ir, next);
			}
			ir_place(ir, skip);
		}
		ir_ja(ir, next);
	}

	ir_place(ir, close);
	uint32_t close_go = ir_label(ir), not_cont = ir_label(ir);
	unless_eq(s, S_CAP, 2, close_go);
	finish(s, k, 0);
	ir_place(ir, close_go);
	add(s, S_DEPTH, -1);
	unless_eq(s, S_CAP, 3, not_cont);
	ir_jcc(ir, BPF_JNE, ld(s, S_DEPTH), ld(s, S_CDEPTH), next);
	finish(s, k, 1);
	ir_place(ir, not_cont);
	/* the container of step lvl closed: no such path */
	ir_jcc(ir, BPF_JLE, ld(s, S_DEPTH), ld(s, S_LVL), s->fail);
	ir_ja(ir, next);

	/* the document ends: a value being read ends here */
	ir_place(ir, nul);
	when_eq(s, S_CAP, 0, s->fail);
	finish(s, k, 0);
}

/* Copy doc[cs, ce) to dst (zeroed, `size` bytes). */
static void copy_out(struct scan *s, struct cmem doc, uint32_t n,
		     struct cmem dst, uint32_t size)
{
	struct cg *cg = s->cg;
	struct ir *ir = s->ir;
	uint32_t done = ir_label(ir), fits = ir_label(ir);
	vreg cs = ld(s, S_CS);
	vreg len = ld(s, S_CE);
	ir_alu(ir, BPF_SUB, len, len, cs);
	ir_jcci(ir, BPF_JSGT, cs, (int64_t)n, done);
	ir_jcci(ir, BPF_JSLT, cs, 0, done);
	ir_jcci(ir, BPF_JSLE, len, 0, done);
	ir_jcci(ir, BPF_JLE, len, (int64_t)size - 1, fits);
	ir_movi(ir, len, (int64_t)size - 1);
	ir_place(ir, fits);
	vreg src = cg_addr(cg, doc);
	ir_alu(ir, BPF_ADD, src, src, cs);
	cg_callv(cg, BPF_FUNC_probe_read_kernel,
		(struct ir_arg[]){ cg_arg(dst), IR_ARG(len), IR_ARG(src) }, 3);
	ir_place(ir, done);
}

/* The per-CPU array that holds the scanner's state. */
static int state_map(struct program *prog)
{
	int m = program_find_map(prog, ".json");
	if (m >= 0)
		return m;
	struct map_spec ms = { .name = ".json", .kind = MAP_PERCPU_ARRAY,
			       .key_size = 4, .value_size = 8 * S_WORDS,
			       .max_entries = 1 };
	return program_add_map(prog, &ms);
}

void cg_json_to(struct cg *cg, const struct node *n, struct cmem dst,
		const struct type *to)
{
	const struct node *docn = n->u.call.args.v[0];
	const struct node *pathn = n->u.call.args.v[1];
	struct json_step steps[JSON_MAX_STEPS];
	const char *why = NULL;
	cg_zero(cg, dst, to->size);
	int nsteps = pathn->kind == N_STR ?
		path_parse(pathn->u.str.s, steps, &why) : -1;
	if (nsteps < 0) {
		cg_error(cg, pathn->pos, "json(): the path '%s' %s",
			 pathn->kind == N_STR ? pathn->u.str.s : "",
			 why ? why : "must be a string literal");
		return;
	}
	const struct type *dt = docn->type;
	uint32_t size = dt && dt->kind == TYPE_STR ? dt->size : cg->prog->strlen;
	struct cg_mark mk = cg_mark(cg);
	struct cmem doc = cg_alloc(cg, size);
	cg_expr_to(cg, docn, doc, type_str(cg->a, size));

	struct ir *ir = cg->ir;
	struct scan s = { .cg = cg, .ir = ir, .steps = steps, .nsteps = nsteps };
	uint32_t end = ir_label(ir);
	struct cmem key = cg_alloc(cg, 8);
	ir_st(ir, BPF_W, key.base, (int16_t)key.off, 0);
	s.st = cg_call(cg, BPF_FUNC_map_lookup_elem,
		       (struct ir_arg[]){ IR_MAP(state_map(cg->prog)),
					  cg_arg(key) }, 2);
	ir_jcci(ir, BPF_JEQ, s.st, 0, end);
	for (int w = 0; w < S_WORDS; w++)
		set(&s, w, 0);
	set(&s, S_WANT, 1);      /* the document itself is the first value */
	s.found = ir_label(ir);
	s.fail = ir_label(ir);
	/* for (k = 0; k < size; k++): k stays in a register, so each round
	 * is one the verifier walks with k known */
	uint32_t head = ir_label(ir), next = ir_label(ir), past = ir_label(ir);
	vreg k = ir_vreg(ir);
	ir_movi(ir, k, 0);
	ir_place(ir, head);
	ir_jcci(ir, BPF_JGE, k, size, past);
	vreg p = cg_addr(cg, doc);
	ir_alu(ir, BPF_ADD, p, p, k);
	vreg c = ir_vreg(ir);
	ir_ldx(ir, BPF_B, c, p, 0);
	scan_byte(&s, c, k, next);
	ir_place(ir, next);
	ir_alui(ir, BPF_ADD, k, k, 1);
	ir_ja(ir, head);
	/* past the last byte: as at a NUL */
	ir_place(ir, past);
	when_eq(&s, S_CAP, 0, s.fail);
	set(&s, S_CE, size);
	ir_place(ir, s.found);
	copy_out(&s, doc, size, dst, to->size);
	ir_place(ir, s.fail);
	ir_place(ir, end);
	cg_release(cg, mk);
}
