/*
 * llquantize(x, factor, low, high, nsteps): log/linear buckets. Each
 * order of magnitude m from low to high, [factor^m, factor^(m+1)), is
 * cut into nsteps steps of factor^(m+1) / nsteps (steps of 1 while that
 * is less than 1: 1..9 for factor 10); below factor^low one "< N" row,
 * from factor^(high+1) on one ">= N" row; the rows printed run from
 * the one before the first non-zero bucket to the one after the last,
 * as quantize's. (10, 0, 2, 20): 1..9, 10 15 .. 95, 100 150 .. 950,
 * >= 1000. (2, 1, 3, 4): < 2, 2 3, 4 6, 8 12, >= 16.
 * source: Dynamic Tracing Guide, "Aggregations" (llquantize);
 * Oracle DTrace for Linux 2.x, "llquantize".
 */
#pragma D option quiet

BEGIN
{
	@a["ms"] = llquantize(5, 10, 0, 2, 20);
	@a["ms"] = llquantize(5, 10, 0, 2, 20);
	@a["ms"] = llquantize(12, 10, 0, 2, 20);
	@a["ms"] = llquantize(17, 10, 0, 2, 20);
	@b = llquantize(1, 2, 1, 3, 4);
	@b = llquantize(5, 2, 1, 3, 4);
	@b = llquantize(100, 2, 1, 3, 4);
	@b = llquantize(13, 2, 1, 3, 4);
	exit(0);
}
