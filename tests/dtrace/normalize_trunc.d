/*
 * normalize(): values printed divided by the factor; denormalize()
 * undoes it; trunc(@, n) keeps the n largest values.
 * source: Dynamic Tracing Guide, "Aggregations" (Normalizing Data,
 * Truncating aggregations).
 */
#pragma D option quiet

BEGIN
{
	@bytes["x"] = sum(4096);
	@bytes["y"] = sum(1024);
	@bytes["z"] = sum(10);
	@n["a"] = count();
	@n["b"] = count();
	@n["b"] = count();
	@n["c"] = count();
	@n["c"] = count();
	@n["c"] = count();
	@d["k"] = sum(3000);
	normalize(@bytes, 1024);
	normalize(@d, 1000);
	denormalize(@d);
	trunc(@n, 2);
	exit(0);
}
