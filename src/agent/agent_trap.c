/* agent_trap.c - the agent's signal handlers:
 *   SIGTRAP  a breakpoint the agent placed (a sys/sdt.h 1-byte nop, or
 *            any patch during the int3 step of its protocol): run the
 *            patch's probes with the registers the kernel saved, and go
 *            on where the patch says (past the nop);
 *   SIGSEGV, SIGBUS  a fault inside the runtime's fault-catching copy
 *            (a probe reading a bad pointer): resume at its error return.
 * Anything else goes to the handler that was there before, or gets the
 * default action it would have had. The handlers stay installed for the
 * life of the process: a thread may trap on a breakpoint that another
 * thread is removing at that moment, and must still be let through.
 *
 * Keeping them. A program that installs its own handler for one of these
 * signals later (Python's faulthandler does for SIGSEGV), or blocks them
 * in a thread (a worker that blocks every signal: the kernel then kills
 * the process on a breakpoint or fault), would turn a probe into a
 * crash. So the preloaded agent interposes sigaction(), signal(),
 * sigprocmask() and pthread_sigmask(): while its handlers are installed,
 * a handler the program sets for these three signals is kept as the one
 * to chain to (and reported back as the current one), and they are left
 * out of any mask a thread sets. Blocking them changes nothing a program
 * can rely on: POSIX leaves a fault raised while blocked undefined, and
 * Linux kills the process. Programs that make the system calls directly
 * bypass this, as does an agent injected after start (dlopen), whose
 * symbols come too late to interpose. */
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "agent_int.h"

static struct sigaction old_trap, old_segv, old_bus;
static bool installed;

/* The C library's own functions, behind the interposed ones. */
typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);
typedef int (*sigmask_fn)(int, const sigset_t *, sigset_t *);
static sigaction_fn real_sigaction;
static sigmask_fn real_sigprocmask, real_pthread_sigmask;

static void resolve(void)
{
	if (__atomic_load_n(&real_sigaction, __ATOMIC_ACQUIRE))
		return;
	sigmask_fn pm = (sigmask_fn)dlsym(RTLD_NEXT, "sigprocmask");
	sigmask_fn tm = (sigmask_fn)dlsym(RTLD_NEXT, "pthread_sigmask");
	sigaction_fn sa = (sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
	__atomic_store_n(&real_sigprocmask, pm, __ATOMIC_RELEASE);
	__atomic_store_n(&real_pthread_sigmask, tm, __ATOMIC_RELEASE);
	__atomic_store_n(&real_sigaction, sa, __ATOMIC_RELEASE);
}

static struct sigaction *kept(int sig)
{
	if (!__atomic_load_n(&installed, __ATOMIC_ACQUIRE))
		return NULL;
	return sig == SIGTRAP ? &old_trap : sig == SIGSEGV ? &old_segv :
	       sig == SIGBUS ? &old_bus : NULL;
}

/* Hand a signal that is not ours to what would have handled it. */
static void chain(int sig, siginfo_t *si, void *uc, const struct sigaction *o)
{
	if (o->sa_flags & SA_SIGINFO) {
		if (o->sa_sigaction) {
			o->sa_sigaction(sig, si, uc);
			return;
		}
	} else if (o->sa_handler != SIG_DFL && o->sa_handler != SIG_IGN) {
		o->sa_handler(sig);
		return;
	}
	if (o->sa_handler == SIG_IGN && si->si_code <= 0)
		return;               /* sent, and ignored before we came */
	/* the default action: restore it and have the signal again as soon
	 * as this handler returns (a fault would also repeat by itself) */
	struct sigaction dfl;
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	real_sigaction(sig, &dfl, NULL);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, sig);
	real_sigprocmask(SIG_UNBLOCK, &set, NULL);
	syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), sig);
}

