/* types.h - the types of script values and how they are laid out in
 * memory. One layout serves BPF stack slots, map keys and values, and
 * event records, so codegen and output can never disagree about it.
 *
 * Layout rules (the contract between codegen and output):
 *  - every integer occupies 8 bytes (u64/s64, little-endian), whatever its
 *    declared width; `bits` and `is_signed` say how to cast and print it;
 *  - a string occupies `size` bytes, NUL-padded;
 *  - a tuple lays out its fields in order, each at an 8-byte aligned
 *    offset, total size rounded up to 8;
 *  - a C struct, union or array value (STRUCT, ARRAY: read from kernel or
 *    user memory, or a script's own declaration) keeps its exact C layout
 *    (`size` = the C type's size); scalars loaded out of one widen to the
 *    8-byte integer layout above, as bpftrace does;
 *  - aggregation value layouts are described in program.h.
 *
 * C types (struct ctype, below) describe memory sonde did not lay out:
 * kernel structs from BTF, a script's struct definitions and headers
 * (gcc's layout), a traced binary's DWARF. A value type refers to the C
 * type it came from (`ctype`), so `->`, `.`, `[]`, printing and sizeof
 * all work from the one description. */
#ifndef SONDE_TYPES_H
#define SONDE_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"

#define TYPE_KINDS(X) \
	X(NONE, "none")         /* no value: statement-only calls */ \
	X(INT, "int")           /* integer, also booleans and addresses */ \
	X(STR, "string")        /* fixed-size string */ \
	X(TUPLE, "tuple")       \
	X(BUF, "buffer")        /* buf(): u32 length, then bytes */ \
	X(KSTACK, "kstack")     /* u64 stack id */ \
	X(USTACK, "ustack")     /* u64 stack id, u64 pid */ \
	X(KSYM, "ksym")         /* u64 address, symbolized when printed */ \
	X(USYM, "usym")         /* u64 address, u64 pid */ \
	X(INET, "inet")         /* ntop(): u64 family, 16 bytes address */ \
	X(RECORD, "record")     /* probe context struct, e.g. tracepoint args */ \
	X(USERNAME, "username") /* u64 uid, printed as the user's name */ \
	X(STRUCT, "struct")     /* C struct/union value, C layout: ctype */ \
	X(ARRAY, "array")       /* C array value (not char[]), C layout: ctype */ \
	/* values user space turns into text when it prints them: */ \
	X(TIMESTAMP, "timestamp") /* strftime(): u64 format (index in \
				   * prog->strings), u64 nsecs since boot */ \
	X(ERRNO, "errno")       /* strerror(): u64 error number */ \
	X(CGROUP_PATH, "cgroup_path") /* u64 cgroup id, u64 filter (index \
				   * in prog->strings + 1; 0: none) */ \
	X(MACADDR, "macaddr")   /* 6 bytes */ \
	X(COUNT, "count")       /* aggregation types: map values only */ \
	X(SUM, "sum")           \
	X(MIN, "min")           \
	X(MAX, "max")           \
	X(AVG, "avg")           \
	X(STATS, "stats")       \
	X(STDDEV, "stddev")     /* D's: count, sum, sum of squares (128 \
				 * bits, low word first) */ \
	X(HIST, "hist")         \
	X(LHIST, "lhist")       \
	X(TSERIES, "tseries")   /* bpftrace 0.25's time series: per CPU \
				 * and interval slot (the key's last u64, \
				 * epoch % ts_intervals): u64 epoch + 1 \
				 * (0: unset), s64 value, u64 count, u64 \
				 * time of the last write */

enum tseries_agg { TS_LAST, TS_AVG, TS_MAX, TS_MIN, TS_SUM };
#define TSERIES_SLOT 32       /* bytes of one interval's per-CPU value */
#define TSERIES_MAX_INTERVALS 1000

enum type_kind {
#define X(k, s) TYPE_##k,
	TYPE_KINDS(X)
#undef X
};

struct ctype;

/* Where a pointer points: kernel or user memory. bpftrace 0.17 infers it
 * from the probe type where a type does not say (uprobes: user; kprobes,
 * tracepoints, BEGIN...: kernel) and uptr()/kptr() override it. */
