/* fprobes.c - the process engine's function probes (uprobe, uretprobe)
 * and its -p: what it does in the traced process over ptrace.
 *
 * The agent patches USDT sites itself: a 5-byte nop is one instruction,
 * which it replaces safely while the program runs. A function's first
 * instructions are several, and a thread may be stopped between them, so
 * sonde patches functions itself with the process stopped and every
 * thread inside the bytes moved (attach.c, livepatch.c); the trampolines
 * call the agent, which runs the probe's program from the region like a
 * USDT site's (its index in the program section, layout.c).
 *
 *   -c CMD   the command's agent (LD_PRELOAD) says hello from its
 *            constructor, before main(); sonde patches the functions
 *            then, and only afterwards hands it the region (control.c).
 *   -p PID   sonde stops the process, loads the agent into it (dlopen
 *            from inside), patches, starts the agent's session in a new
 *            thread of the process, lets it run, and waits for the agent
 *            to say it is attached.
 *
 * At the end, before the agents detach, sonde stops the process again and
 * puts every byte back. If sonde is killed instead, the agent's session
 * ends when its connection does, the trampolines call an agent with no
 * program to run, and the next sonde to attach puts the bytes back. */
#include <errno.h>
#include <limits.h>
#include <linux/bpf.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/cancel.h"
#include "../base/log.h"
#include "../cmdcheck.h"
#include "../agent/fprobe.h"
#include "attach.h"
#include "tracee.h"
#include "proc_int.h"

#define ATTACH_WAIT_MS 5000

/* -p: wait until the agent of pid has attached (serving the channel). */
static int wait_attached(struct engine *e, int pid)
{
	double deadline = log_now_ms() + ATTACH_WAIT_MS;
	while (log_now_ms() < deadline) {
		if (cancel_requested())
			return -ECANCELED;
		for (uint32_t i = 0; i < e->nconns; i++)
			if (e->conns[i].pid == pid &&
			    e->conns[i].state == CONN_ATTACHED)
				return e->failed ? -ECANCELED : 0;
		struct pollfd p[1 + PROC_CONNS_MAX];
		int fds[1 + PROC_CONNS_MAX];
		uint32_t n = proc_control_fds(e, fds, 1 + PROC_CONNS_MAX);
		for (uint32_t i = 0; i < n; i++)
			p[i] = (struct pollfd){ fds[i], POLLIN, 0 };
		if (poll(p, n, 50) < 0)
			continue;
		short rev[1 + PROC_CONNS_MAX];
		for (uint32_t i = 0; i < n; i++)
			rev[i] = p[i].revents;
		if (proc_control_poll(e, rev, n) < 0)
			return -ECANCELED;   /* control.c said why */
	}
	log_error("-p %d: the agent loaded into the process did not attach "
		  "within %d ms", pid, ATTACH_WAIT_MS);
	return -ETIMEDOUT;
}

/* Do the function probes read user stacks (ustack: the registers and
 * stack bytes copied, or a frame-pointer walk)? */
static bool reads_stacks(const struct engine *e)
{
	for (uint32_t i = 0; i < e->nprobes; i++) {
		const struct probe *p = e->probes[i].probe;
		if (e->probes[i].req.how != PROCESS_FUNC && !e->probes[i].stock_site)
			continue;
		for (uint32_t k = 0; k < p->ninsns; k++) {
			const struct bpf_insn *in = &p->insns[k];
			if (in->code == (BPF_JMP | BPF_CALL) && in->src_reg == 0 &&
			    (in->imm == BPF_FUNC_get_stackid ||
			     in->imm == BPF_FUNC_get_stack ||
			     in->imm == BPF_FUNC_task_pt_regs))
				return true;
		}
	}
	return false;
}

/* A warning about probe i's file is said once, for every function probe
 * of that file still unpatched: at the first of them, which this tells
 * (and *more, how many others there are). */
