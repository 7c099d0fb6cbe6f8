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

# BPF programs loaded right now, system-wide (for "nothing left behind").
bpf_prog_count() {
	if command -v bpftool >/dev/null 2>&1; then
		bpftool prog show 2>/dev/null | grep -c '^[0-9]*:'
	else
		echo 0
	fi
}
