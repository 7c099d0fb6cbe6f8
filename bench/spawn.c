/* spawn.c - wall time and peak RSS of whole commands, for bench/floor:
 * runs each command N times, the commands taking turns (so that every
 * one sees the same machine), and prints one line per run:
 *
 *     INDEX WALL_MS MAXRSS_KIB STATUS
 *
 * INDEX is the command's position (0, 1, ...). The wall time runs from
 * just before posix_spawn to wait4's return; the peak RSS is wait4's
 * ru_maxrss, the child's own (this program is small and static, so the
 * high-water mark a spawned child starts from is below any command's).
 * Standard output and error go to /dev/null.
 *
 *   spawn N CMD [ARGS] [:: CMD [ARGS]]... */
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
	if (argc < 3) {
		fprintf(stderr, "usage: spawn N CMD [ARGS] [:: CMD [ARGS]]...\n");
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
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
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
			printf("%d %.3f %ld %d\n", c, ms, ru.ru_maxrss,
			       WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
		}
	return 0;
}
