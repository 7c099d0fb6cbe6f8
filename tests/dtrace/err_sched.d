/*
 * A sched probe sonde's D cannot place yet (on-cpu needs kprobes) is an
 * error that says which it has and why the others are missing.
 * status: 1
 */
sched:::on-cpu
{
}
