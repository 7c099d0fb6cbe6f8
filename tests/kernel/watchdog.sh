# tests/kernel/watchdog.sh - sourced by the kernel tier's suites. The VM
# that runs a suite is killed at a fixed cap (tests/kernel/check), and a
# killed VM says nothing about which command hung. kernel_watchdog starts
# a timer that, if the suite is still running when it ends, reports a
# failure naming every process of the run (its state, where the kernel
# has it waiting, its kernel stack) and kills them, so the suite goes on
# to its end and the log shows what hung.

# kernel_watchdog SECONDS
kernel_watchdog() {
	local suite=$$ secs=$1
	(
		sleep "$secs" &
		trap 'kill $! 2>/dev/null; exit 0' TERM
		wait $!
		kill -0 "$suite" 2>/dev/null || exit 0
		echo "not ok - kernel tier: $(basename "$0") still running after ${secs} s; the run's processes follow, then are killed"
		for p in $(run_pids); do
			[ "$p" = "$BASHPID" ] || [ "$p" = "$suite" ] && continue
			[ -r "/proc/$p/stat" ] || continue
			printf '  | pid %s state %s wchan %s: %s\n' "$p" \
				"$(awk '{ print $3 }' "/proc/$p/stat" 2>/dev/null)" \
				"$(cat "/proc/$p/wchan" 2>/dev/null)" \
				"$(tr '\0' ' ' < "/proc/$p/cmdline" 2>/dev/null | head -c 200)"
			sed 's/^/  |   /' "/proc/$p/stack" 2>/dev/null | head -12
		done
		for p in $(run_pids); do
			[ "$p" = "$BASHPID" ] || [ "$p" = "$suite" ] && continue
			kill -KILL "$p" 2>/dev/null
		done
	) &
	KERNEL_WATCHDOG=$!
}

# kernel_watchdog_stop: the suite ended in time
kernel_watchdog_stop() {
	kill "$KERNEL_WATCHDOG" 2>/dev/null
	wait "$KERNEL_WATCHDOG" 2>/dev/null
}

# wait_gone PID NAME: wait for PID (a child of this shell, already sent
# a signal) for up to 30 s, then kill it; its status goes in $rc. A
# process that does not go even then (stuck in the kernel) is a failure
# naming where it waits, and is not waited for (rc=137).
wait_gone() {
	local i
	for i in $(seq 1 60); do kill -0 "$1" 2>/dev/null || break; sleep 0.5; done
	if kill -0 "$1" 2>/dev/null; then
		kill -KILL "$1" 2>/dev/null
		sleep 1
	fi
	if kill -0 "$1" 2>/dev/null && [ "$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)" != Z ]; then
		nok "$2: the process did not go after SIGKILL" \
			"state $(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null), waiting in $(cat "/proc/$1/wchan" 2>/dev/null): $(tr '\n' '|' < "/proc/$1/stack" 2>/dev/null | head -c 400)"
		rc=137
		return 1
	fi
	wait "$1" 2>/dev/null
	rc=$?
}
