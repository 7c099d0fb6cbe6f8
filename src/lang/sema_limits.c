/* sema_limits.c - the sizes a script may ask for: string literals held
 * as values, map keys, tuples and event records, refused here with an
 * error that names the limit rather than failing in codegen.
 *
 * A string literal that the program holds as a value (a map key, a
 * printf argument, a comparison) is at most BPFTRACE_STRLEN - 1
 * characters, as in bpftrace 0.17 ("String is too long"). One that only
 * serves at compile time (a format, a register or symbol name, a JSON
 * path) never reaches the BPF program and has no such limit. Which of
 * the two a literal is becomes known only when the call taking it has
 * looked at it, after sema_expr typed it, so long literals wait in a list
 * until the end of the final pass.
 *
 * A value the program builds (a tuple, a map key, an event record) is
 * made in the BPF stack or, when bigger, the per-CPU scratch area, whose
 * offsets and size the kernel limits to 32 KiB for everything a probe
 * holds at once: one value is at most SEMA_VALUE_MAX bytes. */
#include "sema_int.h"

#include <stdlib.h>

void sema_note_str(struct sema *s, struct node *n)
{
	if (s->final && n->u.str.len + 1 > s->prog->strlen)
		vec_push(&s->long_strs, n);
}

void sema_compile_time_str(struct sema *s, struct node *n)
{
	if (s->final && n->kind == N_STR && n->u.str.len + 1 > s->prog->strlen)
		vec_push(&s->compile_time_strs, n);
}

static int cmp_ptr(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)*(void *const *)a;
	uintptr_t y = (uintptr_t)*(void *const *)b;
	return x < y ? -1 : x > y;
}

/* Returns how many were reported. */
static size_t report_long_strs(struct sema *s)
{
	size_t n = s->long_strs.n, c = s->compile_time_strs.n, reported = 0;
	if (c)
		qsort(s->compile_time_strs.v, c, sizeof(struct node *), cmp_ptr);
	for (size_t i = 0; i < n; i++) {
		struct node *str = s->long_strs.v[i];
		if (c && bsearch(&str, s->compile_time_strs.v, c,
				 sizeof(struct node *), cmp_ptr))
			continue;
		sema_error(s, str->pos, "STRING_TOO_LONG",
			   "string is too long (%u bytes): a string value is "
			   "at most %u bytes with its NUL (BPFTRACE_STRLEN, "
			   "up to 200)", str->u.str.len + 1, s->prog->strlen);
		reported++;
	}
	return reported;
}

void sema_note_value_size(struct sema *s, struct pos pos, const char *what,
			  const struct type *t)
{
	if (!s->final || !t || t->size <= SEMA_VALUE_MAX)
		return;
	struct sema_big_value b = { pos, what, t->size };
	vec_push(&s->big_values, b);
}

bool sema_has_big_field(const struct type *t)
{
	if (!t || t->kind != TYPE_TUPLE)
		return false;
	for (uint32_t i = 0; i < t->nfields; i++)
		if (t->fields[i] && t->fields[i]->size > SEMA_VALUE_MAX)
			return true;
	return false;
}

void sema_check_limits(struct sema *s)
{
	for (size_t i = 0; i < s->maps.n; i++) {
		const struct sema_map *m = &s->maps.v[i];
		/* One key is a value checked where it is made; several make
		 * a tuple that only the map has. */
		if (m->keys_known && m->nkeys > 1)
			sema_note_value_size(s, m->key_pos,
					     arena_printf(s->a, "the key of %s",
							  m->name), m->key);
	}
	/* A value too large because of a literal too long is one cause,
	 * reported once, as the literal. */
	if (report_long_strs(s) == 0)
		for (size_t i = 0; i < s->big_values.n; i++) {
			const struct sema_big_value *b = &s->big_values.v[i];
			sema_error(s, b->pos, "TOO_LARGE", "%s is %u bytes, "
				   "over the limit of %u bytes for one value",
				   b->what, b->size, SEMA_VALUE_MAX);
		}
	vec_free(&s->long_strs);
	vec_free(&s->compile_time_strs);
	vec_free(&s->big_values);
}
