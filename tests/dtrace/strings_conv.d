/*
 * toupper/tolower change the ASCII letters only, lltostr gives the
 * decimal text (a sign for negatives), basename/dirname behave as
 * basename(1) and dirname(1): trailing slashes do not count, "" is ".",
 * a path of slashes is "/", a name without one has dirname ".".
 * source: Dynamic Tracing Guide, "Actions and Subroutines" (Subroutines:
 * toupper, tolower, lltostr, basename, dirname).
 */
#pragma D option quiet

BEGIN
{
	s = "foobarbazbop";
	printf("case [%s] [%s]\n", toupper("Hello, World 42"),
	    tolower("Hello, World 42"));
	printf("lltostr [%s] [%s] [%s]\n", lltostr(12345), lltostr(-7),
	    lltostr(0));
	printf("basename [%s] [%s] [%s] [%s] [%s] [%s]\n",
	    basename("/usr/lib/libc.so.1"), basename("/usr/lib/"),
	    basename("file"), basename("/"), basename(""), basename("a//b"));
	printf("dirname [%s] [%s] [%s] [%s] [%s] [%s]\n",
	    dirname("/usr/lib/libc.so.1"), dirname("/usr/lib/"),
	    dirname("file"), dirname("/"), dirname(""), dirname("a//b"));
	exit(0);
}
