/* libaudit_block.c - an LD_AUDIT module that holds the dynamic loader
 * once it has mapped the C library, before anything is relocated or
 * initialized: a process caught the moment after it started, for as
 * long as a test needs: AUDIT_BLOCK_MS milliseconds, or while the file
 * AUDIT_BLOCK_FILE exists (a hold that does not depend on how fast a
 * loaded machine runs the test).
 *   AUDIT_BLOCK_MS=1500 LD_AUDIT=.../libaudit_block.so PROGRAM
 *   AUDIT_BLOCK_FILE=/tmp/hold LD_AUDIT=.../libaudit_block.so PROGRAM */
#define _GNU_SOURCE
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

unsigned la_version(unsigned version)
{
	return version;
}

unsigned la_objopen(struct link_map *map, Lmid_t lmid, uintptr_t *cookie)
{
	const char *ms = getenv("AUDIT_BLOCK_MS");
	const char *file = getenv("AUDIT_BLOCK_FILE");
	if (lmid != LM_ID_BASE || !map->l_name || !strstr(map->l_name, "libc.so"))
		return 0;
	if (file) {
		struct timespec ts = { 0, 10 * 1000000 };
		while (access(file, F_OK) == 0)
			nanosleep(&ts, NULL);
	}
	if (ms) {
		long n = atol(ms);
		struct timespec ts = { n / 1000, (n % 1000) * 1000000 };
		while (nanosleep(&ts, &ts) != 0)
			;
	}
	return 0;
}
