/*
 * A variable never assigned, in DTrace's words.
 * status: 1
 */
BEGIN
{
	trace(nosuchvariable);
}
