/*
 * An enum declared in the script: its constants as integers, its size
 * (an int's), and print() of a struct member of its type by the
 * enumerator's name (a value no enumerator has, by its number).
 * cmd: $SONDE_PROGS/struct_target
 * source: Dynamic Tracing Guide, "Type and Constant Definitions"
 * (Enumerations); print() of an enum member is libdtrace's (dt_print.c).
 */
#pragma D option quiet

enum color { RED, GREEN = 5, BLUE = -1 };

/* the start of the program's struct mix */
struct mixhead {
	enum color c;
	_Bool ok;
};

BEGIN
{
	printf("%d %d %d %d\n", RED, GREEN, BLUE, sizeof (enum color));
	printf("%d\n", GREEN == 5 && BLUE < RED);
}

pid$target::handle_mix:entry
{
	print(*(struct mixhead *)copyin(arg0, sizeof (struct mixhead)));
	printf("\n");
	exit(0);
}
