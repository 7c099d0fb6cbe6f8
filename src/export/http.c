/* http.c - the metrics endpoint's bounded HTTP/1.x server (http.h).
 *
 * Everything happens in http_step(), called once per turn of sonde's
 * event loop (the engines return from their poll at least every 10 ms):
 * one poll() with a zero timeout over the listening socket and the open
 * connections, then at most one accept burst, one read or one write per
 * connection, and the expiry of whatever outlived its deadline. Nothing
 * blocks, so a client that stops reading or writing costs one slot until
 * its deadline, never a stall.
 *
 * A connection goes READ (until the blank line that ends the headers) ->
 * WAIT (its body is being rendered; requests of one format share one
 * body) -> WRITE (head, then body) -> LINGER (our side shut down; the
 * rest the client sends is read and dropped until it closes, so a close
 * with unread bytes cannot reset the connection before the client has
 * read the response) -> closed. Every response says "Connection: close".
 *
 * Memory: a request buffer of at most max_request per connection, and
 * the bodies, each shared by the connections that send it. At most
 * BODIES_MAX bodies are alive; a new one closes the connections still
 * sending the oldest (a client slower than BODIES_MAX scrapes). */
#include "http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../base/log.h"

#define BODIES_MAX 3
#define ACCEPTS_PER_STEP 32
#define LINGER_MS 1000
#define SEND_MAX (256u * 1024)   /* bytes offered to one socket per step */

const struct http_limits http_default_limits = {
	.max_conns = 16,
	.max_request = 8192,
	.read_ms = 5000,
	.wait_ms = 10000,
	.write_ms = 10000,
	.max_body = 64u << 20,
};

/* ---- the request parser -------------------------------------------- */

/* The line starting at P (up to END), without its CR LF: its length,
 * and *next past it; -1 when no LF ends it yet. */
static long line_at(const char *p, const char *end, const char **next)
{
	const char *nl = memchr(p, '\n', (size_t)(end - p));
	if (!nl)
		return -1;
	*next = nl + 1;
	long n = nl - p;
	if (n > 0 && p[n - 1] == '\r')
		n--;
	return n;
}

static bool has_token(const char *s, size_t n, const char *tok)
{
	size_t t = strlen(tok);
	for (size_t i = 0; i + t <= n; i++)
		if (strncasecmp(s + i, tok, t) == 0)
			return true;
	return false;
}

int http_parse_request(const char *buf, size_t len, struct http_request *req)
{
	const char *p = buf, *end = buf + len, *next;
	memset(req, 0, sizeof(*req));
	/* a request may start after blank lines (RFC 9112 2.2) */
	long n;
	while ((n = line_at(p, end, &next)) == 0)
		p = next;
	if (n < 0)
		return memchr(p, '\0', (size_t)(end - p)) ? -EBADMSG : 0;
	/* METHOD SP TARGET SP HTTP/1.x */
	const char *line = p, *sp1 = memchr(line, ' ', (size_t)n);
	const char *sp2 = sp1 ? memchr(sp1 + 1, ' ',
				       (size_t)(line + n - sp1 - 1)) : NULL;
	if (!sp1 || !sp2 || sp1 == line || sp2 == sp1 + 1 ||
	    line + n - sp2 - 1 != 8 || memcmp(sp2 + 1, "HTTP/1.", 7) != 0 ||
	    (sp2[8] != '0' && sp2[8] != '1'))
		return -EBADMSG;
	size_t mlen = (size_t)(sp1 - line);
	req->method = mlen == 3 && memcmp(line, "GET", 3) == 0 ? HTTP_GET :
		mlen == 4 && memcmp(line, "HEAD", 4) == 0 ? HTTP_HEAD :
		HTTP_OTHER_METHOD;
	const char *target = sp1 + 1;
	size_t tlen = (size_t)(sp2 - target);
	const char *q = memchr(target, '?', tlen);
	size_t plen = q ? (size_t)(q - target) : tlen;
	req->path = plen == 8 && memcmp(target, "/metrics", 8) == 0 ?
		HTTP_PATH_METRICS : plen == 1 && target[0] == '/' ?
		HTTP_PATH_ROOT : HTTP_PATH_OTHER;
	req->format = HTTP_FMT_TEXT;
	p = next;
	/* headers, up to the empty line */
	for (;;) {
		n = line_at(p, end, &next);
		if (n < 0)
			return memchr(p, '\0', (size_t)(end - p)) ? -EBADMSG : 0;
		if (n == 0)
			return 1;
		const char *colon = memchr(p, ':', (size_t)n);
		if (!colon || colon == p)
			return -EBADMSG;
		if (colon - p == 6 && strncasecmp(p, "Accept", 6) == 0 &&
		    has_token(colon + 1, (size_t)(p + n - colon - 1),
			      "application/openmetrics-text"))
			req->format = HTTP_FMT_OPENMETRICS;
		p = next;
	}
}

