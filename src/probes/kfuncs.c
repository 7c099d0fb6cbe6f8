/* kfuncs.c - the kernel functions ftrace can patch (tracefs's
 * available_filter_functions) and the ones kprobes refuse (debugfs's
 * kprobes/blacklist): sorted name lists for fentry, kprobe and -l. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "probe_util.h"
#include "../base/glob.h"
#include "../base/vec.h"

#define KPROBE_BLACKLIST "/sys/kernel/debug/kprobes/blacklist"
/* available_filter_functions has ~40,000 lines on a distribution kernel;
 * more than this many is not a kernel's list. */
#define KFUNCS_MAX 2000000

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void kfuncs_parse_text(struct kfuncs *t, char *text, int field)
{
	memset(t, 0, sizeof(*t));
	size_t cap = 0;
	for (char *line = text, *nl; *line; line = nl + 1) {
		nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		char *w = line + strspn(line, " \t");
		for (int f = 0; f < field && *w; f++) {
			w += strcspn(w, " \t");
			w += strspn(w, " \t");
		}
		w[strcspn(w, " \t")] = '\0';
		if (*w && t->n < KFUNCS_MAX) {
			if (vec_reserve_arr(t->v, cap, t->n + 1))
				break;
			t->v[t->n++] = w;
		}
		if (!nl)
			break;
	}
	if (t->n)
		qsort(t->v, t->n, sizeof(*t->v), str_cmp);
	size_t k = 0;
	for (size_t i = 0; i < t->n; i++)
		if (!k || strcmp(t->v[k - 1], t->v[i]) != 0)
			t->v[k++] = t->v[i];
	t->n = k;
	t->text = text;
	t->known = true;
}

/* --traceable-functions FILE (bpftrace 0.26): the list read instead of
 * tracefs's, in its format; read once, when the option is given */
static char *traceable_source;

/* A user's file of function names: opened without blocking (a FIFO
 * with no writer reads as empty, then EAGAIN ends it), read up to
 * TRACEABLE_MAX (a kernel's list is a few MB), so /dev/zero or a huge
 * sparse file cannot grow memory without end. */
#define TRACEABLE_MAX (64u << 20)

int kfuncs_set_source(const char *path)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	int err = buf ? 0 : -ENOMEM;
	while (!err) {
		if (n + 1 >= cap) {
			if (cap >= TRACEABLE_MAX) {
				err = -EFBIG;
				break;
			}
			char *nb = realloc(buf, cap * 2);
			if (!nb) {
				err = -ENOMEM;
				break;
			}
			buf = nb;
			cap *= 2;
		}
		ssize_t r = read(fd, buf + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			err = errno == EAGAIN ? 0 : -errno;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	if (err) {
		free(buf);
		return err;
	}
	buf[n] = '\0';
	free(traceable_source);
	traceable_source = buf;
	return 0;
}

static char *read_traceable(void)
{
	if (traceable_source)
		return strdup(traceable_source);
	const char *dir = tracefs_dir();
	if (!dir)
		return NULL;
	char path[256];
	snprintf(path, sizeof(path), "%s/available_filter_functions", dir);
	return probe_read_file(path);
}

void kfuncs_load(struct kfuncs *t)
{
	memset(t, 0, sizeof(*t));
	char *text = read_traceable();
	if (text)
		kfuncs_parse_text(t, text, 0);      /* "name" or "name [module]" */
	else if (traceable_source)
		t->known = true;                    /* unreadable: nothing */
}

/* The lines "name [module]" of a module the glob matches ("vmlinux" for
 * lines without one), rewritten in place as "module:name" (the kernel's
 * own stay "name"); the others are blanked. */
static void keep_module(char *text, const char *glob)
{
	for (char *line = text, *nl; *line; line = nl + 1) {
		nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		char mod[128] = "vmlinux", name[256];
		size_t nlen = strcspn(line, " \t\n");
		const char *open = memchr(line, '[', len);
		if (open) {
			const char *close = memchr(open, ']', len - (size_t)(open - line));
			size_t n = close ? (size_t)(close - open - 1) : 0;
			if (n >= sizeof(mod))
				n = sizeof(mod) - 1;
			memcpy(mod, open + 1, n);
			mod[n] = '\0';
		}
		bool keep = glob_match(glob, mod) && nlen < sizeof(name);
		/* a malformed line ("name[mod]") has no room: left out */
		if (keep && open && strlen(mod) + 1 + nlen >= len)
			keep = false;
		if (keep && open) {
			/* "name [mod]" is longer than "mod:name" */
			memcpy(name, line, nlen);
			name[nlen] = '\0';
			memset(line, ' ', len);
			int w = snprintf(line, len + 1, "%s:%s", mod, name);
			if (w >= 0 && (size_t)w < len)
				line[w] = ' ';
		} else if (!keep) {
			memset(line, ' ', len);
		}
		if (!nl)
			break;
	}
}

void kfuncs_load_module(struct kfuncs *t, const char *module)
{
	memset(t, 0, sizeof(*t));
	char *text = read_traceable();
	if (!text) {
		t->known = traceable_source != NULL;
		return;
	}
	keep_module(text, module);
	kfuncs_parse_text(t, text, 0);
}

void kfuncs_load_blacklist(struct kfuncs *t)
{
	memset(t, 0, sizeof(*t));
	char *text = probe_read_file(KPROBE_BLACKLIST);
	if (text)
		kfuncs_parse_text(t, text, 1);      /* "0xSTART-0xEND\tname" */
}

void kfuncs_free(struct kfuncs *t)
{
	if (!t)
		return;
	free(t->v);
	free(t->text);
	memset(t, 0, sizeof(*t));
}

bool kfuncs_has(const struct kfuncs *t, const char *name)
{
	if (!t->known)
		return true;
	return t->n && bsearch(&name, t->v, t->n, sizeof(*t->v), str_cmp);
}
