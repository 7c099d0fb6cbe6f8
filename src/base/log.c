/* log.c - sonde's own error, warning and verbose lines on stderr. */
#include "log.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

int log_verbose;
int log_no_warnings;

static log_line_fn *line_fn;

void log_set_line(log_line_fn *line)
{
	line_fn = line;
}

log_line_fn *log_line(void)
{
	return line_fn;
}

/* Bytes of the UTF-8 character starting at s (1 to 4), 0 if none does
 * (a stray continuation, an overlong or surrogate form, a C1 control). */
static size_t utf8_char(const unsigned char *s)
{
	unsigned char c = s[0];
	size_t n;
	uint32_t cp;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || (cp >= 0x80 && cp <= 0x9f))
		return 0;
	return n;
}

const char *log_clean(char *out, size_t n, const char *text)
{
	static const char hex[] = "0123456789abcdef";
	size_t k = 0;
	if (!n)
		return out;
	const unsigned char *s = (const unsigned char *)(text ? text : "");
	while (*s) {
		size_t len = utf8_char(s);
		char esc[4];
		const char *put = (const char *)s;
		size_t w = len;
		if (len == 0 || *s < 0x20 || *s == 0x7f || *s == '\\') {
			esc[0] = '\\';
			if (*s == '\\') {
				esc[1] = '\\';
				w = 2;
			} else {
				esc[1] = 'x';
				esc[2] = hex[*s >> 4];
				esc[3] = hex[*s & 15];
				w = 4;
			}
			put = esc;
			len = 1;
		}
		if (k + w >= n)
			break;
		memcpy(out + k, put, w);
		k += w;
		s += len;
	}
	out[k] = '\0';
	return out;
}

/* One message is at most LOG_LINE_MAX bytes, whatever it quotes. */
#define LOG_LINE_MAX 4096

static void log_v(const char *kind, const char *type, const char *fmt,
		  va_list ap)
{
	char msg[LOG_LINE_MAX];
	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (line_fn) {
		line_fn(stderr, type, msg);
		return;
	}
	fprintf(stderr, "%s%s\n", kind, msg);
}

void log_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	log_v("ERROR: ", "error", fmt, ap);
	va_end(ap);
}

void log_warn(const char *fmt, ...)
{
	if (log_no_warnings)
		return;
	va_list ap;
	va_start(ap, fmt);
	log_v("WARNING: ", "warning", fmt, ap);
	va_end(ap);
}

void log_info(const char *fmt, ...)
{
	if (!log_verbose)
		return;
	va_list ap;
	va_start(ap, fmt);
	log_v("sonde: ", "info", fmt, ap);
	va_end(ap);
}

void log_repeat_warn(struct log_repeat *r, const char *fmt, ...)
{
	if (++r->n > LOG_REPEAT_SHOWN && !log_verbose)
		return;
	va_list ap;
	va_start(ap, fmt);
	log_v("WARNING: ", "warning", fmt, ap);
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
