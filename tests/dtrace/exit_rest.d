/*
 * exit() lets the rest of its clause run (DTrace stops after the
 * clause), then END runs; the run's status is exit()'s.
 * status: 3
 * source: Dynamic Tracing Guide, "Actions and Subroutines" (exit).
 */
BEGIN
{
	trace(1);
	exit(3);
	trace(2);
}

END
{
	trace(3);
}
