/*
 * args[] of proc probes through DTrace's translators: proc:::create's
 * args[0] the child's psinfo_t (pr_fname, pr_ppid), proc:::exec's
 * args[0] the path, proc:::signal-send's args[0]/args[1] the receiving
 * thread's lwpsinfo_t and process's psinfo_t and args[2] the signal.
 * The shell forks twice (two sleeps), each child execs /usr/bin/sleep,
 * and the shell sends SIGTERM (15) to the first.
 * cmd: /bin/sh -c '/usr/bin/sleep 5 & /usr/bin/sleep 0.2; kill -TERM $!; wait'
 * source: Dynamic Tracing Guide, "proc Provider" (probes, arguments,
 * psinfo_t, lwpsinfo_t), "Translators".
 */
#pragma D option quiet

proc:::create
/pid == $target/
{
	@create[args[0]->pr_fname, args[0]->pr_ppid == $target] = count();
}

proc:::exec
/ppid == $target/
{
	@exec[args[0]] = count();
}

proc:::signal-send
/pid == $target && args[2] == 15/
{
	@signal[args[1]->pr_fname, args[1]->pr_pid == args[0]->pr_lwpid,
	    args[2]] = count();
}