static bool first_of_file(const struct engine *e, uint32_t i, uint32_t *more)
{
	const char *path = e->probes[i].probe->uprobe->path;
	*more = 0;
	for (uint32_t j = 0; j < e->nprobes; j++) {
		const struct proc_probe *pp = &e->probes[j];
		if (j == i || pp->req.how != PROCESS_FUNC || !pp->probe->uprobe ||
		    pp->patched || strcmp(pp->probe->uprobe->path, path) != 0)
			continue;
		if (j < i)
			return false;
		(*more)++;
	}
	return true;
}

/* Wildcard functions that cannot be patched: each named, up to this many. */
#define SKIPPED_SAID 5
/* Those a kernel uprobe would break under the patch: one line, naming a
 * few. */
#define UNSAFE_NAMED 4

static int attach_in(struct engine *e, int pid, bool start_agent,
		     const char *agent, char *why, size_t whylen, double t0);

/* Stock sys/sdt.h sites (a 1-byte nop) are patched here like functions,
 * with the jump after the nop (livepatch.c), where that is safe; the
 * others stay the agent's to take with a breakpoint, -v saying why. */
static void add_stock_sites(struct engine *e, int pid)
{
	for (uint32_t i = 0; i < e->nprobes; i++) {
		struct proc_probe *pp = &e->probes[i];
		const struct uprobe_info *u = pp->probe->uprobe;
		if (pp->req.how != PROCESS_USDT || !pp->stock_site || !u)
			continue;
		char why[512] = "";
		int r = pattach_add_usdt(e->fattach, u->path, u->vaddr,
					 pp->probe->name, pp->section_index, why,
					 sizeof(why));
		pp->late = r == -ENXIO;
		if (r == -ENXIO)
			log_info("probe %s: process %d: its sys/sdt.h site is in %s, "
				 "not loaded yet: patched with a jump after the nop "
				 "when the process loads it (dlopen)", pp->probe->name,
				 pid, u->path);
		else if (r == 0)
			log_info("probe %s: process %d: its sys/sdt.h site is "
				 "patched with a jump after the nop", pp->probe->name,
				 pid);
		else
			log_info("probe %s: process %d: its sys/sdt.h site is taken "
				 "with a breakpoint (a trap per hit): %s",
				 pp->probe->name, pid, why);
	}
}

int proc_fprobes_attach(struct engine *e, int pid, bool start_agent)
{
	char agent[PATH_MAX], why[512] = "";
	int r = proc_agent_path(agent, sizeof(agent));
	if (r < 0) {
		log_error("the process engine's agent library cannot be used: "
			  "%s (set SONDE_AGENT_LIB to its path)", strerror(-r));
		return r;
	}
	double t0 = log_now_ms();
	/* a new image of the -c command (it exec'd): the old one's patches
	 * went with it */
	pattach_free_gone(e->fattach);
	e->fattach = NULL;
	/* a stop signal ends every wait of the attach (undoing it does not
	 * stop at one) */
	tracee_cancellable(true);
	r = attach_in(e, pid, start_agent, agent, why, sizeof(why), t0);
	tracee_cancellable(false);
	return r;
}

