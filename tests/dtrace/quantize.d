/*
 * quantize(): power-of-two buckets, from the bucket below the first
 * with a count to the one above the last, each row "%16lld " and a bar
 * of 40 columns scaled to the total, the count "%-9lld".
 * source: Dynamic Tracing Guide, "Aggregations" (quantize).
 */
#pragma D option quiet

BEGIN
{
	@q = quantize(0);
	@q = quantize(1);
	@q = quantize(1);
	@q = quantize(3);
	@q = quantize(1000);
	exit(0);
}
