/* cg.h - shared state of the code generator proper (AST to IR), split by
 * construct over cg_mem.c, cg_expr.c, cg_stmt.c, cg_call.c, cg_map.c,
 * cg_str.c, cg_probe.c, cg_usdt.c and cg_json.c. Private to src/codegen/.
 *
 * Values. An expression yields a `struct cval`: integers live in a vreg
 * or are constants; everything else (strings, tuples, buffers) lives in
 * memory at base vreg + offset, laid out per types.h. Integer vregs always
 * hold the value extended to 64 bits according to its type, so 64-bit
 * arithmetic is right and casts are explicit truncations.
 *
 * Memory. Stack objects are carved from the frame below r10 by a bump
 * allocator released at the end of each statement; script variables of
 * non-integer type get frame space for the whole probe. When the frame
 * would not leave room for spills, objects come from a per-CPU array map
 * (".scratch") instead: codegen_program() retries a probe with a smaller
 * frame budget until the whole program fits in 512 bytes. Events are
 * written in place into the ring buffer record, so large printf records
 * never touch the stack. */
#ifndef SONDE_CODEGEN_CG_H
#define SONDE_CODEGEN_CG_H

#include <stdbool.h>
#include <stdint.h>

#include "../base/diag.h"
#include "../lang/ast.h"
#include "../program.h"
#include "ir.h"

#define BPF_STACK_MAX 512
/* the most instructions the kernel loads in one program (root's
 * BPF_COMPLEXITY_LIMIT_INSNS) */
#define BPF_INSNS_MAX 1000000
/* The per-CPU scratch map's value: the kernel's largest per-CPU
 * allocation (PCPU_MIN_UNIT_SIZE), and offsets stay within int16. */
#define CG_SCRATCH_MAX 32768u

/* A place in memory: base + off (base VR_FP for the stack). */
struct cmem {
	vreg base;
	int32_t off;
};

enum cval_kind { CV_IMM, CV_REG, CV_MEM };

struct cval {
	enum cval_kind kind;
	int64_t imm;          /* CV_IMM */
	vreg r;               /* CV_REG */
	struct cmem m;        /* CV_MEM */
	const struct type *t;
};

struct cg_loop {
	uint32_t brk, cont;
};

struct cg {
	struct program *prog;
	struct probe *probe;
	const struct node *pnode;    /* the N_PROBE block */
	struct ir *ir;
	struct arena *a;
	struct diags *d;
	int err;                     /* first error; diagnostics in d */

	vreg ctx;                    /* the context pointer */
	vreg *var_reg;               /* per variable slot: integer vreg */
	struct cmem *var_mem;        /* per variable slot: other types */

	/* frame objects */
	uint32_t frame, frame_max;   /* bytes below r10 */
	uint32_t frame_limit;        /* beyond it, use scratch */
	bool use_scratch;            /* scratch map available */
	bool need_scratch;           /* overflowed without scratch */
	int scratch_map;             /* map index of .scratch, or -1 */
	vreg scratch;                /* pointer to this CPU's scratch */
	uint32_t scr, scr_max;

	int mapfail_map;             /* SONDE_MAPFAIL_MAP, or -1 */

	uint32_t l_exit;             /* return 0 */
	vreg open_recs[8];           /* ring records reserved whose fields
				      * are being computed, innermost last:
				      * a D fault discards them */
	uint32_t nopen;
	bool in_clause;              /* D: in a merged block's clause ... */
	uint32_t l_clause;           /* ... whose end a fault jumps to */
	uint32_t d_action;           /* D: the statement of the probe's
				      * block being compiled (1...), for
				      * a fault's "action #N" */
	struct pos pos;              /* the statement or call being compiled,
				      * for -k's reports (cg_check_helper) */
	struct cg_loop loops[32];
	uint32_t nloops;
	const struct node *stmt_call; /* the call whose value a statement
				       * drops (delete() makes none then) */

	/* for ($kv : @m) (cg_formap.c) */
	struct cg_subs *subs;
	int sub;                     /* this callback's index, -1: the probe */
	vreg root_fp;                /* the probe's frame: VR_FP in the probe,
				      * its address (r4) in a callback */
	int32_t spill;               /* from root_fp: the integer variables,
				      * ctx and the return flag while a
				      * callback runs; 0: no for loop */
};

