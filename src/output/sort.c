/* sort.c - libstdc++'s std::sort and std::stable_sort, so that map
 * entries with equal values print in the order bpftrace prints them.
 *
 * bpftrace 0.17 sorts histogram and stats maps with std::sort over input
 * that is itself deterministic (keys in byte order), and std::sort is not
 * stable once there are more than 16 elements: ties come out in whatever
 * order introsort leaves them. Reproducing that order means reproducing
 * the algorithm, so this is a transcription of GCC 12's bits/stl_algo.h
 * and bits/stl_heap.h (__introsort_loop, __unguarded_partition_pivot,
 * __move_median_to_first, __final_insertion_sort, the heap fallback),
 * working on elements of any size through memcpy. */
#include "output_int.h"

#include <stdlib.h>
#include <string.h>

struct srt {
	char *base;
	size_t size;
	bool (*less)(const void *, const void *, void *);
	void *ctx;
	char *tmp;          /* one element: the moved-out "value" */
};

#define AT(s, i) ((s)->base + (size_t)(i) * (s)->size)

static bool lt(struct srt *s, size_t a, size_t b)
{
	return s->less(AT(s, a), AT(s, b), s->ctx);
}

static bool lt_tmp_elem(struct srt *s, size_t b)   /* comp(val, *b) */
{
	return s->less(s->tmp, AT(s, b), s->ctx);
}

static bool lt_elem_tmp(struct srt *s, size_t a)   /* comp(*a, val) */
{
	return s->less(AT(s, a), s->tmp, s->ctx);
}

static void mv(struct srt *s, size_t dst, size_t src)
{
	if (dst != src)
		memcpy(AT(s, dst), AT(s, src), s->size);
}

static void swap(struct srt *s, size_t a, size_t b)
{
	if (a == b)
		return;
	char *x = AT(s, a), *y = AT(s, b);
	for (size_t i = 0; i < s->size; i++) {
		char t = x[i];
		x[i] = y[i];
		y[i] = t;
	}
}

static void to_tmp(struct srt *s, size_t i)
{
	memcpy(s->tmp, AT(s, i), s->size);
}

static void from_tmp(struct srt *s, size_t i)
{
	memcpy(AT(s, i), s->tmp, s->size);
}

/* ---- heap (the depth-limit fallback) -------------------------------- */

static void push_heap(struct srt *s, size_t first, ptrdiff_t hole,
		      ptrdiff_t top)
{
	ptrdiff_t parent = (hole - 1) / 2;
	while (hole > top && lt_elem_tmp(s, first + (size_t)parent)) {
		mv(s, first + (size_t)hole, first + (size_t)parent);
		hole = parent;
		parent = (hole - 1) / 2;
	}
	from_tmp(s, first + (size_t)hole);
}

/* The value to sift in is in tmp. */
static void adjust_heap(struct srt *s, size_t first, ptrdiff_t hole,
			ptrdiff_t len)
{
	const ptrdiff_t top = hole;
	ptrdiff_t child = hole;
	while (child < (len - 1) / 2) {
		child = 2 * (child + 1);
		if (lt(s, first + (size_t)child, first + (size_t)(child - 1)))
			child--;
		mv(s, first + (size_t)hole, first + (size_t)child);
		hole = child;
	}
	if ((len & 1) == 0 && child == (len - 2) / 2) {
		child = 2 * (child + 1);
		mv(s, first + (size_t)hole, first + (size_t)(child - 1));
		hole = child - 1;
	}
	push_heap(s, first, hole, top);
}

static void make_heap(struct srt *s, size_t first, size_t last)
{
	ptrdiff_t len = (ptrdiff_t)(last - first);
	if (len < 2)
		return;
	ptrdiff_t parent = (len - 2) / 2;
	for (;;) {
		to_tmp(s, first + (size_t)parent);
		adjust_heap(s, first, parent, len);
		if (parent == 0)
			return;
		parent--;
	}
}

static void pop_heap(struct srt *s, size_t first, size_t last,
		     size_t result)
{
	to_tmp(s, result);
	mv(s, result, first);
	adjust_heap(s, first, 0, (ptrdiff_t)(last - first));
}

/* std::__partial_sort(first, last, last): heap select, then sort_heap. */
static void heap_sort(struct srt *s, size_t first, size_t last)
{
	make_heap(s, first, last);
	while (last - first > 1) {
		last--;
		pop_heap(s, first, last, last);
	}
}

/* ---- introsort ------------------------------------------------------ */

enum { THRESHOLD = 16 };

static void move_median_to_first(struct srt *s, size_t result, size_t a,
				 size_t b, size_t c)
{
	if (lt(s, a, b)) {
		if (lt(s, b, c))
			swap(s, result, b);
		else if (lt(s, a, c))
			swap(s, result, c);
		else
			swap(s, result, a);
	} else if (lt(s, a, c)) {
		swap(s, result, a);
	} else if (lt(s, b, c)) {
		swap(s, result, c);
	} else {
		swap(s, result, b);
	}
}

