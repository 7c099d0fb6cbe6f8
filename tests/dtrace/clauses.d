/*
 * Clauses of one probe run in order and share this-> variables; an
 * exit() in one lets the later ones run; printf sizes %d by its
 * argument (a 64-bit timestamp prints whole).
 * source: Dynamic Tracing Guide, "Variables" (clause-local variables),
 * "Actions and Subroutines" (exit), "Output Formatting" (printf).
 */
#pragma D option quiet

BEGIN
{
	this->x = 5;
	t = 5000000000;
}

BEGIN
/this->x == 5/
{
	printf("shared %d %d\n", this->x, t);
	exit(0);
}

BEGIN
{
	printf("after exit %d\n", this->x + 1);
}
