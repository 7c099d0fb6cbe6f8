/* fuzz_lang.c - libFuzzer target for the front end: lexer, parser,
 * semantic pass and AST dump on arbitrary bytes. Nothing may crash, leak
 * or read out of bounds, whatever the script says. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile.h"
#include "lang/parser.h"
#include "lang/sema.h"

/* Two fake probe blocks' worth of probes are made for whatever the
 * program has, with a small tracepoint-like record for `args`. */
static const struct record_field fields[] = {
	{ .name = "fd", .offset = 16, .size = 4, .is_signed = true },
	{ .name = "buf", .offset = 24, .size = 8, .is_ptr = true },
	{ .name = "comm", .offset = 32, .size = 16, .is_char_array = true,
	  .array_len = 16 },
	{ .name = "filename", .offset = 48, .size = 4, .is_data_loc = true },
	{ .name = "addr", .offset = 52, .size = 16, .array_len = 16 },
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;

	struct arena a;
	arena_init(&a);
	struct diag_source src = { "fuzz", text };
	struct diags d;
	diags_init(&d, &src);
	struct node *root = parse_program(&a, text, &d);
	if (root && !d.nerrors) {
		struct program prog = { .arena = &a, .strlen = 64,
					.ringbuf_map = -1, .globals_map = -1 };
		uint32_t nb = root->u.list.n;
		struct type *rec = arena_new(&a, struct type);
		rec->kind = TYPE_RECORD;
		rec->nfields = sizeof(fields) / sizeof(fields[0]);
		rec->rfields = fields;
		prog.probes = arena_array(&a, struct probe, nb ? nb : 1);
		for (uint32_t i = 0; i < nb; i++) {
			prog.probes[i].block = i;
			prog.probes[i].name = "tracepoint:fuzz:event";
			prog.probes[i].args_type = rec;
		}
		prog.nprobes = nb;
		prog.nblocks = nb;
		static char *pos[] = { "42", "hello" };
		struct sema_opts opts = { .positional = pos, .npositional = 2,
					  .no_child = size % 2 };
		sema_check(root, &prog, &opts, &d);
	}
	if (root) {
		FILE *null = fopen("/dev/null", "w");
		if (null) {
			ast_dump(null, root, &a);
			diags_print(&d, null);
			fclose(null);
		}
	}
	diags_free(&d);
	arena_free(&a);
	free(text);
	return 0;
}
