/*
 * printa() of several aggregations: their keys joined, each %@ the next
 * aggregation's value (0 where it has none), by the first one's value;
 * without a format, the values side by side.
 * source: Dynamic Tracing Guide, "Output Formatting" (printa).
 */
#pragma D option quiet

BEGIN
{
	@a["x"] = count();
	@a["y"] = count();
	@a["y"] = count();
	@b["y"] = sum(10);
	@b["z"] = sum(5);
	printa("%-3s %@4d %@4d\n", @a, @b);
	printa(@a, @b);
	exit(0);
}
