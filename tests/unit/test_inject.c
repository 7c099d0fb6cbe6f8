/* test_inject.c - src/process/tracee.c and inject.c on real processes
 * (children of this test, traced as their owner: no root needed):
 * a shared object loaded into a running multi-threaded process with its
 * constructor run; calls into it; the borrowed thread's registers, vector
 * state and red zone as they were; a system call it slept in resumed;
 * the threads running on afterwards; the process running on whole when
 * its tracer is killed at any moment, a call of its included; and the
 * refusals (a zombie, a process already traced, a static program, a file
 * dlopen cannot load). */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/file.h"
#include "elf/elf.h"
#include "elf_testutil.h"
#include "process/inject.h"
#include "process/tracee.h"
#include "unit.h"

/* spin_check: keeps known values in every general register but r15, in
 * xmm0, xmm7 and xmm15, and in all 128 bytes of its red zone, and checks
 * them all on every turn until *spin_flag is set. Returns 0 if nothing
 * ever changed under it, 1 otherwise. */
volatile int spin_flag;
volatile long spin_turns;
__asm__(
	".text\n"
	".globl spin_check\n"
	".type spin_check,@function\n"
	"spin_check:\n"
	"  push %rbx\n push %rbp\n push %r12\n push %r13\n push %r14\n push %r15\n"
	"  movabs $0x1111111111111111, %rax\n"
	"  movabs $0x2222222222222222, %rbx\n"
	"  movabs $0x3333333333333333, %rcx\n"
	"  movabs $0x4444444444444444, %rdx\n"
	"  movabs $0x5555555555555555, %rsi\n"
	"  movabs $0x6666666666666666, %rdi\n"
	"  movabs $0x7777777777777777, %rbp\n"
	"  movabs $0x8888888888888888, %r8\n"
	"  movabs $0x9999999999999999, %r9\n"
	"  movabs $0xaaaaaaaaaaaaaaaa, %r10\n"
	"  movabs $0xbbbbbbbbbbbbbbbb, %r11\n"
	"  movabs $0xcccccccccccccccc, %r12\n"
	"  movabs $0xdddddddddddddddd, %r13\n"
	"  movabs $0xeeeeeeeeeeeeeeee, %r14\n"
	"  movq %rax, %xmm0\n movq %rbx, %xmm7\n movq %rcx, %xmm15\n"
	"  .irp k,8,16,24,32,40,48,56,64,72,80,88,96,104,112,120,128\n"
	"  mov %r14, -\\k(%rsp)\n"
	"  .endr\n"
	"1:\n"
	"  movabs $0x1111111111111111, %r15\n cmp %r15, %rax\n jne 9f\n"
	"  movabs $0x2222222222222222, %r15\n cmp %r15, %rbx\n jne 9f\n"
	"  movabs $0x3333333333333333, %r15\n cmp %r15, %rcx\n jne 9f\n"
	"  movabs $0x4444444444444444, %r15\n cmp %r15, %rdx\n jne 9f\n"
	"  movabs $0x5555555555555555, %r15\n cmp %r15, %rsi\n jne 9f\n"
	"  movabs $0x6666666666666666, %r15\n cmp %r15, %rdi\n jne 9f\n"
	"  movabs $0x7777777777777777, %r15\n cmp %r15, %rbp\n jne 9f\n"
	"  movabs $0x8888888888888888, %r15\n cmp %r15, %r8\n jne 9f\n"
	"  movabs $0x9999999999999999, %r15\n cmp %r15, %r9\n jne 9f\n"
	"  movabs $0xaaaaaaaaaaaaaaaa, %r15\n cmp %r15, %r10\n jne 9f\n"
	"  movabs $0xbbbbbbbbbbbbbbbb, %r15\n cmp %r15, %r11\n jne 9f\n"
	"  movabs $0xcccccccccccccccc, %r15\n cmp %r15, %r12\n jne 9f\n"
	"  movabs $0xdddddddddddddddd, %r15\n cmp %r15, %r13\n jne 9f\n"
	"  movabs $0xeeeeeeeeeeeeeeee, %r15\n cmp %r15, %r14\n jne 9f\n"
	"  movq %xmm0, %r15\n cmp %r15, %rax\n jne 9f\n"
	"  movq %xmm7, %r15\n cmp %r15, %rbx\n jne 9f\n"
	"  movq %xmm15, %r15\n cmp %r15, %rcx\n jne 9f\n"
	"  .irp k,8,16,24,32,40,48,56,64,72,80,88,96,104,112,120,128\n"
	"  cmp %r14, -\\k(%rsp)\n jne 9f\n"
	"  .endr\n"
	"  lock incq spin_turns(%rip)\n"
	"  cmpl $0, spin_flag(%rip)\n"
	"  je 1b\n"
	"  xor %eax, %eax\n jmp 8f\n"
	"9: mov $1, %eax\n"
	"8: pop %r15\n pop %r14\n pop %r13\n pop %r12\n pop %rbp\n pop %rbx\n ret\n"
	".size spin_check, .-spin_check\n");
