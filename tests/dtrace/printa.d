/*
 * printa() with a format: %s takes the key, %@d the value; entries by
 * value. An aggregation printa() printed is not printed again at exit.
 * source: Dynamic Tracing Guide, "Output Formatting" (printa).
 */
#pragma D option quiet

BEGIN
{
	@n["b"] = sum(2);
	@n["a"] = sum(1);
	@n["c"] = sum(30);
}

END
{
	printa("%-4s|%@5d|\n", @n);
}

BEGIN
{
	exit(0);
}
