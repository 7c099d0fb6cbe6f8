/*
 * The proc provider's exec-success and exit (on the sched tracepoints):
 * the -c command's own exec and exit.
 * cmd: $SONDE_PROGS/usdt_json 1
 * source: Dynamic Tracing Guide, "proc Provider".
 */
#pragma D option quiet

proc:::exec-success
/pid == $target/
{
	printf("%s %s:%s\n", execname, probeprov, probename);
}

proc:::exit
/pid == $target/
{
	printf("%s %s\n", execname, probename);
}
