/* fuzz_usdt_note.c - libFuzzer target: .note.stapsdt section parsing on
 * arbitrary bytes, as both ELF64 and ELF32 layouts. Every string a note
 * yields must be terminated inside the input. */
#include "elf/elf.h"

#include <stdlib.h>
#include <string.h>

struct span {
	const char *lo, *hi;
};

static void inside(const struct span *s, const char *p)
{
	/* the string and its NUL must lie within the buffer */
	if (p < s->lo || p >= s->hi)
		abort();
	size_t n = strnlen(p, (size_t)(s->hi - p));
	if (p + n >= s->hi)
		abort();
}

static int check(void *arg, const struct usdt_note *n)
{
	inside(arg, n->provider);
	inside(arg, n->name);
	if (n->args[0])
		inside(arg, n->args);
	/* exercise the argument parser on what the note carries */
	struct usdt_arg a[USDT_MAX_ARGS];
	(void)usdt_args_parse(n->args, a, USDT_MAX_ARGS);
	return 0;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	/* a private copy so reads past the end are caught by ASan */
	char *buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	struct span s = { buf, buf + size };
	(void)usdt_notes_parse(buf, size, 8, check, &s);
	(void)usdt_notes_parse(buf, size, 4, check, &s);
	free(buf);
	return 0;
}
