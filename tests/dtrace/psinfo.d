/*
 * curpsinfo's and curlwpsinfo's members that sonde has.
 * source: Dynamic Tracing Guide, "proc Provider" (psinfo_t, lwpsinfo_t).
 */
#pragma D option quiet

BEGIN
{
	printf("%d %d %d %d %d\n", curpsinfo->pr_pid == pid,
	    curpsinfo->pr_ppid == ppid, curpsinfo->pr_uid == uid,
	    curlwpsinfo->pr_lwpid == tid,
	    curpsinfo->pr_fname == execname);
	exit(0);
}
