/*
 * print(): a scalar printed with its type, an integer in hex as C's
 * "%#x" writes it (0 is "0"), a string quoted, each on its own line.
 * source: Dynamic Tracing Guide (Oracle Solaris 11.4), "print Action";
 * the layout of a top-level value is libdtrace's (dt_print.c: the type
 * name, a space, the value, a newline; print("foo") is string "foo").
 */
#pragma D option quiet

BEGIN
{
	print(5);
	print(0);
	print(-1);
	print("foo");
	print(1 > 0);
	exit(0);
}
