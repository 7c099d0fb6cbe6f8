/* diag.c - recording and caret rendering of compiler diagnostics.
 *
 * Whatever the script, what is recorded and printed is bounded: user
 * input can make one cause fire many times (one error per instruction of
 * a huge literal, one per probe of a wildcard), many causes (a generated
 * script), and very long lines (a 1 MB literal on one line). So an exact
 * repeat is dropped, the kept errors and warnings are capped and the rest
 * counted, a message is cut, and a long source line is shown as a window
 * around the caret. A run's stderr is then a few kilobytes at most, as a
 * compiler's is, instead of one copy of the line per error. */
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
	vec_free(&d->error_tags);
	free(d->seen);
	d->seen = NULL;
	for (size_t i = 0; i < d->files.n; i++) {
		free((char *)d->files.v[i].name);
		free((char *)d->files.v[i].text);
	}
	vec_free(&d->files);
	d->nerrors = d->dropped_errors = d->dropped_warnings = 0;
}

static bool same_diag(const struct diag *a, const struct diag *b)
{
	return a->level == b->level && a->pos.file == b->pos.file &&
	       a->pos.line == b->pos.line &&
	       a->pos.col == b->pos.col && a->pos.len == b->pos.len &&
	       strcmp(a->tag, b->tag) == 0 &&
	       strcmp(a->msg ? a->msg : "", b->msg ? b->msg : "") == 0;
}

static void note_error_tag(struct diags *d, const char *tag)
{
	for (size_t i = 0; i < d->error_tags.n; i++)
		if (strcmp(d->error_tags.v[i], tag) == 0)
			return;
	vec_push(&d->error_tags, tag);
}

static bool utf8_cont(char c)
{
	return ((unsigned char)c & 0xc0) == 0x80;
}

/* The message, at most DIAG_MSG_MAX bytes (cut at a character boundary,
 * with "..."), or NULL without memory. */
static char *format_msg(const char *fmt, va_list ap)
{
	char *msg;
	if (vasprintf(&msg, fmt, ap) < 0)
		return NULL;
	size_t len = strlen(msg);
	if (len < DIAG_MSG_MAX)
		return msg;
	size_t cut = DIAG_MSG_MAX - 4;
	/* not inside a UTF-8 sequence (at most 3 bytes back) */
	for (int k = 0; k < 3 && cut > 0 && utf8_cont(msg[cut]); k++)
		cut--;
	memcpy(msg + cut, "...", 4);
	char *fit = realloc(msg, cut + 4);
	return fit ? fit : msg;
}

static uint64_t diag_hash(const struct diag *g)
{
	uint64_t h = 1469598103934665603ull;
	uint64_t nums[5] = { g->level, g->pos.file, g->pos.line, g->pos.col,
			     g->pos.len };
	for (int i = 0; i < 5; i++)
		h = (h ^ nums[i]) * 1099511628211ull;
	for (const char *c = g->tag; *c; c++)
		h = (h ^ (unsigned char)*c) * 1099511628211ull;
	for (const char *c = g->msg ? g->msg : ""; *c; c++)
		h = (h ^ (unsigned char)*c) * 1099511628211ull;
	return h | 1;           /* 0 marks an empty slot */
}

/* Whether a diagnostic over the caps repeats one seen before (by hash:
 * it is not kept, so only its count is at stake). Remembers it. */
static bool dropped_before(struct diags *d, const struct diag *g)
{
	if (!d->seen) {
		d->seen = calloc(DIAG_SEEN_SLOTS, sizeof(*d->seen));
		if (!d->seen)
			return false;
	}
	uint64_t h = diag_hash(g);
	for (size_t i = h % DIAG_SEEN_SLOTS, k = 0; k < DIAG_SEEN_SLOTS / 2;
	     i = (i + 1) % DIAG_SEEN_SLOTS, k++) {
		if (d->seen[i] == h)
			return true;
		if (!d->seen[i]) {
			d->seen[i] = h;
			return false;
		}
	}
	return false;           /* crowded: count it */
}

