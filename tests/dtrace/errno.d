/*
 * errno at a syscall's return: the error of a failed call, 0 after one
 * that succeeded; walltimestamp: nanoseconds since the epoch.
 * cmd: cat /nonexistent/file
 * source: Dynamic Tracing Guide, "Variables" (errno, walltimestamp).
 */
#pragma D option quiet

BEGIN
{
	printf("%d\n", walltimestamp / 1000000000 > 1700000000);
}

syscall::openat:return
/pid == $target/
{
	@ok[(int)arg0 < 0 ? errno == -(int)arg0 : errno == 0] = count();
}

END
{
	printa("ok %d\n", @ok);
}
