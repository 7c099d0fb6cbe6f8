/*
 * A description that matches nothing is an error (without -Z), even
 * beside one that matches.
 * status: 1
 */
BEGIN
{
}

syscall::nosuchcall:entry
{
}