void diag_vadd(struct diags *d, enum diag_level level, struct pos pos,
	       const char *tag, const char *fmt, va_list ap)
{
	if (level == DIAG_WARNING && d->no_warnings)
		return;
	struct diag g = { .level = level, .pos = pos, .tag = tag ? tag : "" };
	g.msg = format_msg(fmt, ap);
	for (size_t i = 0; i < d->list.n; i++)
		if (same_diag(&d->list.v[i], &g)) {
			free(g.msg);
			return;
		}
	bool error = level == DIAG_ERROR;
	size_t kept = 0;
	for (size_t i = 0; i < d->list.n; i++)
		kept += (d->list.v[i].level == DIAG_ERROR) == error;
	bool over = kept >= (error ? DIAG_MAX_ERRORS : DIAG_MAX_WARNINGS);
	if (over && dropped_before(d, &g)) {
		free(g.msg);
		return;
	}
	if (error) {
		d->nerrors++;
		note_error_tag(d, g.tag);
	}
	if (over) {
		if (error)
			d->dropped_errors++;
		else
			d->dropped_warnings++;
		free(g.msg);
		return;
	}
	if (vec_push(&d->list, g))
		free(g.msg);
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

/* diag_vadd takes a format: pass each message through "%s". */
static void add_formatted(struct diags *d, enum diag_level level,
			  struct pos pos, const char *tag, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	diag_vadd(d, level, pos, tag, fmt, ap);
	va_end(ap);
}

void diags_move(struct diags *to, struct diags *from, enum diag_level level,
		const char *suffix)
{
	for (size_t i = 0; i < from->list.n; i++) {
		struct diag *g = &from->list.v[i];
		add_formatted(to, level, g->pos, g->tag, "%s%s", g->msg, suffix);
		free(g->msg);
	}
	/* the ones over FROM's cap stay counted in the "too many" line */
	if (level == DIAG_ERROR) {
		to->nerrors += from->dropped_errors;
		to->dropped_errors += from->dropped_errors;
	} else if (!to->no_warnings) {
		to->dropped_warnings += from->dropped_errors;
	}
	from->list.n = 0;
	from->nerrors = from->dropped_errors = from->dropped_warnings = 0;
	from->error_tags.n = 0;
}

bool diag_check_nul(struct diags *d, const char *text, size_t len)
{
	const char *nul = memchr(text, '\0', len);
	if (!nul)
		return false;
	struct pos pos = { .line = 1, .col = 1, .len = 1 };
	for (const char *c = text; c < nul; c++) {
		if (*c == '\n') {
			pos.line++;
			pos.col = 1;
		} else {
			pos.col++;
		}
	}
	diag_error(d, pos, "SYNTAX", "a NUL byte in the script (byte %zu): "
		   "a script is text", (size_t)(nul - text));
	return true;
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

/* What a byte of the script or a message looks like on the terminal:
 * control characters (escape sequences, and newlines a message quotes
 * from a string) are shown as '?', so one diagnostic is one line. */
static char shown(char c)
{
	unsigned char u = (unsigned char)c;
	if (c == '\t')
		return c;
	return u < 0x20 || u == 0x7f ? '?' : c;
}

static void put_shown(FILE *out, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fputc(shown(s[i]), out);
}

/* The source line of G and a caret under its column. A line longer than
 * DIAG_LINE_WINDOW shows the window around the caret (a third of it
 * before), with "..." where it is cut; the underline stops at the
 * window's end. */
static void render_line(FILE *out, const char *line, size_t len,
			const struct pos *pos)
{
	size_t caret = pos->col - 1 < len ? pos->col - 1 : len;
	size_t from = 0, to = len;
	if (len > DIAG_LINE_WINDOW) {
		from = caret > DIAG_LINE_WINDOW / 3 ?
			caret - DIAG_LINE_WINDOW / 3 : 0;
		to = from + DIAG_LINE_WINDOW < len ? from + DIAG_LINE_WINDOW : len;
		if (to - from < DIAG_LINE_WINDOW)
			from = to - DIAG_LINE_WINDOW;
		/* at most 3 bytes more to finish a character: a run of
		 * stray continuation bytes has no boundary to reach */
		for (int k = 0; k < 3 && from > 0 && utf8_cont(line[from]); k++)
			from--;
		for (int k = 0; k < 3 && to < len && utf8_cont(line[to]); k++)
			to++;
	}
	bool cut_before = from > 0, cut_after = to < len;
	if (cut_before)
		fputs("...", out);
	put_shown(out, line + from, to - from);
	if (cut_after)
		fputs("...", out);
	fputc('\n', out);
	if (cut_before)
		fputs("   ", out);
	/* One column per character (not per byte of a UTF-8 sequence); tabs
	 * kept so the caret lines up under tab-indented code. */
	for (size_t c = from; c < caret; c++)
		if (!utf8_cont(line[c]))
			fputc(line[c] == '\t' ? '\t' : ' ', out);
	fputc('^', out);
	size_t under = pos->len > 1 ? pos->len - 1 : 0;
	size_t room = to > caret + 1 ? to - caret - 1 : 0;
	if (under > room)
		under = room;
	for (size_t k = 0; k < under; k++)
		if (!utf8_cont(line[caret + 1 + k]))
			fputc('~', out);
	fputc('\n', out);
}

static void render_head(FILE *out, log_line_fn *line, const char *lvl,
			const char *head)
{
	if (line) {
		line(out, lvl, head);
		return;
	}
	put_shown(out, head, strlen(head));
	fputc('\n', out);
}

static void diags_render(const struct diags *d, FILE *out,
			 log_line_fn *put);

void diags_print(const struct diags *d, FILE *out)
{
	diags_render(d, out, log_line());
}

/* With an output format's line writer (-f json) each diagnostic is one
 * line, {"type": "error", "data": "<the text's first line>"}, so a
 * consumer of the stream can parse it. */
static void diags_render(const struct diags *d, FILE *out, log_line_fn *put)
{
	size_t n = d->list.n;
	struct diag *sorted = malloc(n * sizeof(*sorted) + 1);
	if (!sorted)
		return;
	if (n)
		memcpy(sorted, d->list.v, n * sizeof(*sorted));
	/* insertion sort: stable, and n is at most the two caps */
	for (size_t i = 1; i < n; i++) {
		struct diag t = sorted[i];
		size_t j = i;
		while (j > 0 && diag_cmp(&sorted[j - 1], &t) > 0) {
			sorted[j] = sorted[j - 1];
			j--;
		}
		sorted[j] = t;
	}
	const char *name = d->src && d->src->name ? d->src->name : "stdin";
	char head[DIAG_MSG_MAX + 512];
	for (size_t i = 0; i < n; i++) {
		const struct diag *g = &sorted[i];
		const struct diag_source *src = diag_file(d, g->pos.file);
		const char *gname = src && src->name ? src->name : "stdin";
		const char *lvl = g->level == DIAG_ERROR ? "error" : "warning";
		/* the level in bpftrace's words */
		const char *word = g->level == DIAG_ERROR ? "ERROR" : "WARNING";
		const char *msg = g->msg ? g->msg : "(no memory)";
		if (g->pos.line == 0)
			snprintf(head, sizeof(head), "%s: %s: %s [%s]", gname,
				 word, msg, g->tag);
		else
			snprintf(head, sizeof(head), "%s:%u:%u: %s: %s [%s]",
				 gname, g->pos.line, g->pos.col, word, msg,
				 g->tag);
		render_head(out, put, lvl, head);
		if (put || g->pos.line == 0)
			continue;
		size_t len;
		const char *line = src && src->text ?
			source_line(src->text, g->pos.line, &len) : NULL;
		if (line)
			render_line(out, line, len, &g->pos);
	}
	free(sorted);
	if (d->dropped_errors) {
		snprintf(head, sizeof(head), "%s: ERROR: too many errors: %d "
			 "shown, %u more not shown [TOO_MANY_ERRORS]", name,
			 DIAG_MAX_ERRORS, d->dropped_errors);
		render_head(out, put, "error", head);
	}
	if (d->dropped_warnings) {
		snprintf(head, sizeof(head), "%s: WARNING: too many warnings: "
			 "%d shown, %u more not shown [TOO_MANY_WARNINGS]", name,
			 DIAG_MAX_WARNINGS, d->dropped_warnings);
		render_head(out, put, "warning", head);
	}
}

bool diags_has(const struct diags *d, const char *tag)
{
	for (size_t i = 0; i < d->error_tags.n; i++)
		if (strcmp(d->error_tags.v[i], tag) == 0)
			return true;
	for (size_t i = 0; i < d->list.n; i++)
		if (strcmp(d->list.v[i].tag, tag) == 0)
			return true;
	return false;
}
