/* ast.h - the syntax tree: every node has a source position; the semantic
 * pass annotates nodes in place (type, map/variable/event ids) and codegen
 * reads only those annotations, never the source text. */
#ifndef SONDE_AST_H
#define SONDE_AST_H

#include <stdint.h>
#include <stdio.h>

#include "../base/arena.h"
#include "../base/diag.h"
#include "../funcs/builtin.h"   /* enum builtin_id: one record each */
#include "../program.h"
#include "../types.h"

enum op {
	/* binary */
	OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MOD,
	OP_BAND, OP_BOR, OP_BXOR, OP_SHL, OP_SHR,
	OP_LAND, OP_LOR,
	OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE,
	/* unary */
	OP_NEG, OP_BNOT, OP_LNOT, OP_DEREF, OP_ADDROF,
	/* increment/decrement (N_INCDEC) */
	OP_PREINC, OP_PREDEC, OP_POSTINC, OP_POSTDEC,
	OP_NONE, /* plain '=' in N_ASSIGN */
};

/* The error for an unroll count outside 1..100, in bpftrace 0.17's
 * words ("unroll maximum value is 100"), or NULL when it is in range. */
const char *unroll_count_error(int64_t count);
const char *op_name(enum op op);

enum node_kind {
	/* expressions */
	N_INT,          /* u.ival */
	N_STR,          /* u.str */
	N_BUILTIN,      /* u.builtin */
	N_VAR,          /* $name: u.var */
	N_POSITIONAL,   /* $1.. ($# has index 0 and is_count): u.positional */
	N_MAP,          /* @name[keys]: u.map */
	N_BINOP,        /* u.binop */
	N_UNOP,         /* u.unop */
	N_TERNARY,      /* u.ternary */
	N_CALL,         /* u.call */
	N_FIELD,        /* expr.name / expr->name: u.field */
	N_TUPLE_INDEX,  /* expr.N: u.tindex */
	N_INDEX,        /* expr[expr]: u.index */
	N_TUPLE,        /* (a, b, ...): u.list */
	N_CAST,         /* (type)expr: u.cast */
	N_INCDEC,       /* ++x x++ --x x--: u.incdec */
	/* statements */
	N_EXPR_STMT,    /* u.expr_stmt */
	N_ASSIGN,       /* target op= value: u.assign */
	N_IF,           /* u.if_ */
	N_UNROLL,       /* u.loop (count in u.loop.count) */
	N_WHILE,        /* u.loop */
	N_RETURN,       /* return; */
	N_BREAK,        /* break; */
	N_CONTINUE,     /* continue; */
	N_BLOCK,        /* { stmts }: u.list */
	/* top level */
	N_ATTACH,       /* one attach point as written: u.attach */
	N_PROBE,        /* attach points, predicate, body: u.probe */
	N_PROGRAM,      /* u.list of N_PROBE */
	/* added after the seams were cut, hence out of place: */
	N_IDENT,        /* a bare name that is no builtin: u.str holds it.
			 * Only meaningful as a call argument (kstack(perf),
			 * sizeof(uint32), sizeof(struct task_struct) with the
			 * name "struct task_struct"); sema rejects it elsewhere
			 * (UNKNOWN_BUILTIN). */
	N_CONFIG,       /* bpftrace 0.2x's `config = { name = value; ... }`:
			 * u.list of N_ASSIGN (target an N_IDENT, value an
			 * N_INT, N_STR or N_IDENT). In the program's list
			 * until compile.c applies it and takes it out:
			 * sema and codegen never see one. */
	N_BLOCK_EXPR,   /* bpftrace 0.24's `{ stmts; value }`: u.blockx */
	N_MAP_DECL,     /* `let @m = lruhash(N);` at top level (bpftrace
			 * 0.24): u.assign, target the N_MAP, value the
			 * N_CALL; config.c takes it out before sema */
	N_MACRO,        /* `macro NAME(PARAMS) { ... }` at top level:
			 * u.macro; expanded where it is called and taken
			 * out of the program by macro.c, before sema */
	N_FOR_MAP,      /* `for ($kv : @m) { ... }` (bpftrace 0.21): u.loop,
			 * cond the N_MAP (no keys), step the N_VAR $kv
			 * (sema: a tuple (key, value)), body the N_BLOCK */
};

