/*
 * print() of a struct value (and of a nested one) read through a typed
 * copyin(): the type, then each member on its own line indented four
 * spaces per level, as "TYPE NAME = VALUE": integers in hex, a char
 * array that holds a string as [ "..." ], a nested struct in braces, a
 * bit-field with its width (" :N"), an array as [ a, b ]; the last "}"
 * has no newline after it.
 * cmd: $SONDE_PROGS/struct_target
 * source: Dynamic Tracing Guide (Oracle Solaris 11.4), "print Action"
 * (a struct printed member by member with its types); the layout is
 * libdtrace's (dt_print.c), as DTrace prints it.
 */
#pragma D option quiet

struct pair {
	short a, b;
};

/* the start of the program's struct req */
struct head {
	int id;
	char name[8];
	long val;
	struct pair pair;
	unsigned flag : 1;
	unsigned level : 3;
	int arr[2][2];
};

pid$target::handle:entry
{
	this->r = (struct head *)copyin(arg0, sizeof (struct head));
	print(*this->r);
	printf("\n");
	print(this->r->pair);
	printf("\n");
	exit(0);
}
