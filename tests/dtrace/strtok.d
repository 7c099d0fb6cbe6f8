/*
 * strtok(s, delim) gives the first token of s, strtok(NULL, delim) the
 * next ones of the same string: a token is what follows the delimiters
 * at its start up to the next delimiter, each call may name other
 * delimiters, and past the last token the result is empty (D's NULL).
 * source: Dynamic Tracing Guide, "Actions and Subroutines" (strtok);
 * strtok(3C), which it follows.
 */
#pragma D option quiet

BEGIN
{
	printf("[%s]", strtok("/usr//lib/libc.so.1", "/"));
	printf("[%s]", strtok(NULL, "/"));
	printf("[%s]", strtok(NULL, "."));
	printf("[%s]", strtok(NULL, "."));
	printf("[%s]", strtok(NULL, "/"));
	printf("[%s]\n", strtok("a,b", ","));
	exit(0);
}