static int attach_in(struct engine *e, int pid, bool start_agent,
		     const char *agent, char *why, size_t whylen, double t0)
{
	int r = pattach_open(pid, agent, &e->fattach, why, whylen);
	if (r < 0 && !start_agent && !e->nfuncs) {
		/* only stock USDT sites: the agent's breakpoints take them */
		log_info("-c: process %d: its sys/sdt.h sites are taken with a "
			 "breakpoint: %s", pid, why);
		return 0;
	}
	if (r < 0) {
		log_error("%s %d: %s", start_agent ? "-p" : "-c: process", pid, why);
		return r;
	}
	pattach_set_flags(e->fattach, reads_stacks(e) ? FPROBE_F_STACKS : 0);
	uint32_t nskipped = 0, nadded = 0, nunsafe = 0;
	const char *unsafe[UNSAFE_NAMED];
	for (uint32_t i = 0; i < e->nprobes; i++) {
		struct proc_probe *pp = &e->probes[i];
		const struct uprobe_info *u = pp->probe->uprobe;
		if (pp->req.how != PROCESS_FUNC || !u)
			continue;
		why[0] = 0;
		r = pattach_add(e->fattach, u->path, u->vaddr, pp->probe->name,
				u->retprobe, pp->section_index, why, whylen);
		pp->late = r == -ENXIO;
		if (r == -ENXIO) {
			/* a -c command may load it later (an exec, say): said
			 * at the end if it never did */
			uint32_t more;
			if (start_agent && first_of_file(e, i, &more))
				log_warn("probe %s%s: %s", pp->probe->name,
					 more ? " (and the other probes of that file)"
					      : "", why);
			continue;
		}
		pp->patched = true;
		if (r == PATTACH_EUPROBE && u->wild) {
			/* one reason for many (libc has dozens): said at the
			 * end in one line, naming a few */
			if (nunsafe < UNSAFE_NAMED)
				unsafe[nunsafe] = pp->probe->func;
			nunsafe++;
			nskipped++;
			continue;
		}
		if (r < 0 && u->wild && pattach_unpatchable(r)) {
			/* one of a wildcard's functions: the others go on, as
			 * probes a system lacks are skipped */
			if (nskipped++ - nunsafe < SKIPPED_SAID)
				log_warn("probe %s: cannot be patched, skipped: %s",
					 pp->probe->name, why);
			continue;
		}
		if (r < 0) {
			log_error("probe %s: cannot attach in process %d: %s",
				  pp->probe->name, pid, why);
			goto fail;
		}
		nadded++;
		if (why[0])
			log_warn("probe %s: %s", pp->probe->name, why);
	}
	add_stock_sites(e, pid);
	if (nskipped - nunsafe > SKIPPED_SAID)
		log_warn("%u more functions matched by wildcards cannot be patched "
			 "and are skipped (a probe on one by name says why)",
			 nskipped - nunsafe - SKIPPED_SAID);
	if (nunsafe) {
		char names[256] = "";
		size_t k = 0;
		for (uint32_t i = 0; i < nunsafe && i < UNSAFE_NAMED; i++)
			k += (size_t)snprintf(names + k, k < sizeof(names) ?
					      sizeof(names) - k : 0, "%s%s",
					      i ? ", " : "", unsafe[i] ? unsafe[i] : "?");
		log_warn("%u function%s matched by wildcards %s skipped (%s%s): "
			 "a kernel uprobe placed on %s would resume the program "
			 "inside the jump the process engine needs (a probe on one "
			 "by name says why)", nunsafe, nunsafe == 1 ? "" : "s",
			 nunsafe == 1 ? "is" : "are", names,
			 nunsafe > UNSAFE_NAMED ? ", ..." : "",
			 nunsafe == 1 ? "it" : "them");
	}
	if (nskipped && !nadded) {
		log_error("%s %d: none of the functions the wildcards matched can "
			  "be patched", start_agent ? "-p" : "-c: process", pid);
		r = -ENOTSUP;
		goto fail;
	}
	if (start_agent &&
	    (r = pattach_start(e->fattach, "sonde_agent_attach_thread", e->sock_name,
			       why, whylen)) < 0) {
		log_error("-p %d: cannot start the agent: %s", pid, why);
		goto fail;
	}
	if ((r = pattach_commit(e->fattach, why, whylen)) < 0) {
		log_error("-p %d: %s", pid, why);
		goto fail;
	}
	double t1 = log_now_ms();
	if (start_agent && (r = wait_attached(e, pid)) < 0)
		return r;   /* the patches are undone at the end, as usual */
	e->any_patched |= pattach_nsites(e->fattach) > 0;
	log_info("process engine: %zu functions patched in process %d in "
		 "%.1f ms%s", pattach_nsites(e->fattach), pid, t1 - t0,
		 start_agent ? "; its agent attached" : "");
	return 0;
fail:
	tracee_cancellable(false);   /* undoing it goes to its end */
	pattach_free(e->fattach);   /* nothing is left patched */
	e->fattach = NULL;
	return r;
}

