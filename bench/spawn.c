/* spawn.c - wall time and peak RSS of whole commands, for bench/floor:
 * runs each command N times, the commands taking turns (so that every
 * one sees the same machine), and prints one line per run:
 *
 *     INDEX WALL_MS MAXRSS_KIB STATUS CPU_MS START_NS END_NS
 *
 * INDEX is the command's position (0, 1, ...). The wall time runs from
 * just before posix_spawn to wait4's return; CPU_MS is the child's user
 * and system time (which waiting for a CPU others hold does not
 * inflate, unlike the wall time on a shared machine); the peak RSS is wait4's
 * ru_maxrss, the child's own (this program is small and static, so the
 * high-water mark a spawned child starts from is below any command's).
 * START_NS and END_NS are CLOCK_MONOTONIC (bpf_ktime_get_ns's clock) at
 * the spawn and at the reaping. Standard output and error go to
 * /dev/null, or standard output to FILE (-o, truncated at every run).
 *
 *   spawn [-o FILE] N CMD [ARGS] [:: CMD [ARGS]]... */
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

#define MAX_CMDS 16

int main(int argc, char **argv)
{
	const char *out = "/dev/null";
	if (argc > 2 && strcmp(argv[1], "-o") == 0) {
		out = argv[2];
		argv += 2;
		argc -= 2;
	}
	if (argc < 3) {
		fprintf(stderr, "usage: spawn [-o FILE] N CMD [ARGS] [:: CMD [ARGS]]...\n");
		return 2;
	}
	int n = atoi(argv[1]);
	char **cmds[MAX_CMDS];
	int nc = 0;
	cmds[nc++] = argv + 2;
	for (int i = 2; i < argc && nc < MAX_CMDS; i++)
		if (strcmp(argv[i], "::") == 0) {
			argv[i] = NULL;
			cmds[nc++] = argv + i + 1;
		}
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, out,
					 O_WRONLY | O_CREAT | O_TRUNC, 0644);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	for (int i = 0; i < n; i++)
		for (int c = 0; c < nc; c++) {
			struct timespec a, b;
			struct rusage ru;
			pid_t pid;
			int st = 0;
			clock_gettime(CLOCK_MONOTONIC, &a);
			if (posix_spawnp(&pid, cmds[c][0], &fa, NULL, cmds[c],
					 environ) != 0) {
				perror(cmds[c][0]);
				return 1;
			}
			if (wait4(pid, &st, 0, &ru) < 0)
				return 1;
			clock_gettime(CLOCK_MONOTONIC, &b);
			double ms = (double)(b.tv_sec - a.tv_sec) * 1e3 +
				(double)(b.tv_nsec - a.tv_nsec) / 1e6;
			double cpu = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
				(double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
			printf("%d %.3f %ld %d %.3f %lld %lld\n", c, ms,
			       ru.ru_maxrss,
			       WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st),
			       cpu, a.tv_sec * 1000000000LL + a.tv_nsec,
			       b.tv_sec * 1000000000LL + b.tv_nsec);
		}
	return 0;
}
