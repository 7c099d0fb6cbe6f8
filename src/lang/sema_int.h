/* sema_int.h - state shared by the semantic pass's files (sema.c for
 * expressions, statements, variables and maps; sema_call.c for function
 * calls). Not a public interface. */
#ifndef SONDE_SEMA_INT_H
#define SONDE_SEMA_INT_H

#include "../base/strmap.h"
#include "../base/vec.h"
#include "sema.h"

struct sema_map {
	const char *name;
	struct pos pos;             /* first use, for messages */
	struct pos key_pos;         /* where the key shape was fixed */
	bool keys_known;
	uint32_t nkeys;
	const struct type *key;     /* tuple of key types (nkeys >= 1) */
	const struct type *value;   /* NULL until some assignment types it */
	bool assigned_untyped;      /* assigned a value of no type yet */
	int32_t id;                 /* index in prog->maps, -1 until final */
};

struct sema_var {
	const char *name;
	const struct type *type;    /* unified over all assignments */
	bool assigned;              /* in this pass, so far in source order */
};

struct sema_block {
	VEC(struct sema_var) vars;
	struct strmap var_index;    /* name -> index in vars */
};

/* A value over SEMA_VALUE_MAX, reported at the end of the final pass. */
struct sema_big_value {
	struct pos pos;
	const char *what;           /* "this tuple", "the key of @m" */
	uint32_t size;
};

struct sema {
	bool flex_ok;         /* a flexible array member (`int y[0]`) has a
			       * type: it is being indexed (sema_index) */
	struct program *prog;
	const struct sema_opts *opts;
	struct diags *d;
	struct arena *a;
	VEC(struct sema_map) maps;
	struct strmap map_index;    /* name -> index in maps */
	struct sema_block *blocks;  /* one per probe block */
	bool final;                 /* report errors, set ids, add events */
	bool changed;               /* some map or variable type widened */
	/* the probe block being checked */
	struct node *probe;
	uint32_t block;
	int loops;                  /* enclosing while loops */
	int unrolls;                /* enclosing unroll loops */
	uint64_t unrolled;          /* nodes the block's unrolls come to */
	/* sizes (sema_limits.c), collected in the final pass */
	VEC(struct node *) long_strs;          /* literals over strlen - 1 */
	VEC(struct node *) compile_time_strs;  /* of those, the harmless */
	VEC(struct sema_big_value) big_values;
};

/* The nodes a probe's unroll loops may come to, once unrolled: each
 * becomes at least one BPF instruction, and the kernel loads at most a
 * million. Past it the compiler would only spend seconds and gigabytes
 * building a program nobody can load (unroll(100) nested 3 deep). */
#define SEMA_UNROLLED_MAX 1000000

/* An error, reported in the final pass only (earlier passes only infer
 * types, and may see maps whose types are not known yet). */
void sema_error(struct sema *s, struct pos pos, const char *tag,
		const char *fmt, ...) __attribute__((format(printf, 4, 5)));
const char *sema_tname(struct sema *s, const struct type *t);
/* A warning, in the final pass only (sema_call.c). */
void sema_warning(struct sema *s, struct pos pos, const char *tag,
		  const char *fmt, ...) __attribute__((format(printf, 4, 5)));

const struct type *sema_expr(struct sema *s, struct node *n);
/* args->name, where a byte array (__u8 addr[16]) is also accepted and
 * typed as a string of its bytes: what ntop() takes. */
const struct type *sema_field_bytes(struct sema *s, struct node *n);
/* Map reference: checks keys, returns the entry (value may be NULL). */
struct sema_map *sema_map_ref(struct sema *s, struct node *n);
/* A map read as a value, or used by delete/print: must be assigned
 * somewhere. Returns the entry or NULL (error reported). */
struct sema_map *sema_map_defined(struct sema *s, struct node *n);
struct sema_map *sema_map_find(struct sema *s, const char *name);
/* A whole map (print/clear/zero): no keys are checked. */
struct sema_map *sema_map_whole(struct sema *s, struct node *n);
/* Record the value type assigned to a map; TYPE_MISMATCH if it clashes.
 * _assign references the map (its keys) first; _set takes the entry from
 * a sema_map_ref just made, so keys are not checked twice. */
void sema_map_assign(struct sema *s, struct node *map, const struct type *t,
		     struct pos at);
void sema_map_set(struct sema *s, struct sema_map *m, struct node *map,
		  const struct type *t, struct pos at);
/* $N / $#; as_string inside str(). The final pass rewrites the node into
 * the N_INT or N_STR it stands for. */
/* An integer known at compile time in any pass: a literal or a positional
 * parameter holding a number. */
bool sema_const_int(struct sema *s, const struct node *n, int64_t *v);
/* The text of positional parameter $N ("" when not given). */
const char *sema_positional_text(struct sema *s, const struct node *n);
const struct type *sema_positional(struct sema *s, struct node *n,
				   bool as_string);

/* Limits (sema_limits.c). A string literal longer than a string value
 * may be: noted when typed, reported at the end unless the call taking
 * it uses it at compile time only and says so. */
void sema_note_str(struct sema *s, struct node *n);
void sema_compile_time_str(struct sema *s, struct node *n);
/* A value the program builds (tuple, event record) bigger than
 * SEMA_VALUE_MAX: WHAT is static or in the arena. */
void sema_note_value_size(struct sema *s, struct pos pos, const char *what,
			  const struct type *t);
/* Whether a field of tuple T is itself over SEMA_VALUE_MAX. */
bool sema_has_big_field(const struct type *t);
/* After the final pass: report what was noted, and map keys too big. */
void sema_check_limits(struct sema *s);

