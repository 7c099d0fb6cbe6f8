/*
 * dtrace:::ERROR: a clause that dereferences NULL faults, the ERROR
 * probe fires (its record line names it), and dtrace's own report of
 * the fault goes to stderr (checked by run).
 * source: Dynamic Tracing Guide, "dtrace Provider", "ERROR Probe"
 * (error.d), with an exit() so that the run ends.
 */
BEGIN
{
	*(char *)NULL;
}

ERROR
{
	printf("Hit an error!");
	exit(0);
}
