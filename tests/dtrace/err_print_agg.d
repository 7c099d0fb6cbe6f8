/*
 * print() of an aggregation is an error, as libdtrace's D_PRINT_AGG:
 * aggregations are printed with printa().
 * status: 1
 * source: Dynamic Tracing Guide (Oracle Solaris 11.4), "print Action";
 * the message is libdtrace's (dt_cc.c).
 */
BEGIN
{
	@a["x"] = count();
	print(@a);
}
