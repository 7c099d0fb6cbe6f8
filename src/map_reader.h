/* map_reader.h - how output reads an engine's maps: the interface each
 * engine implements (the kernel engine over BPF maps, the process engine
 * over its shared memory), beside the engine interface (engine.h). Output
 * reads maps only through it, so it knows no engine. */
#ifndef SONDE_MAP_READER_H
#define SONDE_MAP_READER_H

#include <stdint.h>
#include <stdlib.h>

/* A copy of one map's contents. Entry i has its key at keys + i*key_size
 * and its values at values + i*nvalues*value_stride: one value per CPU
 * for per-CPU maps (nvalues = CPUs), else one. */
struct map_snapshot {
	uint32_t n;
	uint32_t key_size, value_size, value_stride, nvalues;
	uint8_t *keys;
	uint8_t *values;
};

/* Frees what the snapshot holds (not s itself). NULL is a no-op. */
static inline void map_snapshot_free(struct map_snapshot *s)
{
	if (!s)
		return;
	free(s->keys);
	free(s->values);
	s->keys = NULL;
	s->values = NULL;
	s->n = 0;
}

struct map_reader {
	void *ctx;
	int (*dump)(void *ctx, uint32_t map_id, struct map_snapshot *out);
	int (*clear)(void *ctx, uint32_t map_id);  /* delete every key */
	int (*zero)(void *ctx, uint32_t map_id);   /* keep keys, zero values */
	/* Updates of the map that failed so far (it was full); may be NULL. */
	uint64_t (*failures)(void *ctx, uint32_t map_id);
	/* The most keys the map holds; may be NULL. */
	uint32_t (*capacity)(void *ctx, uint32_t map_id);
	/* One key (optional hooks: NULL when the reader cannot). VALUE has
	 * the snapshot layout of one entry: nvalues * value_stride bytes.
	 * lookup returns -ENOENT for a missing key. */
	int (*lookup)(void *ctx, uint32_t map_id, const void *key, void *value);
	int (*update)(void *ctx, uint32_t map_id, const void *key,
		      const void *value);
	int (*remove)(void *ctx, uint32_t map_id, const void *key);
};

#endif
