/* program.c - the tables of a compiled program: maps, events, strings. */
#include "program.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Tables grow by doubling inside the arena; the old copy is garbage the
 * arena frees with everything else. */
static void *grow(struct arena *a, void *old, uint32_t n, size_t elem)
{
	if (n & (n - 1))
		return old;       /* capacity is n rounded up to a power of two */
	size_t cap = n ? (size_t)n * 2 : 1;
	void *p = arena_alloc(a, cap * elem);
	if (n)
		memcpy(p, old, n * elem);
	return p;
}

int program_add_map(struct program *p, const struct map_spec *m)
{
	p->maps = grow(p->arena, p->maps, p->nmaps, sizeof(*m));
	p->maps[p->nmaps] = *m;
	return (int)p->nmaps++;
}

int program_add_event(struct program *p, const struct event_spec *e)
{
	p->events = grow(p->arena, p->events, p->nevents, sizeof(*e));
	p->events[p->nevents] = *e;
	return (int)p->nevents++;
}

int program_find_map(const struct program *p, const char *name)
{
	for (uint32_t i = 0; i < p->nmaps; i++)
		if (strcmp(p->maps[i].name, name) == 0)
			return (int)i;
	return -ENOENT;
}

int program_add_string(struct program *p, const char *s)
{
	for (uint32_t i = 0; i < p->nstrings; i++)
		if (strcmp(p->strings[i], s) == 0)
			return (int)i;
	p->strings = grow(p->arena, p->strings, p->nstrings,
			  sizeof(*p->strings));
	p->strings[p->nstrings] = arena_strdup(p->arena, s);
	return (int)p->nstrings++;
}

int program_add_skb_output(struct program *p, const char *path,
			   uint64_t offset)
{
	for (uint32_t i = 0; i < p->nskb_outputs; i++)
		if (strcmp(p->skb_outputs[i].path, path) == 0 &&
		    p->skb_outputs[i].offset == offset)
			return (int)i;
	if (p->nskb_outputs >= SONDE_SKB_OUTPUTS_MAX)
		return -E2BIG;
	p->skb_outputs = grow(p->arena, p->skb_outputs, p->nskb_outputs,
			      sizeof(*p->skb_outputs));
	p->skb_outputs[p->nskb_outputs] = (struct skb_output){
		.path = arena_strdup(p->arena, path), .offset = offset };
	return (int)p->nskb_outputs++;
}

void program_stack_map_name(char *buf, unsigned long size, uint32_t limit)
{
	if (limit == 0 || limit == SONDE_STACK_FRAMES)
		snprintf(buf, size, "%s", SONDE_STACK_MAP);
	else
		snprintf(buf, size, "%s_%u", SONDE_STACK_MAP, limit);
}

void program_free(struct program *p)
{
	if (!p)
		return;
	struct arena *a = p->arena;
	arena_free(a);
	free(a);
}

/* FNV-1a over a program's instructions. */
static uint64_t insns_hash(const struct probe *p)
{
	uint64_t h = 1469598103934665603ull;
	const unsigned char *b = (const unsigned char *)p->insns;
	for (size_t i = 0; b && i < p->ninsns * sizeof(*p->insns); i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return h ^ p->block;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

uint32_t program_distinct_programs(const struct program *p)
{
	if (!p->nprobes)
		return 0;
	uint64_t *h = malloc(p->nprobes * sizeof(*h));
	if (!h)
		return p->nprobes;
	for (uint32_t i = 0; i < p->nprobes; i++)
		h[i] = insns_hash(&p->probes[i]);
	qsort(h, p->nprobes, sizeof(*h), cmp_u64);
	uint32_t n = 1;
	for (uint32_t i = 1; i < p->nprobes; i++)
		n += h[i] != h[i - 1];
	free(h);
	return n;
}
