/*
 * A syscall's arguments in arg0.. at entry, its return value in arg0 at
 * return (the -c command writes 2 bytes to a descriptor above 2, twice).
 * cmd: $SONDE_PROGS/getppid_loop 2
 * source: Dynamic Tracing Guide, "syscall Provider" (Arguments).
 */
#pragma D option quiet

syscall::write:entry
/pid == $target/
{
	printf("fd>2 %d len %d\n", arg0 > 2, arg2);
}

syscall::write:return
/pid == $target/
{
	printf("ret %d\n", arg0);
}
