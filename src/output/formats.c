/* formats.c - the output formats (-f text, -f json): one table of
 * functions each (struct output_format in output_int.h), the only place
 * that knows how a kind of output looks in each format, and the list -f
 * finds them in by name. */
#include "output_int.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

extern const struct output_format output_format_dtrace, output_format_json;

/* ---- text: bpftrace 0.17's text output ------------------------------ */

/* bpftrace 0.24 changed the words ('Change "Attaching N probes..." to
 * "Attached N probes"') and sends the line to stderr ("Text mode now
 * emits all non-script generated output (e.g., errors, attached
 * notifications) to stderr"), both in its CHANGELOG. */
static void text_attaching(struct output *o, struct sbuf *out, unsigned n)
{
	if (o && o->prog->dialect >= DIALECT_024) {
		fflush(o->opts.out);
		fprintf(stderr, "Attached %u probe%s\n", n, n == 1 ? "" : "s");
	} else
		sbuf_printf(out, "Attaching %u probe%s...\n", n,
			    n == 1 ? "" : "s");
}

/* bpftrace says "Lost 1 events" too. */
static void text_lost(struct output *o, struct sbuf *out, uint64_t n)
{
	sbuf_printf(out, "Lost %llu events\n", (unsigned long long)n);
}

/* "WARNING: msg" on stderr, as bpftrace writes its run-time messages,
 * after what is already in the output stream. */
static void text_message(struct output *o, struct sbuf *out,
			 const char *level, const char *msg)
{
	if (o)
		fflush(o->opts.out);
	for (const char *p = level; *p; p++)
		fputc(toupper((unsigned char)*p), stderr);
	fprintf(stderr, ": %s\n", msg);
}

static void text_text_event(struct output *o, struct sbuf *out,
			    const char *type, const char *text, size_t n,
			    bool newline)
{
	sbuf_put(out, text, n);
	if (newline)
		sbuf_putc(out, '\n');
}

static void text_print_value(struct output *o, struct sbuf *out,
			     const struct type *t, const uint8_t *data)
{
	value_text(o, out, t, data, VCTX_VALUE);
	sbuf_putc(out, '\n');
}

static void text_value(struct output *o, struct sbuf *out,
		       const struct type *t, const uint8_t *data)
{
	value_text(o, out, t, data, VCTX_VALUE);
}

/* bpftrace prints two newlines before the maps at exit. */
static void text_maps_begin(struct output *o, struct sbuf *out)
{
	sbuf_puts(out, "\n\n");
}

static void text_error_stderr(struct output *o, const char *msg)
{
	fflush(o->opts.out);
	fprintf(stderr, "ERROR: %s\n", msg);
}

/* bpftrace's warning with the script line and the call underlined:
 *   stdin:1:20-33: WARNING: Failed to map_delete_elem: No such file or directory (-2)
 *   BEGIN { @x[1] = 1; delete(@x[2]); exit(); }
 *                      ~~~~~~~~~~~~~                                   */
static void text_helper_error(struct output *o, struct sbuf *out,
			      const struct event_spec *e, int64_t ret)
{
	const struct program *p = o->prog;
	unsigned line = e->pos.line, col = e->pos.col, len = e->pos.len;
	/* a negative return as its error and number; a lookup that found
	 * nothing as its 0, in bpftrace's words */
	char err[160];
	if (ret < 0)
		snprintf(err, sizeof(err), "%s (%lld)", ret > -4096 ?
			 strerror((int)-ret) : "unknown error", (long long)ret);
	else
		snprintf(err, sizeof(err), "%lld", (long long)ret);
	if (p->dialect >= DIALECT_026) {
		/* 0.26's words: what failed, then the helper and its
		 * return (its test other "runtime_error_check_lookup") */
		const char *msg = err;
		if (!strcmp(e->fmt, "map_lookup_elem"))
			msg = "Can't lookup map element because it does not "
				"exist.";
		else if (!strcmp(e->fmt, "map_delete_elem") && ret == -2)
			msg = "Can't delete map element because it does not "
				"exist.";
		else if (ret < 0 && ret > -4096)
			msg = strerror((int)-ret);
		sbuf_printf(out, "%s:%u:%u-%u: WARNING: %s\nAdditional Info - "
			    "helper: %s, retcode: %lld\n",
			    p->src_name ? p->src_name : "stdin", line, col,
			    col + len, msg, e->fmt, (long long)ret);
		output_source_excerpt(o, out, e->pos);
		return;
	}
	sbuf_printf(out, "%s:%u:%u-%u: WARNING: Failed to %s: %s\n",
		    p->src_name ? p->src_name : "stdin", line, col, col + len,
		    e->fmt, err);
	output_source_excerpt(o, out, e->pos);
}

