/* elf_testutil.h - helpers shared by the elf unit tests: run a command
 * and capture its output, find or build the test programs. */
#ifndef SONDE_ELF_TESTUTIL_H
#define SONDE_ELF_TESTUTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Run a shell command; its stdout (at most len-1 bytes) into out.
 * Returns the exit status or -1. */
static int run_capture(const char *cmd, char *out, size_t len)
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
static const char *test_prog(const char *name, const char *cc, const char *cflags,
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

#endif
