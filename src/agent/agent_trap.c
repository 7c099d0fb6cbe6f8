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
 * thread is removing at that moment, and must still be let through. */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "agent_int.h"

static struct sigaction old_trap, old_segv, old_bus;
static bool installed;

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
	sigaction(sig, &dfl, NULL);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
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
	return sigaction(sig, &sa, old) < 0 ? -errno : 0;
}

int agent_signals_init(void)
{
	if (installed)
		return 0;
	int r = install(SIGTRAP, on_trap, &old_trap);
	if (r == 0)
		r = install(SIGSEGV, on_fault, &old_segv);
	if (r == 0)
		r = install(SIGBUS, on_fault, &old_bus);
	installed = r == 0;
	return r;
}
