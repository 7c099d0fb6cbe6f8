/*
 * A USDT probe of the -c command, not quiet: the record line names the
 * function the probe site is in, trace(arg0) prints a 64-bit argument
 * " %16lld".
 * cmd: $SONDE_PROGS/usdt_json 3
 * source: Dynamic Tracing Guide, "Statically Defined Tracing for User
 * Applications"; dtrace(1M)'s output format.
 */
my_provider$target:::http_error
{
	trace(arg0);
}
