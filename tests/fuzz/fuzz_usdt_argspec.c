/* fuzz_usdt_argspec.c - libFuzzer target: USDT argument-spec parsing on
 * arbitrary NUL-terminated strings; checks the description it returns is
 * one code generation can trust. */
#include "elf/elf.h"

#include <stdlib.h>
#include <string.h>

static bool reg_ok(int r)
{
	return r == USDT_REG_NONE || (r >= 0 && r <= 152 && r % 8 == 0 && r != 120);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	char *s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	struct usdt_arg a[USDT_MAX_ARGS];
	int n = usdt_args_parse(s, a, USDT_MAX_ARGS);
	if (n > USDT_MAX_ARGS)
		abort();
	for (int i = 0; i < n; i++) {
		const struct usdt_arg *x = &a[i];
		if (x->size != 1 && x->size != 2 && x->size != 4 && x->size != 8)
			abort();
		if (!reg_ok(x->reg) || !reg_ok(x->index))
			abort();
		if (x->scale != 1 && x->scale != 2 && x->scale != 4 && x->scale != 8)
			abort();
		if (memchr(x->symbol, '\0', sizeof(x->symbol)) == NULL)
			abort();
		if (x->kind == USDT_ARG_REG && x->reg == USDT_REG_NONE)
			abort();
		if (x->rip && !x->symbol[0])
			abort();
	}
	const char *end;
	struct usdt_arg one;
	(void)usdt_arg_parse(s, &one, &end);
	free(s);
	return 0;
}