/* Values that can live in a variable, a map or a record. */
bool sema_storable(const struct type *t);
/* The type a slot keeps when another value is stored, or NULL. */
const struct type *sema_merge(struct sema *s, const struct type *old,
			      const struct type *t);
/* A map read as a value: count(), sum(), min() and max() read as
 * integers (their values on every CPU merged); other aggregations are
 * AGG_READ. */
const struct type *sema_map_read(struct sema *s, struct node *n);
/* Add the user maps to prog->maps, sorted by name; set their ids. */
void sema_add_maps(struct sema *s);

/* sema_call.c: a call, through its function's record (funcs/func.h) */
const struct type *sema_call(struct sema *s, struct node *n);
/* `@m = agg(...)`: the aggregation's map value type, or NULL. */
const struct type *sema_agg(struct sema *s, struct node *call);
bool sema_is_agg_call(const struct node *n);
/* What the records' checks share. Argument i of a call: a string literal
 * (the text, or NULL with ARG_TYPE); an integer literal ($N counts);
 * an integer or a string expression (its type, or NULL). `what` names
 * the argument in the message ("the length"). */
const char *sema_lit_str(struct sema *s, struct node *n, uint32_t i,
			 const char *what);
bool sema_lit_int(struct sema *s, struct node *n, uint32_t i,
		  const char *what, int64_t *v);
const struct type *sema_int_arg(struct sema *s, struct node *n, uint32_t i,
				const char *what);
const struct type *sema_str_arg(struct sema *s, struct node *n, uint32_t i,
				const char *what);
/* Type the arguments from `from` on, for their own errors only. */
void sema_eval_args(struct sema *s, struct node *n, uint32_t from);
/* Check printf-style `fmt` against the arguments from index `first`:
 * the tuple of their types (the event record), or NULL (*ok false). */
const struct type *sema_check_format(struct sema *s, struct node *n,
				     const char *fmt, uint32_t first, bool *ok);
/* The map argument 0 of print/clear/zero/delete: with `keys` an element
 * (@m[k]), else the whole map. NULL after an error. */
struct sema_map *sema_map_arg(struct sema *s, struct node *n, bool keys);
/* Add the call's event (final pass only) and set u.call.event_id. */
/* A warning bpftrace 0.26 gives at run time (a zero divisor, an index
 * out of bounds): a warnf() of TEXT at POS, made once into *slot and
 * checked as any call; the code generator runs it where it applies. */
void sema_runtime_warning(struct sema *s, struct node **slot, struct pos pos,
			  const char *text);
void sema_add_event(struct sema *s, struct node *n,
		    const struct event_spec *e);
/* The canonical provider name of a probe ("tracepoint", "BEGIN"). */
const char *sema_probe_kind(struct arena *a, const struct probe *p);
/* Probe capabilities (enum probe_cap, program.h) of the current block:
 * the first probe lacking one of `caps`, or NULL; whether all have them;
 * and the check with its error ("WHAT can only be used in kprobe and
 * uprobe probes (tracepoint used here)", tag BAD_BUILTIN). */
const struct probe *sema_block_lacks(struct sema *s, uint32_t caps);
bool sema_block_has(struct sema *s, uint32_t caps);
bool sema_require(struct sema *s, struct pos pos, uint32_t caps,
		  const char *what);
/* The type a record field (args->f, fexit's retval) loads as; with
 * `bytes`, an array of bytes loads as a string of its size. */
/* sema_args.c: args.name / args->name (a field of every probe's
 * context record; `bytes`: a byte array loads as its bytes), `args` as
 * a value (the node becomes a record: an N_TUPLE with names), and
 * rec.name of a record (the node becomes an N_TUPLE_INDEX). */
const struct type *sema_field(struct sema *s, struct node *n, bool bytes);
const struct type *sema_args_value(struct sema *s, struct node *n);
/* (a, b) and records (name=a, ...): sema.c */
const struct type *sema_tuple(struct sema *s, struct node *n);
const struct type *sema_record_field_type(struct sema *s,
					  const struct record_field *f,
					  bool bytes);

/* sema_ctype.c: C types (see there) */
enum addr_space sema_default_space(struct sema *s);
const struct type *sema_curtask(struct sema *s);
const struct ctype *sema_type_name(struct sema *s, const char *name,
				   const char **why);
bool sema_sizeof_type(struct sema *s, struct node *a, uint64_t *size);
const struct type *sema_cast_ctype(struct sema *s, struct node *n,
				   const struct type *from);
bool sema_is_place(const struct node *n);
const struct type *sema_member(struct sema *s, struct node *n,
			       const struct type *bt);
const struct type *sema_index(struct sema *s, struct node *n);
const struct type *sema_deref(struct sema *s, struct node *n,
			      const struct type *t);
const struct type *sema_ptr_arith(struct sema *s, struct node *n,
				  const struct type *l, const struct type *r);
uint32_t sema_ptr_scale(const struct type *t);
const struct type *sema_ident(struct sema *s, struct node *n);
/* uptr(p)/kptr(p): p's type, pointing into that address space. */
const struct type *sema_addr_space(struct sema *s, const struct type *t,
				   enum addr_space space);
const struct ctype *sema_record_field_ctype(struct sema *s,
					    const struct record_field *f);
enum addr_space sema_record_space(struct sema *s,
				  const struct record_field *f);

static inline bool is_int(const struct type *t)
{
	return t && t->kind == TYPE_INT;
}

static inline bool is_str(const struct type *t)
{
	return t && t->kind == TYPE_STR;
}

#endif
