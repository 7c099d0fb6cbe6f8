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

# The highest BPF program id loaded now (ids only grow), 0 if none.
bpf_max_prog_id() {
	bpftool prog show 2>/dev/null | sed -n 's/^\([0-9]*\):.*/\1/p' | sort -n | tail -1 | grep . || echo 0
}

# bpf_progs_left SINCE_ID NAME_REGEX: how many programs loaded after
# SINCE_ID with a matching name are still loaded. Counting only these
# keeps "nothing left behind" checks true while other programs (another
# suite, a helper, the system) come and go.
bpf_progs_left() {
	bpftool prog show 2>/dev/null |
		awk -v since="$1" -v re="$2" '/^[0-9]+:/ { id = $1 + 0;
			for (i = 1; i < NF; i++) if ($i == "name") name = $(i + 1);
			if (id > since && name ~ re) n++ } END { print n + 0 }'
}
