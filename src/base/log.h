/* log.h - run-time messages of sonde itself (not script diagnostics). */
#ifndef SONDE_LOG_H
#define SONDE_LOG_H

/* Process-wide verbosity, set once from -v. */
extern int log_verbose;

/* "sonde: <subsystem>: message" on stderr. */
void log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Printed only under -v. */
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
