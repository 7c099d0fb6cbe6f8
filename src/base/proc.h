/* proc.h - which /proc entry speaks for a process. */
#ifndef SONDE_PROC_H
#define SONDE_PROC_H

/* The thread whose /proc entry (root, exe, maps) and whose perf events
 * stand for process PID: PID itself, unless its main thread has exited
 * (pthread_exit leaves it a zombie, with no root, exe or maps, and the
 * kernel refuses to bind events to it) while another thread runs on:
 * then that thread. PID when nothing lives, or when PID <= 0. */
int proc_live_tid(int pid);
/* The parent the kernel names for pid (/proc/PID/stat), 0 if none. */
int proc_ppid(int pid);

#endif
