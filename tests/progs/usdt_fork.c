/* usdt_fork.c - a traced program that forks: the parent passes fk:hit
 * with 1, forks a child that passes it with 2 and runs `true` (fork and
 * exec), waits for it, and passes the site again with 3. Prints the
 * child's exit status: a child of a traced command must keep working. */
#include <sonde/sdt.h>

#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void)
{
	SONDE_PROBE(fk, hit, 1);
	pid_t pid = fork();
	if (pid == 0) {
		for (int i = 0; i < 10; i++)
			SONDE_PROBE(fk, hit, 2);
		pid_t g = fork();
		if (g == 0) {
			execlp("true", "true", (char *)NULL);
			_exit(127);
		}
		int st;
		waitpid(g, &st, 0);
		_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 100);
	}
	int status;
	waitpid(pid, &status, 0);
	SONDE_PROBE(fk, hit, 3);
	printf("child exited %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	return 0;
}
