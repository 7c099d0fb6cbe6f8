/* ksyms.c - kernel symbols from /proc/kallsyms: loaded once, sorted, binary search. */

/*
 * bpftrace resolves kstack frames through bcc's kernel symbol cache: every
 * kallsyms line except data symbols (types b B d D r R), sorted by
 * address; an address resolves to the nearest symbol at or below it,
 * printed "name+offset" with the offset in decimal. We do the same so
 * frames read identically. kaddr() scans the file itself (any symbol
 * type, first match), as bpftrace's resolve_kname does.
 *
 * Names live in one string pool so the table is three allocations
 * whatever the kernel's size (~200,000 symbols).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize.h"
#include "../base/vec.h"

struct ksym_ent {
	uint64_t addr;
	uint32_t name;          /* offset into pool */
	uint32_t module;        /* offset into pool, or UINT32_MAX */
};

struct ksyms {
	char *path;
	int loaded;             /* 0 not yet, 1 done, <0 -errno of the load */
	struct ksym_ent *ents;
	size_t n, cap;
	char *pool;
	size_t pool_len, pool_cap;
};

struct ksyms *ksyms_new(const char *path)
{
	struct ksyms *k = calloc(1, sizeof(*k));

	if (!k)
		return NULL;
	k->path = strdup(path ? path : "/proc/kallsyms");
	if (!k->path) {
		free(k);
		return NULL;
	}
	return k;
}

void ksyms_free(struct ksyms *k)
{
	if (!k)
		return;
	free(k->ents);
	free(k->pool);
	free(k->path);
	free(k);
}

static int pool_add(struct ksyms *k, const char *s, size_t len, uint32_t *off)
{
	if (k->pool_len + len + 1 > k->pool_cap) {
		size_t cap = k->pool_cap ? k->pool_cap * 2 : 1 << 20;
		char *p;

		while (cap < k->pool_len + len + 1)
			cap *= 2;
		if (cap > UINT32_MAX)
			return -E2BIG;
		p = realloc(k->pool, cap);
		if (!p)
			return -ENOMEM;
		k->pool = p;
		k->pool_cap = cap;
	}
	memcpy(k->pool + k->pool_len, s, len);
	k->pool[k->pool_len + len] = '\0';
	*off = (uint32_t)k->pool_len;
	k->pool_len += len + 1;
	return 0;
}

/* One kallsyms line: "ffffffff81000000 T _stext" or
 * "ffffffffc0a01000 t foo\t[module]". Returns 1 when it yields a
 * symbol, 0 for lines to skip. */
static int ksyms_parse_line(char *line, uint64_t *addr, char *type,
			    char **name, size_t *name_len,
			    char **mod, size_t *mod_len)
{
	char *p = line, *end;

	*addr = strtoull(p, &end, 16);
	if (end == p || *end != ' ')
		return 0;
	p = end + 1;
	if (!*p || p[1] != ' ')
		return 0;
	*type = *p;
	p += 2;
	*name = p;
	while (*p && !isspace((unsigned char)*p))
		p++;
	*name_len = (size_t)(p - *name);
	if (*name_len == 0)
		return 0;
	*mod = NULL;
	*mod_len = 0;
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p == '[') {
		char *close = strchr(p, ']');

		if (close) {
			*mod = p;
			*mod_len = (size_t)(close - p + 1);
		}
	}
	return 1;
}

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym_ent *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* keep file order among aliases: the first name wins, as in bcc */
	return x->name < y->name ? -1 : x->name > y->name;
}

static int ksyms_load(struct ksyms *k)
{
	FILE *f;
	char line[1024];
	int err = 0;

	if (k->loaded)
		return k->loaded < 0 ? k->loaded : 0;
	f = fopen(k->path, "re");
	if (!f) {
		k->loaded = -errno;
		return k->loaded;
	}
	while (fgets(line, sizeof(line), f)) {
		uint64_t addr;
		char type, *name, *mod;
		size_t name_len, mod_len;
		struct ksym_ent *e;

		if (!ksyms_parse_line(line, &addr, &type, &name, &name_len,
				      &mod, &mod_len))
			continue;
		/* hidden addresses (kptr_restrict) and data symbols */
		if (addr == 0 || addr == UINT64_MAX || strchr("bBdDrR", type))
			continue;
		if (vec_reserve_arr(k->ents, k->cap, k->n + 1)) {
			err = -ENOMEM;
			break;
		}
		e = &k->ents[k->n];
		e->module = UINT32_MAX;
		if ((err = pool_add(k, name, name_len, &e->name)) < 0)
			break;
		if (mod && (err = pool_add(k, mod, mod_len, &e->module)) < 0)
			break;
		e->addr = addr;
		k->n++;
	}
	fclose(f);
	if (err < 0) {
		k->loaded = err;
		return err;
	}
	qsort(k->ents, k->n, sizeof(*k->ents), ksym_cmp);
	k->loaded = 1;
	return 0;
}

size_t ksyms_count(struct ksyms *k)
{
	if (!k || ksyms_load(k) < 0)
		return 0;
	return k->n;
}

int ksyms_lookup(struct ksyms *k, uint64_t addr, struct sym *out)
{
	size_t lo = 0, hi;
	int err;

	memset(out, 0, sizeof(*out));
	if ((err = ksyms_load(k)) < 0)
		return err;
	hi = k->n;
	/* last entry with ents[i].addr <= addr; among equal addresses the
	 * first in file order (lowest pool offset) */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->ents[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return -ENOENT;
	lo--;
	while (lo > 0 && k->ents[lo - 1].addr == k->ents[lo].addr)
		lo--;
	out->name = k->pool + k->ents[lo].name;
	out->start = k->ents[lo].addr;
	out->offset = addr - k->ents[lo].addr;
	out->module = k->ents[lo].module == UINT32_MAX ? NULL
			: k->pool + k->ents[lo].module;
	return 0;
}

int ksyms_addr(struct ksyms *k, const char *name, uint64_t *addr)
{
	FILE *f;
	char line[1024];
	int err = -ENOENT;

	*addr = 0;
	f = fopen(k->path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		uint64_t a;
		char type, *n, *mod;
		size_t n_len, mod_len;

		if (!ksyms_parse_line(line, &a, &type, &n, &n_len, &mod, &mod_len))
			continue;
		if (n_len == strlen(name) && memcmp(n, name, n_len) == 0) {
			*addr = a;
			err = 0;
			break;
		}
	}
	fclose(f);
	return err;
}
