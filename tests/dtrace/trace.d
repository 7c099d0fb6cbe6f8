/*
 * trace() of an int, a string and a negative int: the record line
 * "%3d %6d %32s " (CPU, ID, FUNCTION:NAME), then each value as
 * dt_print_datum prints a traced value (an int " %8d", a string
 * "  %-33s"), then the newline that ends the record.
 * source: Dynamic Tracing Guide, "Actions and Subroutines", trace();
 * the output format of dtrace(1M) (CPU ID FUNCTION:NAME).
 */
BEGIN
{
	trace(1);
	trace("hello");
	trace(-5);
	exit(0);
}
