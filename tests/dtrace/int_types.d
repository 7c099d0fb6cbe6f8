/*
 * D's integer types: a constant's type from its suffix and magnitude
 * (the first of int, long, long long that holds it; octal and
 * hexadecimal ones, and u-suffixed ones, unsigned where the signed type
 * is too small), C's usual arithmetic conversions (the wider operand's
 * type, unsigned when a same-sized operand is), a shift of its left
 * operand's type, signed division toward zero, a variable typed by its
 * declaration or its first assignment. printf's integer conversions
 * take the argument's size, signed for %d, unsigned for %u and %x; a
 * traced int is its 4 bytes (libdtrace prints them %d), a char 1 byte
 * read back unsigned.
 * source: Dynamic Tracing Guide, "Types, Operators, and Expressions"
 * (Constants, Arithmetic Operators, Type Conversions), "Variables"
 * (scalar variables typed at their first assignment), "Output
 * Formatting" (printf conversions and sizes), trace().
 */
#pragma D option quiet

uint64_t declared;

BEGIN
{
	printf("%d %d\n", 1ULL << 40, 1 << 40);
	printf("%d %d\n", 0x7fffffff + 1, 2147483648);
	printf("%u %d %u\n", 1U - 2, 0xffffffff, 0xffffffff);
	printf("%d %d\n", (1U - 2) > 0, -1 < 0U);
	printf("%u %x\n", 0xffffffffffffffffULL >> 1, -1);
	printf("%d %d %d %d\n", -7 / 2, -7 % 3, 7 / -2, 7 % -3);
	printf("%d %d\n", -1 >> 1, (-7) >> 1);
	printf("%u %d\n", (unsigned char)300, (char)200);

	small = 1;
	small = 1ULL << 40;
	wide = 1ULL;
	wide = 1ULL << 40;
	declared = 1;
	declared <<= 40;
	self->neg = -9;
	printf("%d %d %d\n", small, wide, declared);
	printf("%d %d\n", self->neg / 2, self->neg % 4);

	trace(1ULL << 40);
	printf("|");
	trace(0xffffffff);
	printf("|");
	trace((char)-1);
	printf("|");
	trace(small);
	printf("|");
	trace(wide);
	printf("\n");
	exit(0);
}
