# tests/kernel/types.sh - C types in kernel probes, sourced by
# tests/kernel/run on Debian 12's 6.1 kernel: kprobe arguments cast to
# kernel structs from BTF (`((struct file *)arg0)->...`, `struct sock *`),
# curtask chains, kernel tracepoint pointer fields typed from BTF, and
# variable indices into kernel arrays. Values are checked against what
# the child of known behaviour (getppid_loop, a python3 socketpair) is
# known to do, and the printed structs against bpftrace 0.17.

# vfs_write(struct file *, ...): getppid_loop writes to /dev/null
run types-file -e 'kprobe:vfs_write /pid == cpid/ {
	$f = (struct file *)arg0;
	@name[str($f->f_path.dentry->d_name.name)] = count();
	@mode[($f->f_mode & 2) != 0] = count();
	@ino[$f->f_inode->i_ino == $f->f_path.dentry->d_inode->i_ino] = count(); }' -c "$LOOP 5"
expect_eq "types: (struct file *)arg0: exit 0" "$rc" 0
expect_match "types: ->f_path.dentry->d_name.name is the file written" "$out" '^@name\[null\]: 5$'
expect_match "types: ->f_mode has FMODE_WRITE" "$out" '^@mode\[1\]: 5$'
expect_match "types: two pointer chains reach the same inode" "$out" '^@ino\[1\]: 5$'

# curtask: the task of the probe's thread; getppid() returns its parent
run types-curtask -e 'kretprobe:__x64_sys_getppid /pid == cpid/ {
	@self[curtask->tgid == pid && curtask->pid == tid] = count();
	@comm[curtask->comm] = count();
	@parent[retval == curtask->real_parent->tgid] = count();
	$t = curtask; @grp[$t->group_leader->pid == pid] = count(); }' -c "$LOOP 4"
expect_eq "types: curtask: exit 0" "$rc" 0
expect_match "types: curtask->tgid and ->pid are pid and tid" "$out" '^@self\[1\]: 4$'
expect_match "types: curtask->comm (a char array as a key)" "$out" '^@comm\[getppid_loop\]: 4$'
expect_match "types: curtask->real_parent->tgid is getppid()" "$out" '^@parent\[1\]: 4$'
expect_match "types: a typed pointer in a variable, ->group_leader" "$out" '^@grp\[1\]: 4$'

# struct sock from a kprobe argument: a unix stream socketpair sends one
# byte, waking the peer through sock_def_readable(struct sock *)
PY='import socket; a, b = socket.socketpair(); a.send(b"x"); b.recv(1)'
if command -v python3 >/dev/null 2>&1; then
	run types-sock -e 'kprobe:sock_def_readable /pid == cpid/ {
		$sk = (struct sock *)arg0;
		@fam[$sk->__sk_common.skc_family] = count();
		@type[$sk->sk_type] = count(); }' -c "python3 -c '$PY'"
	expect_eq "types: (struct sock *)arg0: exit 0" "$rc" 0
	expect_match "types: ->__sk_common.skc_family is AF_UNIX" "$out" '^@fam\[1\]: 1$'
	expect_match "types: ->sk_type is SOCK_STREAM" "$out" '^@type\[1\]: 1$'
else
	skip "types: struct sock" "python3 is not installed"
fi

# kernel arrays indexed by variables: a byte of curtask->comm through a
# cast pointer, and a cpumask word inside and past its array (reads 0)
run types-index -e 'kretprobe:__x64_sys_getppid /pid == cpid/ {
	$i = 3; $big = 100000; $c = (uint8 *)curtask->comm;
	@b[$c[$i], curtask->cpus_mask.bits[$i - 3] != 0,
	   curtask->cpus_mask.bits[$big]] = count(); }' -c "$LOOP 2"
expect_match "types: variable indices into kernel memory, bounded" "$out" '^@b\[112, 1, 0\]: 2$'

# tracepoint pointer fields typed from BTF (user memory: the child's
# timespec), and a struct printed as bpftrace prints it
run types-tp -e 'tracepoint:syscalls:sys_enter_clock_nanosleep /pid == cpid/ {
	printf("%d %d\n", args->rqtp->tv_sec, args->rqtp->tv_nsec);
	print(*args->rqtp); }' -c "/bin/sleep 0.25"
expect_eq "types: tracepoint pointer field: exit 0" "$rc" 0
expect_match "types: args->rqtp->tv_nsec" "$out" '^0 250000000$'
diff_bpftrace "types: print(*args->rqtp)" -e 'tracepoint:syscalls:sys_enter_clock_nanosleep /pid == cpid/ { print(*args->rqtp); @[args->rqtp->tv_nsec] = count(); }' -c "/bin/sleep 0.25"
diff_bpftrace "types: kernel struct members in a kprobe" -e 'kprobe:vfs_write /pid == cpid/ { $f = (struct file *)arg0; @[str($f->f_path.dentry->d_name.name), $f->f_path.dentry->d_name.len] = count(); }' -c "$LOOP 3"
diff_bpftrace "types: curtask members" -e 'kretprobe:__x64_sys_getppid /pid == cpid/ { @[curtask->comm, curtask->tgid == pid] = count(); }' -c "$LOOP 3"
