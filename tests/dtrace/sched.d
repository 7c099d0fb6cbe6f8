/*
 * sched:::off-cpu fires in the thread that leaves its CPU (a sleeping
 * command leaves it), sched:::wakeup when a thread is woken; both name
 * their probe as the sched provider's.
 * cmd: sleep 0.2
 * source: Dynamic Tracing Guide, "sched Provider" (off-cpu, wakeup);
 * Oracle's DTrace for Linux puts them on sched_switch and sched_wakeup.
 */
#pragma D option quiet

sched:::off-cpu
/pid == $target/
{
	off++;
	prov = probeprov;
	name = probename;
}

sched:::wakeup
{
	woken++;
}

END
{
	printf("%s:::%s %d %d\n", prov, name, off > 0, woken > 0);
}
