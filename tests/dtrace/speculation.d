/*
 * Speculations: speculation() makes one, speculate(id) puts the rest of
 * the clause's records in it (with the clause's CPU ID FUNCTION:NAME
 * record line), commit(id) prints what it holds then, discard(id)
 * drops it. "kept" comes out when committed, after what was printed
 * before the commit; "dropped" never does.
 * source: Dynamic Tracing Guide, "Speculative Tracing" (Speculation
 * Interfaces, Committing a Speculation, Discarding a Speculation).
 */
BEGIN
{
	kept = speculation();
	gone = speculation();
	printf("ids differ: %d\n", kept != gone && kept != 0 && gone != 0);
}

BEGIN
{
	speculate(kept);
	printf("kept %d\n", 1);
}

BEGIN
{
	speculate(gone);
	printf("dropped\n");
}

BEGIN
{
	printf("before the commit\n");
}

BEGIN
{
	commit(kept);
	discard(gone);
}

BEGIN
{
	exit(0);
}
