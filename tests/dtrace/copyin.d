/*
 * stringof(copyin(addr, n)): n bytes of the traced program's memory,
 * read as a string (up to a NUL); here the first 6 bytes of the first
 * query, then the whole of it as copyinstr() reads it.
 * cmd: $SONDE_PROGS/usdt_json 2
 * source: Dynamic Tracing Guide, "Actions and Subroutines" (copyin,
 * copyinstr), "Strings" (stringof).
 */
#pragma D option quiet

my_provider$target:::sql_query_started
/ !done /
{
	printf("[%s] [%s]\n", stringof(copyin(arg0, 6)), copyinstr(arg0));
	done = 1;
}
