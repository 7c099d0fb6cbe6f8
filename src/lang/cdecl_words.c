/* cdecl_words.c - the words of C declarations: which keywords are
 * qualifiers and storage classes (dropped), which name base types (and
 * the type gcc gives each combination on x86-64), which are GNU
 * attributes and asm labels; __attribute__ parsing (packed, aligned,
 * mode kept, the rest read over), and the integer types mode() makes. */
#include "cdecl_int.h"

#include <string.h>

char *cd_name(struct cdecl *c, const struct ptok *t)
{
	return arena_strndup(c->a, t->text, t->len);
}

/* ---- words ------------------------------------------------------------ */

static bool in_list(const struct ptok *t, const char *const *list)
{
	if (t->kind != PT_IDENT)
		return false;
	for (; *list; list++)
		if (ptok_is(t, *list))
			return true;
	return false;
}

/* Storage classes, qualifiers and function specifiers: no bearing on
 * layout. (typedef and extern are looked at separately.) */
static const char *const ignored_words[] = {
	"const", "volatile", "restrict", "__restrict", "__restrict__",
	"__const", "__const__", "__volatile", "__volatile__", "static",
	"inline", "__inline", "__inline__", "register", "auto", "_Noreturn",
	"__extension__", "_Thread_local", "__thread", "_Atomic", "__user",
	"__kernel", "__iomem", "__percpu", "__rcu", "__force", "__must_check",
	"__nonnull", "_Nonnull", "_Nullable", "__unaligned", NULL,
};

static const char *const base_words[] = {
	"void", "char", "short", "int", "long", "signed", "__signed",
	"__signed__", "unsigned", "_Bool", "float", "double", "__int128",
	"__int128_t", "__uint128_t", "_Complex", "__complex__", "_Float128",
	"__float128", "_Float64", "_Float32", "_Float16", "_Float32x",
	"_Float64x", "__fp16", "_Decimal32", "_Decimal64", "_Decimal128",
	"__builtin_va_list", NULL,
};

static const char *const attr_words[] = {
	"__attribute__", "__attribute", NULL,
};

static const char *const asm_words[] = {
	"asm", "__asm__", "__asm", NULL,
};

bool cd_is_ignored(const struct ptok *t)
{
	return in_list(t, ignored_words);
}

bool cd_is_attr(const struct ptok *t)
{
	return in_list(t, attr_words);
}

bool cd_is_asm(const struct ptok *t)
{
	return in_list(t, asm_words);
}

bool cd_is_base_word(const struct ptok *t)
{
	return in_list(t, base_words);
}

bool cd_is_typedef_name(struct cdecl *c, const struct ptok *t,
			    const struct ctype **out)
{
	if (t->kind != PT_IDENT)
		return false;
	char name[256];
	if (t->len >= sizeof(name))
		return false;
	memcpy(name, t->text, t->len);
	name[t->len] = 0;
	const struct ctype *ty = ctypes_declared_typedef(c->reg, name);
	if (ty) {
		*out = ty;
		return true;
	}
	return false;
}

bool cd_type_start(struct cdecl *c, size_t k)
{
	const struct ptok *t = cd_peek(c, k);
	const struct ctype *ty;
	return cd_is_base_word(t) || cd_is_ignored(t) ||
	       ptok_is(t, "struct") || ptok_is(t, "union") ||
	       ptok_is(t, "enum") || ptok_is(t, "typeof") ||
	       ptok_is(t, "__typeof__") || ptok_is(t, "__typeof") ||
	       cd_is_attr(t) || cd_is_typedef_name(c, t, &ty);
}

/* ---- attributes -------------------------------------------------------- */

/* The word without GNU's __x__ spelling. */
static bool attr_is(const struct ptok *t, const char *w)
{
	size_t n = strlen(w);
	if (t->len == n && !memcmp(t->text, w, n))
		return true;
	return t->len == n + 4 && !memcmp(t->text, "__", 2) &&
	       !memcmp(t->text + 2, w, n) && !memcmp(t->text + n + 2, "__", 2);
}

static uint32_t mode_bytes(const struct ptok *t)
{
	static const struct { const char *m; uint32_t bytes; } modes[] = {
		{ "QI", 1 }, { "HI", 2 }, { "SI", 4 }, { "DI", 8 }, { "TI", 16 },
		{ "word", 8 }, { "pointer", 8 }, { "byte", 1 },
	};
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (attr_is(t, modes[i].m))
			return modes[i].bytes;
	return 0;
}

