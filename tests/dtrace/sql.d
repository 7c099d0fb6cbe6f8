/*
 * The issue's sql.d, run on the -c command.
 * cmd: $SONDE_PROGS/usdt_json 2
 */
my_provider*:::sql_query_started { trace(copyinstr(arg0)); }
