/*
 * The issue's complex.d, run on the -c command: json() of a probe's
 * JSON argument.
 * cmd: $SONDE_PROGS/usdt_json 2
 */
my_provider*:::my_probe { trace(json(copyinstr(arg0), "ok.val")); }
