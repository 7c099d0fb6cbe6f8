/* unit.h - the tiny unit-test harness: one "ok - name" / "not ok - name"
 * line per check (the runner counts them), exit status 1 on any failure. */
#ifndef SONDE_UNIT_H
#define SONDE_UNIT_H

#include <stdio.h>
#include <string.h>

static int unit_failed, unit_passed;

#define CHECK(cond, name) do { \
	if (cond) { unit_passed++; printf("ok - %s\n", (name)); } \
	else { unit_failed++; printf("not ok - %s (%s:%d: %s)\n", (name), \
				    __FILE__, __LINE__, #cond); } \
} while (0)

#define CHECK_STR(got, want, name) do { \
	const char *g_ = (got), *w_ = (want); \
	int same_ = g_ && w_ && strcmp(g_, w_) == 0; \
	CHECK(same_, name); \
	if (!same_) printf("#   got:  [%s]\n#   want: [%s]\n", \
			   g_ ? g_ : "(null)", w_ ? w_ : "(null)"); \
} while (0)

#define UNIT_DONE() (fflush(stdout), unit_failed ? 1 : 0)

#endif