enum addr_space { AS_UNKNOWN, AS_KERNEL, AS_USER };

/* A field of a probe's context record (tracepoint args): where the kernel
 * puts it, not how sonde stores it once loaded. */
struct record_field {
	const char *name;
	uint32_t offset, size;      /* in the context, bytes */
	bool is_signed;
	bool is_ptr;                /* pointer: str() may read through it */
	bool is_char_array;         /* char name[N]: loads as a string */
	bool is_data_loc;           /* __data_loc char[]: u32 (len<<16|off) */
	uint32_t array_len;         /* elements, for arrays; 0 otherwise */
	const char *decl;           /* as declared: "char prev_comm[16]" (-lv) */
	/* The field's C type when the provider knows it (fentry/fexit from
	 * BTF, uprobe args from DWARF), else NULL: sema then resolves the
	 * type part of `decl` (tracepoint formats) through the program's
	 * C types. Pointers typed this way can be followed with `->`. */
	const struct ctype *ctype;
	enum addr_space space;      /* where a pointer field points, if known */
};

struct type {
	enum type_kind kind;
	uint32_t size;              /* storage bytes, see layout rules */
	uint8_t bits;               /* INT: declared width 8/16/32/64 */
	bool is_signed;             /* INT; SUM/MIN/MAX/AVG/STATS: of inputs */
	bool is_ptr;                /* INT holding an address (prints with %p) */
	bool is_bool;               /* INT 0 or 1, printed true/false
				     * (bpftrace 0.24's bool: type_bool) */
	uint32_t nfields;           /* TUPLE, RECORD */
	const struct type **fields; /* TUPLE: field types */
	uint32_t *offsets;          /* TUPLE: field offsets */
	/* TUPLE: the fields' names when it is a record (bpftrace 0.26's
	 * `(a=1, b="x")`, and `args` as a value), printed { .a = 1, ... };
	 * NULL for a plain tuple. Same layout either way. */
	const char *const *names;
	const struct record_field *rfields; /* RECORD */
	int64_t lhist_min, lhist_max, lhist_step; /* LHIST */
	/* LHIST of D's llquantize(x, factor, low, high, nsteps) when
	 * llq_factor is set: buckets 1..lhist_max start at the bounds
	 * type_llq_bounds() gives, 0 is below factor^low, the last at or
	 * above factor^(high + 1) */
	int64_t llq_factor, llq_low, llq_high, llq_steps;
	/* TSERIES: the interval (ns), how many are kept, how values of
	 * one interval combine, and the map whose value stands for the
	 * clock (BPFTRACE_DUMMY_TS_MAP, bpftrace's test hook; its time is
	 * then wall-clock ns, not the monotonic clock's) or NULL */
	int64_t ts_interval;
	uint32_t ts_intervals;
	uint8_t ts_agg;             /* enum tseries_agg */
	const char *ts_clock_map;
	uint32_t stack_limit;       /* KSTACK/USTACK: frames kept */
	uint8_t stack_mode;         /* KSTACK/USTACK: 0 bpftrace, 1 perf, 2 raw */
	bool sym_module;            /* KSYM/USYM: D's mod()/umod(): printed
				     * as the address's module alone */
	/* The C type a value came from: STRUCT and ARRAY always (their
	 * layout); INT when read from C memory (an enum, a bool, a pointer:
	 * then is_ptr is set and ctype is the CT_PTR, whose pointee `->` and
	 * `*` follow), else NULL. */
	const struct ctype *ctype;
	enum addr_space space;      /* INT pointers: where they point */
};

/* Constructors: results are allocated in `a` (or static) and immutable. */
const struct type *type_none(void);
const struct type *type_int(struct arena *a, unsigned bits, bool is_signed);
const struct type *type_u64(void);
const struct type *type_s64(void);
const struct type *type_bool(void);
const struct type *type_str(struct arena *a, uint32_t size);
/* The lower bounds of llquantize's buckets between factor^low and
 * factor^(high + 1) (that one last, as the overflow bucket's), as
 * DTrace's log/linear layout has them: in each order of magnitude m,
 * min(factor^(m+1), nsteps) steps of factor^(m+1) / that width, less the
 * ones below factor^m. Returns how many (at most max, -1 beyond it or
 * on overflow); out may be NULL to count. */
