/*
 * strlen, strjoin and substr, each result written from the subroutine's
 * definition in the guide: strlen counts the bytes before the NUL,
 * strjoin concatenates, substr(s, i[, n]) takes from index i (negative:
 * from the end, what lies before the start taken off n; a negative n
 * leaves n bytes off the end; an index past the end gives ""). A result
 * assigned to its own operand (t = strjoin(t, t)) reads the operand
 * whole first.
 * source: Dynamic Tracing Guide, "Actions and Subroutines" (Subroutines:
 * strlen, strjoin, substr); Oracle DTrace for Linux 2.x, "substr".
 */
#pragma D option quiet

BEGIN
{
	s = "foobarbazbop";
	printf("strlen %d %d\n", strlen(s), strlen(""));
	printf("strjoin [%s] [%s]\n", strjoin("foo", "bar"), strjoin(s, ""));
	printf("substr [%s] [%s] [%s] [%s]\n", substr(s, 3), substr(s, 300),
	    substr(s, -10), substr(s, 0));
	printf("substr [%s] [%s] [%s] [%s]\n", substr(s, 3, 3),
	    substr(s, -3, 2), substr(s, 2, -3), substr(s, -20, 10));
	printf("substr [%s] [%s]\n", substr("daddyorchips", 7, 4),
	    substr(s, 11));
	t = strjoin(s, "!");
	t = strjoin(t, t);
	printf("again [%s] %d\n", t, strlen(t));
	exit(0);
}
