/*
 * trace() prints an integer by its D type's size, as dtrace(8) prints a
 * traced datum: a char " %3d" and a short " %5d" (their bytes read back
 * unsigned), an int " %8d", a 64-bit integer (1ULL, a sizeof, which is
 * a size_t) " %16lld"; htons() is a uint16_t (0x1234 becomes 0x3412).
 * source: Dynamic Tracing Guide, "Actions and Subroutines" (trace()),
 * "Types, Operators, and Expressions" (constants, sizeof), htons(); the widths
 * are libdtrace's (dt_consume.c) for 1, 2, 4 and 8-byte records.
 */
BEGIN
{
	trace((char)65);
	trace((short)-1);
	trace(1);
	trace(1ULL);
	trace(sizeof (int));
	trace(htons(0x1234));
	exit(0);
}
