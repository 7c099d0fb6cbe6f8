/*
 * syscall::NAME:entry and :return, for the -c command's process only
 * ($target); probefunc and probename as keys.
 * cmd: $SONDE_PROGS/getppid_loop 3
 * source: Dynamic Tracing Guide, "syscall Provider"; "Scripting"
 * ($target).
 */
#pragma D option quiet

syscall::getppid:entry,
syscall::getppid:return
/pid == $target/
{
	@[probefunc, probename] = count();
}
