/* usdt_json.c - a program whose probes carry JSON, as the Rust usdt
 * crate's do (its probes pass a serialized struct as a string): provider
 * my_provider, probes http_error (arg0: a status code), sql_query_started
 * (arg0: the query text) and my_probe (arg0: {"ok":{"val":N}}). Fires
 * each probe COUNT times (default 3), PAUSE_MS apart (default 0), then
 * exits. The D tests (tests/dtrace) trace it. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "sonde/sdt.h"

static void pause_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/* the site sits in a function of its own, so probefunc names it */
__attribute__((noinline)) static void serve(int i)
{
	SONDE_PROBE(my_provider, http_error, 500 + i);
	/* a string the program built, as a serialized query would be */
	char query[64];
	snprintf(query, sizeof(query), "SELECT * FROM t%d", i);
	SONDE_PROBE(my_provider, sql_query_started, query);
	SONDE_PROBE_JSON(my_provider, my_probe, "{\"ok\":{\"val\":%d}}", 7 + i);
}

int main(int argc, char **argv)
{
	int count = argc > 1 ? atoi(argv[1]) : 3;
	long ms = argc > 2 ? atol(argv[2]) : 0;
	for (int i = 0; i < count; i++) {
		serve(i);
		if (ms)
			pause_ms(ms);
	}
	return 0;
}
