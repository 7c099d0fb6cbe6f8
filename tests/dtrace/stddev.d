/*
 * stddev(): the standard deviation of the values, printed at exit as
 * an integer like avg(), in the order of the values: DTrace keeps the
 * count, the sum and the sum of squares (128 bits) and prints
 * sqrt(sumsq / n - (sum / n)^2) in integers. 2 4 4 4 5 5 7 9: mean 5,
 * 232 / 8 - 25 = 4, so 2; 1 2: mean 1 (truncated), 5 / 2 - 1 = 1, so 1;
 * -3 3: mean 0, 18 / 2 = 9, so 3; one value: 0. A value of 2^40 and
 * its square (2^80) need the 128 bits: 2^40 and 0 give 2^39.
 * source: Dynamic Tracing Guide, "Aggregations" (Aggregating
 * functions: stddev); Oracle DTrace for Linux 2.x, "stddev".
 */
#pragma D option quiet

BEGIN
{
	@sd["a"] = stddev(2); @sd["a"] = stddev(4); @sd["a"] = stddev(4);
	@sd["a"] = stddev(4); @sd["a"] = stddev(5); @sd["a"] = stddev(5);
	@sd["a"] = stddev(7); @sd["a"] = stddev(9);
	@sd["b"] = stddev(1); @sd["b"] = stddev(2);
	@sd["c"] = stddev(-3); @sd["c"] = stddev(3);
	@sd["d"] = stddev(42);
	@big = stddev(1099511627776); @big = stddev(0);
	exit(0);
}
