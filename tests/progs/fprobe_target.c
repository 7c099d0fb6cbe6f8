/* fprobe_target.c - what the live-patching tests patch: worker threads
 * hammering hammer() (whose first instruction counts its calls), and a
 * main thread that calls functions of awkward shapes (written in
 * assembly: a rip-relative load first, a loop whose head is the second
 * instruction, a function shorter than a jump) and checks what they
 * return. On SIGUSR1 it forks a child that checks its copy of hammer()
 * is the original code (the agent puts its patches back in a child).
 * Prints "ready" once the threads run; on SIGTERM stops, prints
 * "forks OK BAD", and exits 0 if every result was right, 3 otherwise.
 *
 *   fprobe_target THREADS */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

long hammer_calls;
long shape_value = 1000;
static volatile sig_atomic_t stop, fork_asked;
static int forks_ok, forks_bad;
static volatile int bad;

#define FN(name) ".globl " #name "\n.type " #name ",@function\n" #name ":\n"
#define END(name) ".size " #name ", .-" #name "\n"
__asm__(
	".text\n"
	".p2align 4, 0xcc\n"
	FN(hammer)      /* counts itself, returns x + 1 */
	"  lock incq hammer_calls(%rip)\n  lea 1(%rdi), %rax\n  ret\n"
	END(hammer)
	".p2align 4, 0xcc\n"
	FN(riprel_first)  /* shape_value + x */
	"  mov shape_value(%rip), %rax\n  add %rdi, %rax\n  ret\n"
	END(riprel_first)
	".p2align 4, 0xcc\n"
	".skip 16, 0xcc\n"
	FN(loop_head)   /* x + (x - 1) + ... + 1: the loop's head at +2 */
	"  xor %eax, %eax\n1: add %edi, %eax\n  dec %edi\n  jg 1b\n  ret\n"
	END(loop_head)
	".p2align 4, 0xcc\n"
	FN(tiny_fn)     /* x + 2, 4 bytes, padding after */
	"  lea 2(%rdi), %eax\n  ret\n"
	END(tiny_fn)
	".p2align 4, 0xcc\n"
	FN(before_nopad)  /* x, and right after it ... */
	"  mov %rdi, %rax\n  ret\n"
	END(before_nopad)
	FN(loop_nopad)    /* ... a loop head at +2 and no padding before */
	"  xor %eax, %eax\n1: add %edi, %eax\n  dec %edi\n  jg 1b\n  ret\n"
	END(loop_nopad)
	".p2align 4, 0xcc\n");

long hammer(long x);
long riprel_first(long x);
int loop_head(int x);
int tiny_fn(int x);
int loop_nopad(int x);

/* Each worker passes its calls' sequence numbers: a tracer that counts
 * every call between its first and its last sees hi - lo + 1 of them. */
static void *worker(void *arg)
{
	(void)arg;
	for (long seq = 0; !stop; seq++)
		if (hammer(seq) != seq + 1)
			bad = 1;
	return NULL;
}

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static void on_usr1(int sig)
{
	(void)sig;
	fork_asked = 1;
}

/* fork() from a function a return probe may hook: the child returns
 * through the hooked frame too. */
__attribute__((noinline)) pid_t forker(void)
{
	pid_t pid = fork();
	__asm__ volatile("" ::: "memory");
	return pid;
}

/* A child: is hammer() the original code (lock incq hammer_calls(%rip))? */
static void fork_check(void)
{
	pid_t pid = forker();
	if (pid == 0) {
		const unsigned char *p = (const unsigned char *)(void *)hammer;
		_exit(p[0] == 0xf0 && p[1] == 0x48 && p[2] == 0xff && p[3] == 0x05 &&
		      hammer(41) == 42 ? 0 : 3);
	}
	int status;
	if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	    WEXITSTATUS(status) == 0)
		forks_ok++;
	else
		forks_bad++;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 4;
	if (n < 0 || n > 64)
		n = 4;
	struct sigaction sa = { .sa_handler = on_term };
	sigaction(SIGTERM, &sa, NULL);
	struct sigaction su = { .sa_handler = on_usr1 };
	sigaction(SIGUSR1, &su, NULL);
	pthread_t th[64];
	for (int i = 0; i < n; i++)
		pthread_create(&th[i], NULL, worker, (void *)(long)i);
	printf("ready\n");
	fflush(stdout);
	struct timespec ms = { 0, 1000000 };
	for (long i = 0; !stop; i++) {
		if (riprel_first(i) != 1000 + i || tiny_fn((int)i) != (int)i + 2 ||
		    loop_nopad((int)(i % 10)) != (int)((i % 10) * (i % 10 + 1) / 2) ||
		    loop_head((int)(i % 100)) != (int)((i % 100) * (i % 100 + 1) / 2))
			bad = 1;
		if (fork_asked) {
			fork_asked = 0;
			fork_check();
		}
		nanosleep(&ms, NULL);
	}
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	printf("forks %d %d\n", forks_ok, forks_bad);
	return bad ? 3 : 0;
}
