/* preflight.h - what the command line asks for that can be checked
 * before anything is compiled, attached or started, so a run that
 * cannot succeed fails at once with the true reason and leaves nothing
 * behind: the standard descriptors, the -p process, the -c command. */
#ifndef SONDE_PREFLIGHT_H
#define SONDE_PREFLIGHT_H

/* Open /dev/null on whichever of fds 0, 1 and 2 is closed (`sonde ... >&-`),
 * so that no file sonde opens later (a BPF map, the output file) takes
 * that number and receives what is written to stdout or stderr. Call
 * first thing in main. Returns the closed ones, bit N for fd N: output
 * meant for a closed stdout is an error, not silently dropped. */
unsigned preflight_std_fds(void);

/* -p PID: 0, or -ESRCH with "-p PID: no such process" printed. */
int preflight_pid(int pid);

/* -c CMD: 0 when its program can be run (a path to an executable file,
 * or a name found on $PATH, as execvp would look it up, whose `#!`
 * interpreter or ELF interpreter (PT_INTERP) is there to run it too),
 * else -errno with the reason printed. */
int preflight_command(const char *cmd);

#endif