/* ---- bodies and connections ------------------------------------------ */

struct body {
	char *data;
	size_t len;
	unsigned refs;         /* connections sending it, +1 while newest */
	uint64_t serial;
};

enum conn_state { C_FREE, C_READ, C_WAIT, C_WRITE, C_LINGER };

struct conn {
	enum conn_state state;
	int fd;
	uint64_t deadline;     /* ms, monotonic */
	uint64_t opened;
	char *req;
	size_t nreq;
	struct http_request r;
	char head[384];
	size_t nhead, off;     /* off: bytes of head + body sent */
	struct body *body;     /* NULL: the head is the whole response */
	bool send_body;
};

struct http_server {
	struct http_limits lim;
	int lfd;
	char url[128];
	struct conn *conns;
	struct pollfd *pfds;
	struct body *bodies[BODIES_MAX];
	uint64_t serial;
};

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void body_put(struct http_server *s, struct body *b)
{
	if (!b || --b->refs > 0)
		return;
	for (int i = 0; i < BODIES_MAX; i++)
		if (s->bodies[i] == b)
			s->bodies[i] = NULL;
	free(b->data);
	free(b);
}

static void conn_close(struct http_server *s, struct conn *c)
{
	if (c->state == C_FREE)
		return;
	close(c->fd);
	free(c->req);
	body_put(s, c->body);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
}

static const char *reason(int status)
{
	switch (status) {
	case 200: return "OK";
	case 400: return "Bad Request";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 431: return "Request Header Fields Too Large";
	case 500: return "Internal Server Error";
	case 503: return "Service Unavailable";
	default: return "Error";
	}
}

static const char *content_type(enum http_format f)
{
	return f == HTTP_FMT_OPENMETRICS ?
		"application/openmetrics-text; version=1.0.0; charset=utf-8" :
		"text/plain; version=0.0.4; charset=utf-8";
}

/* Start sending STATUS with a head and either BODY or a short TEXT. */
static void respond(struct http_server *s, struct conn *c, int status,
		    const char *ctype, struct body *body, const char *text)
{
	size_t len = body ? body->len : strlen(text);
	int n = snprintf(c->head, sizeof(c->head),
			 "HTTP/1.1 %d %s\r\nContent-Type: %s\r\n"
			 "Content-Length: %zu\r\n%sConnection: close\r\n\r\n%s",
			 status, reason(status), ctype, len,
			 status == 405 ? "Allow: GET, HEAD\r\n" : "",
			 body || c->r.method == HTTP_HEAD ? "" : text);
	c->nhead = n > 0 && (size_t)n < sizeof(c->head) ? (size_t)n : 0;
	c->off = 0;
	c->body = body;
	if (body)
		body->refs++;
	c->send_body = body && c->r.method != HTTP_HEAD;
	c->state = C_WRITE;
	c->deadline = now_ms() + s->lim.write_ms;
	free(c->req);
	c->req = NULL;
}

static void respond_text(struct http_server *s, struct conn *c, int status,
			 const char *text)
{
	respond(s, c, status, "text/plain; charset=utf-8", NULL, text);
}

