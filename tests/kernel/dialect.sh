# tests/kernel/dialect.sh - bpftrace 0.2x (--dialect=0.26) where it needs
# kprobes or fentry, sourced by tests/kernel/run on Debian 12's 6.1
# kernel. Expected outputs come from bpftrace v0.26.1's documentation
# (../shared/reference/bpftrace-0.26.1/: language.md, bpftrace.adoc,
# migration_guide.md, CHANGELOG.md), cited per check; 0.17's dialect is
# checked unchanged beside them.
D26=--dialect=0.26

# kprobe[:module]:fn (language.md, "kprobe and kretprobe", variants);
# the module is vmlinux for the kernel's own functions
run k-module $D26 -e 'kprobe:vmlinux:ksys_write /pid == cpid/ { @[probe] = count(); }' -c "$LOOP 5"
expect_match "0.26 kprobe:vmlinux:FUNC" "$out" '^@\[kprobe:vmlinux:ksys_write\]: 5$'
run k-module-wild $D26 -e 'kprobe:vmlinu*:ksys_writ* /pid == cpid/ { @[func] = count(); }' -c "$LOOP 4"
expect_match "0.26 kprobe:MODULE*:FUNC*: the kernel's function" "$out" '^@\[ksys_write\]: 4$'
run kr-module $D26 -e 'kretprobe:vmlinux:vfs_writ* /pid == cpid/ { @[retval] = count(); }' -c "$LOOP 3"
expect_match "0.26 kretprobe:vmlinux:FUNC*" "$out" '^@\[2\]: 3$'
# a loaded module's function: the VM's root file system is 9p, so
# reading a file runs 9p's read
run k-module-9p $D26 -e 'kprobe:9p:v9fs_file_read_iter /pid == cpid/ { @[probe] = count(); }' -c "dd if=$SONDE of=/dev/null bs=64k status=none"
if [ -e /sys/module/9p ]; then
	expect_match "0.26 kprobe:MODULE:FUNC of a loaded module" "$out" '^@\[kprobe:9p:v9fs_file_read_iter\]: [1-9][0-9]*$'
else
	skip "0.26 kprobe:MODULE:FUNC of a loaded module" "no 9p module here"
fi

# kprobe:addr (language.md's variants; CHANGELOG 0.25.0 "Add support for
# address kprobes"), named by the address in decimal as 0.26's tests
# expect (kprobe:305419896 for kprobe:0x12345678)
KW=$(awk '$3 == "ksys_write" { print $1; exit }' /proc/kallsyms)
run k-addr $D26 -e "kprobe:0x$KW /pid == cpid/ { @[probe] = count(); }" -c "$LOOP 3"
expect_match "0.26 kprobe:ADDRESS of ksys_write" "$out" "^@\\[kprobe:$(printf '%u' "0x$KW")\\]: 3$"
run k-addr-bad $D26 -e 'kprobe:0x12345678 { }'
expect_eq "0.26 kprobe:ADDRESS of no code: exit 2" "$rc" 2
expect_match "0.26 kprobe:ADDRESS of no code: in 0.26's words" "$out" 'ERROR: Unable to attach probe: kprobe:305419896'

# func compared with func() and __builtin_func: one function (a kernel
# symbol, compared by address; 0.26's test "builtin wrapper func")
run k-func-eq $D26 -e 'kprobe:ksys_write /pid == cpid/ { @[func == func() && __builtin_func == func] = count(); }' -c "$LOOP 3"
expect_match "0.26 func == func() in a kprobe" "$out" '^@\[true\]: 3$'

