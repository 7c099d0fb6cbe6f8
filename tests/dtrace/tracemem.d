/*
 * tracemem(addr, n): n bytes at addr, after the record line, as the
 * guide shows traced memory: a heading of the 16 columns (0..f) and the
 * text column, then per 16 bytes the offset (%5x:), each byte " %02x",
 * two spaces, and the bytes as text, '.' for what is not printable.
 * Here the query string of the first firing and its NUL, 17 bytes.
 * cmd: $SONDE_PROGS/usdt_json 2
 * source: Dynamic Tracing Guide, "Actions and Subroutines" (tracemem;
 * the trace() of a buffer shows the layout).
 */
my_provider$target:::sql_query_started
/ !done /
{
	tracemem(arg0, 17);
	done = 1;
}
