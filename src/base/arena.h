/* arena.h - bump allocation owned by one compilation, freed at once. */
#ifndef SONDE_ARENA_H
#define SONDE_ARENA_H

#include <stddef.h>

struct arena_chunk;

struct arena {
	struct arena_chunk *head;
};

void arena_init(struct arena *a);
/* Zeroed, 16-byte aligned memory; aborts only if the process is out of
 * memory (a compiler that cannot allocate cannot report either). */
void *arena_alloc(struct arena *a, size_t size);
char *arena_strdup(struct arena *a, const char *s);
char *arena_strndup(struct arena *a, const char *s, size_t n);
char *arena_printf(struct arena *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void arena_free(struct arena *a);

#define arena_new(a, T) ((T *)arena_alloc((a), sizeof(T)))
#define arena_array(a, T, n) ((T *)arena_alloc((a), sizeof(T) * (size_t)(n)))

#endif
