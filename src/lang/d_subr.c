/* d_subr.c - D subroutines and actions that are other words of sonde's
 * own functions: stop() and rand(), the byte-order conversions,
 * getmajor()/getminor(), inet_ntoa() and inet_ntop() of IPv4, and
 * d_path() (Dynamic Tracing Guide, "Actions and Subroutines"; Oracle's
 * DTrace for Linux where Linux differs: its dev_t has 20 minor bits). */
#include "d_int.h"

#include <string.h>

#define LINUX_SIGSTOP 19
#define LINUX_AF_INET 2
#define LINUX_MINORBITS 20

/* *(TYPE *)x: what a D pointer argument points to */
static struct node *deref_as(struct d_parser *p, struct pos pos,
			     const char *type_name, struct node *x)
{
	return d_unop(p, pos, OP_DEREF,
		      d_cast(p, pos, arena_printf(p->a, "%s *", type_name), x));
}

static bool nargs_ok(struct d_parser *p, const char *name, struct pos pos,
		     const struct node_list *args, uint32_t n)
{
	if (args->n == n)
		return true;
	d_error(p, pos, "%s( ) prototype mismatch: %u arguments passed, "
		"%u expected", name, args->n, n);
	return false;
}

/* An IPv4 address at ADDR as ntop() reads it: its four bytes as an
 * integer in memory order. (IPv6 would need a 16-byte array read, which
 * D's front end does not build yet: inet_ntoa6() stays an error.) */
static struct node *inet4_of(struct d_parser *p, struct pos pos,
			     struct node *addr)
{
	return d_call(p, pos, "ntop", d_int(p, pos, LINUX_AF_INET),
		      deref_as(p, pos, "uint32", addr), NULL);
}

struct node *d_subr_call(struct d_parser *p, const char *name,
			 struct node_list *args, struct pos pos, bool *handled)
{
	*handled = true;
	if (strcmp(name, "stop") == 0) {
		/* the process that fired the probe stops, as by SIGSTOP
		 * (destructive: -w, as signal() is unsafe to sonde) */
		if (!nargs_ok(p, name, pos, args, 0))
			return NULL;
		return d_call(p, pos, "signal", d_int(p, pos, LINUX_SIGSTOP),
			      NULL, NULL);
	}
	if (strcmp(name, "rand") == 0)
		return nargs_ok(p, name, pos, args, 0) ?
			d_call(p, pos, "rand", NULL, NULL, NULL) : NULL;
	static const struct { const char *name; const char *type; } order[] = {
		{ "htons", "uint16" }, { "ntohs", "uint16" },
		{ "htonl", "uint32" }, { "ntohl", "uint32" },
		{ "htonll", "uint64" }, { "ntohll", "uint64" },
		{ NULL, NULL },
	};
	for (int i = 0; order[i].name; i++) {
		if (strcmp(order[i].name, name) != 0)
			continue;
		/* x86-64 is little-endian: network order is the bytes
		 * reversed, at the argument's declared width */
		if (!nargs_ok(p, name, pos, args, 1))
			return NULL;
		return d_call(p, pos, "bswap",
			      d_cast(p, pos, order[i].type, args->v[0]), NULL, NULL);
	}
	if (strcmp(name, "getmajor") == 0 || strcmp(name, "getminor") == 0) {
		if (!nargs_ok(p, name, pos, args, 1))
			return NULL;
		struct node *dev = d_cast(p, pos, "uint64", args->v[0]);
		/* major_t and minor_t: uint_t */
		if (name[3] == 'm' && name[4] == 'a')
			return d_cast(p, pos, "uint32", d_binop(p, pos, OP_SHR, dev,
				    d_int(p, pos, LINUX_MINORBITS)));
		return d_cast(p, pos, "uint32", d_binop(p, pos, OP_BAND, dev,
			    d_int(p, pos, (1u << LINUX_MINORBITS) - 1)));
	}
	if (strcmp(name, "inet_ntoa") == 0)
		return nargs_ok(p, name, pos, args, 1) ?
			inet4_of(p, pos, args->v[0]) : NULL;
	if (strcmp(name, "inet_ntop") == 0) {
		if (!nargs_ok(p, name, pos, args, 2))
			return NULL;
		const struct node *af = args->v[0];
		if (af->kind != N_INT || af->u.ival != LINUX_AF_INET) {
			d_error(p, af->pos, "inet_ntop( ) supports only "
				"AF_INET (2), as a constant, in sonde's D yet");
			return NULL;
		}
		return inet4_of(p, pos, args->v[1]);
	}
	if (strcmp(name, "d_path") == 0) {
		if (!nargs_ok(p, name, pos, args, 1))
			return NULL;
		return d_call(p, pos, "path", args->v[0], NULL, NULL);
	}
	*handled = false;
	return NULL;
}