int spin_check(void);

static volatile int workers_stop;
static volatile long worker_count[2];

static void *worker(void *arg)
{
	volatile long *c = arg;
	while (!workers_stop) {
		(*c)++;
		if ((*c & 1023) == 0)
			sched_yield();
	}
	return NULL;
}

static void on_term(int sig)
{
	(void)sig;
	spin_flag = 1;
}

/* The traced child: two worker threads, and a main thread that either
 * spins checking its registers (mode 's') or sleeps in read() on a pipe
 * until the parent writes one byte (mode 'r'). Exits 0 when all went
 * well: nothing changed under the spinner, the read got the byte, the
 * workers kept counting. */
static int child_main(char mode, int rfd)
{
	struct sigaction sa = { .sa_handler = on_term };
	sigaction(SIGTERM, &sa, NULL);
	pthread_t th[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, worker, (void *)&worker_count[i]);
	int bad = 0;
	if (mode == 's') {
		bad = spin_check();
	} else {
		char c = 0;
		ssize_t n = read(rfd, &c, 1);
		bad = n != 1 || c != 'x';
	}
	/* both workers count on: wait for it (up to 10 s: a loaded machine
	 * may leave a thread without CPU for a while), not a fixed 20 ms */
	long before[2] = { worker_count[0], worker_count[1] };
	for (int i = 0; i < 1000 && (worker_count[0] == before[0] ||
				     worker_count[1] == before[1]); i++)
		usleep(10000);
	bad |= worker_count[0] == before[0] || worker_count[1] == before[1];
	workers_stop = 1;
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	return bad ? 3 : 0;
}

static pid_t spawn(char mode, int *wfd)
{
	int p[2];
	if (pipe(p) < 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);   /* gone with the test */
		close(p[1]);
		_exit(child_main(mode, p[0]));
	}
	close(p[0]);
	*wfd = p[1];
	usleep(50000);   /* its threads started, the main thread settled */
	return pid;
}

/* wait_exec PID PATH: until PID runs PATH (its exec done), 10 s at most */
static void wait_exec(pid_t pid, const char *path)
{
	char link[64], exe[PATH_MAX], want[PATH_MAX];
	if (!realpath(path, want))
		return;
	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	for (int i = 0; i < 1000; i++) {
		ssize_t n = readlink(link, exe, sizeof(exe) - 1);
		if (n > 0) {
			exe[n] = '\0';
			if (strcmp(exe, want) == 0)
				return;
		}
		usleep(10000);
	}
}

static int reap(pid_t pid)
{
	int status;
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static bool maps_contain(pid_t pid, const char *needle)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	FILE *f = fopen(path, "r");
	char line[4096];
	bool found = false;
	while (f && fgets(line, sizeof(line), f))
		found |= strstr(line, needle) != NULL;
	if (f)
		fclose(f);
	return found;
}

static void test_inject(char mode, const char *so)
{
	char name[256];
	int wfd;
	pid_t pid = spawn(mode, &wfd);
	const char *what = mode == 's' ? "spinning" : "sleeping in read()";
	struct tracee *t = NULL;
	char why[512] = "";
	int r = tracee_attach(pid, &t, why, sizeof(why));
	snprintf(name, sizeof(name), "attach to a process %s: all threads stopped", what);
	CHECK(r == 0 && t && t->nthreads == 3, name);
	if (r < 0) {
		printf("# %s\n", why);
		kill(pid, SIGKILL);
		reap(pid);
		return;
	}
	struct inject_libc lc;
	r = inject_find_libc(pid, &lc, why, sizeof(why));
	CHECK(r == 0 && lc.dlopen && lc.dlsym && lc.dlerror,
	      "dlopen, dlsym and dlerror found in the process's libc");
	uint64_t handle = 0, fn = 0, ctor = 0, runs = 0, ret = 0;
	r = inject_dlopen(t, &lc, so, &handle, why, sizeof(why));
	snprintf(name, sizeof(name), "dlopen in a process %s", what);
	CHECK(r == 0 && handle, name);
	if (r < 0)
		printf("# %s\n", why);
	CHECK(maps_contain(pid, "libinject_hello.so"), "the object is mapped in the process");
	CHECK(inject_dlsym(t, &lc, handle, "hello_add", &fn) == 0 && fn,
	      "dlsym finds a function of the loaded object");
	uint64_t args[2] = { 40, 2 };
	CHECK(tracee_call(t, fn, args, 2, NULL, 0, 1000, &ret) == 0 && ret == 42,
	      "a call into the object returns its value");
	int ctor_pid = 0, nruns = 0;
	CHECK(inject_dlsym(t, &lc, handle, "hello_ctor_pid", &ctor) == 0 &&
	      tracee_read(t, ctor, &ctor_pid, sizeof(ctor_pid)) == 0 &&
	      ctor_pid == pid, "its constructor ran in the process");
	uint64_t again = 0;
	r = inject_dlopen(t, &lc, so, &again, why, sizeof(why));
	CHECK(r == 0 && again == handle &&
	      inject_dlsym(t, &lc, handle, "hello_ctor_runs", &runs) == 0 &&
	      tracee_read(t, runs, &nruns, sizeof(nruns)) == 0 && nruns == 1,
	      "a second dlopen finds it loaded and runs no constructor again");
	tracee_detach(t);
	if (mode == 's') {
		long turns = spin_turns;   /* the child's copy is what counts */
		(void)turns;
		usleep(20000);
		kill(pid, SIGTERM);
	} else {
		if (write(wfd, "x", 1) != 1)
			kill(pid, SIGKILL);
	}
	close(wfd);
	int rc = reap(pid);
	snprintf(name, sizeof(name), "the process %s runs on untouched after the "
		 "injection (registers, vector state, red zone, threads%s)", what,
		 mode == 'r' ? ", the interrupted read" : "");
	CHECK(rc == 0, name);
	if (rc != 0)
		printf("# child exit status %d\n", rc);
}