bool proc_fprobes_late_any(const struct engine *e)
{
	for (uint32_t i = 0; e->fattach && i < e->nprobes; i++)
		if (e->probes[i].late)
			return true;
	return false;
}

/* Failures of late probes said as warnings, at most (a program that
 * loads a library again and again, or undoes sonde's patch each time). */
#define LATE_WARNED_MAX 16

/* Say what became of a late probe's site (after the commit). */
static void say_late(struct engine *e, const struct proc_probe *pp, int pid,
		     int r, const char *why)
{
	const char *name = pp->probe->name;
	if (r < 0 && pp->req.how != PROCESS_USDT &&
	    ++e->late_warned > LATE_WARNED_MAX) {
		if (e->late_warned == LATE_WARNED_MAX + 1)
			log_warn("process engine: process %d: more probes cannot be "
				 "patched in libraries it loads (not said)", pid);
		return;
	}
	if (pp->req.how == PROCESS_USDT && r == 0)
		log_info("probe %s: process %d: its sys/sdt.h site, in a library "
			 "it loaded after start, is patched with a jump after the "
			 "nop", name, pid);
	else if (pp->req.how == PROCESS_USDT)
		log_info("probe %s: process %d: its sys/sdt.h site, in a library "
			 "it loaded after start, is taken with a breakpoint (a trap "
			 "per hit): %s", name, pid, why);
	else if (r == 0)
		log_info("probe %s: patched in process %d, in a library it loaded "
			 "after start", name, pid);
	else
		log_warn("probe %s: cannot be patched in process %d, in a library "
			 "it loaded after start (the probe does not fire there): %s",
			 name, pid, why);
}

void proc_fprobes_late(struct engine *e, int pid, uint32_t *patched,
		       uint32_t *failed)
{
	*patched = *failed = 0;
	struct pattach *pa = e->fattach;
	if (!pa || pattach_pid(pa) != pid || !proc_fprobes_late_any(e) ||
	    pattach_late_begin(pa) < 0)
		return;
	/* which probes: their file mapped, no live site of theirs there */
	uint32_t *want = malloc(e->nprobes * sizeof(*want)), nwant = 0;
	for (uint32_t i = 0; want && i < e->nprobes; i++) {
		const struct proc_probe *pp = &e->probes[i];
		const struct uprobe_info *u = pp->probe->uprobe;
		if (pp->late && u && pattach_late_wanted(pa, u->path, u->vaddr,
							  pp->section_index))
			want[nwant++] = i;
	}
	pattach_late_end(pa);
	if (!nwant) {
		free(want);
		return;
	}
	char why[512];
	double t0 = log_now_ms();
	tracee_cancellable(true);
	int r = pattach_hold(pa, why, sizeof(why));
	if (r < 0) {
		if (++e->late_warned <= LATE_WARNED_MAX)
			log_warn("process engine: process %d loaded a library with "
				 "probes' sites, and cannot be stopped to patch them: "
				 "%s (its USDT sites there are taken with a breakpoint, "
				 "its function probes there do not fire)", pid, why);
		*failed = nwant;
		goto out;
	}
	/* each planned as at attach; its result said once committed */
	int *res = calloc(nwant, sizeof(*res));
	char (*whys)[512] = calloc(nwant, sizeof(*whys));
	for (uint32_t k = 0; res && whys && k < nwant; k++) {
		struct proc_probe *pp = &e->probes[want[k]];
		const struct uprobe_info *u = pp->probe->uprobe;
		whys[k][0] = 0;
		if (pp->req.how == PROCESS_FUNC)
			res[k] = pattach_add(pa, u->path, u->vaddr, pp->probe->name,
					     u->retprobe, pp->section_index, whys[k],
					     sizeof(whys[k]));
		else
			res[k] = pattach_add_usdt(pa, u->path, u->vaddr,
						  pp->probe->name, pp->section_index,
						  whys[k], sizeof(whys[k]));
	}
	r = pattach_commit_more(pa, why, sizeof(why));
	double t1 = log_now_ms();
	for (uint32_t k = 0; res && whys && k < nwant; k++) {
		struct proc_probe *pp = &e->probes[want[k]];
		if (res[k] == -ENXIO)
			continue;       /* unloaded again meanwhile */
		if (res[k] == 0 && r < 0) {
			res[k] = r;
			snprintf(whys[k], sizeof(whys[k]), "%s", why);
		}
		say_late(e, pp, pid, res[k], whys[k]);
		if (res[k] == 0) {
			(*patched)++;
			if (pp->req.how == PROCESS_FUNC)
				pp->patched = true;
		} else {
			(*failed)++;
		}
	}
	if (!res || !whys)
		*failed = nwant;
	if (*patched)
		e->any_patched = true;
	log_info("process engine: process %d loaded a library: %u site%s patched "
		 "in %.1f ms, %u not", pid, *patched, *patched == 1 ? "" : "s",
		 t1 - t0, *failed);
	free(res);
	free(whys);
out:
	tracee_cancellable(false);
	free(want);
}

