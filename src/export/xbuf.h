/* xbuf.h - a growable byte buffer with a ceiling, for the exporters'
 * bodies (OpenMetrics text, pprof messages): a body that would pass its
 * ceiling or run out of memory stops growing and says so once. */
#ifndef SONDE_EXPORT_XBUF_H
#define SONDE_EXPORT_XBUF_H

#include <stdbool.h>
#include <stddef.h>

struct xbuf {
	char *s;
	size_t n, cap;
	size_t max;       /* 0: no ceiling */
	bool full;        /* a write did not fit (ceiling or memory) */
};

void xbuf_free(struct xbuf *b);
void xbuf_put(struct xbuf *b, const void *p, size_t n);
void xbuf_puts(struct xbuf *b, const char *s);
void xbuf_putc(struct xbuf *b, char c);
void xbuf_printf(struct xbuf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Hand the bytes over (the caller frees them); the buffer is empty. */
char *xbuf_take(struct xbuf *b, size_t *n);

#endif
