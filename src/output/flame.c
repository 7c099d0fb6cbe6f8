/* flame.c - flame graphs of a run: every map keyed by a stack and valued
 * by a count (count(), sum(), an integer) becomes folded stacks and an
 * interactive SVG at exit (--flamegraph, --folded). */

/*
 * Each entry of a qualifying map is one stack with its weight. The
 * frames, from the root: the map's name (only when several maps are
 * drawn, so each gets its own tower), the key's other fields as text
 * (@[comm, ustack] groups by process name, like flamegraph.pl's --pid),
 * then the user stack outermost first, then the kernel stack on top of
 * it (user code calls into the kernel), as perf's flame graphs stack
 * them. Frames are function names without offsets, so samples anywhere
 * in a function merge; an address nothing names is "[unknown]".
 */
#include "output_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../base/log.h"
#include "../elf/symbolize.h"
#include "flamegraph.h"

#define MAX_FRAMES 1024
#define MAX_NAMES (2 * MAX_FRAMES + 32)

static bool is_stack(const struct type *t)
{
	return t && (t->kind == TYPE_KSTACK || t->kind == TYPE_USTACK);
}

static bool weight_type(const struct type *t)
{
	return t && (t->kind == TYPE_COUNT || t->kind == TYPE_SUM ||
		     t->kind == TYPE_INT);
}

bool flame_map_qualifies(const struct map_spec *m)
{
	if (!m->name || m->name[0] != '@' || !m->key_type || !m->nkeys ||
	    !weight_type(m->value_type))
		return false;
	const struct type *k = m->key_type;
	if (is_stack(k))
		return true;
	if (k->kind == TYPE_TUPLE)
		for (uint32_t i = 0; i < k->nfields; i++)
			if (is_stack(k->fields[i]))
				return true;
	return false;
}

struct names {
	const char *v[MAX_NAMES];
	char *owned[MAX_NAMES];
	size_t n, nowned;
};

static void names_push(struct names *ns, const char *s)
{
	if (ns->n < MAX_NAMES)
		ns->v[ns->n++] = s;
}

static void names_push_owned(struct names *ns, char *s)
{
	if (!s || ns->n >= MAX_NAMES) {
		free(s);
		return;
	}
	ns->owned[ns->nowned++] = s;
	ns->v[ns->n++] = s;
}

static void names_free(struct names *ns)
{
	for (size_t i = 0; i < ns->nowned; i++)
		free(ns->owned[i]);
	ns->n = ns->nowned = 0;
}

/* The frames of a stack value, outermost first. */
static void push_stack(struct output *o, struct names *ns,
		       const struct type *t, const uint8_t *data)
{
	uint64_t ips[MAX_FRAMES];
	size_t n = 0;
	int64_t pid;
	stacks_resolve(o->stacks, t, data, ips, MAX_FRAMES, &n, &pid);
	if (t->stack_limit && n > t->stack_limit)
		n = t->stack_limit;
	for (size_t i = n; i-- > 0;) {
		struct sym s;
		int r = t->kind == TYPE_USTACK ?
			usyms_lookup(stacks_usyms(o->stacks), (pid_t)pid, ips[i], &s) :
			ksyms_lookup(stacks_ksyms(o->stacks), ips[i], &s);
		names_push(ns, r == 0 && s.name ? s.name : "[unknown]");
	}
}

static int add_entry(struct output *o, struct flamegraph *fg,
		     const struct map_spec *m, const uint8_t *key,
		     uint64_t weight, bool name_root)
{
	struct names *ns = calloc(1, sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	if (name_root)
		names_push(ns, m->name);
	const struct type *k = m->key_type;
	uint32_t nf = k->kind == TYPE_TUPLE ? k->nfields : 1;
	/* other fields first, then user stacks, then kernel stacks */
	for (int pass = 0; pass < 3; pass++) {
		for (uint32_t i = 0; i < nf; i++) {
			const struct type *ft = k->kind == TYPE_TUPLE ?
				k->fields[i] : k;
			const uint8_t *fd = key + (k->kind == TYPE_TUPLE ?
						   k->offsets[i] : 0);
			int want = ft->kind == TYPE_USTACK ? 1 :
				ft->kind == TYPE_KSTACK ? 2 : 0;
			if (want != pass)
				continue;
			if (pass) {
				push_stack(o, ns, ft, fd);
				continue;
			}
			struct sbuf b = { 0 };
			value_text(o, &b, ft, fd, VCTX_KEY);
			names_push_owned(ns, b.oom ? NULL : b.s);
			if (b.oom)
				sbuf_free(&b);
		}
	}
	int r = flamegraph_add(fg, ns->v, ns->n, weight, false);
	names_free(ns);
	free(ns);
	return r;
}

static int add_map(struct output *o, struct flamegraph *fg, uint32_t map_id,
		   bool name_root)
{
	const struct map_spec *m = &o->prog->maps[map_id];
	struct map_snapshot s = { 0 };
	int r = o->maps.dump(o->maps.ctx, map_id, &s);
	if (r < 0)
		return r;
	r = stackmaps_canonicalize(o, m, &s);
	for (uint32_t i = 0; i < s.n && r == 0; i++) {
		const uint8_t *v = s.values + (size_t)i * s.nvalues * s.value_stride;
		uint64_t w = 0;
		if (m->value_type->kind == TYPE_INT) {
			int64_t x = value_sint(m->value_type, v);
			w = x > 0 ? (uint64_t)x : 0;
		} else {
			for (uint32_t c = 0; c < s.nvalues; c++) {
				uint64_t x;
				memcpy(&x, v + (size_t)c * s.value_stride, 8);
				w += x;
			}
			if (m->value_type->is_signed && (int64_t)w < 0)
				w = 0;
		}
		if (w)
			r = add_entry(o, fg, m, s.keys + (size_t)i * s.key_size,
				      w, name_root);
	}
	map_snapshot_free(&s);
	return r;
}

int output_flamegraph(struct output *o, FILE *svg, FILE *folded,
		      const char *title)
{
	if (!o || !o->have_maps || !o->maps.dump || !o->stacks)
		return -EINVAL;
	uint32_t n = 0;
	for (uint32_t i = 0; i < o->prog->nmaps; i++)
		if (flame_map_qualifies(&o->prog->maps[i]))
			n++;
	if (n == 0)
		return -ENOENT;
	struct flamegraph *fg = flamegraph_new();
	if (!fg)
		return -ENOMEM;
	int r = 0;
	for (uint32_t i = 0; i < o->prog->nmaps && r == 0; i++)
		if (flame_map_qualifies(&o->prog->maps[i]))
			r = add_map(o, fg, i, n > 1);
	if (r == 0 && folded)
		r = flamegraph_write_folded(fg, folded);
	if (r == 0 && svg) {
		struct flamegraph_opts fo = { .title = title };
		r = flamegraph_write_svg(fg, svg, &fo);
	}
	flamegraph_free(fg);
	return r;
}
