/* diag.h - compiler diagnostics: recorded with position and stable tag,
 * rendered later (file:line:col, tag, message, source line and caret). */
#ifndef SONDE_DIAG_H
#define SONDE_DIAG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "vec.h"

/* A source position. Lines and columns count from 1; `len` is the number
 * of bytes the construct spans on its first line (at least 1), so the
 * caret can underline it. A zeroed pos means "no position" (line 0).
 * `file` 0 is the script; N > 0 is the Nth source added with
 * diags_add_source (a header the preprocessor read). */
struct pos {
	unsigned line, col, len;
	unsigned file;
};

enum diag_level { DIAG_ERROR, DIAG_WARNING };

struct diag {
	enum diag_level level;
	struct pos pos;
	const char *tag;   /* stable, e.g. "SYNTAX", "UNDEF_VAR" (static string) */
	char *msg;         /* heap */
};

/* The source a set of diagnostics refers to. */
struct diag_source {
	const char *name;  /* "stdin" for -e, else the script path */
	const char *text;  /* whole script, NUL-terminated */
};

/* Bounded whatever the input: a diagnostic identical to one already
 * recorded (same level, place, tag and message: one cause reported by
 * many instructions or probes) is dropped, at most DIAG_MAX_ERRORS errors
 * and DIAG_MAX_WARNINGS warnings are kept (the rest are only counted and
 * rendered as one "too many" line), and a message is cut at
 * DIAG_MSG_MAX bytes. */
#define DIAG_MAX_ERRORS 20
#define DIAG_MAX_WARNINGS 20
#define DIAG_MSG_MAX 1024
/* The most of one source line shown under a diagnostic: a longer line
 * is shown as a window around the caret, cut with "...". */
#define DIAG_LINE_WINDOW 120

struct diags {
	const struct diag_source *src;
	VEC(struct diag) list;      /* the kept ones */
	unsigned nerrors;           /* every error, kept or not */
	unsigned dropped_errors, dropped_warnings;  /* over the caps */
	VEC(const char *) error_tags;  /* distinct tags of every error */
	uint64_t *seen;             /* hashes of the dropped, to count each once */
	bool no_warnings;           /* --no-warnings: warnings are not kept */
	VEC(struct diag_source) files; /* pos.file - 1; name and text owned */
};
#define DIAG_SEEN_SLOTS 8192

void diags_init(struct diags *d, const struct diag_source *src);
void diags_free(struct diags *d);
void diag_error(struct diags *d, struct pos pos, const char *tag,
		const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void diag_warning(struct diags *d, struct pos pos, const char *tag,
		  const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void diag_vadd(struct diags *d, enum diag_level level, struct pos pos,
	       const char *tag, const char *fmt, va_list ap);
/* Render every kept diagnostic, in source order, as
 *   NAME:LINE:COL: ERROR: MESSAGE [TAG]   (WARNING: for warnings;
 *   the level in bpftrace's words)
 *   <source line, or a window of it around the caret>
 *   <spaces>^~~~
 * (the last two lines only when the position is known), then one line
 * saying how many more there were when the caps dropped some. Control
 * characters of the script and the messages are shown as '?', never
 * sent to the terminal. */
void diags_print(const struct diags *d, FILE *out);
/* Register another source file (copied), so positions in it render with
 * its name and line: returns its pos.file number, or 0 (the script) if
 * memory runs out. */
unsigned diags_add_source(struct diags *d, const char *name, const char *text,
			  size_t len);
/* Move every diagnostic FROM keeps (the errors and warnings it kept)
 * into TO, at LEVEL, with SUFFIX appended to each message (may be "");
 * FROM is left empty. How the compiler turns what a probe names but this
 * system lacks into warnings when other probes remain. */
void diags_move(struct diags *to, struct diags *from, enum diag_level level,
		const char *suffix);
/* Whether an error or warning with this tag was reported (kept or not,
 * for errors). */
bool diags_has(const struct diags *d, const char *tag);
/* A NUL byte in a script of LEN bytes ends the text the compiler sees:
 * report the first one as an error at its position. Returns true when
 * there was one. */
bool diag_check_nul(struct diags *d, const char *text, size_t len);

#endif
