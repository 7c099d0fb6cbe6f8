/*
 * Speculations in a USDT probe of the -c command (in the process engine
 * too, where the records come from the traced program): each firing
 * speculates its trace(), and only the even arguments are committed.
 * cmd: $SONDE_PROGS/usdt_json 4
 * source: Dynamic Tracing Guide, "Speculative Tracing".
 */
my_provider$target:::http_error
{
	self->spec = speculation();
	speculate(self->spec);
	trace(arg0);
}

my_provider$target:::http_error
/arg0 % 2 == 0/
{
	commit(self->spec);
}

my_provider$target:::http_error
/arg0 % 2 != 0/
{
	discard(self->spec);
}