/* The script's line at pos, and '~' under pos's span, as bpftrace shows
 * where a run-time message comes from. */
void output_source_excerpt(struct output *o, struct sbuf *out, struct pos pos)
{
	const struct program *p = o->prog;
	unsigned line = pos.line, col = pos.col, len = pos.len;
	const char *t = pos.file ? NULL : p->src_text;
	for (unsigned l = 1; t && l < line; l++) {
		t = strchr(t, '\n');
		if (t)
			t++;
	}
	if (!t || !line)
		return;
	/* bpftrace shows a tab as four spaces (columns count it as one) */
	size_t n = strcspn(t, "\n");
	for (size_t i = 0; i < n; i++)
		sbuf_puts(out, t[i] == '\t' ? "    " : (char[]){ t[i], 0 });
	sbuf_putc(out, '\n');
	for (unsigned c = 1; c < col && c - 1 < n; c++)
		sbuf_puts(out, t[c - 1] == '\t' ? "    " : " ");
	for (unsigned k = 0; k < len; k++)
		sbuf_putc(out, '~');
	sbuf_putc(out, '\n');
}

/* errorf()/warnf(): "FILE:LINE:COL-END: ERROR: text", the script's line
 * and a '~' underline, on stderr (bpftrace 0.24's words and place). */
static int text_script_message(struct output *o, struct sbuf *out,
			       const struct event_spec *e, bool err,
			       const char *msg, size_t n)
{
	const struct program *p = o->prog;
	struct sbuf b = { 0 };
	sbuf_printf(&b, "%s:%u:%u-%u: %s: ", p->src_name ? p->src_name :
		    "stdin", e->pos.line, e->pos.col, e->pos.col + e->pos.len,
		    err ? "ERROR" : "WARNING");
	sbuf_put(&b, msg, n);
	sbuf_putc(&b, '\n');
	output_source_excerpt(o, &b, e->pos);
	fflush(o->opts.out);
	fwrite(b.s, 1, b.n, stderr);
	sbuf_free(&b);
	return 0;
}

const struct output_format output_format_text = {
	.name = "text",
	.d_layout = &output_format_dtrace,
	.attaching = text_attaching,
	.lost = text_lost,
	.message = text_message,
	.script_message = text_script_message,
	.text_event = text_text_event,
	.print_value = text_print_value,
	.value = text_value,
	.maps_begin = text_maps_begin,
	.map = maps_render_text,
	.error_stderr = text_error_stderr,
	.helper_error = text_helper_error,
};

/* ---- json: bpftrace 0.17's JSON lines -------------------------------- */

/* 0.26 adds a "count" beside the data (its runtime tests' expected
 * output: {"type": "attached_probes", "count": 1, "data": {"probes":
 * 1}}) */
static void json_attaching(struct output *o, struct sbuf *out, unsigned n)
{
	if (o && o->prog->dialect >= DIALECT_026)
		sbuf_printf(out, "{\"type\": \"attached_probes\", \"count\": "
			    "%u, \"data\": {\"probes\": %u}}\n", n, n);
	else
		sbuf_printf(out, "{\"type\": \"attached_probes\", \"data\": "
			    "{\"probes\": %u}}\n", n);
}

