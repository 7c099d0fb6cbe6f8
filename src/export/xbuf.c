/* xbuf.c - the exporters' growable buffer (xbuf.h). */
#include "xbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void xbuf_free(struct xbuf *b)
{
	if (!b)
		return;
	free(b->s);
	b->s = NULL;
	b->n = b->cap = 0;
	b->full = false;
}

static bool reserve(struct xbuf *b, size_t more)
{
	if (b->full)
		return false;
	if (more > ((size_t)-1) / 2 - b->n || (b->max && b->n + more > b->max)) {
		b->full = true;
		return false;
	}
	if (b->n + more + 1 <= b->cap)
		return true;
	size_t cap = b->cap ? b->cap : 256;
	while (cap < b->n + more + 1)
		cap *= 2;
	char *s = realloc(b->s, cap);
	if (!s) {
		b->full = true;
		return false;
	}
	b->s = s;
	b->cap = cap;
	return true;
}

void xbuf_put(struct xbuf *b, const void *p, size_t n)
{
	if (!reserve(b, n))
		return;
	memcpy(b->s + b->n, p, n);
	b->n += n;
	b->s[b->n] = '\0';
}

void xbuf_puts(struct xbuf *b, const char *s)
{
	xbuf_put(b, s, strlen(s));
}

void xbuf_putc(struct xbuf *b, char c)
{
	xbuf_put(b, &c, 1);
}

void xbuf_printf(struct xbuf *b, const char *fmt, ...)
{
	char small[256];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < sizeof(small)) {
		xbuf_put(b, small, (size_t)n);
		return;
	}
	if (!reserve(b, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(b->s + b->n, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->n += (size_t)n;
}

char *xbuf_take(struct xbuf *b, size_t *n)
{
	char *s = b->s;
	*n = b->n;
	b->s = NULL;
	b->n = b->cap = 0;
	return s;
}
