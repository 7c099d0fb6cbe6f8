/*
 * dtrace:::ERROR's arguments: arg1 the enabled probe that faulted,
 * arg2 the action, arg4 the fault (DTRACEFLT_BADADDR, 1), arg5 the
 * address; the faulting clause stops there (y is never set), the
 * probe's next clause still runs (z is).
 * source: Dynamic Tracing Guide, "dtrace Provider", "ERROR Probe"
 * (the arguments and fault types tables).
 */
#pragma D option quiet

BEGIN
{
	trace(copyinstr(16));
	y = 5;
}

BEGIN
{
	z = 7;
}

ERROR
{
	printf("epid %d action %d fault %d addr 0x%x %s:::%s\n", arg1, arg2,
	    arg4, arg5, probeprov, probename);
	exit(0);
}

END
{
	printf("y %d z %d\n", y, z);
}
