#!/usr/sbin/dtrace -s
/*
 * A #! script with macro arguments: $1 is an integer, $$2 a string.
 * args: 42 hello
 * source: Dynamic Tracing Guide, "Scripting" (interpreter files, macro
 * arguments).
 */
#pragma D option quiet

BEGIN
{
	printf("%d %s\n", $1 + 1, $$2);
	exit(0);
}
