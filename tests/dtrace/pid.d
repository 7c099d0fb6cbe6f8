/*
 * The pid provider on the -c command: a function's entry and return.
 * cmd: $SONDE_PROGS/usdt_json 3
 * source: Dynamic Tracing Guide, "pid Provider".
 */
#pragma D option quiet

pid$target::serve:entry
{
	@calls[probefunc] = count();
	self->in = 1;
}

pid$target:a.out:serve:return
/self->in/
{
	@rets[probefunc, probename] = count();
	self->in = 0;
}
