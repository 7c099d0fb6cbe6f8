/* tests/diff/include/typedefs.h - typedefs for cdefs_typedef_cast.bt:
 * bpftrace 0.17 names an anonymous struct by its typedef. */
typedef struct { int id; unsigned char name[8]; long val; } req_view_t;
typedef struct { short a, b; } pair_view_t;
struct req_bytes { int id; signed char name[8]; long val; pair_view_t pair; };
