/*
 * A translated member a Linux tracepoint cannot supply is an error that
 * names the members sonde's D has at that probe.
 * status: 1
 */
sched:::off-cpu
{
	trace(args[1]->pr_psargs);
}
