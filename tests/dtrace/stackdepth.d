/*
 * stackdepth and ustackdepth: the number of frames of the kernel and
 * the user stack where the probe fired. At a system call's entry from
 * a program's loop both are at least 2 (the kernel's entry path; main
 * and the libc wrapper).
 * cmd: $SONDE_PROGS/getppid_loop 3
 * source: Dynamic Tracing Guide, "Variables" (Built-in Variables:
 * stackdepth, ustackdepth).
 */
#pragma D option quiet

syscall::getppid:entry
/pid == $target/
{
	printf("kernel %d user %d\n", stackdepth >= 2, ustackdepth >= 2);
	exit(0);
}
