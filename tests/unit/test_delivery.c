/* test_delivery.c - the probe side of event delivery, run in the unit-test
 * interpreter: batched wake-ups (no wake-up until the ring is a quarter
 * full and the reader is armed, at once for exit()), records the ring
 * refuses counted (and exit()'s own flagged), and failed map updates
 * counted per map. */
#include <stdio.h>

#include "cg_fixture.h"
#include "unit.h"

/* Compile and run probe 0 of `text` with the emulator prepared by `setup`. */
struct run {
	struct cgfx f;
	struct emu e;
	int64_t rc;
};

static int run_start(struct run *r, const char *text)
{
	cgfx_mapfails = true;
	int c = cgfx_compile(&r->f, text);
	cgfx_mapfails = false;
	if (c) {
		diags_print(&r->f.d, stdout);
		return c;
	}
	emu_init(&r->e, &r->f.prog);
	return 0;
}

static void run_end(struct run *r)
{
	emu_free(&r->e);
	cgfx_free(&r->f);
}

static void t_wakeups(void)
{
	struct run r;
	if (run_start(&r, "BEGIN { printf(\"x %d\\n\", 1); }") != 0) {
		CHECK(0, "wake: compiles");
		return;
	}
	/* an almost empty ring: no wake-up, the flag stays armed */
	r.e.globals.wake_armed = 1;
	r.e.rb_avail = 100;
	r.rc = emu_run(&r.e, 0);
	CHECK(r.rc == 0 && r.e.nrecords == 1, "wake: record written");
	CHECK(r.e.submit_flags[0] == BPF_RB_NO_WAKEUP,
	      "wake: below a quarter, submitted without a wake-up");
	CHECK(r.e.globals.wake_armed == 1, "wake: below a quarter, still armed");

	/* just under a quarter: still quiet */
	r.e.rb_avail = r.e.rb_size / 4 - 1;
	emu_run(&r.e, 0);
	CHECK(r.e.submit_flags[1] == BPF_RB_NO_WAKEUP,
	      "wake: a byte under a quarter, no wake-up");

	/* a quarter full and armed: one wake-up, and the flag is taken */
	r.e.rb_avail = r.e.rb_size / 4;
	emu_run(&r.e, 0);
	CHECK(r.e.submit_flags[2] == BPF_RB_FORCE_WAKEUP,
	      "wake: a quarter full and armed, the reader is woken");
	CHECK(r.e.globals.wake_armed == 0, "wake: the wake-up disarms");

	/* fuller still, but the reader is already awake: no more wake-ups */
	r.e.rb_avail = r.e.rb_size / 2;
	emu_run(&r.e, 0);
	CHECK(r.e.submit_flags[3] == BPF_RB_NO_WAKEUP,
	      "wake: not armed, no second wake-up");
	r.e.globals.wake_armed = 1;
	emu_run(&r.e, 0);
	CHECK(r.e.submit_flags[4] == BPF_RB_FORCE_WAKEUP,
	      "wake: re-armed by the reader, woken again");
	run_end(&r);

	if (run_start(&r, "BEGIN { exit(); }") != 0) {
		CHECK(0, "wake exit: compiles");
		return;
	}
	r.e.rb_avail = 0;
	emu_run(&r.e, 0);
	CHECK(r.e.nrecords == 1 && r.e.submit_flags[0] == BPF_RB_FORCE_WAKEUP,
	      "wake: exit() wakes the reader at once");
	run_end(&r);
}

static void t_lost(void)
{
	struct run r;
	if (run_start(&r, "BEGIN { printf(\"a\\n\"); printf(\"b %s\\n\", comm); }") != 0) {
		CHECK(0, "lost: compiles");
		return;
	}
	r.e.reserve_fails = true;
	r.rc = emu_run(&r.e, 0);
	CHECK(r.rc == 0 && r.e.nrecords == 0, "lost: nothing written");
	CHECK(r.e.globals.lost_events == 2, "lost: every refused record counted");
	CHECK(r.e.globals.exit_lost == 0, "lost: printf is not exit");
	run_end(&r);

	if (run_start(&r, "BEGIN { printf(\"a\\n\"); exit(); printf(\"never\\n\"); }") != 0) {
		CHECK(0, "lost exit: compiles");
		return;
	}
	r.e.reserve_fails = true;
	emu_run(&r.e, 0);
	CHECK(r.e.globals.lost_events == 2, "lost exit: counted, and exit() ends the probe");
	CHECK(r.e.globals.exit_lost == 1, "lost exit: flagged for the reader");
	run_end(&r);
}

static void t_map_full(void)
{
	struct run r;
	if (run_start(&r, "BEGIN { @a[1] = 5; @c[2] = count(); @s = sum(3); @h = hist(4); @ok = 1; }") != 0) {
		CHECK(0, "full: compiles");
		return;
	}
	int a = program_find_map(&r.f.prog, "@a");
	int c = program_find_map(&r.f.prog, "@c");
	int s = program_find_map(&r.f.prog, "@s");
	int h = program_find_map(&r.f.prog, "@h");
	int ok = program_find_map(&r.f.prog, "@ok");
	int fails = program_find_map(&r.f.prog, SONDE_MAPFAIL_MAP);
	CHECK(a >= 0 && c >= 0 && s >= 0 && h >= 0 && ok >= 0 && fails > ok,
	      "full: counters map after the user maps");
	r.rc = emu_run(&r.e, 0);
	uint64_t none = 0;
	for (int i = 0; i < 64; i++)
		none += r.e.mapfails[i];
	CHECK(r.rc == 0 && none == 0, "full: successful updates count nothing");
	r.e.update_fails = true;
	emu_run(&r.e, 0);
	emu_run(&r.e, 0);
	/* @c, @s, @h exist already: count/sum/hist add in place and need no
	 * update; @a and @ok are assigned with an update each time. */
	CHECK(r.e.mapfails[a] == 2, "full: assignment failures counted per map");
	CHECK(r.e.mapfails[ok] == 2, "full: scalar map failures counted");
	CHECK(r.e.mapfails[c] == 0 && r.e.mapfails[s] == 0 && r.e.mapfails[h] == 0,
	      "full: in-place aggregation updates do not fail");
	run_end(&r);

	if (run_start(&r, "BEGIN { @c[nsecs] = count(); @h[nsecs] = hist(3); @l[nsecs] = lhist(3, 0, 10, 1); @m[nsecs] = max(3); @st[nsecs] = stats(3); }") != 0) {
		CHECK(0, "full aggs: compiles");
		return;
	}
	r.e.update_fails = true;
	emu_run(&r.e, 0);
	const char *names[] = { "@c", "@h", "@l", "@m", "@st" };
	int all = 1;
	for (int i = 0; i < 5; i++) {
		int id = program_find_map(&r.f.prog, names[i]);
		if (id < 0 || r.e.mapfails[id] != 1)
			all = 0;
	}
	CHECK(all, "full: a new key refused by each aggregation is counted once");
	run_end(&r);
}

int main(void)
{
	t_wakeups();
	t_lost();
	t_map_full();
	return UNIT_DONE();
}
