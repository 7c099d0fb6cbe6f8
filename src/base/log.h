/* log.h - run-time messages of sonde itself (not script diagnostics). */
#ifndef SONDE_LOG_H
#define SONDE_LOG_H

#include <stdio.h>

/* Process-wide verbosity, set once from -v. */
extern int log_verbose;
/* How one message line of sonde's own (and a diagnostic's head) is
 * written, when the output format chosen with -f has its own way (json:
 * {"type": "error"|"warning"|"info", "data": "..."}); `type` is "error",
 * "warning" or "info". Set once by the driver from the format
 * (output_format_log_line); NULL, the default, is the text lines. */
typedef void log_line_fn(FILE *out, const char *type, const char *msg);
void log_set_line(log_line_fn *line);
log_line_fn *log_line(void);
/* Process-wide, set once from --no-warnings: log_warn() says nothing. */
extern int log_no_warnings;

/* Text another process chose (a traced program's message, a path in
 * its mappings, its name), made safe to print on a terminal: control
 * bytes (C0, DEL, C1) and bytes that are not UTF-8 become \xNN, and a
 * backslash \\; at most n - 1 bytes, cut at a whole character. Returns
 * out. */
const char *log_clean(char *out, size_t n, const char *text);

/* "ERROR: <subsystem>: message" and "WARNING: ..." on stderr, in the
 * words bpftrace 0.17 starts its messages with (so what greps a bpftrace
 * message finds sonde's); -v's lines start "sonde: ". */
void log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Printed only under -v. */
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A warning repeated for many objects of one cause (a probe of a
 * wildcard skipped, each for the same reason): the first LOG_REPEAT_SHOWN
 * are printed, the others only counted (all printed with -v), and
 * log_repeat_end says how many more there were. Zero-initialize. */
#define LOG_REPEAT_SHOWN 3
struct log_repeat {
	unsigned n;
};
void log_repeat_warn(struct log_repeat *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* "N more WHAT (-v shows each)" when some were not shown. */
void log_repeat_end(struct log_repeat *r, const char *what);

/* Milliseconds on a monotonic clock from an arbitrary start, for the -v
 * phase timings. */
double log_now_ms(void);

#endif