/* __attribute__((a, b(x), ...)) as often as they come; _Alignas too. */
void cd_attributes(struct cdecl *c, struct attrs *at)
{
	for (;;) {
		const struct ptok *t = cd_peek(c, 0);
		if (ptok_is(t, "_Alignas") && t->kind == PT_IDENT) {
			c->i++;
			if (!cd_expect(c, "(", "_Alignas"))
				return;
			int64_t v = 0;
			if (cd_type_start(c, 0)) {
				const struct ctype *ty = cd_type_name(c);
				v = ty ? ty->align : 0;
			} else if (!cd_const_expr(c, &v)) {
				return;
			}
			if (v > (int64_t)at->aligned && v <= (1 << 28))
				at->aligned = (uint32_t)v;
			cd_expect(c, ")", "_Alignas");
			continue;
		}
		if (!cd_is_attr(t))
			return;
		c->i++;
		if (!cd_expect(c, "(", "__attribute__") ||
		    !cd_expect(c, "(", "__attribute__"))
			return;
		while (!cd_is(c, 0, ")") && !c->bad) {
			const struct ptok *a = cd_peek(c, 0);
			if (a->kind == PT_EOF) {
				cd_expect(c, ")", "__attribute__");
				return;
			}
			c->i++;
			if (attr_is(a, "packed")) {
				at->packed = true;
			} else if (attr_is(a, "aligned") && cd_is(c, 0, "(")) {
				c->i++;
				int64_t v;
				if (!cd_const_cond(c, &v))
					return;
				if (v <= 0 || (v & (v - 1)) || v > (1 << 28)) {
					cd_error(c, a, "BAD_DECL", "requested "
						 "alignment %lld is not a power "
						 "of two", (long long)v);
					return;
				}
				if ((uint32_t)v > at->aligned)
					at->aligned = (uint32_t)v;
				cd_expect(c, ")", "aligned(...)");
			} else if (attr_is(a, "aligned")) {
				at->aligned = at->aligned > 16 ? at->aligned : 16;
			} else if (attr_is(a, "vector_size") &&
				   cd_is(c, 0, "(")) {
				c->i++;
				int64_t v;
				if (!cd_const_cond(c, &v))
					return;
				if (v <= 0 || (v & (v - 1)) || v > 4096) {
					cd_error(c, a, "BAD_DECL", "vector size "
						 "%lld is not a power of two up "
						 "to 4096", (long long)v);
					return;
				}
				at->vector_size = (uint32_t)v;
				cd_expect(c, ")", "vector_size(...)");
			} else if (attr_is(a, "mode") && cd_is(c, 0, "(")) {
				at->mode = mode_bytes(cd_peek(c, 1));
				cd_skip_group(c);
			} else if (cd_is(c, 0, "(")) {
				cd_skip_group(c);
			}
			if (!cd_accept(c, ","))
				break;
		}
		if (!cd_expect(c, ")", "__attribute__") ||
		    !cd_expect(c, ")", "__attribute__"))
			return;
	}
}

/* Attributes and asm labels after a declarator. */
void cd_after_declarator(struct cdecl *c, struct attrs *at)
{
	for (;;) {
		if (cd_is_asm(cd_peek(c, 0))) {
			c->i++;
			while (cd_is_ignored(cd_peek(c, 0)))
				c->i++; /* asm volatile */
			if (cd_is(c, 0, "("))
				cd_skip_group(c);
			continue;
		}
		if (cd_is_attr(cd_peek(c, 0)) ||
		    cd_is(c, 0, "_Alignas")) {
			cd_attributes(c, at);
			if (c->bad)
				return;
			continue;
		}
		return;
	}
}

struct ctype *cd_new_int(struct cdecl *c, uint32_t size, bool is_signed,
			     const char *name)
{
	struct ctype *t = ctype_new(c->a, CT_INT, name);
	t->size = t->align = size;
	t->is_signed = is_signed;
	t->is_char = size == 1 && !strcmp(name, "char");
	t->is_bool = !strcmp(name, "_Bool");
	t->complete = true;
	return t;
}

static struct ctype *cd_new_float(struct cdecl *c, uint32_t size,
			       uint32_t align, const char *name)
{
	struct ctype *t = ctype_new(c->a, CT_FLOAT, name);
	t->size = size;
	t->align = align;
	t->complete = true;
	return t;
}

/* __builtin_va_list on x86-64: struct __va_list_tag[1]. */
static const struct ctype *cd_va_list_type(struct cdecl *c)
{
	struct ctype *tag = ctype_new(c->a, CT_STRUCT, "__va_list_tag");
	tag->size = 24;
	tag->align = 8;
	tag->complete = true;
	return ctype_array(c->a, tag, 1);
}



