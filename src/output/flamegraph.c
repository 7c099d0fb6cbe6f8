/* flamegraph.c - the stack tree behind flame graphs, and its folded-text form. */

/*
 * Stacks are merged into a tree rooted at an unnamed node: each node has
 * the samples of the stacks that end there (self) and of every stack that
 * passes through it (total). Folded text walks the tree with children in
 * name order, which is the order flamegraph.pl draws them in; the SVG
 * writer (flamegraph_svg.c) lays the same walk out left to right.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "flamegraph_internal.h"
#include "stackfmt.h"
#include "../base/vec.h"

struct flamegraph *flamegraph_new(void)
{
	return calloc(1, sizeof(struct flamegraph));
}

static void fg_node_free(struct fg_node *n)
{
	size_t i;

	for (i = 0; i < n->nkids; i++) {
		fg_node_free(n->kids[i]);
		free(n->kids[i]);
	}
	free(n->kids);
	free(n->name);
}

void flamegraph_free(struct flamegraph *fg)
{
	if (!fg)
		return;
	fg_node_free(&fg->root);
	free(fg);
}

uint64_t flamegraph_total(const struct flamegraph *fg)
{
	return fg->root.total;
}

/* flamegraph.pl's conventions for a frame name, into a new string. */
static char *fg_clean(const char *raw)
{
	const char *b = raw ? raw : "", *e;
	char *out, *p;

	while (*b && isspace((unsigned char)*b))
		b++;
	e = b + strlen(b);
	while (e > b && isspace((unsigned char)e[-1]))
		e--;
	if (e == b)
		return strdup("[unknown]");
	out = malloc((size_t)(e - b) + 1);
	if (!out)
		return NULL;
	for (p = out; b < e; b++, p++) {
		unsigned char c = (unsigned char)*b;

		*p = c == ';' ? ':' : (c < 0x20 || c == 0x7f) ? ' ' : (char)c;
	}
	*p = '\0';
	return out;
}

/* The child of N named NAME (taking NAME), created in sorted place. */
static struct fg_node *fg_child(struct fg_node *n, char *name)
{
	size_t lo = 0, hi = n->nkids, i;
	struct fg_node *c;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int cmp = strcmp(n->kids[mid]->name, name);