static void json_lost(struct output *o, struct sbuf *out, uint64_t n)
{
	sbuf_printf(out, "{\"type\": \"lost_events\", \"data\": "
		    "{\"events\": %llu}}\n", (unsigned long long)n);
}

/* A {"type": "<level>", "data": "msg"} line in the output, so that a
 * consumer of the stream sees it in place. */
static void json_message_line(struct output *o, struct sbuf *out,
			      const char *level, const char *msg)
{
	json_message(out, level, msg, strlen(msg));
}

/* errorf()/warnf(): bpftrace's error or warning record (up to a NUL in
 * the text, as a C string) */
static int json_script_message(struct output *o, struct sbuf *out,
			       const struct event_spec *e, bool err,
			       const char *msg, size_t n)
{
	json_message(out, err ? "error" : "warning", msg, strnlen(msg, n));
	return 0;
}

static void json_text_event(struct output *o, struct sbuf *out,
			    const char *type, const char *text, size_t n,
			    bool newline)
{
	json_message(out, type, text, n);
}

static void json_print_value(struct output *o, struct sbuf *out,
			     const struct type *t, const uint8_t *data)
{
	sbuf_puts(out, "{\"type\": \"value\", \"data\": ");
	json_value(o, out, t, data);
	sbuf_puts(out, "}\n");
}

/* bpftrace prints the two newlines in JSON too; sonde leaves them out
 * so that every line is a JSON document. */
static void json_maps_begin(struct output *o, struct sbuf *out)
{
}

/* bpftrace writes it as a JSON line, on stderr. */
static void json_error_stderr(struct output *o, const char *msg)
{
	struct sbuf line = { 0 };
	json_message(&line, "error", msg, strlen(msg));
	fflush(o->opts.out);
	if (!line.oom && line.n)
		fwrite(line.s, 1, line.n, stderr);
	sbuf_free(&line);
}

static void json_helper_error(struct output *o, struct sbuf *out,
			      const struct event_spec *e, int64_t ret)
{
	sbuf_puts(out, "{\"type\": \"helper_error\", \"helper\": ");
	json_str(out, e->fmt, strlen(e->fmt));
	sbuf_printf(out, ", \"retcode\": %lld, \"line\": %u, \"col\": %u}\n",
		    (long long)ret, e->pos.line, e->pos.col);
}

const struct output_format output_format_json = {
	.name = "json",
	.log_line = output_json_log_line,
	.attaching = json_attaching,
	.lost = json_lost,
	.message = json_message_line,
	.script_message = json_script_message,
	.text_event = json_text_event,
	.print_value = json_print_value,
	.value = json_value,
	.maps_begin = json_maps_begin,
	.map = maps_render_json,
	.error_stderr = json_error_stderr,
	.helper_error = json_helper_error,
};

/* ---- the formats -f names -------------------------------------------- */

/* A format in a file of its own is declared at the top of this file and
 * listed here (D's layout is no -f format: text's d_layout). */
static const struct output_format *const formats[] = {
	&output_format_text, &output_format_json,
};

#define NFORMATS (sizeof(formats) / sizeof(*formats))

const struct output_format *output_format_find(const char *name)
{
	for (size_t i = 0; name && i < NFORMATS; i++)
		if (strcmp(formats[i]->name, name) == 0)
			return formats[i];
	return NULL;
}

bool output_format_exists(const char *name)
{
	return output_format_find(name) != NULL;
}

const char *output_format_names(void)
{
	static char names[128];
	size_t k = 0;
	for (size_t i = 0; i < NFORMATS && k < sizeof(names); i++)
		k += (size_t)snprintf(names + k, sizeof(names) - k, "%s'%s'",
				      i ? ", " : "", formats[i]->name);
	return names;
}

log_line_fn *output_format_log_line(const char *name)
{
	const struct output_format *f = output_format_find(name);
	return f ? f->log_line : NULL;
}