/* What the semantic pass (sema.c) guarantees codegen, beyond the fields
 * marked "sema:" below. Read this before generating code.
 *
 * Rewrites (codegen never sees these forms after a successful check):
 *  - N_POSITIONAL becomes N_INT ($N used as a number, 0 when missing; $#)
 *    or N_STR (the argument of str($N): the text, "" when missing);
 *  - sizeof(...) calls become N_INT (type uint64);
 *  - signal("NAME") gets its argument rewritten into the N_INT number.
 * Types:
 *  - integer literals are int64; pid tid uid gid nsecs elapsed cpu rand
 *    cgroup cpid numaid retval argN sargN are uint64; curtask is uint64 with
 *    is_ptr; comm is string[16]; a string literal is string[len + 1];
 *    str()/json() and __data_loc fields are string[prog->strlen];
 *  - binary operators on integers give a 64-bit integer, signed only if
 *    both operands are (comparisons included); string == and != give
 *    uint64 (codegen compares the strings); unary - ~ ! keep the operand
 *    type (pointers lose is_ptr), unary * reads a u64;
 *  - `probe` is a string as long as the longest expanded probe name of
 *    its block (+1): each probe's program stores its own name;
 *  - `func` is TYPE_USYM in uprobe/uretprobe/usdt blocks, else TYPE_KSYM;
 *    `username` is TYPE_USERNAME (the uid, named by output);
 *  - kstack/ustack (builtin or call) carry stack_limit (default 127) and
 *    stack_mode (0 bpftrace, 1 perf, 2 raw);
 *  - buf(p, n) is TYPE_BUF of size 4 + min(n literal, strlen) (else
 *    4 + strlen): a u32 length, then the bytes;
 *  - ntop() is TYPE_INET (size 24); ksym() TYPE_KSYM (8), usym() TYPE_USYM
 *    (16: address, pid).
 * Slots: a variable's type is u.probe.var_types[slot], a map's are the
 *  map_spec key_type/value_type. As in bpftrace, an integer slot keeps the
 *  type of the first value stored (a variable: exactly that type; a map
 *  value: 64 bits with that signedness; a map key: always int64, as
 *  bpftrace 0.17 prints integer keys signed), strings widen to the
 *  longest stored, tuples merge field by field. So the value being stored
 *  (or a key expression, or a ?: branch) may differ from the slot: a
 *  shorter string is zero-padded; an integer is converted to the slot's
 *  type (truncated, or extended by its own signedness). Reads of a
 *  variable or map already have the slot's type.
 * Aggregations: in `@m[k] = count()` etc. the call node's type is the
 *  aggregation type (TYPE_COUNT ... TYPE_LHIST, with is_signed of the
 *  argument and lhist_min/max/step) and u.call.fn is set; the map's value
 *  layout is in program.h. Aggregation maps are never read as values
 *  (AGG_READ); only print/clear/zero/delete take them.
 * args: `args->f` is N_FIELD over an N_BUILTIN BI_ARGS (typed TYPE_RECORD,
 *  size 0). u.field.field indexes the first probe's record; offsets may
 *  differ between the probes of a block (a wildcard over tracepoints), so
 *  look the field up by name in each probe's args_type.
 * Maps: prog->maps holds the internal maps first, then the user maps in
 *  name order (strcmp), which is the order bpftrace 0.17 prints them at
 *  exit; output should walk prog->maps in order.
 * Events: printf/cat/system: EV_* with fmt and args = tuple of the
 *  argument types as evaluated (strings at their own size); print(@m[, top
 *  [, div]]) EV_PRINT_MAP; print(value) EV_PRINT_VALUE with a 1-tuple;
 *  time([fmt]) EV_TIME (default "%H:%M:%S\n"); join(arr[, delim]) EV_JOIN
 *  with fmt = delimiter (default " ") and args = SEMA_JOIN_MAX strings of
 *  prog->strlen; exit() EV_EXIT; clear/zero EV_CLEAR_MAP/EV_ZERO_MAP with
 *  map_id. delete() has no event.
 * Attach points: u.attach.text is exactly as written; provider, target,
 *  func and extra are its ':'-separated parts as written (quotes kept,
 *  aliases not resolved; the 4th part and beyond stay in extra). */

struct node;
struct func;

struct node_list {
	struct node **v;
	uint32_t n;
};