void proc_fprobes_cleanup(struct engine *e, int pid)
{
	char agent[PATH_MAX], why[512];
	size_t restored;
	if (proc_agent_path(agent, sizeof(agent)) < 0)
		return;
	tracee_cancellable(true);
	int r = pattach_cleanup(pid, agent, &restored, why, sizeof(why));
	tracee_cancellable(false);
	if (r < 0 && r != -ECANCELED && r != -EBUSY)   /* EBUSY: a live sonde's */
		log_warn("-p %d: cannot put back what an earlier sonde left patched "
			 "there: %s", pid, why);
	else if (restored)
		log_warn("-p %d: put back %zu function%s an earlier sonde (killed) "
			 "left patched", pid, restored, restored == 1 ? "" : "s");
}

void proc_fprobes_detach(struct engine *e)
{
	/* -c through a shim that ran another program than the probes name */
	if (e->opts.pid <= 0 && e->opts.cmd_script && !e->any_patched &&
	    e->traced) {
		cmdcheck_report(e->prog, e->opts.cmd_name, e->opts.cmd_script,
				e->cmd_ran);
		e->any_patched = true;   /* said once */
	}
	if (e->opts.pid <= 0 && e->traced) {
		for (uint32_t i = 0; i < e->nprobes; i++) {
			struct proc_probe *pp = &e->probes[i];
			uint32_t more;
			if (pp->req.how == PROCESS_FUNC && !pp->patched &&
			    first_of_file(e, i, &more))
				log_warn("probe %s%s: the command never loaded %s: "
					 "%s not fire", pp->probe->name,
					 more ? " and the other probes of that file" : "",
					 pp->probe->uprobe->path, more ? "they did" : "it did");
		}
		for (uint32_t i = 0; i < e->nprobes; i++)
			if (e->probes[i].req.how == PROCESS_FUNC)
				e->probes[i].patched = true;   /* said once */
	}
	if (!e->fattach)
		return;
	char why[512] = "";
	if (pattach_nsites(e->fattach)) {
		int r = pattach_detach(e->fattach, why, sizeof(why));
		if (r < 0 && r != -ESRCH)
			log_warn("process engine: process %d: %s (its function "
				 "probes stay patched, inert)",
				 pattach_pid(e->fattach), why);
	}
	pattach_free(e->fattach);
	e->fattach = NULL;
}
