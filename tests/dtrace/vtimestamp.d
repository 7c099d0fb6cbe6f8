/*
 * vtimestamp: the thread's time on CPU. Across a 300 ms sleep the wall
 * clock (timestamp) moves by the whole sleep, the thread's virtual
 * clock by far less; it never goes back.
 * cmd: sleep 0.3
 * source: Dynamic Tracing Guide, "Variables" (vtimestamp: "the amount
 * of time the current thread has been running on a CPU").
 */
#pragma D option quiet

syscall::clock_nanosleep:entry
/pid == $target/
{
	self->ts = timestamp;
	self->vts = vtimestamp;
}

syscall::clock_nanosleep:return
/self->ts/
{
	printf("slept %d\n", timestamp - self->ts >= 300000000);
	printf("on cpu less %d\n", vtimestamp - self->vts < 100000000);
	printf("forward %d\n", vtimestamp >= self->vts && self->vts > 0);
	self->ts = 0;
}
