/*
 * copyin() other than as stringof(copyin(...)) is not there yet, and
 * says so.
 * status: 1
 */
BEGIN
{
	x = copyin(0, 4);
}
