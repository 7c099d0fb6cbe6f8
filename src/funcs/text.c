/* text.c - values that user space turns into text when it prints them,
 * as bpftrace does: strftime(), strerror(), cgroup_path(). In BPF they
 * are a few integers (types.h: TIMESTAMP, ERRNO, CGROUP_PATH); literal
 * arguments travel as indexes into prog->strings. So they print, but
 * compare or compute as nothing else. */
#include "funcs_int.h"

#include <string.h>

/* bpftrace's limit on the strftime() format: it formats into 64 bytes. */
#define STRFTIME_FMT_MAX 63

/* strftime(fmt, nsecs): nsecs since boot (the nsecs builtin's clock),
 * formatted with strftime(3) and %f for microseconds when printed. */
static const struct type *check_strftime(struct sema *s, struct node *n)
{
	const char *fmt = sema_lit_str(s, n, 0, "its format");
	const struct type *t = sema_int_arg(s, n, 1, "the time (nsecs)");
	if (!fmt || !t)
		return NULL;
	if (strlen(fmt) > STRFTIME_FMT_MAX) {
		sema_error(s, arg(n, 0)->pos, "ARG_TYPE",
			   "strftime(): the format is longer than %d bytes",
			   STRFTIME_FMT_MAX);
		return NULL;
	}
	return type_simple(s->a, TYPE_TIMESTAMP, 16);
}

/* A literal's index in prog->strings, stored as an integer at dst. */
static void store_string_index(struct cg *cg, struct cmem dst, const char *s,
			       int64_t bias)
{
	int i = program_add_string(cg->prog, s);
	cg_store_int(cg, dst, cg_imm(i + bias, type_u64()));
}

static void gen_strftime(struct cg *cg, const struct node *n, struct cmem dst,
			 const struct type *to)
{
	store_string_index(cg, dst, lit_arg(n, 0), 0);
	cg_store_int(cg, cg_at(dst, 8), cg_expr(cg, arg(n, 1)));
}

static const struct type *check_strerror(struct sema *s, struct node *n)
{
	if (!sema_int_arg(s, n, 0, "the error number"))
		return NULL;
	return type_simple(s->a, TYPE_ERRNO, 8);
}

static void gen_strerror(struct cg *cg, const struct node *n, struct cmem dst,
			 const struct type *to)
{
	cg_store_int(cg, dst, cg_expr(cg, arg(n, 0)));
}

/* cgroup_path(id [, filter]): the cgroup's path in each hierarchy whose
 * name matches the filter (a wildcard), found when printed. */
static const struct type *check_cgroup_path(struct sema *s, struct node *n)
{
	const struct type *t = sema_int_arg(s, n, 0, "the cgroup id");
	if (nargs(n) > 1 && !sema_lit_str(s, n, 1, "the filter"))
		return NULL;
	return t ? type_simple(s->a, TYPE_CGROUP_PATH, 16) : NULL;
}

static void gen_cgroup_path(struct cg *cg, const struct node *n,
			    struct cmem dst, const struct type *to)
{
	cg_store_int(cg, dst, cg_expr(cg, arg(n, 0)));
	if (nargs(n) > 1)
		store_string_index(cg, cg_at(dst, 8), lit_arg(n, 1), 1);
	else
		cg_store_int(cg, cg_at(dst, 8), cg_imm(0, type_u64()));
}

const struct func funcs_text[] = {
	/* name, arguments min max, flags, needs, check, code (value, memory) */
	{ "strftime", 2, 2, 0, 0, check_strftime, NULL, gen_strftime },
	{ "strerror", 1, 1, 0, 0, check_strerror, NULL, gen_strerror },
	{ "cgroup_path", 1, 2, 0, 0, check_cgroup_path, NULL, gen_cgroup_path },
	{ NULL },
};
