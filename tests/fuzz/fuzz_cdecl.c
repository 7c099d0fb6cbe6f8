/* fuzz_cdecl.c - libFuzzer target over the preprocessor and the C
 * declaration parser: the input is a script whose definitions (#include,
 * #define, #if, struct/union/enum/typedef) are preprocessed, declared in
 * a registry of C types and laid out, and whose probes are then lexed
 * and parsed with its macros. Only sonde's built-in headers can be
 * included, so a run reads no file. Every bound (tokens, depth, errors)
 * must hold; sanitizers catch the rest.
 *   build/fuzz/fuzz_cdecl -dict=tests/fuzz/cdecl.dict build/fuzz/corpus_cdecl tests/fuzz/corpus/cdecl */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "lang/cdefs.h"
#include "types.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 64 * 1024)
		return 0;
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	struct arena a;
	arena_init(&a);
	struct ctypes *reg = ctypes_new(&a);
	struct diag_source src = { "fuzz", text };
	struct diags d;
	diags_init(&d, &src);
	struct cdefs_opts o = { .have_btf = true, .builtin_only = true };
	cdefs_parse_script(&a, text, &o, reg, &d);
	/* rendering reads every position back into the sources */
	FILE *null = fopen("/dev/null", "w");
	if (null) {
		diags_print(&d, null);
		fclose(null);
	}
	diags_free(&d);
	arena_free(&a);
	free(text);
	return 0;
}
