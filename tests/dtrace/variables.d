/*
 * D's variables: a global scalar, an associative array with a tuple
 * key, a thread-local (self->) and a clause-local (this->) variable;
 * a predicate on a global; a thread-local set to 0 reads back 0.
 * source: Dynamic Tracing Guide, "Variables" (scalar, associative
 * arrays, thread-local, clause-local), "Program Structure" (predicates).
 */
#pragma D option quiet

BEGIN
{
	x = 5;
	a["k", 2] = 7;
	self->t = 3;
	this->v = x * 2;
	printf("%d %d %d %d\n", x, a["k", 2], self->t, this->v);
	self->t = 0;
	printf("%d\n", self->t);
	x++;
	x += 10;
}

BEGIN
/x == 16/
{
	printf("predicate %d\n", x);
}

BEGIN
/x != 16/
{
	printf("never\n");
}

BEGIN
{
	exit(0);
}
