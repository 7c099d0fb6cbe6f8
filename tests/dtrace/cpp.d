/*
 * -C: the C preprocessor, with -D and an #include (its macros only);
 * the script's lines stay where they are.
 * opts: -C -DLIMIT=41 -DEXTRA
 * source: dtrace(1M) (-C, -D); Dynamic Tracing Guide, "Scripting".
 */
#pragma D option quiet
#include <stdint.h>
#define MSG "hello"

#ifdef EXTRA
BEGIN
{
	printf("extra %d %d\n", EXTRA, INT8_MAX);
}
#endif

BEGIN
{
	printf("%s %d\n", MSG, LIMIT + 1);
	exit(0);
}
