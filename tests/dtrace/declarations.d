/*
 * Declarations: inline constants (folded), variables declared before
 * use, a struct and a typedef read over.
 * source: Dynamic Tracing Guide, "Variables" (declarations), "Type and
 * Constant Definitions" (inline, typedef).
 */
#pragma D option quiet

inline int MAX = 2 * 5;
inline string GREETING = "hello";
int counter;
self int started;
struct sample {
	int a;
	long b;
};
typedef unsigned long count_t;

BEGIN
{
	counter = MAX + 1;
	printf("%d %s\n", counter, GREETING);
	exit(0);
}

BEGIN
{
	printf("%d %d %d %d\n", sizeof(int), sizeof(long), sizeof(char *),
	    sizeof(uint16_t));
}