#define LLQ_MAX_BOUNDS 1000   /* as lhist's buckets (funcs/maps.c) */
int type_llq_bounds(int64_t factor, int64_t low, int64_t high, int64_t nsteps,
		    int64_t *out, int max);
const struct type *type_tuple(struct arena *a, uint32_t n,
			      const struct type *const *fields);
/* A record: a tuple whose fields have names (copied into a). */
const struct type *type_record(struct arena *a, uint32_t n,
			       const struct type *const *fields,
			       const char *const *names);
const struct type *type_simple(struct arena *a, enum type_kind kind,
			       uint32_t size);

bool type_is_agg(const struct type *t);
/* t is an integer (a string); false for NULL. */
static inline bool type_is_int(const struct type *t)
{
	return t && t->kind == TYPE_INT;
}
static inline bool type_is_str(const struct type *t)
{
	return t && t->kind == TYPE_STR;
}
/* The bytes a map value of type t takes (layouts in program.h: an
 * aggregation's per-CPU slot, else the value itself). */
uint32_t type_map_value_size(const struct type *t);
/* Whether t is of kind k or is a tuple with such a field (nested too). */
bool type_has_kind(const struct type *t, enum type_kind k);
bool type_equal(const struct type *a, const struct type *b);
/* Both plain tuples, or records with the same names in the same order. */
bool type_same_names(const struct type *a, const struct type *b);
/* The same, the names in any order (a record assigned in another order
 * is stored in the first one's, as bpftrace 0.26 does). */
bool type_names_match(const struct type *a, const struct type *b);
/* The index of record t's field of that name, or -1. */
int type_field_index(const struct type *t, const char *name);
/* A type both a and b can be stored as (strings widen to the larger size,
 * integers to the wider/signed one), or NULL if they are incompatible. */
const struct type *type_unify(struct arena *a, const struct type *x,
			      const struct type *y);
/* Human name for messages: "int64", "uint32", "string[64]", "(int64, string[64])". */
const char *type_name(struct arena *a, const struct type *t);
const char *type_kind_name(enum type_kind k);

/* ==================================================================== */
/* C types                                                               */
/*
 * The contract with the declaration parser (cdecl), the BTF and DWARF
 * readers, sema, codegen and output:
 *  - Every C type is a struct ctype allocated in the program's arena
 *    (ctypes_arena()) and owned by it; build them with the ctype_*
 *    constructors. A type may be changed only while it is being built
 *    (a struct's fields added, an incomplete struct completed); once a
 *    script expression uses it, it is immutable.
 *  - No typedef kind: a typedef name maps to the type it names
 *    (ctypes_add_typedef); qualifiers (const, volatile) are dropped, as
 *    nothing a tracer does depends on them, except that `is_const` is
 *    kept on the type for listings.
 *  - Sizes, alignments and offsets are final: the producer computes
 *    them (gcc's rules for declarations, BTF/DWARF as recorded). A
 *    struct field's bit_offset counts from the start of the struct;
 *    bit_size is non-zero only for bitfields, and then bit_offset is
 *    the field's first bit (little-endian: bit 0 is the low bit of the
 *    byte at offset 0). `offset` is bit_offset / 8 for every field.
 *  - An anonymous struct/union member has name NULL; lookups go through
 *    it (ctype_field_find), and printing flattens it, as bpftrace does.
 *  - A pointer's pointee may be left for later (elem NULL, `ref` set by
 *    a resolver): ctypes_pointee() asks the resolver that made it, once.
 *    Kernel structs point at hundreds of others; only what a script
 *    follows is ever read.
 *  - Arrays: elem and nelems (0 for a flexible array member); a
 *    multi-dimensional array is an array of arrays.
 *  - Lookups by name go through the registry (struct ctypes, one per
 *    program): what the script and its headers declared first, then
 *    each resolver in the order they were added (the kernel's BTF), as
 *    bpftrace 0.17 does on a BTF kernel. Tags (struct/union/enum) and
 *    ordinary names (typedefs, enum constants) are separate namespaces,
 *    as in C.
 */

