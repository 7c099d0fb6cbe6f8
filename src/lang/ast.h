/* ast.h - the syntax tree: every node has a source position; the semantic
 * pass annotates nodes in place (type, map/variable/event ids) and codegen
 * reads only those annotations, never the source text. */
#ifndef SONDE_AST_H
#define SONDE_AST_H

#include <stdint.h>
#include <stdio.h>

#include "../base/arena.h"
#include "../base/diag.h"
#include "types.h"

/* Builtin variables. One X-macro list so the name table, the semantic
 * pass and codegen stay in step. ARG covers arg0..argN (index in
 * node->u.builtin.index), SARG sarg0..N. */
#define BUILTINS(X) \
	X(PID, "pid") X(TID, "tid") X(UID, "uid") X(GID, "gid") \
	X(NSECS, "nsecs") X(ELAPSED, "elapsed") X(CPU, "cpu") \
	X(COMM, "comm") X(KSTACK, "kstack") X(USTACK, "ustack") \
	X(ARG, "arg") X(SARG, "sarg") X(ARGS, "args") X(RETVAL, "retval") \
	X(FUNC, "func") X(PROBE, "probe") X(CURTASK, "curtask") \
	X(RAND, "rand") X(CGROUP, "cgroup") X(CPID, "cpid") \
	X(USERNAME, "username")

enum builtin_id {
#define X(id, s) BI_##id,
	BUILTINS(X)
#undef X
	BI_COUNT_
};

/* Functions callable from scripts, aggregations included. */
#define FUNCTIONS(X) \
	X(PRINTF, "printf") X(PRINT, "print") X(TIME, "time") \
	X(JOIN, "join") X(CAT, "cat") X(SYSTEM, "system") X(EXIT, "exit") \
	X(SIGNAL, "signal") X(STR, "str") X(BUF, "buf") X(KSYM, "ksym") \
	X(USYM, "usym") X(KADDR, "kaddr") X(UADDR, "uaddr") X(REG, "reg") \
	X(NTOP, "ntop") X(SIZEOF, "sizeof") X(STRNCMP, "strncmp") \
	X(STRCONTAINS, "strcontains") X(KSTACK, "kstack") \
	X(USTACK, "ustack") X(CGROUPID, "cgroupid") X(JSON, "json") \
	X(COUNT, "count") X(SUM, "sum") X(AVG, "avg") X(MIN, "min") \
	X(MAX, "max") X(STATS, "stats") X(HIST, "hist") X(LHIST, "lhist") \
	X(DELETE, "delete") X(CLEAR, "clear") X(ZERO, "zero")

enum func_id {
#define X(id, s) FN_##id,
	FUNCTIONS(X)
#undef X
	FN_COUNT_
};

extern const char *const builtin_names[BI_COUNT_];
extern const char *const func_names[FN_COUNT_];

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
};

struct node;

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
			enum func_id id;   /* sema: FN_COUNT_ if unknown */
			struct node_list args;
			int32_t event_id;  /* sema: event table index, or -1 */
		} call;
		struct {
			struct node *base;
			const char *name;
			bool arrow;        /* '->' rather than '.' */
			int32_t field;     /* sema: index into the record's fields */
		} field;
		struct {
			struct node *base;
			uint32_t index;
		} tindex;
		struct {
			struct node *base, *index;
		} index;
		struct node_list list;
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
		} if_;
		struct {
			struct node *cond;  /* N_WHILE */
			uint64_t count;     /* N_UNROLL */
			struct node *body;  /* N_BLOCK */
		} loop;
		struct {
			const char *text;     /* the attach point as written */
			const char *provider; /* canonical: "tracepoint", not "t" */
			const char *target;   /* path/category/unit, may be NULL */
			const char *func;     /* symbol/name/event, may be NULL */
			const char *extra;    /* usdt: probe name when 3 parts */
			uint64_t freq;        /* interval/profile/software count */
		} attach;
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

#endif
