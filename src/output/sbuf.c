/* sbuf.c - the growable text buffer output builds every line in. */
#include "output_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sbuf_free(struct sbuf *b)
{
	if (!b)
		return;
	free(b->s);
	b->s = NULL;
	b->n = b->cap = 0;
}

bool sbuf_reserve(struct sbuf *b, size_t more)
{
	if (b->oom)
		return false;
	if (b->n + more + 1 <= b->cap)
		return true;
	size_t cap = b->cap ? b->cap : 64;
	while (cap < b->n + more + 1) {
		if (cap > ((size_t)-1) / 2) {
			b->oom = true;
			return false;
		}
		cap *= 2;
	}
	char *s = realloc(b->s, cap);
	if (!s) {
		b->oom = true;
		return false;
	}
	b->s = s;
	b->cap = cap;
	return true;
}

void sbuf_put(struct sbuf *b, const char *s, size_t n)
{
	if (!sbuf_reserve(b, n))
		return;
	memcpy(b->s + b->n, s, n);
	b->n += n;
	b->s[b->n] = '\0';
}

void sbuf_putc(struct sbuf *b, char c)
{
	sbuf_put(b, &c, 1);
}

void sbuf_puts(struct sbuf *b, const char *s)
{
	sbuf_put(b, s, strlen(s));
}

void sbuf_vprintf(struct sbuf *b, const char *fmt, va_list ap)
{
	va_list aq;
	va_copy(aq, ap);
	char small[256];
	int n = vsnprintf(small, sizeof(small), fmt, aq);
	va_end(aq);
	if (n < 0)
		return;
	if ((size_t)n < sizeof(small)) {
		sbuf_put(b, small, (size_t)n);
		return;
	}
	if (!sbuf_reserve(b, (size_t)n))
		return;
	vsnprintf(b->s + b->n, (size_t)n + 1, fmt, ap);
	b->n += (size_t)n;
}

void sbuf_printf(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	sbuf_vprintf(b, fmt, ap);
	va_end(ap);
}

void sbuf_truncate(struct sbuf *b, size_t n)
{
	if (n < b->n) {
		b->n = n;
		b->s[n] = '\0';
	}
}