enum ctype_kind {
	CT_VOID,
	CT_INT,        /* char, short, int, long, long long, _Bool (is_bool) */
	CT_ENUM,       /* size and signedness of its underlying integer */
	CT_PTR,
	CT_ARRAY,
	CT_STRUCT,
	CT_UNION,
	CT_FUNC,       /* only as a pointee: function pointers */
	CT_FLOAT,      /* float, double: sized, not usable as numbers */
};

struct ctype_field {
	const char *name;          /* NULL: anonymous struct/union member */
	const struct ctype *type;
	uint32_t offset;           /* bytes from the start of the struct */
	uint32_t bit_offset;       /* bits from the start of the struct */
	uint8_t bit_size;          /* bitfield width, 0 if not a bitfield */
};

struct ctype_enumerator {
	const char *name;
	int64_t value;
};

struct ctype {
	enum ctype_kind kind;
	const char *name;          /* tag ("task_struct"), base type name
				    * ("unsigned int"), NULL if anonymous */
	uint32_t size, align;      /* bytes */
	bool is_signed;            /* INT, ENUM */
	bool is_bool;              /* INT: _Bool / bool */
	bool is_char;              /* INT: plain `char` (char[N] is a string,
				    * as in bpftrace; unsigned char[N] and
				    * u8[N] are arrays of numbers) */
	bool is_const;
	bool complete;             /* STRUCT/UNION/ENUM: body known */
	enum addr_space space;     /* PTR: __user or kernel if declared so */
	const struct ctype *elem;  /* PTR: pointee (NULL: see ref); ARRAY */
	uint32_t nelems;           /* ARRAY */
	uint32_t nfields;          /* STRUCT, UNION */
	struct ctype_field *fields;
	uint32_t nvalues;          /* ENUM */
	struct ctype_enumerator *values;
	/* PTR with elem NULL: the resolver's handle of the pointee (a BTF
	 * id, ...) and the resolver that knows it. */
	uint32_t ref;
	const struct ctype_resolver *resolver;
	uint32_t cap_;             /* fields/values capacity (builders) */
};

struct ctypes;

/* A source of named types a script uses but does not declare. Each hook
 * may be NULL; each returns types allocated in the registry's arena. */
struct ctype_resolver {
	void *ctx;
	const char *what;          /* "the kernel's BTF", for messages */
	/* A struct (CT_STRUCT), union (CT_UNION) or enum (CT_ENUM) by tag. */
	const struct ctype *(*find_tag)(void *ctx, struct ctypes *reg,
					enum ctype_kind kind, const char *name);
	/* A typedef name. */
	const struct ctype *(*find_typedef)(void *ctx, struct ctypes *reg,
					    const char *name);
	/* An enum constant: 0 and *value, or -ENOENT. */
	int (*find_const)(void *ctx, const char *name, int64_t *value);
	/* The pointee of a pointer this resolver made with `ref`. */
	const struct ctype *(*pointee)(void *ctx, struct ctypes *reg,
				       const struct ctype *ptr);
};

/* Constructors (allocated in a; the result is the builder's to fill). */
struct ctype *ctype_new(struct arena *a, enum ctype_kind kind,
			const char *name);
/* An integer of `size` bytes ("int", "unsigned long" ...: name as C
 * spells it, or NULL for the stdint-style name). */
const struct ctype *ctype_int(struct arena *a, uint32_t size, bool is_signed,
			      const char *name);
const struct ctype *ctype_void(void);
const struct ctype *ctype_ptr(struct arena *a, const struct ctype *pointee);
const struct ctype *ctype_array(struct arena *a, const struct ctype *elem,
				uint32_t nelems);
/* Append a field to a struct/union being built (bit_size 0: not a
 * bitfield; offset is bit_offset / 8). 0 or -ENOMEM. */
