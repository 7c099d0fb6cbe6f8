/* sdt_demo.c - a program carrying sonde/sdt.h probes of every argument
 * shape, traced by the USDT tests (and by bpftrace for comparison).
 * Usage: sdt_demo [N]  - runs the loop N times (default 3). Prints to
 * stdout what the probes should report, so a tracer's output can be
 * checked against it. bpftrace 0.17 reads only arg0..arg5, so every
 * probe but `twelve` has at most six arguments. */
#include <sonde/sdt.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

long g_counter = -5;             /* a global: rip-relative operand */
unsigned short g_small[4] = { 1, 2, 3, 4 };
static char g_name[16] = "demo";

struct order {
	int id;
	int qty;
	const char *item;
};

__attribute__((noinline)) static void emit(int i, struct order *o)
{
	signed char sc = (signed char)(-i - 1);
	unsigned char uc = (unsigned char)(200 + i);
	short ss = (short)(-1000 * (i + 1));
	unsigned short us = (unsigned short)(60000 + i);
	int si = -100000 * (i + 1);
	unsigned int ui = 4000000000u + (unsigned)i;
	long sl = -5000000000L * (i + 1);
	unsigned long ul = 10000000000UL + (unsigned long)i;

	SONDE_PROBE(demo, tick);
	SONDE_PROBE(demo, small, sc, uc, ss, us, si, ui);
	SONDE_PROBE(demo, wide, sl, ul);
	SONDE_PROBE(demo, consts, 42, -1, (short)-2, 7UL);
	SONDE_PROBE(demo, strs, g_name, o->item, i);
	SONDE_PROBE(demo, globals, g_counter, g_small[i & 3]);
	SONDE_PROBE(demo, twelve, i, i + 1, i + 2, i + 3, i + 4, i + 5, i + 6,
		    i + 7, i + 8, i + 9, i + 10, i + 11);
	if (SONDE_PROBE_ENABLED(demo, expensive))
		SONDE_PROBE(demo, expensive, i * i);
	SONDE_PROBE_JSON(demo, order, "{\"id\":%d,\"qty\":%d,\"item\":\"%s\"}",
			 o->id, o->qty, o->item);
	printf("i=%d sc=%d uc=%u ss=%d us=%u si=%d ui=%u sl=%ld ul=%lu name=%s item=%s counter=%ld small=%u enabled=%d\n",
	       i, sc, uc, ss, us, si, ui, sl, ul, g_name, o->item, g_counter,
	       g_small[i & 3], SONDE_PROBE_ENABLED(demo, expensive) ? 1 : 0);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 3;
	static const char *items[] = { "apple", "pear", "plum" };
	/* Touch the strings first: a tracer reads them with a helper that
	 * cannot fault a page in, and this one has not been touched yet. */
	volatile char touch = 0;
	for (int i = 0; i < 3; i++) {
		const char *volatile item = items[i];
		touch ^= item[0];
	}
	for (int i = 0; i < n; i++) {
		struct order o = { .id = 100 + i, .qty = i * 2, .item = items[i % 3] };
		g_counter++;
		emit(i, &o);
	}
	fflush(stdout);
	return 0;
}
