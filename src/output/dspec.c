/* dspec.c - D's speculations in the consumer: the records a clause made
 * after speculate(id) arrive with id in their header's high 32 bits
 * (funcs/dtrace.c); each is rendered as usual but into a buffer of its
 * speculation, which commit(id) writes out and discard(id) drops. What
 * is never committed is dropped at the end, as DTrace does.
 *
 * Bounds: at most DSPEC_MAX speculations held at once and
 * DSPEC_MAX_BYTES of text each; a record past them is dropped and
 * counted, and the count reported at the end as DTrace reports its
 * speculative drops. */
#include "output_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


#define DSPEC_MAX 256
#define DSPEC_MAX_BYTES (1u << 20)

struct dspec {
	uint32_t id;
	FILE *f;                /* open_memstream over buf, len */
	char *buf;
	size_t len;
	bool heading;           /* it holds the CPU ID FUNCTION:NAME heading */
	bool full;
};

/* Each speculation is allocated on its own: its memstream keeps the
 * addresses of buf and len, which must not move when another is
 * dropped (the array of pointers is what is compacted). */
struct dspecs {
	struct dspec *v[DSPEC_MAX];
	uint32_t n;
	uint64_t drops;
};

static struct dspec *find(struct output *o, uint32_t id, bool make)
{
	struct dspecs *d = o->dspecs;
	if (!d) {
		if (!make || !(d = o->dspecs = calloc(1, sizeof(*d))))
			return NULL;
	}
	for (uint32_t i = 0; i < d->n; i++)
		if (d->v[i]->id == id)
			return d->v[i];
	if (!make || d->n == DSPEC_MAX)
		return NULL;
	struct dspec *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->f = open_memstream(&s->buf, &s->len);
	if (!s->f) {
		free(s);
		return NULL;
	}
	s->id = id;
	d->v[d->n++] = s;
	return s;
}

static void drop(struct output *o, struct dspec *s)
{
	struct dspecs *d = o->dspecs;
	fclose(s->f);
	free(s->buf);
	if (s->heading)
		o->dtrace_heading = false;   /* it was never seen */
	for (uint32_t i = 0; i < d->n; i++)
		if (d->v[i] == s) {
			d->v[i] = d->v[--d->n];
			break;
		}
	free(s);
}

int dspec_record(struct output *o, uint32_t id, const void *data, size_t size)
{
	struct dspec *s = find(o, id, true);
	if (!s || s->full) {
		if (o->dspecs)
			o->dspecs->drops++;
		return 0;
	}
	uint8_t *copy = malloc(size);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, data, size);
	memset(copy + 4, 0, 4);      /* the header without the speculation */
	bool had_heading = o->dtrace_heading;
	FILE *saved = o->opts.out;
	o->opts.out = s->f;
	int r = output_event(o, copy, size);
	o->opts.out = saved;
	free(copy);
	if (!had_heading && o->dtrace_heading)
		s->heading = true;
	if (fflush(s->f) == 0 && s->len > DSPEC_MAX_BYTES) {
		s->full = true;
		o->dspecs->drops++;
	}
	return r;
}

int dspec_end(struct output *o, uint32_t id, bool commit)
{
	struct dspec *s = find(o, id, false);
	if (!s)
		return 0;
	int r = 0;
	if (commit && fflush(s->f) == 0 && s->len &&
	    fwrite(s->buf, 1, s->len, o->opts.out) != s->len)
		r = -EIO;
	s->heading = false;
	drop(o, s);
	return r;
}

void dspec_free(struct output *o)
{
	struct dspecs *d = o->dspecs;
	if (!d)
		return;
	while (d->n)
		drop(o, d->v[d->n - 1]);
	if (d->drops)
		fprintf(stderr, "dtrace: %llu speculative drop%s\n",
			(unsigned long long)d->drops, d->drops == 1 ? "" : "s");
	free(d);
	o->dspecs = NULL;
}
