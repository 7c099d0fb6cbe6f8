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
	uint32_t vector_size;      /* __vector_size__: bytes, 0 none */
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

/* cdecl_words.c */
enum { W_VOID, W_CHAR, W_SHORT, W_INT, W_LONG, W_SIGNED, W_UNSIGNED,
       W_BOOL, W_FLOAT, W_DOUBLE, W_INT128, W_COMPLEX, W_F128, W_F16,
       W_VA, W_COUNT };
char *cd_name(struct cdecl *c, const struct ptok *t);
bool cd_is_ignored(const struct ptok *t);   /* const, static, inline... */
bool cd_is_attr(const struct ptok *t);      /* __attribute__ */
bool cd_is_asm(const struct ptok *t);       /* asm, __asm__ */
bool cd_is_base_word(const struct ptok *t); /* int, unsigned, ... */
/* A typedef name the definitions declared (*out its type). */
bool cd_is_typedef_name(struct cdecl *c, const struct ptok *t,
			const struct ctype **out);
/* __attribute__((...)) and _Alignas, as often as they come. */
void cd_attributes(struct cdecl *c, struct attrs *at);
/* Attributes and asm labels after a declarator. */
void cd_after_declarator(struct cdecl *c, struct attrs *at);
/* A base-type word's W_ index, or -1. */
int cd_word_index(const struct ptok *t);
/* The type counted words name (w indexed by W_*), gcc's sizes. */
const struct ctype *cd_base_type(struct cdecl *c, const int *w,
				 const struct ptok *at);
struct ctype *cd_new_int(struct cdecl *c, uint32_t size, bool is_signed,
			 const char *name);
const struct ctype *cd_apply_mode(struct cdecl *c, const struct ctype *t,
				  uint32_t mode);
/* __attribute__((vector_size(N))) on an integer or float type: N bytes,
 * aligned to N, as gcc lays vectors out (NULL after an error). */
const struct ctype *cd_apply_vector(struct cdecl *c, const struct ctype *t,
				    uint32_t size, const struct ptok *at);

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
