/* log.c - sonde's own error, warning and verbose lines on stderr. */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <time.h>

int log_verbose;
int log_json;
int log_no_warnings;

void log_json_str(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", out);
		else if (c == '\t')
			fputs("\\t", out);
		else if (c < 0x20 || c == 0x7f)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

/* One message is at most LOG_LINE_MAX bytes, whatever it quotes. */
#define LOG_LINE_MAX 4096

static void log_v(const char *kind, const char *type, const char *fmt,
		  va_list ap)
{
	char msg[LOG_LINE_MAX];
	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (log_json) {
		fprintf(stderr, "{\"type\": \"%s\", \"data\": ", type);
		log_json_str(stderr, msg);
		fputs("}\n", stderr);
		return;
	}
	fprintf(stderr, "sonde: %s%s\n", kind, msg);
}

void log_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	log_v("error: ", "error", fmt, ap);
	va_end(ap);
}

void log_warn(const char *fmt, ...)
{
	if (log_no_warnings)
		return;
	va_list ap;
	va_start(ap, fmt);
	log_v("warning: ", "warning", fmt, ap);
	va_end(ap);
}

void log_info(const char *fmt, ...)
{
	if (!log_verbose)
		return;
	va_list ap;
	va_start(ap, fmt);
	log_v("", "info", fmt, ap);
	va_end(ap);
}

void log_repeat_warn(struct log_repeat *r, const char *fmt, ...)
{
	if (++r->n > LOG_REPEAT_SHOWN && !log_verbose)
		return;
	va_list ap;
	va_start(ap, fmt);
	log_v("warning: ", "warning", fmt, ap);
	va_end(ap);
}

void log_repeat_end(struct log_repeat *r, const char *what)
{
	if (r->n > LOG_REPEAT_SHOWN && !log_verbose)
		log_warn("%u more %s (-v shows each)", r->n - LOG_REPEAT_SHOWN,
			 what);
	r->n = 0;
}

double log_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}
