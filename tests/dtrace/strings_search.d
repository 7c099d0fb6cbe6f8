/*
 * index/rindex give the first/last position of a substring at or after
 * (at or before) the start, or -1 (the empty string is found at the
 * start); strchr/strrchr/strstr the string from the first/last match on
 * (no match: sonde's "" where DTrace returns NULL).
 * source: Dynamic Tracing Guide, "Actions and Subroutines" (Subroutines:
 * index, rindex, strchr, strrchr, strstr).
 */
#pragma D option quiet

BEGIN
{
	s = "foobarbazbop";
	printf("index %d %d %d %d %d\n", index(s, "bar"), index(s, "b", 4),
	    index(s, "x"), index(s, ""), index(s, "bop"));
	printf("rindex %d %d %d %d\n", rindex(s, "b"), rindex(s, "b", 8),
	    rindex(s, "x"), rindex(s, "foo"));
	printf("strchr [%s] [%s] [%s]\n", strchr(s, 'b'), strrchr(s, 'b'),
	    strchr(s, 'x'));
	printf("strstr [%s] [%s]\n", strstr(s, "baz"), strstr(s, "zz"));
	exit(0);
}
