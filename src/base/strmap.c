/* strmap.c - see strmap.h. */
#include "strmap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* FNV-1a, 32 bits: names are short, and the table is never exposed to
 * chosen collisions that would matter more than a slow compile. */
static uint32_t hash_str(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

static struct strmap_slot *find(const struct strmap *m, const char *key,
				uint32_t h)
{
	size_t mask = m->cap - 1;
	for (size_t i = h & mask;; i = (i + 1) & mask) {
		struct strmap_slot *s = &m->slots[i];
		if (!s->key || (s->hash == h && strcmp(s->key, key) == 0))
			return s;
	}
}

int64_t strmap_get(const struct strmap *m, const char *key)
{
	if (!m->cap)
		return -1;
	const struct strmap_slot *s = find(m, key, hash_str(key));
	return s->key ? (int64_t)s->value : -1;
}

static int grow(struct strmap *m)
{
	size_t cap = m->cap ? m->cap * 2 : 64;
	struct strmap_slot *old = m->slots;
	size_t oldcap = m->cap;
	m->slots = calloc(cap, sizeof(*m->slots));
	if (!m->slots) {
		m->slots = old;
		return -ENOMEM;
	}
	m->cap = cap;
	for (size_t i = 0; i < oldcap; i++)
		if (old[i].key)
			*find(m, old[i].key, old[i].hash) = old[i];
	free(old);
	return 0;
}

int strmap_put(struct strmap *m, const char *key, uint32_t value)
{
	/* at most half full: probes stay short */
	if ((m->n + 1) * 2 > m->cap && grow(m) < 0)
		return -ENOMEM;
	uint32_t h = hash_str(key);
	struct strmap_slot *s = find(m, key, h);
	if (!s->key) {
		s->key = key;
		s->hash = h;
		m->n++;
	}
	s->value = value;
	return 0;
}

void strmap_free(struct strmap *m)
{
	if (!m)
		return;
	free(m->slots);
	m->slots = NULL;
	m->cap = m->n = 0;
}
