/*
 * count() and sum() aggregations printed at exit: a string key as
 * "  %-50s", the value " %16lld", entries by value (smallest first),
 * each aggregation in the order the script names it.
 * source: Dynamic Tracing Guide, "Aggregations" (count, sum; "Printing
 * Aggregations").
 */
#pragma D option quiet

BEGIN
{
	@calls["read"] = count();
	@calls["write"] = count();
	@calls["write"] = count();
	@calls["open"] = count();
	@calls["open"] = count();
	@calls["open"] = count();
	@bytes["x"] = sum(100);
	@bytes["x"] = sum(20);
	@total = sum(7);
	exit(0);
}