# missing probes (migration_guide.md, 0.24: attachment failures end the
# run; language.md missing_probes: error, warn, ignore): a kprobe of no
# traceable function warns that it is not traceable, then is an error
run k-missing $D26 -e 'kprobe:ksys_write, kprobe:sonde_no_such { exit(); }'
expect_eq "0.26 kprobe of no function beside another: exit 2" "$rc" 2
expect_match "0.26 kprobe of no function: No matches" "$out" 'ERROR: No matches for kprobe sonde_no_such\.'
expect_match "0.26 kprobe of no function: not traceable first" "$out" 'WARNING: sonde_no_such is not traceable'
run k-missing-warn $D26 -e 'config = { missing_probes = "warn" } kprobe:ksys_write /pid == cpid/ { @ = count(); } kprobe:sonde_no_such { }' -c "$LOOP 5"
expect_match "0.26 missing_probes=warn: skipped, said" "$out" 'WARNING: No matches for kprobe sonde_no_such\. Skipping\.'
expect_match "0.26 missing_probes=warn: the rest runs" "$out" '^@: 5$'
run k-missing-017 -e 'kprobe:ksys_write /pid == cpid/ { @ = count(); } kprobe:sonde_no_such { }' -c "$LOOP 5"
expect_match "0.17 dialect: a missing kprobe is still skipped with a warning" "$out" 'the probe is skipped'
expect_match "0.17 dialect: the rest runs" "$out" '^@: 5$'
# --unsafe tries a function tracefs does not list (bpftrace.adoc:
# --unsafe; 0.26's CHANGELOG "Skip is-traceable checks for kprobes in
# unsafe mode"), --traceable-functions names the list (bpftrace.adoc)
run k-unsafe $D26 --unsafe --traceable-functions /dev/null -e 'kprobe:ksys_write /pid == cpid/ { @ = count(); }' -c "$LOOP 3"
expect_match "0.26 --unsafe: not traceable, said" "$out" 'WARNING: ksys_write is not traceable'
expect_match "0.26 --unsafe: attached anyway" "$out" '^@: 3$'
run k-unsafe-none $D26 --unsafe -e 'kprobe:vmlinux:sonde_no_such { }'
expect_eq "0.26 --unsafe, no such function: the attach fails" "$rc" 2
expect_match "0.26 --unsafe, no such function: in 0.26's words" "$out" 'ERROR: Unable to attach probe: kprobe:vmlinux:sonde_no_such'
# 0.21 leaves RCU's functions out of kprobe wildcards (its CHANGELOG:
# "Filter out kernel functions that can cause systemic instability")
run k-rcu $D26 --dry-run -e 'kprobe:rcu_* { }'
expect_match "0.26 kprobe:rcu_*: no valid attach points" "$out" 'ERROR: Probe has no valid attach points\.'

# fexit blocks of one function run in the order written, as fentry's
# (in every dialect)
run fexit-order -e 'fexit:vfs_write /pid == cpid/ { printf("first "); } fexit:vfs_write /pid == cpid/ { printf("second\n"); }' -c "$LOOP 2"
expect_eq "fexit: two blocks run in the order written" "$(grep -c '^first second$' <<<"$out")" 2

# -l and --info (bpftrace.adoc "Listing Probes": "-l ... can be used
# with a program, which will list all probes in that program")
out=$("$SONDE" $D26 -l -e 'fentry:vmlinux:vfs_read { } kprobe:ksys_write { }' 2>&1)
expect_eq "0.26 -l with a program lists its probes" "$out" "$(printf 'fentry:vmlinux:vfs_read\nkprobe:ksys_write')"
out=$("$SONDE" $D26 -lv 'kprobe:ksys_write,kretprobe:vfs_write' 2>&1)
expect_eq "0.26 -lv kprobes: the parameters from BTF" "$out" "$(printf 'kprobe:ksys_write\n    unsigned int fd\n    const char * buf\n    size_t count\nkretprobe:vfs_write\n    ssize_t retval')"
out=$("$SONDE" -lv 'kprobe:ksys_write' 2>&1)
expect_eq "0.17 -lv kprobe: the name alone, as bpftrace 0.17 lists it" "$out" "kprobe:ksys_write"
out=$("$SONDE" $D26 --info 2>&1)
expect_match "0.26 --info: kprobe_session (never used)" "$out" '^  kprobe_session: no$'

# pointer members print in hex in 0.26 (its tests: print(*args.path) is
# { .mnt = 0x..., .dentry = 0x... }); print() of a pointer is its address
run fentry-struct $D26 -e 'fentry:vfs_open /pid == cpid/ { print(*args.path); print(args.file); exit(); }' -c "cat /etc/hostname"
expect_match "0.26 print(*ptr): pointer members in hex" "$out" '^\{ \.mnt = 0x[0-9a-f]+, \.dentry = 0x[0-9a-f]+ \}$'
expect_match "0.26 print(ptr): the address in hex" "$out" '^0x[0-9a-f]+$'

# -p PID filters the kernel's probes from 0.24 (CHANGELOG 0.24.0: "-p CLI
# flag now applies to all probes (except BEGIN/END)"; bpftrace.adoc -p:
# "the pid will act like a predicate"): two sleepers, one traced (the
# run ends with SIGINT: an interval probe would count the process's time)
/usr/bin/python3 -c 'import time
while True: time.sleep(0.02)' & sl1=$!
/usr/bin/python3 -c 'import time
while True: time.sleep(0.02)' & sl2=$!
sleep 2
out=$(timeout -s INT 6 "$SONDE" $D26 -e 'kprobe:do_nanosleep { @[pid] = count(); }' -p $sl1 2>&1)
expect_eq "0.26 -p filters kprobes: one process counted" "$(grep -c '^@\[' <<<"$out")" 1
expect_match "0.26 -p filters kprobes: the one traced" "$out" "^@\\[$sl1\\]: [1-9]"
out=$(timeout -s INT 6 "$SONDE" -e 'kprobe:do_nanosleep { @[pid] = count(); }' -p $sl1 2>&1)
expect_match "0.17 dialect: -p does not filter kprobes (the other sleeper too)" "$out" "^@\\[$sl2\\]: [1-9]"
kill $sl1 $sl2 2>/dev/null
wait $sl1 $sl2 2>/dev/null