struct node {
	enum node_kind kind;
	struct pos pos;
	/* Filled by the semantic pass for every expression. */
	const struct type *type;
	union {
		uint64_t ival;
		struct {
			const char *s;   /* unescaped, NUL-terminated */
			uint32_t len;    /* bytes before the NUL */
		} str;
		struct {
			enum builtin_id id;
			uint32_t index;  /* argN / sargN */
		} builtin;
		struct {
			const char *name;  /* without '$' */
			int32_t slot;      /* sema: variable index in its probe */
		} var;
		struct {
			uint32_t index;    /* $1 -> 1 */
			bool is_count;     /* $# */
		} positional;
		struct {
			const char *name;  /* with '@'; "@" for the anonymous map */
			struct node_list keys;
			int32_t map_id;    /* sema: index into program maps */
		} map;
		struct {
			enum op op;
			struct node *lhs, *rhs;
			/* sema, --dialect=0.26, '/' and '%': a warnf() call
			 * made for a divisor of 0 (the result is then 1),
			 * or NULL */
			struct node *zero_warn;
		} binop;
		struct {
			enum op op;
			struct node *operand;
		} unop;
		struct {
			struct node *cond, *then, *els;
		} ternary;
		struct {
			const char *name;
			const struct func *fn; /* sema: its record (funcs/func.h),
					       * NULL if unknown */
			struct node_list args;
			int32_t event_id;  /* sema: event table index, or -1 */
		} call;
		struct {
			struct node *base;
			const char *name;
			bool arrow;        /* '->' rather than '.' */
			int32_t field;     /* sema: index into the record's fields */
			/* sema, for a member of a C struct/union (base a
			 * typed pointer with '->' or a struct value with '.'):
			 * the member and its bit offset from the start of the
			 * base struct (anonymous members added in). NULL for
			 * args->name. */
			const struct ctype_field *cfield;
			uint32_t bit_offset;
		} field;
		struct {
			struct node *base;
			uint32_t index;
		} tindex;
		struct {
			struct node *base, *index;
			/* sema, --dialect=0.26: a warnf() call for an index
			 * past a C array's end, or NULL */
			struct node *oob_warn;
		} index;
		struct node_list list;
		/* N_TUPLE: its elements are u.list (elems overlays it, the
		 * same first member); names, when not NULL, one per element,
		 * make it a record ((a=1, b=2); `args` as a value) */
		struct {
			struct node_list elems;
			const char **names;
		} tup;
		struct {
			struct node *body;   /* N_BLOCK: the statements */
			struct node *value;  /* the last expression (no ';'
					      * after it), or NULL: no value */
		} blockx;
		struct {
			const char *name;
			struct node_list params; /* N_VAR $a, N_MAP @b, or
						  * N_IDENT x (an expression) */
			struct node *body;       /* N_BLOCK_EXPR */
		} macro;
		struct {
			const char *type_name;  /* as written: "uint32", "int8" ... */
			struct node *expr;
		} cast;
		struct {
			enum op op;        /* OP_PREINC .. OP_POSTDEC */
			struct node *target; /* N_VAR or N_MAP */
		} incdec;
		struct {
			struct node *expr;
		} expr_stmt;
		struct {
			enum op op;        /* OP_NONE for '=', else OP_ADD for '+=' ... */
			struct node *target; /* N_VAR or N_MAP */
			struct node *value;
		} assign;
		struct {
			struct node *cond;
			struct node *then;  /* N_BLOCK */
			struct node *els;   /* N_BLOCK, N_IF (else if) or NULL */
			/* D: one clause of a probe's merged block
			 * (lang/d_clauses.c): a fault leaves it only */
			bool clause;
		} if_;
		struct {
			struct node *cond;  /* N_WHILE; N_UNROLL: a $N count;
					     * N_FOR_MAP: the map */
			uint64_t count;     /* N_UNROLL */
			struct node *body;  /* N_BLOCK */
			struct node *step;  /* N_WHILE from a for loop: run
					     * after the body and at continue,
					     * or NULL */
		} loop;
		struct attach_point attach;  /* program.h; its pos is
					      * the node's */
		struct {
			struct node_list attach;   /* N_ATTACH */
			struct node *predicate;    /* or NULL */
			struct node *body;         /* N_BLOCK */
			uint32_t nvars;            /* sema: variable slots */
			const struct type **var_types; /* sema: per slot */
		} probe;
	} u;
};

struct node *node_new(struct arena *a, enum node_kind kind, struct pos pos);
int node_list_push(struct arena *a, struct node_list *l, struct node *n);

/* --dump=ast: an indented tree, one node per line, with positions and,
 * after the semantic pass, types. */
void ast_dump(FILE *out, const struct node *n, struct arena *a);

/* Whether the builtin appears anywhere under n (a probe: its predicate
 * and body). */
bool ast_uses_builtin(const struct node *n, enum builtin_id id);
/* Whether a node of kind k appears anywhere under n. */
bool ast_has_kind(const struct node *n, enum node_kind k);
/* Whether &$var of the variable in slot appears under n. */
bool ast_takes_address(const struct node *n, int32_t slot);
/* Whether a for loop over a range (an N_WHILE with a step) is under n. */
bool ast_has_for_range(const struct node *n);

/* How many nodes N holds once every unroll under it is unrolled (its
 * body copied count times), or CAP + 1 when that is more than CAP. */
uint64_t ast_unrolled_size(const struct node *n, uint64_t cap);

#endif
