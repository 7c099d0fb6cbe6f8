/*
 * An unknown function.
 * status: 1
 */
BEGIN
{
	nosuchfunction(1);
}
