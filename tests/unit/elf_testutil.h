/* elf_testutil.h - helpers shared by the unit tests that use the test
 * programs (tests/progs): run a command and capture its output, find or
 * build the programs. Inline, so a test may use only some of them. */
#ifndef SONDE_ELF_TESTUTIL_H
#define SONDE_ELF_TESTUTIL_H

#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Run a shell command; its stdout (at most len-1 bytes) into out.
 * Returns the exit status or -1. */
static inline int run_capture(const char *cmd, char *out, size_t len)
{
	FILE *p = popen(cmd, "r");
	if (!p)
		return -1;
	size_t n = fread(out, 1, len - 1, p);
	out[n] = '\0';
	return pclose(p);
}

/* The path of build/tests/progs/NAME, building it from tests/progs/NAME.c
 * into a temporary directory when the Makefile has not (e.g. a test
 * binary run on its own), or when a compiler (cc or clang) and flags are
 * given. */
static inline const char *test_prog(const char *name, const char *cc, const char *cflags,
			     char *buf, size_t len)
{
	const char *build = getenv("BUILD") ? getenv("BUILD") : "build";
	if (!cc)
		cc = "cc";
	if (!cflags) {
		snprintf(buf, len, "%s/tests/progs/%s", build, name);
		if (access(buf, X_OK) == 0)
			return buf;
		cflags = "-O0 -g";
	}
	static int seq;
	snprintf(buf, len, "/tmp/sonde-elftest-%d-%d-%s", (int)getpid(), seq++, name);
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "%s %s -Iinclude -o %s tests/progs/%s.c 2>&1",
		 cc, cflags, buf, name);
	char out[4096];
	if (run_capture(cmd, out, sizeof(out)) != 0) {
		printf("# could not build %s: %s\n", name, out);
		return NULL;
	}
	return buf;
}

/* build/tests/progs/NAME beside the running test binary, written to buf
 * (at least PATH_MAX + 16 bytes); NULL when it is not there (make check
 * builds it). */
static inline const char *test_prog_beside(const char *name, char *buf,
					   size_t len)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return NULL;
	self[n] = '\0';
	snprintf(buf, len, "%s/progs/%s", dirname(self), name);
	return access(buf, X_OK) == 0 ? buf : NULL;
}

#endif
