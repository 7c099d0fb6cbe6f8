/* strmap.h - a map from strings to small integers (indices into a
 * vector the caller owns), for the compiler's tables of names: maps and
 * variables are looked up once per use, and a linear search made
 * compiling a script of 20,000 maps quadratic.
 *
 * Open addressing with linear probing, no deletion. The keys are not
 * copied: each must live as long as the map (arena strings). */
#ifndef SONDE_STRMAP_H
#define SONDE_STRMAP_H

#include <stddef.h>
#include <stdint.h>

struct strmap_slot {
	const char *key;            /* NULL: empty */
	uint32_t hash;
	uint32_t value;
};

struct strmap {
	struct strmap_slot *slots;
	size_t cap, n;              /* cap: 0 or a power of two */
};

/* The value KEY maps to, or -1. */
int64_t strmap_get(const struct strmap *m, const char *key);
/* Map KEY to VALUE (replacing what it mapped to): 0 or -ENOMEM. */
int strmap_put(struct strmap *m, const char *key, uint32_t value);
/* Release the slots; the map is empty and usable again. */
void strmap_free(struct strmap *m);

#endif
