/* diag.h - compiler diagnostics: recorded with position and stable tag,
 * rendered later (file:line:col, tag, message, source line and caret). */
#ifndef SONDE_DIAG_H
#define SONDE_DIAG_H

#include <stdarg.h>
#include <stdbool.h>
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

struct diags {
	const struct diag_source *src;
	VEC(struct diag) list;
	unsigned nerrors;
	bool no_warnings;  /* --no-warnings: warnings are not recorded */
	VEC(struct diag_source) files; /* pos.file - 1; name and text owned */
};

void diags_init(struct diags *d, const struct diag_source *src);
void diags_free(struct diags *d);
void diag_error(struct diags *d, struct pos pos, const char *tag,
		const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void diag_warning(struct diags *d, struct pos pos, const char *tag,
		  const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void diag_vadd(struct diags *d, enum diag_level level, struct pos pos,
	       const char *tag, const char *fmt, va_list ap);
/* Render every diagnostic, in source order, as
 *   NAME:LINE:COL: error: MESSAGE [TAG]
 *   <source line>
 *   <spaces>^~~~
 * (the last two lines only when the position is known). */
void diags_print(const struct diags *d, FILE *out);
/* Register another source file (copied), so positions in it render with
 * its name and line: returns its pos.file number, or 0 (the script) if
 * memory runs out. */
unsigned diags_add_source(struct diags *d, const char *name, const char *text,
			  size_t len);
bool diags_has(const struct diags *d, const char *tag);

#endif
