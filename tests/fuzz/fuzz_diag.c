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

static unsigned get(const uint8_t *p, int n)
{
	unsigned v = 0;
	for (int i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	size_t ndiag = data[0], at = 1;
	if (at + ndiag * 8 > size)
		ndiag = (size - at) / 8;
	const uint8_t *specs = data + at;
	at += ndiag * 8;
	char *text = malloc(size - at + 1);
	if (!text)
		return 0;
	memcpy(text, data + at, size - at);
	text[size - at] = '\0';

	struct diag_source src = { "fuzz.bt", text };
	struct diags d;
	diags_init(&d, &src);
	diag_check_nul(&d, text, size - at);  /* text has no NUL past its end */
	for (size_t i = 0; i < ndiag; i++) {
		const uint8_t *s = specs + i * 8;
		struct pos pos = { get(s, 2), get(s + 2, 3), get(s + 5, 2) };
		uint8_t flags = s[7];
		/* the message quotes the text, as "unknown identifier" does */
		size_t quote = flags & 0x40 ? size - at : (flags & 0x3f);
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
	log_json = (int)(size & 1);
	diags_print(&d, m);
	fclose(m);

	/* Bounds: every line is a head (at most DIAG_MSG_MAX + 512 bytes),
	 * a window of the source (DIAG_LINE_WINDOW, "..." on both sides and
	 * up to 3 bytes to finish a UTF-8 character at each end) or its
	 * caret line; at most three lines per kept diagnostic plus the two
	 * "too many" lines. JSON escapes a control byte in 6. */
	size_t line_max = (DIAG_MSG_MAX + 512) * (log_json ? 6 : 1) + 64;
	size_t lines = 0, cur = 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)out[i];
		if (c == '\n') {
			lines++;
			cur = 0;
			continue;
		}
		if ((c < 0x20 && c != '\t') || c == 0x7f)
			abort();        /* a control byte reached the terminal */
		if (++cur > line_max)
			abort();
	}
	size_t kept = DIAG_MAX_ERRORS + DIAG_MAX_WARNINGS;
	if (lines > 3 * kept + 2)
		abort();
	if (d.list.n > kept)
		abort();
	free(out);
	diags_free(&d);
	free(text);
	return 0;
}
