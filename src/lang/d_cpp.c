/* d_cpp.c - dtrace -C: the script through sonde's C preprocessor
 * (pp.h), with -D/-U as #define/#undef lines read first and -I's
 * directories. The script's own tokens come back as text, on the lines
 * they were written on, so D's lexer and messages see the same lines;
 * what #included headers declare is not kept (D's variables are typed
 * by what they are assigned), only the macros they define. The
 * preprocessor drops #pragma lines, so D's are read before it runs. */
#include "d_int.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pp.h"

/* -D NAME[=VALUE] and -U NAME, in order, as a file the preprocessor
 * reads first (a memfd: nothing on disk). -1 when there are none. */
static int defines_file(const struct frontend_opts *o)
{
	if (!o->ndefines)
		return -1;
	int fd = memfd_create("dtrace-defines", MFD_CLOEXEC);
	if (fd < 0)
		return -1;
	for (size_t i = 0; i < o->ndefines; i++) {
		const char *d = o->defines[i];
		const char *eq = strchr(d + 1, '=');
		char line[512];
		int n;
		if (d[0] == 'U')
			n = snprintf(line, sizeof(line), "#undef %s\n", d + 1);
		else if (eq)
			n = snprintf(line, sizeof(line), "#define %.*s %s\n",
				     (int)(eq - d - 1), d + 1, eq + 1);
		else
			n = snprintf(line, sizeof(line), "#define %s 1\n", d + 1);
		if (n < 0 || (size_t)n >= sizeof(line) ||
		    write(fd, line, (size_t)n) != n) {
			close(fd);
			return -1;
		}
	}
	return fd;
}

const char *d_preprocess(struct arena *a, const char *text,
			 const struct frontend_opts *o, struct diags *d)
{
	/* the #! line stays (blank), to keep the lines where they are */
	char *src = arena_strdup(a, text);
	if (src[0] == '#' && src[1] == '!')
		for (char *c = src; *c && *c != '\n'; c++)
			*c = ' ';
	int fd = defines_file(o);
	char fdpath[64];
	const char *incs[1];
	if (fd >= 0) {
		snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", fd);
		incs[0] = fdpath;
	}
	struct pp_opts po = {
		.name = o->script_name ? o->script_name : "stdin",
		.text = src, .len = strlen(src),
		.include_dirs = o->include_dirs,
		.ninclude_dirs = o->ninclude_dirs,
		.include_files = fd >= 0 ? incs : NULL,
		.ninclude_files = fd >= 0 ? 1 : 0,
		.have_btf = o->have_btf,
	};
	struct pp *pp = pp_new();
	if (!pp) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	const char *out = NULL;
	if (pp_run(pp, &po, d) == 0) {
		size_t n;
		const struct ptok *t = pp_tokens(pp, &n);
		size_t cap = strlen(src) + 1, len = 0;
		for (size_t i = 0; i < n; i++)
			cap += t[i].len + 2;
		char *buf = arena_alloc(a, cap + 1 + 2 * strlen(src));
		uint32_t line = 1;
		for (size_t i = 0; i < n; i++) {
			if (t[i].kind == PT_EOF || t[i].file != 0)
				continue;   /* a header's: its macros only */
			while (line < t[i].line) {
				buf[len++] = '\n';
				line++;
			}
			if (t[i].space || t[i].bol)
				buf[len++] = ' ';
			memcpy(buf + len, t[i].text, t[i].len);
			len += t[i].len;
		}
		buf[len++] = '\n';
		buf[len] = 0;
		out = buf;
	}
	pp_free(pp);
	if (fd >= 0)
		close(fd);
	return out;
}
