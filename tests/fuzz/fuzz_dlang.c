/* fuzz_dlang.c - libFuzzer target for D's front end (lang/d*.c):
 * lexer, pragmas, probe descriptions, parser, D's names, and the
 * semantic pass over what comes out, on arbitrary bytes. Nothing may
 * crash, leak or read out of bounds, whatever the script says. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile.h"
#include "lang/frontend.h"
#include "lang/sema.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;

	struct arena a;
	arena_init(&a);
	struct diag_source src = { "fuzz.d", text };
	struct diags d;
	diags_init(&d, &src);
	static char *pos[] = { "42", "hello" };
	static const char *const xopts[] = { "strsize=32" };
	struct frontend_settings set = { 0 };
	struct frontend_opts o = {
		.positional = pos, .npositional = 2,
		.pid = size % 3 ? 0 : 4242, .cmd = size % 3 == 1 ? "/bin/true" : NULL,
		.quiet = size % 2, .xopts = xopts, .nxopts = 1, .set = &set,
	};
	struct node *root = frontend_dtrace.parse(&a, text, &o, NULL, &d);
	if (root && !d.nerrors) {
		/* one BEGIN-like probe per clause: sema sees every clause */
		struct program prog = { .arena = &a, .strlen = 64,
					.ringbuf_map = -1, .globals_map = -1 };
		uint32_t nb = root->u.list.n;
		prog.probes = arena_array(&a, struct probe, nb ? nb : 1);
		for (uint32_t i = 0; i < nb; i++) {
			prog.probes[i].block = i;
			prog.probes[i].name = "BEGIN";
			prog.probes[i].dname[4] = ":BEGIN";
		}
		prog.nprobes = nb;
		prog.nblocks = nb;
		prog.dtrace.on = true;
		prog.dtrace.quiet = set.quiet;
		struct sema_opts so = { .positional = pos, .npositional = 2,
					.no_child = !o.cmd };
		sema_check(root, &prog, &so, &d);
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