int cd_word_index(const struct ptok *t)
{
	static const struct { const char *w; int idx; } words[] = {
		{ "void", W_VOID }, { "char", W_CHAR }, { "short", W_SHORT },
		{ "int", W_INT }, { "long", W_LONG }, { "signed", W_SIGNED },
		{ "__signed", W_SIGNED }, { "__signed__", W_SIGNED },
		{ "unsigned", W_UNSIGNED }, { "_Bool", W_BOOL },
		{ "float", W_FLOAT }, { "double", W_DOUBLE },
		{ "__int128", W_INT128 }, { "_Complex", W_COMPLEX },
		{ "__complex__", W_COMPLEX }, { "_Float128", W_F128 },
		{ "__float128", W_F128 }, { "_Float64", W_DOUBLE },
		{ "_Float32", W_FLOAT }, { "_Float16", W_F16 },
		{ "__fp16", W_F16 }, { "_Float32x", W_DOUBLE },
		{ "_Float64x", W_F128 }, { "_Decimal32", W_FLOAT },
		{ "_Decimal64", W_DOUBLE }, { "_Decimal128", W_F128 },
		{ "__builtin_va_list", W_VA },
	};
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (ptok_is(t, words[i].w))
			return words[i].idx;
	return -1;
}

/* The type the counted words name, gcc's sizes on x86-64. */
const struct ctype *cd_base_type(struct cdecl *c, const int *w,
				     const struct ptok *at)
{
	bool u = w[W_UNSIGNED] > 0;
	if (w[W_SIGNED] && w[W_UNSIGNED])
		goto bad;
	if (w[W_VA])
		return cd_va_list_type(c);
	if (w[W_VOID])
		return ctype_void();
	if (w[W_BOOL])
		return cd_new_int(c, 1, false, "_Bool");
	if (w[W_COMPLEX]) {
		uint32_t s = w[W_FLOAT] ? 4 : w[W_LONG] ? 16 : 8;
		return cd_new_float(c, s * 2, s, "_Complex");
	}
	if (w[W_F16])
		return cd_new_float(c, 2, 2, "_Float16");
	if (w[W_F128])
		return cd_new_float(c, 16, 16, "_Float128");
	if (w[W_FLOAT])
		return cd_new_float(c, 4, 4, "float");
	if (w[W_DOUBLE])
		return w[W_LONG] ? cd_new_float(c, 16, 16, "long double") :
			cd_new_float(c, 8, 8, "double");
	if (w[W_INT128])
		return cd_new_int(c, 16, !u, u ? "unsigned __int128" : "__int128");
	if (w[W_CHAR])
		return cd_new_int(c, 1, !u, u ? "unsigned char" :
			       w[W_SIGNED] ? "signed char" : "char");
	if (w[W_SHORT])
		return cd_new_int(c, 2, !u, u ? "unsigned short" : "short");
	if (w[W_LONG] >= 2)
		return cd_new_int(c, 8, !u, u ? "unsigned long long" :
			       "long long");
	if (w[W_LONG])
		return cd_new_int(c, 8, !u, u ? "unsigned long" : "long");
	return cd_new_int(c, 4, !u, u ? "unsigned int" : "int");
bad:
	cd_error(c, at, "BAD_DECL", "both 'signed' and 'unsigned' in one "
		 "type");
	return NULL;
}

/* __attribute__((mode(QI))) and friends: an integer of that size. */
const struct ctype *cd_apply_mode(struct cdecl *c, const struct ctype *t,
				      uint32_t mode)
{
	if (!mode || t->kind != CT_INT || mode == t->size)
		return t;
	static const char *const names[2][5] = {
		{ "unsigned char", "unsigned short", "unsigned int",
		  "unsigned long", "unsigned __int128" },
		{ "signed char", "short", "int", "long", "__int128" },
	};
	bool s = t->is_signed;
	int idx = mode == 1 ? 0 : mode == 2 ? 1 : mode == 4 ? 2 :
		mode == 8 ? 3 : 4;
	return cd_new_int(c, mode, s, names[s][idx]);
}

const struct ctype *cd_apply_vector(struct cdecl *c, const struct ctype *t,
				    uint32_t size, const struct ptok *at)
{
	if (!size)
		return t;
	if ((t->kind != CT_INT && t->kind != CT_FLOAT) || !t->size ||
	    size % t->size) {
		cd_error(c, at, "BAD_DECL", "vector_size(%u) of a type that is "
			 "not a scalar dividing it", size);
		return NULL;
	}
	struct ctype *v = (struct ctype *)ctype_array(c->a, t, size / t->size);
	v->align = size;
	return v;
}
