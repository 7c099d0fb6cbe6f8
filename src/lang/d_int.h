/* d_int.h - inside the D front end: the parser (d_parser.c: clauses,
 * statements, expressions into ast.h's nodes), D's names for builtins
 * and functions (d_names.c), top-level declarations (d_decls.c), the
 * proc/sched/io translators (d_translate.c) and the driver (d.c:
 * pragmas, options, probe descriptions into attach points). */
#ifndef SONDE_D_INT_H
#define SONDE_D_INT_H

#include "../base/strmap.h"
#include "ast.h"
#include "d_lexer.h"
#include "frontend.h"

#define D_MAX_DEPTH 100        /* expression and statement nesting */

struct d_parser {
	struct d_lexer lx;
	struct d_tok tok;
	struct arena *a;
	struct diags *d;
	const struct frontend_opts *o;
	int depth;
	bool in_pred;              /* '/' at paren depth 0 ends it */
	int parens;
	bool records;              /* the clause has a data-recording action */
	bool profile_clause;       /* every probe a profile-N or tick-N */
	bool return_clause;        /* every probe an fbt or pid return */
	bool syscall_return;       /* every probe a syscall's return */
	bool bail;                 /* too many errors: stop */
	/* the tracepoint ("sched:sched_switch") every probe of the clause
	 * is a proc, sched or io probe on, for args[] (d_translate.c) */
	const char *sdt_tracepoint;
	/* inline NAME = constant; (d.c), looked up by d_name */
	struct d_inline {
		const char *name;
		struct node *value;    /* N_INT or N_STR */
	} *inlines;
	uint32_t ninlines;
	/* variables (a D global's, self->'s, this->'s map or variable
	 * name) and the D integer type (D_INT_*) of their declaration or
	 * first assignment, for d_int_type */
	struct strmap ints;
	struct strmap aggs;        /* aggregations whose key widths are noted */
	struct strmap typedefs;    /* the typedef names the script declares */
	struct strmap enumerators; /* and the names of its enums' constants */
	struct ctypes *reg;        /* where its C declarations go */
	/* the script's struct, union, enum and typedef declarations, on
	 * their own lines (the rest blank), for cdecl at the end (d.c) */
	char *decls;
	size_t ndecls, decls_cap;
	unsigned decls_line;       /* the line decls ends on */
	/* variables first assigned a pointer cast, and its type name */
	struct d_ptr_var {
		const char *name, *type;
		struct d_ptr_var *next;
	} *ptr_vars;
};

void d_next(struct d_parser *p);
bool d_accept(struct d_parser *p, const char *op);
bool d_expect(struct d_parser *p, const char *op);
void d_error(struct d_parser *p, struct pos pos, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* d_cpp.c: the script through the C preprocessor (-C), as text on its
 * own lines; NULL after errors (in d). */
const char *d_preprocess(struct arena *a, const char *text,
			 const struct frontend_opts *o, struct diags *d);

/* d_clauses.c: a clause's record line (not quiet), clauses with the
 * same descriptions merged into one block (set->clauses counts them),
 * exit() deferred to a block's end */
void d_add_record(struct d_parser *p, struct node *probe);
void d_end_speculation(struct d_parser *p, struct node *probe);
void d_merge_clauses(struct d_parser *p, struct node *root,
		     struct frontend_settings *set);
void d_add_exit(struct d_parser *p, struct node *probe);

/* d_decls.c: whether the text at the lexer starts a top-level
 * declaration (a type or storage word, then a blank); the declaration
 * read (the lexer stops after its ';'); and, after the script, its
 * type definitions into p->reg. */
bool d_at_declaration(const struct d_lexer *l);
void d_declaration(struct d_parser *p);
void d_declare_types(struct d_parser *p);

/* d_parser.c */
struct node *d_parse_expr(struct d_parser *p);
/* At a type's first word: its name for a cast ("int32", "uint64",
 * "uint64" for a struct or union), with whether it is D's string or a
 * pointer; NULL (nothing consumed) if no type name is there. */
const char *d_cast_type(struct d_parser *p, bool *is_string, bool *is_ptr);
/* At '{'; an outer block (a clause's) leaves its '}' as the token. */
struct node *d_parse_block(struct d_parser *p, bool outer);

/* node builders */
struct node *d_int(struct d_parser *p, struct pos pos, uint64_t v);
struct node *d_str(struct d_parser *p, struct pos pos, const char *s);
struct node *d_call(struct d_parser *p, struct pos pos, const char *name,
		    struct node *a0, struct node *a1, struct node *a2);
struct node *d_builtin(struct d_parser *p, struct pos pos,
		       enum builtin_id id, uint32_t index);
struct node *d_binop(struct d_parser *p, struct pos pos, enum op op,
		     struct node *l, struct node *r);
struct node *d_unop(struct d_parser *p, struct pos pos, enum op op,
		    struct node *x);
/* (TYPE_NAME)x, the type as the bpftrace parser writes it ("uint32 *") */
struct node *d_cast(struct d_parser *p, struct pos pos, const char *type_name,
		    struct node *x);

/* d_subr.c: a D subroutine that is other words of sonde's functions
 * (stop, rand, htons ..., getmajor, inet_ntoa, d_path); *handled false
 * when NAME is none of them. */
struct node *d_subr_call(struct d_parser *p, const char *name,
			 struct node_list *args, struct pos pos, bool *handled);

/* d_names.c: an identifier as an expression (a builtin variable, or a
 * D global), and a call of a D function, as the AST says them. */
struct node *d_name(struct d_parser *p, const char *name, struct pos pos);
struct node *d_map_call(struct d_parser *p, const char *name,
			struct node_list *args, struct pos pos);
/* curpsinfo->MEMBER, curlwpsinfo->MEMBER: the members sonde has */
struct node *d_psinfo(struct d_parser *p, const char *base,
		      const char *member, struct pos pos);
/* bufinfo_t's b_flags bits, as illumos's <sys/buf.h> has them */
#define D_B_READ 0x40
#define D_B_WRITE 0x100

/* d_translate.c: args[arg] (member NULL) or args[arg]->member in a
 * clause whose probes are on p->sdt_tracepoint; NULL after an error. */
struct node *d_translate_arg(struct d_parser *p, uint32_t arg,
			     const char *member, struct pos pos);

/* A $macro variable: $1, $$1, $target, $pid ... */
struct node *d_macro(struct d_parser *p, const struct d_tok *t);
/* The D integer type (d_lexer.h's size | D_INT_UNSIGNED) of an
 * expression, as D's rules give it: constants by their suffix and
 * magnitude, C's usual arithmetic conversions, a shift its left
 * operand's, comparisons int; what is not an integer, 8. trace() and
 * an aggregation's keys print by its size. */
int d_int_type(const struct node *n);
/* The same, with variables typed by their declaration or first
 * assignment. */
int d_int_type_of(struct d_parser *p, const struct node *n);
/* Only the size (1, 2, 4 or 8). */
int d_int_width(const struct node *n);
int d_int_width_of(struct d_parser *p, const struct node *n);
/* Note an assignment to a variable (N_VAR or N_MAP) for the above. */
void d_note_assign(struct d_parser *p, const struct node *target,
		   const struct node *value);
/* The pointer type a variable was first assigned ("struct foo *"),
 * or NULL. */
const char *d_ptr_type(struct d_parser *p, const struct node *var);
/* A declaration (`uint64_t x;`): the variable's type, unless known. */
void d_declare_int(struct d_parser *p, const char *name, int type);

#endif
