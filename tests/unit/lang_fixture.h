/* lang_fixture.h - test helper: parse and check a script without the
 * rest of the pipeline. Each attach point becomes one fake probe named
 * by its text; tracepoint probes get a small hand-made args record:
 *   int fd (s32), void *buf, char comm[16], __data_loc char[] filename,
 * and "tracepoint:other:*" probes a record where fd is a u64 and there
 * is no filename. */
#ifndef SONDE_LANG_FIXTURE_H
#define SONDE_LANG_FIXTURE_H

#include <stdlib.h>
#include <string.h>

#include "compile.h"
#include "host/btf.h"
#include "lang/cdefs.h"
#include "lang/parser.h"
#include "lang/sema.h"
#include "probes/provider.h"

static const struct record_field fx_fields[] = {
	{ .name = "fd", .offset = 16, .size = 4, .is_signed = true },
	{ .name = "buf", .offset = 24, .size = 8, .is_ptr = true },
	{ .name = "comm", .offset = 32, .size = 16, .is_char_array = true,
	  .array_len = 16 },
	{ .name = "filename", .offset = 48, .size = 4, .is_data_loc = true },
	{ .name = "addr", .offset = 52, .size = 16, .array_len = 16 },
	{ .name = "ports", .offset = 68, .size = 8, .array_len = 4 },
};
static const struct record_field fx_fields2[] = {
	{ .name = "fd", .offset = 8, .size = 8 },
	{ .name = "comm", .offset = 16, .size = 16, .is_char_array = true,
	  .array_len = 16 },
};
static const struct type fx_rec = { .kind = TYPE_RECORD, .nfields = 6,
				    .rfields = fx_fields };
static const struct type fx_rec2 = { .kind = TYPE_RECORD, .nfields = 2,
				     .rfields = fx_fields2 };

struct lang_fx {
	struct arena a;
	struct diag_source src;
	struct diags d;
	struct program prog;
	struct node *root;
	int rc;
};

static int lang_fx_run(struct lang_fx *f, const char *text, char **pos,
		       int npos, bool unsafe)
{
	memset(f, 0, sizeof(*f));
	arena_init(&f->a);
	f->src.name = "test";
	f->src.text = text;
	diags_init(&f->d, &f->src);
	f->prog.arena = &f->a;
	f->prog.strlen = 64;
	f->prog.ringbuf_map = f->prog.globals_map = -1;
	/* C types as compile() sets them up: the kernel's BTF behind */
	f->prog.ctypes = ctypes_new(&f->a);
	ctypes_add_resolver(f->prog.ctypes, kbtf_resolver(&f->a));
	/* the script's definitions declare their types in the program's
	 * registry, as compile() does */
	f->root = cdefs_parse_script(&f->a, text, NULL, f->prog.ctypes,
				     &f->d);
	if (!f->root || f->d.nerrors)
		return f->rc = -1;
	uint32_t n = 0;
	for (uint32_t b = 0; b < f->root->u.list.n; b++)
		n += f->root->u.list.v[b]->u.probe.attach.n;
	f->prog.probes = arena_array(&f->a, struct probe, n ? n : 1);
	for (uint32_t b = 0; b < f->root->u.list.n; b++) {
		struct node *p = f->root->u.list.v[b];
		for (uint32_t i = 0; i < p->u.probe.attach.n; i++) {
			struct probe *pr = &f->prog.probes[f->prog.nprobes++];
			pr->block = b;
			pr->name = p->u.probe.attach.v[i]->u.attach.text;
			/* what its provider declares (none: no capability) */
			char pv[32];
			size_t len = strcspn(pr->name, ":");
			if (len < sizeof(pv)) {
				memcpy(pv, pr->name, len);
				pv[len] = '\0';
				const struct provider *pp = provider_find(pv);
				pr->caps = pp ? pp->caps : 0;
			}
			if (strncmp(pr->name, "tracepoint:other:", 17) == 0)
				pr->args_type = &fx_rec2;
			else if (strncmp(pr->name, "tracepoint:", 11) == 0)
				pr->args_type = &fx_rec;
		}
	}
	f->prog.nblocks = f->root->u.list.n;
	/* the internal maps compile() creates before sema, so map ids match
	 * what `sonde -d ast` prints */
	struct map_spec ring = { .name = ".events", .kind = MAP_RINGBUF,
				 .max_entries = 1u << 20 };
	f->prog.ringbuf_map = program_add_map(&f->prog, &ring);
	struct map_spec globals = { .name = ".globals", .kind = MAP_ARRAY,
				    .key_size = 4, .max_entries = 1,
				    .value_size = sizeof(struct sonde_globals) };
	f->prog.globals_map = program_add_map(&f->prog, &globals);
	/* as on the command line without -c */
	struct sema_opts o = { .positional = pos, .npositional = npos,
			       .unsafe = unsafe, .no_child = true,
			       .kinds_with = provider_names_with };
	return f->rc = sema_check(f->root, &f->prog, &o, &f->d);
}

static void lang_fx_free(struct lang_fx *f)
{
	diags_free(&f->d);
	arena_free(&f->a);
}

#endif
