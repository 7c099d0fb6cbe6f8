# tests/lib/check.sh - helpers for shell test suites: each check prints
# "ok - NAME" or "not ok - NAME" for tests/run to count.

ok() { echo "ok - $1"; }
nok() { echo "not ok - $1${2:+: $2}"; }
skip() { echo "ok - $1 # SKIP $2"; }

# expect_eq NAME GOT WANT
expect_eq() {
	if [ "$2" = "$3" ]; then ok "$1"; else
		nok "$1" "got [$(printf %s "$2" | head -c 400)] want [$(printf %s "$3" | head -c 400)]"; fi
}

# expect_match NAME TEXT REGEX
expect_match() {
	if printf '%s' "$2" | grep -qE -- "$3"; then ok "$1"; else
		nok "$1" "[$(printf %s "$2" | head -c 400)] does not match /$3/"; fi
}

# expect_no_match NAME TEXT REGEX
expect_no_match() {
	if ! printf '%s' "$2" | grep -qE -- "$3"; then ok "$1"; else
		nok "$1" "[$(printf %s "$2" | grep -m1 -E -- "$3" | head -c 400)] matches /$3/"; fi
}

# ---- what belongs to this test run ----------------------------------------
# Other engineers' suites, benchmarks and soak runs load BPF programs on
# the same machine at the same time, with the same names. Every process
# a test run starts inherits SONDE_TEST_RUN (tests/run sets it; a suite
# run by hand gets its own here), so a program held by a process whose
# environment carries it is this run's, whatever its name.
if [ -z "${SONDE_TEST_RUN:-}" ]; then
	SONDE_TEST_RUN=suite.$$.$(date +%s%N)
fi
export SONDE_TEST_RUN

# run_pids: the processes of this test run still alive (not this shell).
run_pids() {
	grep -lsxzF "SONDE_TEST_RUN=$SONDE_TEST_RUN" /proc/[0-9]*/environ 2>/dev/null |
		sed -n 's|^/proc/\([0-9]*\)/environ$|\1|p' | grep -vx "$$"
}

# bpf_progs_held [PID...]: the ids of the BPF programs these processes
# (without PIDs: all processes) hold open, through a program's fd or a
# link's. fdinfo names the program of both.
bpf_progs_held() {
	local dirs=() p
	if [ $# -gt 0 ]; then
		for p; do dirs+=("/proc/$p/fd"); done
	else
		dirs=(/proc/[0-9]*/fd)
	fi
	find "${dirs[@]}" -maxdepth 1 \( -lname 'anon_inode:bpf-prog' -o -lname 'anon_inode:bpf_link' \) \
		2>/dev/null | sed 's|/fd/\([0-9]*\)$|/fdinfo/\1|' | xargs -r cat 2>/dev/null |
		sed -n 's/^prog_id:[[:space:]]*\([0-9]*\)$/\1/p' | sort -un
}

# bpf_progs_loaded SINCE_ID: "ID NAME" of every program loaded after
# SINCE_ID that is still loaded.
bpf_progs_loaded() {
	bpftool prog show 2>/dev/null | awk -v since="$1" '/^[0-9]+:/ { id = $1 + 0; name = "-";
		for (i = 1; i < NF; i++) if ($i == "name") name = $(i + 1);
		if (id > since) print id, name }'
}

# The highest BPF program id loaded now (ids only grow), 0 if none.
bpf_max_prog_id() {
	bpftool prog show 2>/dev/null | sed -n 's/^\([0-9]*\):.*/\1/p' | sort -n | tail -1 | grep . || echo 0
}

# bpf_progs_left SINCE_ID NAME_REGEX: how many programs this run loaded
# after SINCE_ID are still loaded, and (on stderr, for the log) which.
# A program is this run's when a process of the run holds it (a sonde
# still running, or a child that inherited its fd), or when no process
# at all holds it and its name matches NAME_REGEX (pinned, or kept by
# the kernel: a leak, whoever made it). Programs other runs hold are
# theirs; one that is only on its way out (closed, not yet freed after
# an RCU grace period) is given up to 10 s to go.
bpf_progs_left() {
	local since=$1 re=$2 try loaded held ours left=""
	for try in 1 2 3 4 5 6 7 8 9 10; do
		loaded=$(bpf_progs_loaded "$since")
		[ -n "$loaded" ] || { echo 0; return; }
		ours=$(run_pids)
		# shellcheck disable=SC2086
		held=$(bpf_progs_held)
		[ -n "$ours" ] && ours=$(bpf_progs_held $ours)
		left=$(awk -v re="$re" -v held="$held" -v ours="$ours" 'BEGIN {
				n = split(held, h, "\n"); for (i = 1; i <= n; i++) H[h[i]] = 1
				n = split(ours, o, "\n"); for (i = 1; i <= n; i++) O[o[i]] = 1 }
			$1 in O { print $1, $2, "(held by a process of this run)"; next }
			!($1 in H) && $2 ~ re { print $1, $2, "(held by no process)" }' <<<"$loaded")
		[ -n "$left" ] || { echo 0; return; }
		sleep 1
	done
	printf '%s\n' "$left" | sed 's/^/# left loaded: /' >&2
	printf '%s\n' "$left" | grep -c .
}
