/*
 * A string subroutine given an integer where it takes a string.
 * status: 1
 */
BEGIN
{
	trace(strlen(42));
}
