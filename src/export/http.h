/* http.h - the metrics endpoint's HTTP server: GET of a few paths, every
 * bound explicit, driven from sonde's event loop without ever waiting.
 *
 * Why not a library. libmicrohttpd (Debian's) would bring its own
 * threads or its own select loop, chunked encoding, keep-alive, POST
 * parsing and TLS through GnuTLS; the endpoint needs none of that, and
 * a second thread would have to stay out of output's single-owner state
 * (stack and symbol tables). What it does need is a handful of bounds,
 * each a few lines here: connections (the oldest unfinished request is
 * dropped for a new one), request bytes, and time to send the request
 * and to take the response. TLS and authentication are the job of the
 * proxy a fleet already runs (README: "Behind TLS and a password"). */
#ifndef SONDE_EXPORT_HTTP_H
#define SONDE_EXPORT_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a scraper asked for (the Accept header): */
enum http_format {
	HTTP_FMT_TEXT,          /* text/plain; version=0.0.4 */
	HTTP_FMT_OPENMETRICS,   /* application/openmetrics-text; version=1.0.0 */
	HTTP_NFORMATS
};

struct http_limits {
	unsigned max_conns;     /* open connections at once */
	size_t max_request;     /* bytes of request line and headers */
	unsigned read_ms;       /* to send the whole request */
	unsigned wait_ms;       /* for the body to be rendered */
	unsigned write_ms;      /* to take the whole response */
	size_t max_body;        /* bytes of one response body */
};
/* 16 connections, 8 KiB, 5 s, 10 s, 10 s, 64 MiB. */
extern const struct http_limits http_default_limits;

/* ---- the request parser (pure: fuzzed by tests/fuzz/fuzz_http.c) ---- */

enum http_method { HTTP_GET, HTTP_HEAD, HTTP_OTHER_METHOD };
enum http_path { HTTP_PATH_METRICS, HTTP_PATH_ROOT, HTTP_PATH_OTHER };

struct http_request {
	enum http_method method;
	enum http_path path;
	enum http_format format;
};

/* Parse the request in BUF[0..LEN): 1 when it is complete (the blank
 * line after the headers was seen) and REQ is filled, 0 when more bytes
 * are needed, -EBADMSG when it is no HTTP/1.x request. */
int http_parse_request(const char *buf, size_t len, struct http_request *req);

/* ---- the server ---------------------------------------------------- */

struct http_server;

/* Listen on ADDR: "PORT" (127.0.0.1), "HOST:PORT", "[IPV6]:PORT", with
 * HOST a numeric address or "localhost"; port 0 picks a free one. NULL
 * with a message naming the address when it cannot. */
struct http_server *http_listen(const char *addr, const struct http_limits *lim);
/* "http://HOST:PORT/metrics" as bound. */
const char *http_url(const struct http_server *s);
/* Accept, read, write and expire without waiting. Returns a bit mask
 * (1 << format) of the formats that requests wait a body for. */
unsigned http_step(struct http_server *s);
/* The body for every request waiting for FMT: DATA (malloc'd; taken
 * over) of LEN bytes, or NULL: the body could not be made (500). */
void http_serve(struct http_server *s, enum http_format fmt, char *data,
		size_t len);
/* Connections open now (tests, -v). */
unsigned http_nconns(const struct http_server *s);
void http_free(struct http_server *s);

#endif
