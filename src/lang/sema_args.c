/* sema_args.c - the probe's arguments and records: args.name (args->name)
 * through each probe's context record, `args` as a value (a record of
 * them), and rec.name of a record, which is a tuple with names. */
#include "sema_int.h"

#include <string.h>

#include "../funcs/builtin.h"

/* The type a record field loads as; with `bytes`, an array of bytes
 * (__u8 saddr[4]) loads as its bytes, typed as a string of that size. */
const struct type *sema_record_field_type(struct sema *s,
					  const struct record_field *f,
					  bool bytes)
{
	if (f->is_data_loc)
		return type_str(s->a, s->prog->strlen);
	/* A pointer the provider typed (DWARF, BTF): followed with -> */
	if (f->ctype && f->ctype->kind == CT_PTR && f->size == 8)
		return type_of_ctype(s->a, f->ctype, sema_record_space(s, f));
	if (f->is_char_array)
		return type_str(s->a, f->array_len ? f->array_len : f->size);
	if (f->array_len)
		return bytes && f->size == f->array_len ?
			type_str(s->a, f->size) : NULL;
	switch (f->size) {
	case 1: case 2: case 4: case 8: break;
	default: return NULL;
	}
	const struct type *t = type_int(s->a, f->size * 8, f->is_signed);
	if (!f->is_ptr && f->decl && s->prog->dialect >= DIALECT_026 &&
	    strncmp(f->decl, "enum ", 5) == 0) {
		/* `enum skb_drop_reason reason`: the enum's value, which
		 * 0.26 prints by its enumerator's name, as a constant */
		const char *tag = f->decl + 5;
		const char *sp = strchr(tag, ' ');
		const struct ctype *en = sp ? ctypes_find_tag(s->prog->ctypes,
			CT_ENUM, arena_strndup(s->a, tag, (size_t)(sp - tag))) :
			NULL;
		if (en && en->size == f->size) {
			struct type *u = arena_new(s->a, struct type);
			*u = *t;
			u->ctype = en;
			return u;
		}
	}
	if (f->is_ptr) {
		const struct ctype *ct = f->size == 8 ?
			sema_record_field_ctype(s, f) : NULL;
		const struct type *typed = ct ? type_of_ctype(s->a, ct,
			sema_record_space(s, f)) : NULL;
		if (typed)
			return typed;
		struct type *p = arena_new(s->a, struct type);
		*p = *t;
		p->is_ptr = true;
		t = p;
	}
	return t;
}

/* `args` as a value (bpftrace 0.20 made it a struct): a record of the
 * probe's fields, in the order of the block's first probe's, built as
 * the tuple (name=args.name, ...) so that each probe loads its own
 * (wildcards may place a field differently). fexit's retval is not an
 * argument, as in bpftrace. The node becomes that N_TUPLE. */
const struct type *sema_args_value(struct sema *s, struct node *n)
{
	const struct probe *first = NULL;
	for (uint32_t i = 0; i < s->prog->nprobes && !first; i++)
		if (s->prog->probes[i].block == s->block)
			first = &s->prog->probes[i];
	const struct type *rec = first ? first->args_type : NULL;
	if (!rec || rec->kind != TYPE_RECORD) {
		/* field_type's errors for args.x: no DWARF, a probe type
		 * without args, or no probe left */
		struct node f = { .kind = N_FIELD, .pos = n->pos };
		f.u.field.base = n;
		f.u.field.name = "";
		sema_field(s, &f, false);
		return NULL;
	}
	struct node_list elems = { 0 };
	const char **names = arena_array(s->a, const char *,
					 rec->nfields ? rec->nfields : 1);
	for (uint32_t k = 0; k < rec->nfields; k++) {
		const struct record_field *rf = &rec->rfields[k];
		if (k + 1 == rec->nfields && (first->caps & PROBE_TYPED_RET) &&
		    strcmp(rf->name, "retval") == 0)
			break;
		struct node *a = node_new(s->a, N_BUILTIN, n->pos);
		a->u.builtin.id = BI_ARGS;
		struct node *f = node_new(s->a, N_FIELD, n->pos);
		f->u.field.base = a;
		f->u.field.name = rf->name;
		names[elems.n] = rf->name;
		node_list_push(s->a, &elems, f);
	}
	if (!elems.n) {
		sema_error(s, n->pos, "BAD_BUILTIN",
			   "args: %s has no arguments to make a value of",
			   sema_probe_kind(s->a, first));
		return NULL;
	}
	n->kind = N_TUPLE;
	n->u.tup.elems = elems;
	n->u.tup.names = names;
	return sema_tuple(s, n);
}

