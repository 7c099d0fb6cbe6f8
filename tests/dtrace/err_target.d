/*
 * $target without -c or -p.
 * status: 1
 */
pid$target::main:entry
{
}
