/* fuzz_diag.c - libFuzzer target for the diagnostic renderer: arbitrary
 * script text (long lines, tabs, UTF-8 cut anywhere, control bytes) and
 * arbitrary diagnostics on it (positions past the line's end, spans
 * longer than the line, repeats, more than the caps). Besides the
 * sanitizers, the output is checked against the bounds diag.h promises:
 * no line longer than a message plus its head, no control byte, and a
 * total that does not grow with the input.
 *
 * Input: byte 0 = number of diagnostics (0..255), then 8 bytes per
 * diagnostic (line: 2, col: 3, len: 2, flags: 1), then the text. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/diag.h"
#include "base/log.h"
#include "output/output.h"

static unsigned get(const uint8_t *p, int n)
{
	unsigned v = 0;
	for (int i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

/* The longest source line diags_print shows: the window, up to 3 bytes
 * at each end to finish a UTF-8 character, and "..." on both sides; its
 * caret line has at most as many bytes plus 3 of indent. */
#define WINDOW_LINE_MAX (DIAG_LINE_WINDOW + 2 * 3 + 2 * 3)

/* Renders the diagnostics the input describes and checks the output
 * against the bounds diag.h promises: NULL when they hold, else what
 * broke. tests/unit/test_diag_fuzz.c runs it too, over seeded random
 * inputs, so the suite does a fuzz run on every build. */
static const char *diag_fuzz_one(const uint8_t *data, size_t size)
{
	if (size < 1)
		return NULL;
	size_t ndiag = data[0], at = 1;
	if (at + ndiag * 8 > size)
		ndiag = (size - at) / 8;
	const uint8_t *specs = data + at;
	at += ndiag * 8;
	char *text = malloc(size - at + 1);
	if (!text)
		return NULL;
	memcpy(text, data + at, size - at);
	text[size - at] = '\0';

	struct diag_source src = { "fuzz.bt", text };
	struct diags d;
	diags_init(&d, &src);
	diag_check_nul(&d, text, size - at);  /* text has no NUL past its end */
	for (size_t i = 0; i < ndiag; i++) {
		const uint8_t *s = specs + i * 8;
		struct pos pos = { get(s, 2), get(s + 2, 3), get(s + 5, 2), 0 };
		uint8_t flags = s[7];
		/* the message quotes the text, as "unknown identifier" does
		 * (past DIAG_MSG_MAX is enough to test the cut) */
		size_t quote = flags & 0x40 ? 3 * DIAG_MSG_MAX : (flags & 0x3f);
		if (quote > size - at)
			quote = size - at;
		if (flags & 0x80)
			diag_warning(&d, pos, "FUZZ", "warning %u: '%.*s'",
				     flags & 3, (int)quote, text);
		else
			diag_error(&d, pos, "FUZZ", "error %u: '%.*s'",
				   flags & 3, (int)quote, text);
	}

	char *out = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&out, &len);
	if (!m)
		abort();
	log_set_line(size & 1 ? output_json_log_line : NULL);
	diags_print(&d, m);
	fclose(m);

	/* Bounds: every line is a head (at most DIAG_MSG_MAX + 512 bytes),
	 * a window of the source or its caret line; at most three lines per
	 * kept diagnostic plus the two "too many" lines. JSON escapes a
	 * control byte in 6. And the whole output is no more than the heads
	 * (their messages, name and tag) plus a window and a caret line per
	 * diagnostic: however long the script's lines, none is shown whole. */
	const char *bad = NULL;
	size_t esc = log_line() ? 6 : 1;
	size_t line_max = (DIAG_MSG_MAX + 512) * esc + 64;
	size_t lines = 0, cur = 0;
	for (size_t i = 0; i < len && !bad; i++) {
		unsigned char c = (unsigned char)out[i];
		if (c == '\n') {
			lines++;
			cur = 0;
			continue;
		}
		if ((c < 0x20 && c != '\t') || c == 0x7f)
			bad = "a control byte reached the terminal";
		else if (++cur > line_max)
			bad = "a line longer than a head can be";
	}
	size_t kept = DIAG_MAX_ERRORS + DIAG_MAX_WARNINGS;
	size_t total_max = 2 * 200;                /* the "too many" lines */
	for (size_t i = 0; i < d.list.n; i++) {
		const struct diag *g = &d.list.v[i];
		total_max += (strlen(g->msg ? g->msg : "") + strlen(g->tag) +
			      strlen(src.name) + 64) * esc +
			     2 * (WINDOW_LINE_MAX + 3 + 1);
	}
	if (!bad && lines > 3 * kept + 2)
		bad = "more lines than three per kept diagnostic";
	if (!bad && d.list.n > kept)
		bad = "more diagnostics kept than the caps";
	if (!bad && len > total_max)
		bad = "more output than the heads and a window each";
	free(out);
	diags_free(&d);
	free(text);
	return bad;
}

#ifndef DIAG_FUZZ_NO_MAIN
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *bad = diag_fuzz_one(data, size);
	if (bad) {
		fprintf(stderr, "fuzz_diag: %s\n", bad);
		abort();
	}
	return 0;
}
#endif
