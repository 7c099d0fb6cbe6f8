/*
 * #pragma D option quiet: only what printf() writes, then the blank
 * line dtrace(1M) prints when it stops.
 * source: Dynamic Tracing Guide, "Options and Tunables" (quiet),
 * "Output Formatting" (printf).
 */
#pragma D option quiet

BEGIN
{
	printf("%d %s %x %5d|%-4s|\n", 42, "str", 255, 7, "ab");
	exit(0);
}