		if (cmp == 0) {
			free(name);
			return n->kids[mid];
		}
		if (cmp < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (vec_reserve_arr(n->kids, n->cap, n->nkids + 1))
		goto nomem;
	c = calloc(1, sizeof(*c));
	if (!c)
		goto nomem;
	c->name = name;
	for (i = n->nkids; i > lo; i--)
		n->kids[i] = n->kids[i - 1];
	n->kids[lo] = c;
	n->nkids++;
	return c;
nomem:
	free(name);
	return NULL;
}

int flamegraph_add(struct flamegraph *fg, const char *const *frames, size_t n,
		   uint64_t count, bool leaf_first)
{
	struct fg_node *node = &fg->root, *path[FG_MAX_DEPTH];
	size_t i, depth = 0;

	if (n > FG_MAX_DEPTH)   /* keep the root end: it is what is shared */
		n = FG_MAX_DEPTH;
	for (i = 0; i < n; i++) {
		const char *raw = leaf_first ? frames[n - 1 - i] : frames[i];
		char *name = fg_clean(raw);

		if (!name)
			return -ENOMEM;
		node = fg_child(node, name);
		if (!node)
			return -ENOMEM;
		path[depth++] = node;
	}
	/* counts only once the whole path exists, so a failure adds nothing */
	fg->root.total += count;
	for (i = 0; i < depth; i++)
		path[i]->total += count;
	node->self += count;
	if (depth > fg->max_depth)
		fg->max_depth = depth;
	return 0;
}

int flamegraph_add_stack(struct flamegraph *fg, const uint64_t *ips, size_t n,
			 uint64_t count, const struct stackfmt *f)
{
	const char *names[FG_MAX_DEPTH];
	size_t i;

	if (n > FG_MAX_DEPTH)
		n = FG_MAX_DEPTH;
	if (f->limit && n > f->limit)
		n = f->limit;
	for (i = 0; i < n && ips[i]; i++) {
		struct sym s;
		int err = f->user ? (f->usyms ? usyms_lookup(f->usyms, f->pid, ips[i], &s) : -ENOENT)
				  : (f->ksyms ? ksyms_lookup(f->ksyms, ips[i], &s) : -ENOENT);

		names[i] = err == 0 && s.name ? s.name : "[unknown]";
	}
	return flamegraph_add(fg, names, i, count, true);
}

/* ---- folded text ---------------------------------------------------------- */

struct fold_buf {
	char *s;
	size_t len, cap;
};

static int fold_walk(const struct fg_node *n, struct fold_buf *b, FILE *out)
{
	size_t keep = b->len, need, i;
	int err;

	if (n->name) {
		need = b->len + strlen(n->name) + 2;
		if (need > b->cap) {
			size_t cap = b->cap ? b->cap * 2 : 1024;
			char *s;

			while (cap < need)
				cap *= 2;
			s = realloc(b->s, cap);
			if (!s)
				return -ENOMEM;
			b->s = s;
			b->cap = cap;
		}
		if (b->len)
			b->s[b->len++] = ';';
		strcpy(b->s + b->len, n->name);
		b->len += strlen(n->name);
		if (n->self)
			fprintf(out, "%.*s %" PRIu64 "\n", (int)b->len, b->s, n->self);
	}
	for (i = 0; i < n->nkids; i++)
		if ((err = fold_walk(n->kids[i], b, out)) < 0)
			return err;
	b->len = keep;
	return 0;
}

int flamegraph_write_folded(const struct flamegraph *fg, FILE *out)
{
	struct fold_buf b = { 0 };
	int err = fold_walk(&fg->root, &b, out);

	free(b.s);
	if (err < 0)
		return err;
	return ferror(out) ? -EIO : 0;
}

/* "a;b;c 42": frames split on ';', the count after the last blank. */
static int fold_line(struct flamegraph *fg, char *line)
{
	char *end = line + strlen(line), *num, *p, *frames[FG_MAX_DEPTH];
	unsigned long long count;
	size_t n = 0;

	while (end > line && isspace((unsigned char)end[-1]))
		*--end = '\0';
	num = end;
	while (num > line && isdigit((unsigned char)num[-1]))
		num--;
	/* flamegraph.pl also takes fractional counts; keep the integer part */
	if (num > line + 1 && num[-1] == '.' && isdigit((unsigned char)num[-2])) {
		num[-1] = '\0';
		for (num -= 2; num > line && isdigit((unsigned char)num[-1]); num--)
			;
	}
	if (num == end || num == line || !isspace((unsigned char)num[-1]))
		return -EINVAL;
	count = strtoull(num, NULL, 10);
	p = num - 1;
	while (p > line && isspace((unsigned char)p[-1]))
		p--;
	*p = '\0';
	if (!*line)
		return -EINVAL;
	for (p = line; n < FG_MAX_DEPTH; ) {
		frames[n++] = p;
		p = strchr(p, ';');
		if (!p)
			break;
		*p++ = '\0';
	}
	return flamegraph_add(fg, (const char *const *)frames, n, count, false);
}

int flamegraph_read_folded(struct flamegraph *fg, FILE *in, size_t *skipped)
{
	char *line = NULL;
	size_t cap = 0, bad = 0;
	ssize_t len;
	int err = 0;

	while ((len = getline(&line, &cap, in)) >= 0) {
		int r;

		if (len == 0 || line[0] == '\n' || line[0] == '#')
			continue;
		r = fold_line(fg, line);
		if (r == -ENOMEM) {
			err = r;
			break;
		}
		if (r < 0)
			bad++;
	}
	free(line);
	if (skipped)
		*skipped = bad;
	if (!err && ferror(in))
		err = -EIO;
	return err;
}
