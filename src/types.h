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
 *  - aggregation value layouts are described in program.h. */
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
	X(COUNT, "count")       /* aggregation types: map values only */ \
	X(SUM, "sum")           \
	X(MIN, "min")           \
	X(MAX, "max")           \
	X(AVG, "avg")           \
	X(STATS, "stats")       \
	X(HIST, "hist")         \
	X(LHIST, "lhist")

enum type_kind {
#define X(k, s) TYPE_##k,
	TYPE_KINDS(X)
#undef X
};

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
};

struct type {
	enum type_kind kind;
	uint32_t size;              /* storage bytes, see layout rules */
	uint8_t bits;               /* INT: declared width 8/16/32/64 */
	bool is_signed;             /* INT; SUM/MIN/MAX/AVG/STATS: of inputs */
	bool is_ptr;                /* INT holding an address (prints with %p) */
	uint32_t nfields;           /* TUPLE, RECORD */
	const struct type **fields; /* TUPLE: field types */
	uint32_t *offsets;          /* TUPLE: field offsets */
	const struct record_field *rfields; /* RECORD */
	int64_t lhist_min, lhist_max, lhist_step; /* LHIST */
	uint32_t stack_limit;       /* KSTACK/USTACK: frames kept */
	uint8_t stack_mode;         /* KSTACK/USTACK: 0 bpftrace, 1 perf, 2 raw */
};

/* Constructors: results are allocated in `a` (or static) and immutable. */
const struct type *type_none(void);
const struct type *type_int(struct arena *a, unsigned bits, bool is_signed);
const struct type *type_u64(void);
const struct type *type_s64(void);
const struct type *type_bool(void);
const struct type *type_str(struct arena *a, uint32_t size);
const struct type *type_tuple(struct arena *a, uint32_t n,
			      const struct type *const *fields);
const struct type *type_simple(struct arena *a, enum type_kind kind,
			       uint32_t size);

bool type_is_agg(const struct type *t);
/* The bytes a map value of type t takes (layouts in program.h: an
 * aggregation's per-CPU slot, else the value itself). */
uint32_t type_map_value_size(const struct type *t);
/* Whether t is of kind k or is a tuple with such a field (nested too). */
bool type_has_kind(const struct type *t, enum type_kind k);
bool type_equal(const struct type *a, const struct type *b);
/* A type both a and b can be stored as (strings widen to the larger size,
 * integers to the wider/signed one), or NULL if they are incompatible. */
const struct type *type_unify(struct arena *a, const struct type *x,
			      const struct type *y);
/* Human name for messages: "int64", "uint32", "string[64]", "(int64, string[64])". */
const char *type_name(struct arena *a, const struct type *t);
const char *type_kind_name(enum type_kind k);

#endif
