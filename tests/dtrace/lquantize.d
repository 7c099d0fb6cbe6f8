/*
 * lquantize(value, 0, 10, 2): a row "< 0", one per step, ">= 10"; a
 * key printed on its own line before the table.
 * source: Dynamic Tracing Guide, "Aggregations" (lquantize).
 */
#pragma D option quiet

BEGIN
{
	@l["lat"] = lquantize(3, 0, 10, 2);
	@l["lat"] = lquantize(3, 0, 10, 2);
	@l["lat"] = lquantize(5, 0, 10, 2);
	@l["lat"] = lquantize(12, 0, 10, 2);
	@l["lat"] = lquantize(-1, 0, 10, 2);
	exit(0);
}