/* The callbacks of one probe's program (bpf_for_each_map_elem's), each
 * generated into its own instructions and appended after the probe's
 * own by codegen.c, which resolves the IR_LDFUNC references. */
struct cg_sub {
	struct bpf_insn *insns;
	uint32_t n;
	uint32_t stack;       /* its frame, rounded up as the verifier does */
	int parent;           /* the callback that calls it, -1: the probe */
};

struct cg_subs {
	VEC(struct cg_sub) v;
	int len_cb;           /* len()'s callback (returns 0), or -1 */
};

struct cg_mark {
	uint32_t frame, scr;
};

/* cg_mem.c: memory, values, and small building blocks */
void cg_error(struct cg *cg, struct pos pos, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
struct cmem cg_alloc(struct cg *cg, uint32_t size);
/* Memory whose bytes the verifier does not follow (the per-CPU scratch
 * map, whatever the frame budget): what a loop writes at offsets that
 * differ from path to path would otherwise keep those paths apart. */
struct cmem cg_alloc_untracked(struct cg *cg, uint32_t size);
struct cg_mark cg_mark(const struct cg *cg);
void cg_release(struct cg *cg, struct cg_mark m);
struct cmem cg_at(struct cmem m, int32_t off);
struct ir_arg cg_arg(struct cmem m);
vreg cg_addr(struct cg *cg, struct cmem m);
vreg cg_reg(struct cg *cg, struct cval v);     /* integer into a vreg */
struct cval cg_imm(int64_t v, const struct type *t);
struct cval cg_regval(vreg r, const struct type *t);
struct cval cg_memval(struct cmem m, const struct type *t);
vreg cg_load(struct cg *cg, uint8_t size, struct cmem m);
void cg_store_int(struct cg *cg, struct cmem dst, struct cval v);
void cg_zero(struct cg *cg, struct cmem dst, uint32_t size);
void cg_copy(struct cg *cg, struct cmem dst, struct cmem src, uint32_t size);
/* Zero the bytes of tuple type t at dst that no field covers (alignment
 * padding): a tuple goes into maps and records whole, and stack garbage
 * there would differ from hit to hit and leak the traced stack. */
void cg_zero_padding(struct cg *cg, struct cmem dst, const struct type *t);
/* Store value v (of type v.t) as type `to` at dst: strings are padded or
 * cut to to->size, tuples converted field by field. */
void cg_store(struct cg *cg, struct cmem dst, struct cval v,
	      const struct type *to);
/* Bring an integer to the width and signedness of type t. */
void cg_normalize(struct cg *cg, vreg r, const struct type *t);
vreg cg_call(struct cg *cg, int helper, const struct ir_arg *args, int n);
/* A call whose result is not used. */
void cg_callv(struct cg *cg, int helper, const struct ir_arg *args, int n);
/* The u64 at `off` in struct sonde_globals (0 if the map is missing). */
vreg cg_global(struct cg *cg, uint32_t off);
/* A pointer to the .globals record (struct sonde_globals), or 0 if the
 * lookup failed; the caller checks both, and that prog->globals_map >= 0. */
vreg cg_globals_ptr(struct cg *cg);
bool cg_exit_guarded(const struct program *prog);

/* cg_expr.c */
struct cval cg_expr(struct cg *cg, const struct node *n);
/* An integer variable whose address the probe takes (&$x) keeps its
 * value in memory too: stored there after each write. */
void cg_var_home(struct cg *cg, int32_t slot);
/* The BPF ALU operation of an arithmetic operator (also of '+=' etc.),
 * 0xff for operators that are not arithmetic. */
uint8_t cg_alu_code(enum op op);
/* Evaluate n and store it at dst as type `to` (to = NULL: n's own type),
 * writing strings straight into place where possible. */
void cg_expr_to(struct cg *cg, const struct node *n, struct cmem dst,
		const struct type *to);
/* Branch to `target` when n is false (when_true: when true). */
void cg_cond_jump(struct cg *cg, const struct node *n, bool when_true,
		  uint32_t target);

/* cg_str.c: string builtins and comparisons */
void cg_str_literal(struct cg *cg, struct cmem dst, const char *s,
		    uint32_t len, uint32_t size);
struct cval cg_str_compare(struct cg *cg, const struct node *n);
struct cval cg_mem_compare(struct cg *cg, const struct node *n);
struct cval cg_strncmp(struct cg *cg, const struct node *n);
struct cval cg_strcontains(struct cg *cg, const struct node *n);
struct cval cg_strlen(struct cg *cg, const struct node *n);
void cg_str_call_to(struct cg *cg, const struct node *n, struct cmem dst,
		    const struct type *to);
void cg_buf_call_to(struct cg *cg, const struct node *n, struct cmem dst);

/* cg_probe.c: builtins (by their records' hooks) and probe context */
struct cval cg_builtin(struct cg *cg, const struct node *n);
void cg_builtin_to(struct cg *cg, const struct node *n, struct cmem dst,
		   const struct type *to);
bool cg_builtin_is_mem(const struct node *n);
/* "builtin 'NAME' is not supported in PROBE" */
void cg_builtin_unsupported(struct cg *cg, const struct node *n);
/* What a builtin reads from the probe's context: argN, sargN, retval,
 * func (to memory, as KSYM or USYM). */
struct cval cg_probe_arg(struct cg *cg, const struct node *n);
struct cval cg_probe_sarg(struct cg *cg, const struct node *n);
struct cval cg_probe_retval(struct cg *cg, const struct node *n);
void cg_probe_func_to(struct cg *cg, const struct node *n, struct cmem dst,
		      const struct type *to);
struct cval cg_field(struct cg *cg, const struct node *n);
void cg_field_to(struct cg *cg, const struct node *n, struct cmem dst,
		 const struct type *to);
/* Offset of a register in x86-64 struct pt_regs ("di", "ip"), or -1. */
int cg_reg_offset(const char *name);

/* cg_ctype.c: C objects (struct members, array elements, *p) */
bool cg_is_cobject(const struct node *n);
struct cval cg_cobject(struct cg *cg, const struct node *n);
void cg_cobject_to(struct cg *cg, const struct node *n, struct cmem dst,
		   const struct type *to);
/* (T *)obj of a C object: its address. */
struct cval cg_cobject_addr(struct cg *cg, const struct node *n,
			    const struct type *t);
bool cg_is_ptr_arith(const struct node *n);
int64_t cg_ptr_step(const struct type *t);
struct cval cg_scale_step(struct cg *cg, enum op op, const struct type *t,
			  struct cval x);
struct cval cg_ptr_arith(struct cg *cg, const struct node *n);

/* cg_btf.c: the verifier's trusted pointers (BTF tracing programs) */
/* A pointer to what n is (a struct by value: its address; a pointer: its
 * value) that the verifier types from BTF, for helpers that want one:
 * false when n is not made of the probe's arguments, retval, `->` and
 * `.` (nothing emitted then that matters). */
bool cg_btf_pointer(struct cg *cg, const struct node *n, vreg *out);

/* cg_usdt.c: user-space probes */
struct cval cg_usdt_arg(struct cg *cg, const struct node *n);
struct cval cg_uaddr(struct cg *cg, const struct node *n);
/* uprobe, uretprobe or usdt: pointers are user addresses */
bool cg_user_probe(const struct cg *cg);

/* cg_json.c: json(document, path) into dst */
void cg_json_to(struct cg *cg, const struct node *n, struct cmem dst,
		const struct type *to);

/* cg_dstr.c: D's string subroutines (funcs/dtrace_str.c) */
struct cval cg_dstr_strlen(struct cg *cg, const struct node *n);
struct cval cg_dstr_index(struct cg *cg, const struct node *n);
void cg_dstr_strjoin_to(struct cg *cg, const struct node *n, struct cmem dst,
			const struct type *to);
void cg_dstr_substr_to(struct cg *cg, const struct node *n, struct cmem dst,
		       const struct type *to);
void cg_dstr_strstr_to(struct cg *cg, const struct node *n, struct cmem dst,
		       const struct type *to);
void cg_dstr_strchr_to(struct cg *cg, const struct node *n, struct cmem dst,
		       const struct type *to);
void cg_dstr_case_to(struct cg *cg, const struct node *n, struct cmem dst,
		     const struct type *to);
void cg_dstr_lltostr_to(struct cg *cg, const struct node *n, struct cmem dst,
			const struct type *to);
void cg_dstr_strtok_to(struct cg *cg, const struct node *n, struct cmem dst,
		       const struct type *to);
void cg_dstr_path_to(struct cg *cg, const struct node *n, struct cmem dst,
		     const struct type *to);

/* cg_map.c */
struct cval cg_map_read(struct cg *cg, const struct node *map);
/* count()/sum()/min()/max() of map map_id at key, merged over the CPUs,
 * as type t. */
struct cval cg_agg_read_at(struct cg *cg, int map_id, struct cmem key,
			   const struct type *t);
void cg_map_read_to(struct cg *cg, const struct node *map, struct cmem dst,
		    const struct type *to);
void cg_map_assign(struct cg *cg, const struct node *stmt);
struct cval cg_map_incdec(struct cg *cg, const struct node *n);
/* delete(): whether the entry was there (a bool) */
struct cval cg_map_delete(struct cg *cg, const struct node *call);
struct cval cg_map_has_key(struct cg *cg, const struct node *m,
			   const struct type *t);

/* cg_stack.c: kstack/ustack values, copied user stacks, new pids */
/* Store the KSTACK/USTACK value of type t (mode, limit) at dst. */
void cg_stack_to(struct cg *cg, const struct type *t, struct cmem dst);
/* Tell user space, once per process, that a probe kept a user address
 * of the current process (EV_NEW_PID), so its mappings are remembered
 * while it runs. */
void cg_note_pid(struct cg *cg);

/* cg_call.c */
/* Count a record the ring could not take (struct sonde_globals). */
void cg_count_lost(struct cg *cg);
/* The flags for bpf_ringbuf_submit: no wake-up, except when `now` or
 * when the ring fills up (see cg_call.c). */
struct ir_arg cg_wake_flags(struct cg *cg, bool now);
/* Write the call's event (u.call.event_id) into the ring: its record's
 * fields from the call's arguments `first`, `first + 1`, ..., or, with
 * `fill`, by fill() given the reserved record (rec + 8 is the first
 * field) and the event's argument tuple. Lost records are counted. */
typedef void (*cg_event_fill)(struct cg *cg, const struct node *call,
			      vreg rec, const struct type *args);
void cg_emit_event(struct cg *cg, const struct node *n, uint32_t first,
		   cg_event_fill fill);
/* printf() of a pinned iterator: into its seq file (cg_seq.c). */
struct cval cg_seq_printf(struct cg *cg, const struct node *n);
struct cval cg_call_expr(struct cg *cg, const struct node *n);
/* -k/-kk: report a failure of `helper` (ret < 0) with the position being
 * compiled (cg->pos), as bpftrace does. -k checks the helpers whose
 * failure means a lost update or action (maps, signals, ...); -kk also
 * the reads (probe_read*), which fail on bad pointers all the time. */
void cg_check_helper(struct cg *cg, vreg ret, int helper);
/* D: a read of a clause (copyinstr(), a pointer) that failed (ret < 0)
 * is a fault: an EV_DTRACE_FAULT record with the address, and the
 * probe's program stops there (dtrace:::ERROR). Nothing in bpftrace's
 * language, or when the address is not a register. */
void cg_d_fault(struct cg *cg, vreg ret, vreg addr);
/* -kk: report a map lookup that found nothing (ptr NULL) at cg->pos. */
void cg_check_found(struct cg *cg, vreg ptr);
void cg_call_to(struct cg *cg, const struct node *n, struct cmem dst,
		const struct type *to);
void cg_call_stmt(struct cg *cg, const struct node *n);

/* cg_stmt.c */
void cg_stmt(struct cg *cg, const struct node *n);
/* A D clause's statements, each numbered (cg->d_action) for a fault's
 * "action #N"; the front end's own statements are not counted. */
void cg_clause_body(struct cg *cg, const struct node *body);
void cg_block(struct cg *cg, const struct node *n);

/* cg_formap.c: for ($kv : @m) and len(@m), over bpf_for_each_map_elem;
 * for ($i : a..b) (an N_WHILE with a step, parser.c) over bpf_loop */
#define CG_LOOP_MAX (1 << 23)   /* bpf_loop's most iterations (BPF_MAX_LOOPS) */
/* The spill area's size for a probe with nvars variable slots. */
uint32_t cg_spill_size(uint32_t nvars);
void cg_for_map(struct cg *cg, const struct node *n);
struct cval cg_map_len(struct cg *cg, const struct node *map);

#endif
