/*
 * What sonde's D does not have yet is an error that says so.
 * status: 1
 */
BEGIN
{
	jstack();
}
