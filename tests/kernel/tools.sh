# tests/kernel/tools.sh - bpftrace's own tools (/usr/sbin/*.bt) as users
# run them, sourced by tests/kernel/run. Every tool bpftrace 0.17 compiles
# must compile with sonde, except those tools-pending names with the
# reason; a listed tool that compiles now fails the test until its line
# is removed, so the list stays honest. vfscount, vfsstat, syscount and
# execsnoop run until interrupted and must print what they count.

TOOLS_PENDING=$PWD/tools-pending
# The reason a tool is listed under KIND (bpftrace, pending), or nothing.
tool_listed() {
	awk -v t="$2" -v k="$1" '$1 == k && $2 == t { $1 = ""; $2 = ""; sub(/^ +/, ""); print; exit }' "$TOOLS_PENDING"
}
for f in /usr/sbin/*.bt; do
	[ -e "$f" ] || { skip "tools" "bpftrace's tools are not installed"; break; }
	t=$(basename "$f")
	why=$(tool_listed bpftrace "$t")
	if [ -n "$why" ]; then
		skip "tool $t compiles" "bpftrace 0.17 does not compile it here either: $why"
		continue
	fi
	pending=$(tool_listed pending "$t")
	absent=$(tool_listed absent "$t")
	err=$(cd /tmp && timeout -k 10 120 "$SONDE" --dry-run "$f" 2>&1 >/dev/null); r=$?
	if [ -n "$absent" ]; then
		# part of what it probes is not on Debian 12: bpftrace 0.17
		# attaches the rest, and so must sonde, warning of each skip
		if [ $r -eq 0 ] && grep -qE 'WARNING: .*the probe is skipped \[(NO_SYMBOL|NO_MATCH|NO_PROBE)\]' <<<"$err"; then
			ok "tool $t compiles, skipping what Debian 12 lacks ($absent)"
		else
			nok "tool $t compiles, skipping what Debian 12 lacks" "exit $r: $(printf %s "$err" | grep -m1 -E 'error|warning')"
		fi
	elif [ $r -eq 0 ] && [ -n "$pending" ]; then
		nok "tool $t compiles" "it compiles now: remove its line from tests/kernel/tools-pending"
	elif [ $r -eq 0 ]; then
		ok "tool $t compiles"
	elif [ -n "$pending" ]; then
		skip "tool $t compiles" "pending: $pending"
	else
		nok "tool $t compiles" "$(printf %s "$err" | grep -m1 error)"
	fi
done

# run_tool TOOL [-w REGEX] ACTIVITY...: start the tool, wait until it has
# attached (its BEGIN has printed: every one of these tools says
# something there, after "Attaching N probes..."), run ACTIVITY, wait
# until the output matches REGEX (what the tool prints as it runs), then
# interrupt it as a user would (Ctrl-C); output in $out. No fixed
# sleeps: under qemu attaching takes however long it takes.
run_tool() {
	local tool=$1; shift
	local log=$tmp/$tool.log want=""
	if [ "$1" = -w ]; then want=$2; shift 2; fi
	(cd /tmp && exec "$SONDE" "/usr/sbin/$tool.bt") > "$log" 2>&1 &
	local pid=$! i
	for i in $(seq 1 360); do
		# (a line after "Attaching": warnings come before it)
		[ "$(sed -n '/^Attaching/,$p' "$log" | grep -vc '^Attaching')" -gt 0 ] && break
		kill -0 $pid 2>/dev/null || break
		sleep 0.5
	done
	"$@" >/dev/null 2>&1
	for i in $(seq 1 360); do
		[ -z "$want" ] && break
		grep -qE "$want" "$log" && break
		kill -0 $pid 2>/dev/null || break
		sleep 0.5
	done
	kill -INT $pid 2>/dev/null
	for i in $(seq 1 60); do kill -0 $pid 2>/dev/null || break; sleep 0.5; done
	if kill -0 $pid 2>/dev/null; then
		echo "# $tool: still running 30 s after Ctrl-C; killed"
		kill -KILL $pid 2>/dev/null
	fi
	wait_gone $pid "$tool"
	out=$(cat "$log")
}
activity() { for i in 1 2 3; do cat /etc/hostname /etc/os-release; ls / ; done; "$LOOP" 20; }

run_tool vfscount activity
expect_eq "vfscount: exits 0 on Ctrl-C" "$rc" 0
expect_match "vfscount: counts vfs calls by function" "$out" '^@\[vfs_read\]: [0-9]+'
run_tool vfsstat -w '^[0-9]{2}:[0-9]{2}:[0-9]{2}$' sh -c 'activity() { for i in 1 2 3 4 5; do cat /etc/hostname; ls /; sleep 0.3; done; }; activity'
expect_eq "vfsstat: exits 0 on Ctrl-C" "$rc" 0
expect_match "vfsstat: prints its per-second counts" "$out" '^@\[vfs_(read|write|open)[a-z]*\]: [0-9]+'
expect_match "vfsstat: prints the time each second" "$out" '^[0-9]{2}:[0-9]{2}:[0-9]{2}$'
run_tool syscount activity
expect_eq "syscount: exits 0 on Ctrl-C" "$rc" 0
expect_match "syscount: top syscall ids" "$out" '^@syscall\[[0-9]+\]: [0-9]+'
expect_match "syscount: by process" "$out" '^@process\[.+\]: [0-9]+'
run_tool execsnoop -w 'sonde-exec-marker' sh -c '/bin/true; /bin/echo sonde-exec-marker'
expect_eq "execsnoop: exits 0 on Ctrl-C" "$rc" 0
expect_match "execsnoop: header" "$out" '^TIME\(ms\) +PID +ARGS'
expect_match "execsnoop: the exec and its arguments" "$out" '/bin/echo sonde-exec-marker'
# dcsnoop: one of its kprobes (lookup_fast.constprop.*) matches nothing
# on 6.1, skipped; the others run and print the lookups
run_tool dcsnoop -w ' R ' sh -c 'ls /usr/share >/dev/null; cat /etc/hostname; ls /nonexistent-sonde-dir'
expect_eq "dcsnoop: exits 0 on Ctrl-C" "$rc" 0
expect_match "dcsnoop: attaches what 6.1 has" "$out" '^Attaching 4 probes\.\.\.$'
expect_match "dcsnoop: prints the dcache lookups" "$out" '^[0-9]+ +[0-9]+ +[^ ].* R [^ ]'
