/* vec.h - the one growable-array helper: VEC(T) with push and reserve. */
#ifndef SONDE_VEC_H
#define SONDE_VEC_H

#include <stddef.h>

/* A vector is { T *v; size_t n, cap; }. Heap-backed (realloc), owned by
 * whoever holds it; vec_free releases it. */
#define VEC(T) struct { T *v; size_t n, cap; }

/* Grow so that at least `want` elements fit (doubling from 8). Returns 0
 * or -ENOMEM (also when want elements would not fit in a size_t). */
int vec_reserve_(void **v, size_t *cap, size_t want, size_t elem);

#define vec_reserve(vec, want) \
	vec_reserve_((void **)&(vec)->v, &(vec)->cap, (want), sizeof(*(vec)->v))
/* The same for an array kept as two fields of its own, `arr` and its
 * capacity `cap` (a size_t) beside whatever counts its elements. */
#define vec_reserve_arr(arr, cap, want) \
	vec_reserve_((void **)&(arr), &(cap), (want), sizeof(*(arr)))
/* Append; evaluates to 0 or -ENOMEM. */
#define vec_push(vec, x) \
	(vec_reserve((vec), (vec)->n + 1) ? -12 : ((vec)->v[(vec)->n++] = (x), 0))
#define vec_free(vec) \
	do { free((vec)->v); (vec)->v = NULL; (vec)->n = (vec)->cap = 0; } while (0)

#endif