int ctype_add_field(struct arena *a, struct ctype *s, const char *name,
		    const struct ctype *type, uint32_t bit_offset,
		    uint8_t bit_size);
int ctype_add_value(struct arena *a, struct ctype *e, const char *name,
		    int64_t value);

/* Field `name` of a struct/union, looked for through anonymous members
 * too. *bit_offset gets its offset from the start of `t` (anonymous
 * members' offsets added). NULL when there is none. */
const struct ctype_field *ctype_field_find(const struct ctype *t,
					   const char *name,
					   uint32_t *bit_offset);
/* The field name closest to `name` (edit distance), for "did you mean";
 * NULL when nothing is close. */
const char *ctype_field_suggest(const struct ctype *t, const char *name);
/* As C spells it: "struct task_struct *", "unsigned int", "int[4]". */
const char *ctype_name(struct arena *a, const struct ctype *t);
/* char[N], or signed/unsigned char[N]: prints and stores as a string. */
bool ctype_is_char_array(const struct ctype *t);
bool ctype_is_aggregate(const struct ctype *t);  /* struct or union */

/* The script value type of a C object of type t (read from memory that
 * is in address space `space`): integers, enums, bools and pointers are
 * INT (pointers carry ctype and space), char arrays STR, other arrays
 * ARRAY, structs and unions STRUCT. NULL for void, functions, floats. */
const struct type *type_of_ctype(struct arena *a, const struct ctype *t,
				 enum addr_space space);

/* The registry of a program's named C types. */
struct ctypes *ctypes_new(struct arena *a);
struct arena *ctypes_arena(struct ctypes *r);
/* Declare a struct/union/enum by its tag. A second declaration of the
 * same tag returns the first (so `struct x;` then `struct x { ... }`
 * completes one type): *out gets the registered type, which the caller
 * fills if it is not complete yet. An enum's constants become visible
 * through ctypes_find_const once added with ctypes_add_const. -EINVAL
 * for a kind that has no tag; -EEXIST (and *out the existing one) when
 * the tag is taken by a different kind. */
int ctypes_declare_tag(struct ctypes *r, enum ctype_kind kind,
		       const char *name, struct ctype **out);
int ctypes_add_typedef(struct ctypes *r, const char *name,
		       const struct ctype *t);
int ctypes_add_const(struct ctypes *r, const char *name, int64_t value);
/* The same for an enumerator of enum `of`, which ctypes_const_enum then
 * names (bpftrace 0.26 prints such a constant by its name). */
int ctypes_add_enum_const(struct ctypes *r, const char *name, int64_t value,
			  const struct ctype *of);
const struct ctype *ctypes_const_enum(struct ctypes *r, const char *name);
/* Lookups: declared first, then the resolvers. find_tag returns a
 * complete type if any source has one (a declared but incomplete struct
 * is completed from the resolvers, as `struct task_struct;` in a header
 * is from BTF), else the incomplete declaration, else NULL. */
const struct ctype *ctypes_find_tag(struct ctypes *r, enum ctype_kind kind,
				    const char *name);
const struct ctype *ctypes_find_typedef(struct ctypes *r, const char *name);
int ctypes_find_const(struct ctypes *r, const char *name, int64_t *value);
/* Only what the script and headers declared (no resolver asked). */
const struct ctype *ctypes_declared_tag(struct ctypes *r, enum ctype_kind kind,
					const char *name);
const struct ctype *ctypes_declared_typedef(struct ctypes *r,
					    const char *name);
/* The pointee of a pointer, resolved lazily; an incomplete struct is
 * looked up by tag again (it may be complete by now, or in BTF). */
const struct ctype *ctypes_pointee(struct ctypes *r, const struct ctype *ptr);
/* A struct/union made complete if it can be (see find_tag), else t. */
const struct ctype *ctypes_complete(struct ctypes *r, const struct ctype *t);
/* Append a resolver to the chain (the struct must outlive r), or put
 * it before the others. */
void ctypes_add_resolver(struct ctypes *r, const struct ctype_resolver *res);
void ctypes_add_resolver_first(struct ctypes *r,
			       const struct ctype_resolver *res);

#endif
