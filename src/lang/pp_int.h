/* pp_int.h - the preprocessor's insides, shared by pp.c (directives,
 * files), pp_lex.c (tokens), pp_macro.c (expansion), pp_expr.c (#if)
 * and pp_builtin.c (predefined macros, built-in headers). */
#ifndef SONDE_PP_INT_H
#define SONDE_PP_INT_H

#include <time.h>

#include "../base/arena.h"
#include "../base/vec.h"
#include "pp.h"

/* Bounds: headers are untrusted and may be huge or hostile. */
#define PP_MAX_INCLUDE_DEPTH 64         /* nested #include */
#define PP_MAX_FILE_BYTES   (16u << 20) /* one file */
#define PP_MAX_TOTAL_BYTES  (128u << 20)/* every file read */
#define PP_MAX_FILES        8192        /* files opened */
#define PP_MAX_TOKENS       (4u << 20)  /* tokens made, read or expanded */
#define PP_MAX_MACRO_ARGS   256
#define PP_MAX_SECONDS      20          /* wall time of one run */
#define PP_MAX_ERRORS       20

struct hideset {
	const struct hideset *next;
	const char *name;            /* NUL-terminated, arena */
	uint32_t len;
};

struct pp_file {
	const char *path;            /* as found (or "<built-in>") */
	const char *text;            /* NUL-terminated; owned by the pp */
	size_t len;
	int dir;                     /* search-list index it was found in, or
				      * -1 (script, quoted relative path) */
	unsigned diag;               /* diags_add_source number, 0: not yet */
	bool owned;                  /* text is malloc'd */
	bool once;                   /* #pragma once seen */
	const char *guard;           /* include-guard macro, if it has one */
	struct ptok *toks;           /* tokenized once, copied per include */
};

typedef struct ptok *(*pp_builtin_fn)(struct pp *pp, struct ptok *tok);

struct macro {
	const char *name;            /* NUL-terminated */
	uint32_t len;
	bool funclike;
	bool variadic;               /* last parameter is ... or NAME... */
	uint32_t nparams;
	const char **params;         /* NUL-terminated names */
	struct ptok *body;           /* list, NULL-ended; file/line kept */
	pp_builtin_fn builtin;       /* __LINE__ and friends */
	const char *text;            /* pp_object_macro's, made on demand */
	bool dead;                   /* #undef'd (slot kept in the table) */
};

struct cond {
	int ctx;                     /* IN_THEN, IN_ELIF, IN_ELSE */
	bool included;               /* some branch already taken */
	struct ptok *tok;            /* the #if, for "unterminated" */
};

struct pp {
	struct arena arena;
	struct diags *diags;
	const struct pp_opts *opts;
	VEC(struct pp_file) files;   /* [0] is the script */
	VEC(const char *) dirs;      /* search list: -I, built-in, system */
	size_t nuser_dirs;           /* how many of dirs are -I */
	size_t builtin_dir;          /* index of the built-in headers */
	/* macros: open addressing, power-of-two capacity */
	struct macro **mtab;
	size_t mcap, mcount;
	VEC(struct cond) conds;
	VEC(struct ptok) out;
	size_t total_bytes;
	size_t ntokens;              /* made so far, against PP_MAX_TOKENS */
	unsigned depth;              /* current #include nesting */
	unsigned counter;            /* __COUNTER__ */
	struct timespec deadline;
	bool fatal;                  /* stop: a fatal error or a bound */
	unsigned nerrors;
	struct ptok eof;             /* the end of every list */
};

/* pp.c */
void pp_error(struct pp *pp, const struct ptok *t, const char *tag,
	      const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void pp_fatal(struct pp *pp, const struct ptok *t, const char *tag,
	      const char *fmt, ...) __attribute__((format(printf, 4, 5)));
bool pp_over_budget(struct pp *pp, const struct ptok *t);
struct ptok *pp_new_tok(struct pp *pp, const struct ptok *like);
int pp_add_file(struct pp *pp, const char *path, const char *text,
		size_t len, bool owned, int dir);

/* pp_lex.c */
struct ptok *pp_tokenize(struct pp *pp, uint32_t file);
/* Tokens of a string made while preprocessing (pasting), positioned at
 * `at`; NULL if it is not exactly one token. */
struct ptok *pp_tokenize_one(struct pp *pp, const char *s, size_t len,
			     const struct ptok *at);
bool pp_is_ident_start(int c);
bool pp_is_ident(int c);

/* pp_macro.c */
struct macro *pp_find_macro(struct pp *pp, const char *name, size_t len);
struct macro *pp_add_macro(struct pp *pp, const char *name, size_t len);
void pp_undef(struct pp *pp, const char *name, size_t len);
/* If `tok` names a macro that expands here, replace it with its
 * expansion: *rest is the new head. */
bool pp_expand(struct pp *pp, struct ptok **rest, struct ptok *tok);
struct ptok *pp_copy_line(struct pp *pp, struct ptok **rest,
			  struct ptok *tok);
struct ptok *pp_skip_line(struct pp *pp, struct ptok *tok);
void pp_define_builtins(struct pp *pp);
char *pp_spell(struct pp *pp, const struct ptok *t, const struct ptok *end,
	       size_t *len);
void pp_read_define(struct pp *pp, struct ptok **rest, struct ptok *tok);

/* pp_expr.c */
bool pp_eval_if(struct pp *pp, struct ptok **rest, struct ptok *tok);

/* pp.c, for __has_include in pp_expr.c */
bool pp_has_include(struct pp *pp, struct ptok **rest, struct ptok *tok,
		    bool next);

/* pp_builtin.c (pp_predefined is in pp.h) */
const char *pp_builtin_header(const char *name);

#endif
