/* bpftrace.c - the bpftrace language's front end (frontend.h): the
 * script's C definitions (cdefs.h), then its probes (parser.h) with their
 * macros expanded (macro.h), then
 * the positional parameters its attach points name, so that what leaves
 * here is an AST with every attach point split into its parts. */
#include "frontend.h"

#include <stdlib.h>
#include <string.h>

#include "ast.h"
#include "cdefs.h"
#include "macro.h"

/* Positional parameters in an attach point (uprobe:$1:main), replaced
 * by their text as bpftrace does; a missing one is empty. */
static void attach_positional(struct arena *a, struct node *ap,
			      const struct frontend_opts *o)
{
	const char *t = ap->u.attach.text;
	if (!t || !strchr(t, '$'))
		return;
	size_t cap = strlen(t) + 1;
	for (int i = 0; i < o->npositional; i++)
		cap += strlen(o->positional[i]);
	char *out = arena_alloc(a, cap), *w = out;
	bool changed = false;
	for (const char *c = t; *c;) {
		if (c[0] == '$' && c[1] >= '1' && c[1] <= '9') {
			char *end;
			long n = strtol(c + 1, &end, 10);
			const char *v = n >= 1 && n <= o->npositional ?
				o->positional[n - 1] : "";
			size_t len = strlen(v);
			memcpy(w, v, len);
			w += len;
			c = end;
			changed = true;
			continue;
		}
		*w++ = *c++;
	}
	*w = '\0';
	if (!changed)
		return;
	ap->u.attach.text = out;
	/* the parts as the parser split them: provider:target:func:extra */
	const char *parts[4] = { 0 };
	const char *start = out;
	int np = 0;
	for (const char *c = out;; c++) {
		if (*c == 0 || (*c == ':' && np < 3)) {
			parts[np++] = arena_strndup(a, start, (size_t)(c - start));
			start = c + 1;
			if (!*c)
				break;
		}
	}
	ap->u.attach.provider = parts[0];   /* BEG$1 with $1 = IN */
	ap->u.attach.target = parts[1];
	ap->u.attach.func = parts[2];
	ap->u.attach.extra = parts[3];
}

static struct node *bpftrace_parse(struct arena *a, const char *text,
				   const struct frontend_opts *o,
				   struct ctypes *reg, struct diags *d)
{
	struct cdefs_opts co = {
		.include_dirs = o->include_dirs,
		.ninclude_dirs = o->ninclude_dirs,
		.include_files = o->include_files,
		.ninclude_files = o->ninclude_files,
		.have_btf = o->have_btf,
	};
	struct node *root = cdefs_parse_script(a, text, &co, reg, d);
	if (!root || d->nerrors)
		return root;
	/* macros (bpftrace 0.22) expand here, before sema sees the tree */
	if (macro_expand(a, root, d) < 0 || d->nerrors)
		return root;
	for (uint32_t b = 0; b < root->u.list.n; b++) {
		struct node *probe = root->u.list.v[b];
		if (probe->kind != N_PROBE)
			continue;     /* config = { }, let @m = hash(N), macros */
		for (uint32_t i = 0; i < probe->u.probe.attach.n; i++)
			attach_positional(a, probe->u.probe.attach.v[i], o);
	}
	return root;
}

const struct frontend frontend_bpftrace = {
	.name = "bpftrace",
	.parse = bpftrace_parse,
};
