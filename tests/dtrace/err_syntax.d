/*
 * A syntax error: dtrace's message names the script and the line.
 * status: 1
 */
BEGIN
{
	x = ;
}