/* The tracer is killed (SIGKILL) in the middle of what it does to the
 * process: attaching, loading the object, or a call running on one of
 * its threads; ptrace lets the threads go, and the process must go on
 * as if nothing happened (the call thread finishes the call and puts
 * itself back through its signal frame). TRIALS tracers, each killed
 * at another moment: the first ones once the call is under way, the
 * others at random. */
#define TRIALS 12
static void test_tracer_killed(const char *so)
{
	int survived = 0, mid_call = 0;
	uint64_t rng = 0x2545f4914f6cdd1dull;
	for (int trial = 0; trial < TRIALS; trial++) {
		int wfd;
		pid_t pid = spawn(trial % 2 ? 's' : 'r', &wfd);
		int sync[2];
		if (pid < 0 || pipe(sync) < 0)
			return;
		pid_t tracer = fork();
		if (tracer == 0) {
			char why[512];
			struct tracee *t;
			struct inject_libc lc;
			uint64_t h = 0, fn = 0, ret;
			if (tracee_attach(pid, &t, why, sizeof(why)) < 0 ||
			    inject_find_libc(pid, &lc, why, sizeof(why)) < 0 ||
			    inject_dlopen(t, &lc, so, &h, why, sizeof(why)) < 0 ||
			    inject_dlsym(t, &lc, h, "hello_sleep", &fn) < 0)
				_exit(1);
			if (write(sync[1], "c", 1) != 1)
				_exit(1);
			uint64_t args[1] = { 300 };
			tracee_call(t, fn, args, 1, NULL, 0, 5000, &ret);
			_exit(0);
		}
		close(sync[1]);
		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		if (trial < TRIALS / 2) {
			char c;
			if (read(sync[0], &c, 1) == 1) {
				usleep(50000);        /* inside hello_sleep */
				mid_call++;
			}
		} else {
			usleep((useconds_t)(rng % 60000));
		}
		kill(tracer, SIGKILL);
		reap(tracer);
		close(sync[0]);
		usleep(400000);               /* the call ends on its own */
		if (kill(pid, 0) == 0) {
			if (trial % 2)
				kill(pid, SIGTERM);
			else if (write(wfd, "x", 1) != 1)
				kill(pid, SIGKILL);
			survived += reap(pid) == 0;
		} else {
			reap(pid);
		}
		close(wfd);
	}
	char name[200];
	snprintf(name, sizeof(name), "tracer killed at %d moments (%d in a call "
		 "it made): every process ran on with its registers, vector "
		 "state and interrupted read whole", TRIALS, mid_call);
	CHECK(survived == TRIALS, name);
	if (survived != TRIALS)
		printf("#   %d of %d survived\n", survived, TRIALS);
}

