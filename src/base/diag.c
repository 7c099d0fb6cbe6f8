/* diag.c - recording and caret rendering of compiler diagnostics. */
#include "diag.h"
#include "log.h"

#include <stdlib.h>
#include <string.h>

void diags_init(struct diags *d, const struct diag_source *src)
{
	memset(d, 0, sizeof(*d));
	d->src = src;
}

void diags_free(struct diags *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->list.n; i++)
		free(d->list.v[i].msg);
	vec_free(&d->list);
	for (size_t i = 0; i < d->files.n; i++) {
		free((char *)d->files.v[i].name);
		free((char *)d->files.v[i].text);
	}
	vec_free(&d->files);
	d->nerrors = 0;
}

void diag_vadd(struct diags *d, enum diag_level level, struct pos pos,
	       const char *tag, const char *fmt, va_list ap)
{
	if (level == DIAG_WARNING && d->no_warnings)
		return;
	struct diag g = { .level = level, .pos = pos, .tag = tag };
	if (vasprintf(&g.msg, fmt, ap) < 0)
		g.msg = NULL;
	if (vec_push(&d->list, g)) {
		free(g.msg);
		return;
	}
	if (level == DIAG_ERROR)
		d->nerrors++;
}

void diag_error(struct diags *d, struct pos pos, const char *tag,
		const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	diag_vadd(d, DIAG_ERROR, pos, tag, fmt, ap);
	va_end(ap);
}

void diag_warning(struct diags *d, struct pos pos, const char *tag,
		  const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	diag_vadd(d, DIAG_WARNING, pos, tag, fmt, ap);
	va_end(ap);
}

unsigned diags_add_source(struct diags *d, const char *name, const char *text,
			  size_t len)
{
	struct diag_source s = { .name = strdup(name),
				 .text = strndup(text, len) };
	if (!s.name || !s.text || vec_push(&d->files, s)) {
		free((char *)s.name);
		free((char *)s.text);
		return 0;
	}
	return (unsigned)d->files.n;
}

static const struct diag_source *diag_file(const struct diags *d,
					   unsigned file)
{
	if (file && file <= d->files.n)
		return &d->files.v[file - 1];
	return d->src;
}

/* Headers first, in the order they were read, then the script. */
static int diag_cmp(const void *a, const void *b)
{
	const struct diag *x = a, *y = b;
	if (x->pos.file != y->pos.file) {
		if (!x->pos.file || !y->pos.file)
			return x->pos.file ? -1 : 1;
		return x->pos.file < y->pos.file ? -1 : 1;
	}
	if (x->pos.line != y->pos.line)
		return x->pos.line < y->pos.line ? -1 : 1;
	if (x->pos.col != y->pos.col)
		return x->pos.col < y->pos.col ? -1 : 1;
	return 0;
}

/* Find line `line` (1-based) of text; return its start and length. */
static const char *source_line(const char *text, unsigned line, size_t *len)
{
	const char *p = text;
	for (unsigned l = 1; l < line && p; l++) {
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	if (!p)
		return NULL;
	const char *e = strchr(p, '\n');
	*len = e ? (size_t)(e - p) : strlen(p);
	return p;
}

static void diags_render(const struct diags *d, FILE *out, bool json);

void diags_print(const struct diags *d, FILE *out)
{
	diags_render(d, out, log_json);
}

/* With -f json each diagnostic is one line, {"type": "error", "data":
 * "<the text's first line>"}, so a consumer of the stream can parse it. */
static void diags_render(const struct diags *d, FILE *out, bool json)
{
	/* Stable sort by position: copy indices so equal positions keep order. */
	size_t n = d->list.n;
	struct diag *sorted = malloc(n * sizeof(*sorted) + 1);
	if (!sorted)
		return;
	if (n)
		memcpy(sorted, d->list.v, n * sizeof(*sorted));
	/* insertion sort: stable, and n is small */
	for (size_t i = 1; i < n; i++) {
		struct diag t = sorted[i];
		size_t j = i;
		while (j > 0 && diag_cmp(&sorted[j - 1], &t) > 0) {
			sorted[j] = sorted[j - 1];
			j--;
		}
		sorted[j] = t;
	}
	for (size_t i = 0; i < n; i++) {
		const struct diag *g = &sorted[i];
		const struct diag_source *src = diag_file(d, g->pos.file);
		const char *name = src && src->name ? src->name : "stdin";
		const char *lvl = g->level == DIAG_ERROR ? "error" : "warning";
		const char *msg = g->msg ? g->msg : "(no memory)";
		char head[1024];
		if (g->pos.line == 0)
			snprintf(head, sizeof(head), "%s: %s: %s [%s]", name,
				 lvl, msg, g->tag);
		else
			snprintf(head, sizeof(head), "%s:%u:%u: %s: %s [%s]",
				 name, g->pos.line, g->pos.col, lvl, msg,
				 g->tag);
		if (json) {
			fprintf(out, "{\"type\": \"%s\", \"data\": ", lvl);
			log_json_str(out, head);
			fputs("}\n", out);
			continue;
		}
		fprintf(out, "%s\n", head);
		if (g->pos.line == 0)
			continue;
		size_t len;
		const char *line = src && src->text ?
			source_line(src->text, g->pos.line, &len) : NULL;
		if (!line)
			continue;
		fprintf(out, "%.*s\n", (int)len, line);
		/* Keep tabs so the caret lines up under tab-indented code. */
		for (unsigned c = 1; c < g->pos.col && c - 1 < len; c++)
			fputc(line[c - 1] == '\t' ? '\t' : ' ', out);
		fputc('^', out);
		for (unsigned k = 1; k < g->pos.len; k++)
			fputc('~', out);
		fputc('\n', out);
	}
	free(sorted);
}

bool diags_has(const struct diags *d, const char *tag)
{
	for (size_t i = 0; i < d->list.n; i++)
		if (strcmp(d->list.v[i].tag, tag) == 0)
			return true;
	return false;
}
