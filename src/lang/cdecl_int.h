/* cdecl_int.h - the declaration parser's insides, shared by cdecl.c
 * (declarations), cdecl_expr.c (constant expressions) and
 * cdecl_layout.c (gcc's x86-64 layout). */
#ifndef SONDE_CDECL_INT_H
#define SONDE_CDECL_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "../base/arena.h"
#include "../types.h"
#include "cdecl.h"

#define CDECL_MAX_DEPTH 64      /* nested declarators, structs, parens */
#define CDECL_MAX_ERRORS 20

/* __attribute__s a tracer's layout depends on. */
struct attrs {
	bool packed;
	uint32_t aligned;          /* 0: none; else the largest asked */
	uint32_t mode;             /* __mode__: bytes, 0 none */
};

struct cdecl {
	struct pp *pp;
	const struct ptok *t;
	size_t n, i;
	struct ctypes *reg;
	struct arena *a;
	struct diags *d;
	bool bad;                  /* this declaration failed */
	bool quiet;                /* it comes from a header: no messages */
	unsigned nerrors;
	int depth;
};

/* cdecl.c */
const struct ptok *cd_peek(struct cdecl *c, size_t k);
bool cd_is(struct cdecl *c, size_t k, const char *s);
bool cd_accept(struct cdecl *c, const char *s);
bool cd_expect(struct cdecl *c, const char *s, const char *ctx);
void cd_error(struct cdecl *c, const struct ptok *t, const char *tag,
	      const char *fmt, ...) __attribute__((format(printf, 4, 5)));
bool cd_type_start(struct cdecl *c, size_t k);
/* A type name (specifiers and an abstract declarator), for sizeof and
 * casts; NULL after an error. */
const struct ctype *cd_type_name(struct cdecl *c);
/* Skip a balanced (...), [...] or {...} from its opening token. */
void cd_skip_group(struct cdecl *c);

/* cdecl_expr.c: an integer constant expression (array sizes, bitfield
 * widths, enumerator values, aligned(N)); false after an error. */
bool cd_const_expr(struct cdecl *c, int64_t *v);
bool cd_const_cond(struct cdecl *c, int64_t *v);   /* no top-level comma */

/* cdecl_layout.c */
struct member {
	const char *name;          /* NULL: anonymous or unnamed bitfield */
	const struct ctype *type;
	int bits;                  /* bitfield width, -1: not a bitfield */
	struct attrs attrs;
	const struct ptok *at;
};
/* Lay out the members of struct/union `s` (gcc, x86-64 SysV) with the
 * struct's own attributes, filling its fields, size and alignment. */
int cd_layout(struct cdecl *c, struct ctype *s, const struct member *m,
	      uint32_t n, const struct attrs *sa);
/* A copy of t with alignment `align` (typedef ... aligned(N)). */
const struct ctype *cd_with_align(struct cdecl *c, const struct ctype *t,
				  uint32_t align);

#endif