static void test_refusals(const char *so)
{
	char why[512] = "";
	struct tracee *t = NULL;

	/* a zombie */
	pid_t z = fork();
	if (z == 0)
		_exit(0);
	siginfo_t zi;     /* until it is a zombie, without reaping it */
	waitid(P_PID, (id_t)z, &zi, WEXITED | WNOWAIT);
	int r = tracee_attach(z, &t, why, sizeof(why));
	CHECK(r == -ESRCH && !t && strstr(why, "zombie"), "a zombie is refused, and said to be one");
	reap(z);

	/* no such process */
	r = tracee_attach(z, &t, why, sizeof(why));
	CHECK(r == -ESRCH && strstr(why, "no process"), "a process that is gone is refused");

	/* already traced: by another process (a debugger) */
	int wfd;
	pid_t pid = spawn('r', &wfd);
	int ready[2];
	if (pipe(ready) < 0)
		return;
	pid_t dbg = fork();
	if (dbg == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		char c = ptrace(PTRACE_SEIZE, pid, 0, 0) == 0 ? 'y' : 'n';
		if (write(ready[1], &c, 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	char c = 0;
	if (read(ready[0], &c, 1) != 1)
		c = 0;
	close(ready[0]);
	close(ready[1]);
	struct tracee *first = NULL;
	r = tracee_attach(pid, &first, why, sizeof(why));
	char want[64];
	snprintf(want, sizeof(want), "already traced by process %d", dbg);
	CHECK(c == 'y' && r == -EBUSY && !first && strstr(why, want),
	      "a process that is already traced is refused, naming its tracer");
	if (r != -EBUSY)
		printf("# %d %s\n", r, why);
	kill(dbg, SIGKILL);
	waitpid(dbg, NULL, 0);
	r = tracee_attach(pid, &first, why, sizeof(why));
	CHECK(r == 0, "once the tracer is gone, it can be traced");

	/* a file dlopen cannot load: dlerror's words */
	struct inject_libc lc;
	uint64_t handle = 1;
	if (first && inject_find_libc(pid, &lc, why, sizeof(why)) == 0) {
		r = inject_dlopen(first, &lc, "/nonexistent/libnothing.so", &handle,
				  why, sizeof(why));
		CHECK(r == -ENOENT && handle == 0 &&
		      strstr(why, "cannot open shared object file"),
		      "a failed dlopen reports dlerror()");
	}
	tracee_detach(first);
	if (write(wfd, "x", 1) != 1)
		kill(pid, SIGKILL);
	close(wfd);
	CHECK(reap(pid) == 0, "the process runs on after a failed dlopen");

	/* a process sonde traces already (a -c command held at its exit):
	 * borrowed, used, and left traced */
	pid = spawn('r', &wfd);
	bool held = ptrace(PTRACE_SEIZE, pid, 0, PTRACE_O_TRACEEXIT) == 0;
	r = tracee_attach(pid, &first, why, sizeof(why));
	CHECK(held && r == 0 && first->threads[0].borrowed,
	      "a process sonde traces already is borrowed, not seized again");
	if (r == 0 && inject_find_libc(pid, &lc, why, sizeof(why)) == 0) {
		r = inject_dlopen(first, &lc, so, &handle, why, sizeof(why));
		CHECK(r == 0 && handle, "and a call runs in it");
	}
	tracee_detach(first);
	char stpath[64], *status;
	snprintf(stpath, sizeof(stpath), "/proc/%d/status", pid);
	status = file_read(stpath, NULL);
	snprintf(want, sizeof(want), "TracerPid:\t%d\n", getpid());
	CHECK(status && strstr(status, want), "it stays traced by sonde afterwards");
	free(status);
	if (write(wfd, "x", 1) != 1)
		kill(pid, SIGKILL);
	close(wfd);
	/* its exit stop (PTRACE_O_TRACEEXIT) comes first: let it go on */
	int wst;
	if (waitpid(pid, &wst, 0) == pid && WIFSTOPPED(wst))
		ptrace(PTRACE_DETACH, pid, 0, 0);
	CHECK(reap(pid) == 0, "and runs on right");
	(void)so;

	/* a static program: no loader to call */
	char buf[PATH_MAX + 16];
	const char *st = test_prog_beside("static_sleep", buf, sizeof(buf));
	if (!st) {
		printf("ok - static program refused # SKIP static_sleep not built\n");
		return;
	}
	pid_t sp = fork();
	if (sp == 0) {
		execl(st, st, "5", (char *)NULL);
		_exit(127);
	}
	wait_exec(sp, st);
	r = inject_find_libc(sp, &lc, why, sizeof(why));
	CHECK(r == -ENOEXEC && strstr(why, "statically linked"),
	      "a static program is refused: no dynamic loader");
	kill(sp, SIGKILL);
	reap(sp);
}

int main(void)
{
	char buf[PATH_MAX + 16];
	const char *so = test_prog_beside("libinject_hello.so", buf, sizeof(buf));
	if (!so) {
		printf("ok - inject # SKIP libinject_hello.so not built\n");
		return UNIT_DONE();
	}
	test_inject('s', so);
	test_inject('r', so);
	test_tracer_killed(so);
	test_refusals(so);
	return UNIT_DONE();
}
