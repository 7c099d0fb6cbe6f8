/*
 * tick-N with units, a counter, a predicate; profile-N fires too.
 * source: Dynamic Tracing Guide, "profile Provider" (tick-n, profile-n).
 */
#pragma D option quiet

profile:::tick-10ms
{
	n++;
}

tick-1sec
/n >= 50/
{
	printf("ticked\n");
	exit(0);
}

profile-97
{
	p = 1;
}