static void regs_from(struct agent_regs *r, const greg_t *g)
{
	r->r15 = (uint64_t)g[REG_R15];
	r->r14 = (uint64_t)g[REG_R14];
	r->r13 = (uint64_t)g[REG_R13];
	r->r12 = (uint64_t)g[REG_R12];
	r->bp = (uint64_t)g[REG_RBP];
	r->bx = (uint64_t)g[REG_RBX];
	r->r11 = (uint64_t)g[REG_R11];
	r->r10 = (uint64_t)g[REG_R10];
	r->r9 = (uint64_t)g[REG_R9];
	r->r8 = (uint64_t)g[REG_R8];
	r->ax = (uint64_t)g[REG_RAX];
	r->cx = (uint64_t)g[REG_RCX];
	r->dx = (uint64_t)g[REG_RDX];
	r->si = (uint64_t)g[REG_RSI];
	r->di = (uint64_t)g[REG_RDI];
	r->orig_ax = (uint64_t)-1;
	r->ip = (uint64_t)g[REG_RIP];
	r->cs = 0x33;
	r->flags = (uint64_t)g[REG_EFL];
	r->sp = (uint64_t)g[REG_RSP];
	r->ss = 0x2b;
}

static void on_trap(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	greg_t *g = uc->uc_mcontext.gregs;
	/* int3 reports SI_KERNEL with the ip after it */
	if (si->si_code == SI_KERNEL) {
		uint64_t ip = (uint64_t)g[REG_RIP] - 1;
		struct agent_patch *p = agent_patch_find(ip);
		if (p) {
			struct agent_regs regs;
			regs_from(&regs, g);
			regs.ip = ip;
			agent_hit(&regs, (uint32_t)(p - agent_patch_get(0)));
			g[REG_RIP] = (greg_t)p->resume;
			return;
		}
	}
	chain(sig, si, ucv, &old_trap);
}

static void on_fault(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	greg_t *g = uc->uc_mcontext.gregs;
	uint64_t ip = (uint64_t)g[REG_RIP];
	if (si->si_code > 0 && rt_nofault_fixup(&ip)) {
		g[REG_RIP] = (greg_t)ip;
		return;
	}
	chain(sig, si, ucv, sig == SIGSEGV ? &old_segv : &old_bus);
}

static int install(int sig, void (*fn)(int, siginfo_t *, void *),
		   struct sigaction *old)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = fn;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	return real_sigaction(sig, &sa, old) < 0 ? -errno : 0;
}

int agent_signals_init(void)
{
	if (installed)
		return 0;
	resolve();
	if (!real_sigaction || !real_sigprocmask || !real_pthread_sigmask)
		return -ENOSYS;
	int r = install(SIGTRAP, on_trap, &old_trap);
	if (r == 0)
		r = install(SIGSEGV, on_fault, &old_segv);
	if (r == 0)
		r = install(SIGBUS, on_fault, &old_bus);
	if (r < 0)
		return r;
	/* this thread may have been started with them blocked */
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTRAP);
	sigaddset(&set, SIGSEGV);
	sigaddset(&set, SIGBUS);
	real_pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	__atomic_store_n(&installed, true, __ATOMIC_RELEASE);
	return 0;
}

/* ---- the interposed functions (exported: LD_PRELOAD puts them first) */

#define EXPORT __attribute__((visibility("default")))

EXPORT int sigaction(int sig, const struct sigaction *act,
		     struct sigaction *oldact)
{
	resolve();
	struct sigaction *k = kept(sig);
	if (!k)
		return real_sigaction(sig, act, oldact);
	struct sigaction prev = *k;
	if (act)
		*k = *act;
	if (oldact)
		*oldact = prev;
	return 0;
}

EXPORT sighandler_t signal(int sig, sighandler_t handler)
{
	struct sigaction sa, old;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sa.sa_flags = SA_RESTART;        /* signal()'s BSD semantics */
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, sig);
	if (sigaction(sig, &sa, &old) < 0)
		return SIG_ERR;
	return old.sa_handler;
}

/* The set without the agent's signals while its handlers are in place. */
static const sigset_t *without_ours(int how, const sigset_t *set,
				    sigset_t *copy)
{
	if (!set || how == SIG_UNBLOCK ||
	    !__atomic_load_n(&installed, __ATOMIC_ACQUIRE))
		return set;
	*copy = *set;
	sigdelset(copy, SIGTRAP);
	sigdelset(copy, SIGSEGV);
	sigdelset(copy, SIGBUS);
	return copy;
}

EXPORT int sigprocmask(int how, const sigset_t *set, sigset_t *oldset)
{
	resolve();
	sigset_t copy;
	return real_sigprocmask(how, without_ours(how, set, &copy), oldset);
}

EXPORT int pthread_sigmask(int how, const sigset_t *set, sigset_t *oldset)
{
	resolve();
	sigset_t copy;
	return real_pthread_sigmask(how, without_ours(how, set, &copy), oldset);
}
