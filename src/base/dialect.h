/* dialect.h - which bpftrace a run behaves as, where a later bpftrace
 * changed what the same script prints or does (--dialect=VERSION).
 *
 * The language itself is one: sonde parses 0.17's scripts and 0.2x's
 * (lowercase begin/end, for loops, macros, config blocks, ...) under
 * any dialect, since a construct only one of them has cannot mean two
 * things. The dialect chooses between behaviours that two versions give
 * the same script: the attach line ("Attaching 1 probe..." or, from
 * 0.24, "Attached 1 probe" on stderr), exiting once a script of only
 * begin/end probes has run (0.24), and the other changes README lists.
 * It is bpftrace's minor version, 17 (the default, so every 0.17 script
 * runs exactly as it always has) to 26; each behaviour asks whether the
 * dialect is at least the version that brought it. */
#ifndef SONDE_DIALECT_H
#define SONDE_DIALECT_H

#include <stdlib.h>

enum dialect {
	DIALECT_017 = 17,    /* bpftrace 0.17 (Debian 12): the default */
	DIALECT_020 = 20,    /* Ubuntu 24.04 */
	DIALECT_021 = 21,
	DIALECT_023 = 23,    /* Debian 13 */
	DIALECT_024 = 24,
	DIALECT_025 = 25,
	DIALECT_026 = 26,    /* v0.26.1, the latest sonde knows: what its
			      * runtime tests expect where the CHANGELOG does
			      * not say which version changed it */
	DIALECT_LAST = 26,
};

/* "0.17", "0.20" .. "0.26" (a patch level, "0.26.1", allowed) -> 0 and
 * *d; else -1. 0.18 and 0.19 behave as 0.17 in everything sonde
 * distinguishes. */
static inline int dialect_parse(const char *s, enum dialect *d)
{
	if (s[0] != '0' || s[1] != '.')
		return -1;
	char *end;
	long minor = strtol(s + 2, &end, 10);
	if (end == s + 2 || minor < DIALECT_017 || minor > DIALECT_LAST)
		return -1;
	if (*end == '.') {
		char *pend;
		strtol(end + 1, &pend, 10);
		if (pend == end + 1 || *pend)
			return -1;
	} else if (*end) {
		return -1;
	}
	*d = (enum dialect)minor;
	return 0;
}

#endif
