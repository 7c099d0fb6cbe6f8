/*
 * min(), max() and avg(), and a key of an int (pid-sized: " %8d") and
 * a string.
 * source: Dynamic Tracing Guide, "Aggregations" (min, max, avg).
 */
#pragma D option quiet

BEGIN
{
	@lo["v"] = min(5);
	@lo["v"] = min(3);
	@hi["v"] = max(5);
	@hi["v"] = max(9);
	@mean[1, "k"] = avg(2);
	@mean[1, "k"] = avg(4);
	exit(0);
}
