/* log.c - sonde's own error, warning and verbose lines on stderr. */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>

int log_verbose;

static void log_v(const char *kind, const char *fmt, va_list ap)
{
	fprintf(stderr, "sonde: %s", kind);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void log_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	log_v("error: ", fmt, ap);
	va_end(ap);
}

void log_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	log_v("warning: ", fmt, ap);
	va_end(ap);
}

void log_info(const char *fmt, ...)
{
	if (!log_verbose)
		return;
	va_list ap;
	va_start(ap, fmt);
	log_v("", fmt, ap);
	va_end(ap);
}
