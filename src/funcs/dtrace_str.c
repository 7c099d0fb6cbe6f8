/* dtrace_str.c - D's string subroutines, which bpftrace's language does
 * not have: the front end (lang/d_names.c) calls them by these
 * __dtrace_* names, their code is in codegen/cg_dstr.c. Strings they
 * return are of the script's string size (strsize). */
#include "funcs_int.h"

#include <string.h>

/* the D name, for messages */
static const char *dname(const struct node *n)
{
	const char *s = n->u.call.name;
	return strncmp(s, "__dtrace_", 9) == 0 ? s + 9 : s;
}

static bool str_arg(struct sema *s, struct node *n, uint32_t i)
{
	const struct type *t = sema_expr(s, arg(n, i));
	if (!t)
		return false;
	if (!is_str(t)) {
		sema_error(s, arg(n, i)->pos, "ARG_TYPE", "%s( ) argument #%u "
			   "is incompatible with prototype: it takes a string, "
			   "not '%s'", dname(n), i + 1, sema_tname(s, t));
		return false;
	}
	return true;
}

static bool int_arg(struct sema *s, struct node *n, uint32_t i)
{
	const struct type *t = sema_expr(s, arg(n, i));
	if (!t)
		return false;
	if (!is_int(t)) {
		sema_error(s, arg(n, i)->pos, "ARG_TYPE", "%s( ) argument #%u "
			   "is incompatible with prototype: it takes an "
			   "integer, not '%s'", dname(n), i + 1,
			   sema_tname(s, t));
		return false;
	}
	return true;
}

/* each argument a string ('s') or an integer ('i'), as `sig` lists */
static bool args_are(struct sema *s, struct node *n, const char *sig)
{
	bool ok = true;
	for (uint32_t i = 0; i < nargs(n) && sig[i]; i++)
		ok &= sig[i] == 's' ? str_arg(s, n, i) : int_arg(s, n, i);
	return ok;
}

static const struct type *check_strlen(struct sema *s, struct node *n)
{
	return args_are(s, n, "s") ? type_u64() : NULL;
}

static const struct type *check_index(struct sema *s, struct node *n)
{
	return args_are(s, n, "ssi") ? type_s64() : NULL;
}

static const struct type *str_result(struct sema *s, struct node *n,
				     const char *sig)
{
	return args_are(s, n, sig) ? type_str(s->a, s->prog->strlen) : NULL;
}

static const struct type *check_str1(struct sema *s, struct node *n)
{
	return str_result(s, n, "s");
}

static const struct type *check_str2(struct sema *s, struct node *n)
{
	return str_result(s, n, "ss");
}

static const struct type *check_substr(struct sema *s, struct node *n)
{
	return str_result(s, n, "sii");
}

static const struct type *check_strchr(struct sema *s, struct node *n)
{
	return str_result(s, n, "si");
}

/* strtok(s, delim, cont): cont (the front end's) 1 for strtok(NULL,
 * delim), whose s is not read */
static const struct type *check_strtok(struct sema *s, struct node *n)
{
	if (!args_are(s, n, "ssi"))
		return NULL;
	return type_str(s->a, s->prog->strlen);
}

/* lltostr(n[, base]): the base a literal from 2 to 36 */
static const struct type *check_lltostr(struct sema *s, struct node *n)
{
	if (!int_arg(s, n, 0))
		return NULL;
	if (nargs(n) > 1) {
		struct node *b = arg(n, 1);
		sema_expr(s, b);
		if (b->kind != N_INT || b->u.ival < 2 || b->u.ival > 36) {
			sema_error(s, b->pos, "ARG_TYPE", "lltostr( ) base must "
				   "be a constant from 2 to 36");
			return NULL;
		}
	}
	return type_str(s->a, s->prog->strlen);
}

const struct func funcs_dtrace_str[] = {
	{ "__dtrace_strlen", 1, 1, 0, 0, check_strlen, cg_dstr_strlen },
	{ "__dtrace_index", 2, 3, 0, 0, check_index, cg_dstr_index },
	{ "__dtrace_rindex", 2, 3, 0, 0, check_index, cg_dstr_index },
	{ "__dtrace_strjoin", 2, 2, 0, 0, check_str2, NULL, cg_dstr_strjoin_to },
	{ "__dtrace_strstr", 2, 2, 0, 0, check_str2, NULL, cg_dstr_strstr_to },
	{ "__dtrace_substr", 2, 3, 0, 0, check_substr, NULL, cg_dstr_substr_to },
	{ "__dtrace_strchr", 2, 2, 0, 0, check_strchr, NULL, cg_dstr_strchr_to },
	{ "__dtrace_strrchr", 2, 2, 0, 0, check_strchr, NULL, cg_dstr_strchr_to },
	{ "__dtrace_toupper", 1, 1, 0, 0, check_str1, NULL, cg_dstr_case_to },
	{ "__dtrace_tolower", 1, 1, 0, 0, check_str1, NULL, cg_dstr_case_to },
	{ "__dtrace_lltostr", 1, 2, 0, 0, check_lltostr, NULL, cg_dstr_lltostr_to },
	{ "__dtrace_basename", 1, 1, 0, 0, check_str1, NULL, cg_dstr_path_to },
	{ "__dtrace_strtok", 3, 3, 0, 0, check_strtok, NULL, cg_dstr_strtok_to },
	{ "__dtrace_dirname", 1, 1, 0, 0, check_str1, NULL, cg_dstr_path_to },
	{ NULL },
};