static const char index_page[] =
	"<html><head><title>sonde</title></head><body><h1>sonde</h1>"
	"<p><a href=\"/metrics\">Metrics</a></p></body></html>\n";

/* A complete request: answer it now, or wait for its body. */
static void on_request(struct http_server *s, struct conn *c)
{
	if (c->r.method == HTTP_OTHER_METHOD) {
		respond_text(s, c, 405, "only GET and HEAD\n");
	} else if (c->r.path == HTTP_PATH_ROOT) {
		respond(s, c, 200, "text/html; charset=utf-8", NULL, index_page);
	} else if (c->r.path != HTTP_PATH_METRICS) {
		respond_text(s, c, 404, "not found: the metrics are at /metrics\n");
	} else {
		c->state = C_WAIT;
		c->deadline = now_ms() + s->lim.wait_ms;
		free(c->req);
		c->req = NULL;
	}
}

static void on_readable(struct http_server *s, struct conn *c)
{
	if (c->state == C_LINGER || c->state == C_WAIT) {
		char sink[4096];
		ssize_t k = recv(c->fd, sink, sizeof(sink), MSG_DONTWAIT);
		if (k == 0 || (k < 0 && errno != EAGAIN && errno != EINTR))
			conn_close(s, c);    /* done, or the client left */
		return;
	}
	if (!c->req && !(c->req = malloc(s->lim.max_request))) {
		conn_close(s, c);
		return;
	}
	size_t room = s->lim.max_request - c->nreq;
	ssize_t k = recv(c->fd, c->req + c->nreq, room, MSG_DONTWAIT);
	if (k < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (k <= 0) {
		conn_close(s, c);
		return;
	}
	c->nreq += (size_t)k;
	int r = http_parse_request(c->req, c->nreq, &c->r);
	if (r < 0)
		respond_text(s, c, 400, "bad request\n");
	else if (r > 0)
		on_request(s, c);
	else if (c->nreq == s->lim.max_request)
		respond_text(s, c, 431, "request too large\n");
}

static void on_writable(struct http_server *s, struct conn *c)
{
	size_t total = c->nhead + (c->send_body ? c->body->len : 0);
	size_t budget = SEND_MAX;
	while (c->off < total && budget) {
		const char *p;
		size_t n;
		if (c->off < c->nhead) {
			p = c->head + c->off;
			n = c->nhead - c->off;
		} else {
			p = c->body->data + (c->off - c->nhead);
			n = total - c->off;
		}
		if (n > budget)
			n = budget;
		ssize_t k = send(c->fd, p, n, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && errno == EAGAIN)
			return;
		if (k <= 0) {
			conn_close(s, c);
			return;
		}
		c->off += (size_t)k;
		budget -= (size_t)k;
	}
	if (c->off < total)
		return;
	shutdown(c->fd, SHUT_WR);
	body_put(s, c->body);
	c->body = NULL;
	c->state = C_LINGER;
	c->deadline = now_ms() + LINGER_MS;
}

static struct conn *free_slot(struct http_server *s)
{
	struct conn *victim = NULL;
	for (unsigned i = 0; i < s->lim.max_conns; i++) {
		struct conn *c = &s->conns[i];
		if (c->state == C_FREE)
			return c;
		/* a full table drops a connection that has yet to finish
		 * its request (or is only lingering), the oldest first:
		 * idle clients cannot keep a scraper out */
		if ((c->state == C_READ || c->state == C_LINGER) &&
		    (!victim || c->opened < victim->opened))
			victim = c;
	}
	if (victim)
		conn_close(s, victim);
	return victim;
}

static void accept_some(struct http_server *s)
{
	for (int i = 0; i < ACCEPTS_PER_STEP; i++) {
		int fd = accept4(s->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		struct conn *c = free_slot(s);
		if (!c) {
			close(fd);      /* every slot is busy answering */
			continue;
		}
		c->fd = fd;
		c->state = C_READ;
		c->opened = now_ms();
		c->deadline = c->opened + s->lim.read_ms;
	}
}

unsigned http_step(struct http_server *s)
{
	if (!s)
		return 0;
	unsigned n = 0;
	s->pfds[n++] = (struct pollfd){ s->lfd, POLLIN, 0 };
	for (unsigned i = 0; i < s->lim.max_conns; i++) {
		struct conn *c = &s->conns[i];
		short ev = c->state == C_WRITE ? POLLOUT :
			c->state == C_FREE ? 0 : POLLIN;
		s->pfds[n++] = (struct pollfd){ ev ? c->fd : -1, ev, 0 };
	}
	if (poll(s->pfds, n, 0) > 0) {
		for (unsigned i = 0; i < s->lim.max_conns; i++) {
			struct conn *c = &s->conns[i];
			short re = s->pfds[1 + i].revents;
			if (c->state == C_FREE || !re)
				continue;
			if (c->state == C_WRITE && (re & (POLLOUT | POLLERR | POLLHUP)))
				on_writable(s, c);
			else if (c->state != C_WRITE &&
				 (re & (POLLIN | POLLERR | POLLHUP)))
				on_readable(s, c);
		}
		if (s->pfds[0].revents & POLLIN)
			accept_some(s);
	}
	uint64_t now = now_ms();
	unsigned want = 0;
	for (unsigned i = 0; i < s->lim.max_conns; i++) {
		struct conn *c = &s->conns[i];
		if (c->state == C_FREE)
			continue;
		if (now >= c->deadline) {
			if (c->state == C_WAIT)
				respond_text(s, c, 503, "the metrics took too "
					     "long to gather\n");
			else
				conn_close(s, c);
			continue;
		}
		if (c->state == C_WAIT)
			want |= 1u << c->r.format;
	}
	return want;
}

void http_serve(struct http_server *s, enum http_format fmt, char *data,
		size_t len)
{
	if (!s) {
		free(data);
		return;
	}
	struct body *b = NULL;
	if (data && len <= s->lim.max_body && (b = calloc(1, sizeof(*b)))) {
		b->data = data;
		b->len = len;
		b->refs = 1;
		b->serial = ++s->serial;
		/* room for it: the connections on the oldest body go */
		int slot = -1, oldest = -1;
		for (int i = 0; i < BODIES_MAX; i++) {
			if (!s->bodies[i]) {
				slot = i;
				break;
			}
			if (oldest < 0 || s->bodies[i]->serial <
					  s->bodies[oldest]->serial)
				oldest = i;
		}
		if (slot < 0) {
			struct body *old = s->bodies[oldest];
			for (unsigned i = 0; i < s->lim.max_conns; i++)
				if (s->conns[i].body == old)
					conn_close(s, &s->conns[i]);
			slot = oldest;
			s->bodies[slot] = NULL;
		}
		s->bodies[slot] = b;
	} else {
		free(data);
	}
	for (unsigned i = 0; i < s->lim.max_conns; i++) {
		struct conn *c = &s->conns[i];
		if (c->state != C_WAIT || c->r.format != fmt)
			continue;
		if (b)
			respond(s, c, 200, content_type(fmt), b, NULL);
		else
			respond_text(s, c, 500, "the metrics could not be "
				     "gathered (see sonde's messages)\n");
	}
	/* the newest body's own reference goes: the connections keep it */
	if (b)
		body_put(s, b);
}

unsigned http_nconns(const struct http_server *s)
{
	unsigned n = 0;
	for (unsigned i = 0; s && i < s->lim.max_conns; i++)
		n += s->conns[i].state != C_FREE;
	return n;
}

/* ---- listening ------------------------------------------------------- */

/* Split ADDR into host and port; a bare port is loopback. */
static int split_addr(const char *addr, char *host, size_t hsize,
		      const char **port)
{
	const char *colon = strrchr(addr, ':');
	if (!colon) {
		snprintf(host, hsize, "127.0.0.1");
		*port = addr;
		return 0;
	}
	size_t hl = (size_t)(colon - addr);
	const char *h = addr;
	if (hl >= 2 && addr[0] == '[' && addr[hl - 1] == ']') {
		h++;
		hl -= 2;
	} else if (memchr(addr, ':', hl)) {
		return -EINVAL;     /* an IPv6 address wants brackets */
	}
	if (hl == 0 || hl >= hsize)
		return -EINVAL;
	memcpy(host, h, hl);
	host[hl] = '\0';
	if (strcmp(host, "localhost") == 0)
		snprintf(host, hsize, "127.0.0.1");
	*port = colon + 1;
	return 0;
}

struct http_server *http_listen(const char *addr, const struct http_limits *lim)
{
	char host[128];
	const char *port;
	if (split_addr(addr, host, sizeof(host), &port) < 0) {
		log_error("--metrics %s: expected PORT, HOST:PORT or [IPV6]:PORT "
			  "(an address on every interface is 0.0.0.0:PORT or "
			  "[::]:PORT)", addr);
		errno = EINVAL;
		return NULL;
	}
	char *end;
	unsigned long pn = strtoul(port, &end, 10);
	if (!*port || *end || pn > 65535) {
		log_error("--metrics %s: '%s' is not a port number", addr, port);
		errno = EINVAL;
		return NULL;
	}
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
		.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE,
	}, *ai = NULL;
	int r = getaddrinfo(host, port, &hints, &ai);
	if (r != 0) {
		log_error("--metrics %s: '%s' is not a numeric address (%s)",
			  addr, host, gai_strerror(r));
		errno = EINVAL;
		return NULL;
	}
	struct http_server *s = calloc(1, sizeof(*s));
	if (!s) {
		freeaddrinfo(ai);
		return NULL;
	}
	s->lim = *lim;
	s->lfd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int one = 1;
	if (s->lfd >= 0)
		setsockopt(s->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (s->lfd < 0 || bind(s->lfd, ai->ai_addr, ai->ai_addrlen) < 0 ||
	    listen(s->lfd, 16) < 0) {
		int e = errno;
		log_error("--metrics %s: cannot listen: %s", addr, strerror(e));
		freeaddrinfo(ai);
		if (s->lfd >= 0)
			close(s->lfd);
		free(s);
		errno = e;
		return NULL;
	}
	freeaddrinfo(ai);
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char ip[INET6_ADDRSTRLEN] = "?";
	unsigned bound = 0;
	if (getsockname(s->lfd, (struct sockaddr *)&ss, &sl) == 0) {
		if (ss.ss_family == AF_INET6) {
			struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
			inet_ntop(AF_INET6, &a->sin6_addr, ip, sizeof(ip));
			bound = ntohs(a->sin6_port);
		} else {
			struct sockaddr_in *a = (struct sockaddr_in *)&ss;
			inet_ntop(AF_INET, &a->sin_addr, ip, sizeof(ip));
			bound = ntohs(a->sin_port);
		}
	}
	snprintf(s->url, sizeof(s->url),
		 ss.ss_family == AF_INET6 ? "http://[%s]:%u/metrics" :
		 "http://%s:%u/metrics", ip, bound);
	s->conns = calloc(s->lim.max_conns, sizeof(*s->conns));
	s->pfds = calloc(s->lim.max_conns + 1, sizeof(*s->pfds));
	if (!s->conns || !s->pfds) {
		http_free(s);
		errno = ENOMEM;
		return NULL;
	}
	for (unsigned i = 0; i < s->lim.max_conns; i++)
		s->conns[i].fd = -1;
	return s;
}

const char *http_url(const struct http_server *s)
{
	return s->url;
}

void http_free(struct http_server *s)
{
	if (!s)
		return;
	for (unsigned i = 0; s->conns && i < s->lim.max_conns; i++)
		conn_close(s, &s->conns[i]);
	for (int i = 0; i < BODIES_MAX; i++)
		if (s->bodies[i]) {
			free(s->bodies[i]->data);
			free(s->bodies[i]);
		}
	if (s->lfd >= 0)
		close(s->lfd);
	free(s->conns);
	free(s->pfds);
	free(s);
}
