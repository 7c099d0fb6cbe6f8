/*
 * llquantize's factor must divide nsteps (DTrace's check of its
 * constants).
 * source: Dynamic Tracing Guide, "Aggregations" (llquantize).
 * status: 1
 */
BEGIN
{
	@ = llquantize(timestamp, 10, 0, 6, 15);
}
