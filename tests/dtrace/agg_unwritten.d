/*
 * An aggregation no probe wrote has no data, so nothing of it is
 * printed at exit (a keyless count() too); one that was written
 * prints; trunc() removes what it held (nothing printed), clear() sets
 * it to zero (a 0 printed). The blank line is dtrace(8)'s at every
 * exit.
 * source: Dynamic Tracing Guide, "Aggregations" (the data of an
 * aggregation is printed at exit; an aggregation holds what its
 * probes recorded; "Clearing Aggregations", "Truncating
 * aggregations").
 */
#pragma D option quiet

syscall::getppid:entry
/pid == -1/
{
	@never = count();
	@neverkeyed[execname] = count();
	@neversum = sum(arg0);
	@neverq = quantize(arg0);
}

BEGIN
{
	@once = count();
	@truncated = count();
	trunc(@truncated);
	@cleared = count();
	clear(@cleared);
	exit(0);
}