/* rec.name of a record: the tuple index it stands for (the node becomes
 * that N_TUPLE_INDEX). */
static const struct type *record_field(struct sema *s, struct node *n,
				       const struct type *rt)
{
	const char *name = n->u.field.name;
	struct node *base = n->u.field.base;
	for (uint32_t k = 0; k < rt->nfields; k++) {
		if (strcmp(rt->names[k], name) != 0)
			continue;
		n->kind = N_TUPLE_INDEX;
		n->u.tindex.base = base;
		n->u.tindex.index = k;
		return rt->fields[k];
	}
	sema_error(s, n->pos, "BAD_FIELD", "'%s' has no field '%s'",
		   sema_tname(s, rt), name);
	return NULL;
}

/* args->name / args.name: the field must exist in the record of every
 * probe of the block; the types unify (a wildcard over tracepoints whose
 * fields differ in width). */
const struct type *sema_field(struct sema *s, struct node *n, bool bytes)
{
	struct node *base = n->u.field.base;
	if (base->kind != N_BUILTIN || base->u.builtin.id != BI_ARGS) {
		const struct type *bt = sema_expr(s, base);
		if (bt && bt->kind == TYPE_TUPLE && bt->names)
			return record_field(s, n, bt);
		return bt ? sema_member(s, n, bt) : NULL;
	}
	const struct type *t = NULL;
	bool any = false;
	for (uint32_t i = 0; i < s->prog->nprobes; i++) {
		const struct probe *p = &s->prog->probes[i];
		if (p->block != s->block)
			continue;
		any = true;
		const struct type *rec = p->args_type;
		if ((!rec || rec->kind != TYPE_RECORD) &&
		    (p->caps & PROBE_ARGS)) {
			/* uprobes: args come from the file's DWARF */
			sema_error(s, base->pos, "BAD_BUILTIN",
				   "args: no debug information (DWARF) "
				   "describes the arguments of %s", p->name);
			return NULL;
		}
		if (!rec || rec->kind != TYPE_RECORD) {
			sema_error(s, base->pos, "BAD_BUILTIN",
				   "args can only be used with tracepoint, fentry "
				   "and fexit probes (%s used here)",
				   sema_probe_kind(s->a, p));
			return NULL;
		}
		uint32_t k;
		for (k = 0; k < rec->nfields; k++)
			if (strcmp(rec->rfields[k].name, n->u.field.name) == 0)
				break;
		if (k == rec->nfields) {
			sema_error(s, n->pos, "BAD_FIELD",
				   "%s has no field '%s'", p->name ? p->name :
				   "the probe", n->u.field.name);
			return NULL;
		}
		const struct type *ft = sema_record_field_type(s, &rec->rfields[k],
							  bytes);
		if (!ft) {
			sema_error(s, n->pos, "UNSUPPORTED",
				   "field '%s' of %s: arrays and odd-sized fields "
				   "are not supported", n->u.field.name,
				   p->name ? p->name : "the probe");
			return NULL;
		}
		if (!t) {
			t = ft;
			n->u.field.field = (int32_t)k;
		} else {
			const struct type *u = type_unify(s->a, t, ft);
			if (!u) {
				sema_error(s, n->pos, "TYPE_MISMATCH",
					   "field '%s' is '%s' in one probe and '%s' "
					   "in %s", n->u.field.name,
					   sema_tname(s, t), sema_tname(s, ft),
					   p->name);
				return NULL;
			}
			t = u;
		}
	}
	if (!any)
		sema_error(s, base->pos, "BAD_BUILTIN",
			   "args used, but every probe of this block was "
			   "skipped (what they name is not on this system), "
			   "so nothing says what args holds");
	base->type = type_simple(s->a, TYPE_RECORD, 0);
	return t;
}