static size_t unguarded_partition(struct srt *s, size_t first, size_t last,
				  size_t pivot)
{
	for (;;) {
		while (lt(s, first, pivot))
			first++;
		last--;
		while (lt(s, pivot, last))
			last--;
		if (!(first < last))
			return first;
		swap(s, first, last);
		first++;
	}
}

static void introsort_loop(struct srt *s, size_t first, size_t last,
			   unsigned depth)
{
	while (last - first > THRESHOLD) {
		if (depth == 0) {
			heap_sort(s, first, last);
			return;
		}
		depth--;
		size_t mid = first + (last - first) / 2;
		move_median_to_first(s, first, first + 1, mid, last - 1);
		size_t cut = unguarded_partition(s, first + 1, last, first);
		introsort_loop(s, cut, last, depth);
		last = cut;
	}
}

static void unguarded_linear_insert(struct srt *s, size_t last)
{
	to_tmp(s, last);
	size_t next = last - 1;
	while (lt_tmp_elem(s, next)) {
		mv(s, last, next);
		last = next;
		next--;
	}
	from_tmp(s, last);
}

static void insertion_sort(struct srt *s, size_t first, size_t last)
{
	if (first == last)
		return;
	for (size_t i = first + 1; i != last; i++) {
		if (lt(s, i, first)) {
			to_tmp(s, i);
			memmove(AT(s, first + 1), AT(s, first),
				(i - first) * s->size);
			from_tmp(s, first);
		} else {
			unguarded_linear_insert(s, i);
		}
	}
}

static void final_insertion_sort(struct srt *s, size_t first, size_t last)
{
	if (last - first > THRESHOLD) {
		insertion_sort(s, first, first + THRESHOLD);
		for (size_t i = first + THRESHOLD; i != last; i++)
			unguarded_linear_insert(s, i);
	} else {
		insertion_sort(s, first, last);
	}
}

static unsigned lg(size_t n)
{
	unsigned r = 0;
	while (n >>= 1)
		r++;
	return r;
}

void cxx_sort(void *base, size_t n, size_t size,
	      bool (*less)(const void *a, const void *b, void *ctx),
	      void *ctx)
{
	if (n < 2)
		return;
	struct srt s = { .base = base, .size = size, .less = less,
			 .ctx = ctx, .tmp = malloc(size) };
	if (!s.tmp) {
		/* Still sorted, only the order of ties may differ. */
		cxx_stable_sort(base, n, size, less, ctx);
		return;
	}
	introsort_loop(&s, 0, n, lg(n) * 2);
	final_insertion_sort(&s, 0, n);
	free(s.tmp);
}

/* ---- stable sort ---------------------------------------------------- */

static void merge_sort(struct srt *s, char *buf, size_t lo, size_t hi)
{
	if (hi - lo < 2)
		return;
	size_t mid = lo + (hi - lo) / 2;
	merge_sort(s, buf, lo, mid);
	merge_sort(s, buf, mid, hi);
	size_t i = lo, j = mid, k = 0;
	while (i < mid && j < hi) {
		/* Take from the right only when strictly smaller: stable. */
		if (lt(s, j, i))
			memcpy(buf + k++ * s->size, AT(s, j++), s->size);
		else
			memcpy(buf + k++ * s->size, AT(s, i++), s->size);
	}
	while (i < mid)
		memcpy(buf + k++ * s->size, AT(s, i++), s->size);
	while (j < hi)
		memcpy(buf + k++ * s->size, AT(s, j++), s->size);
	memcpy(AT(s, lo), buf, k * s->size);
}

void cxx_stable_sort(void *base, size_t n, size_t size,
		     bool (*less)(const void *a, const void *b, void *ctx),
		     void *ctx)
{
	if (n < 2)
		return;
	struct srt s = { .base = base, .size = size, .less = less,
			 .ctx = ctx, .tmp = malloc(size) };
	char *buf = malloc(n * size);
	if (!buf || !s.tmp) {
		/* Insertion sort needs no memory beyond one element, and
		 * it is stable; without even that, leave the order be. */
		free(buf);
		if (s.tmp) {
			for (size_t i = 1; i < n; i++) {
				size_t j = i;
				to_tmp(&s, i);
				while (j > 0 && s.less(s.tmp, AT(&s, j - 1), ctx)) {
					mv(&s, j, j - 1);
					j--;
				}
				from_tmp(&s, j);
			}
			free(s.tmp);
		}
		return;
	}
	merge_sort(&s, buf, 0, n);
	free(buf);
	free(s.tmp);
}
