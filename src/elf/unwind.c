/* unwind.c - DWARF CFI unwinding of a copied user stack through libdwfl, with a frame-pointer fallback. */

/*
 * This is what perf does for --call-graph dwarf (tools/perf/util/
 * unwind-libdw.c): a probe copies the user registers and the top N bytes
 * of the user stack; here libdwfl's unwinder walks that copy with the CFI
 * (.eh_frame, or .debug_frame from a debug file) of the files the process
 * maps, so programs built without frame pointers still give whole stacks.
 *
 * Differences from perf: the Dwfl is the remembered process's (built once
 * by usym.c, modules and CFI cached across samples) rather than one per
 * sample, so dwfl_attach_state is done once per process and the sample
 * being unwound reaches the callbacks through uproc->cur. Memory reads
 * are served from the stack copy; reads outside it (rare: CFI
 * expressions reading static data) come from the mapped file.
 *
 * Where a function has no CFI, libdwfl stops; we go on from that frame
 * with the frame-pointer chain, accepting a link only while it stays
 * inside the copied stack, moves up, and returns into executable mapped
 * code, so a register that is not a frame pointer yields no garbage.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "usym_internal.h"

/* x86-64 DWARF register numbers 0..16: rax rdx rcx rbx rsi rdi rbp rsp
 * r8..r15 and the return address column (rip). */
#define X86_64_NREGS 17
#define DW_RBP 6
#define DW_RSP 7

static pid_t uw_next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct uproc *p = arg;

	if (*thread_argp)
		return 0;
	*thread_argp = p;
	return p->cur ? p->cur->tid : p->pid;
}

static bool uw_get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	*thread_argp = arg;
	return true;
}

/* Read 8 bytes at ADDR from the file mapped there. */
static bool uw_read_file(const struct uproc *p, uint64_t addr, uint64_t *out)
{
	const struct umap *m = uproc_map(p, addr);
	uint64_t off;

	if (!m || !m->file || m->file->fd < 0 || addr + 8 > m->end)
		return false;
	off = addr - m->start + m->pgoff;
	return pread(m->file->fd, out, 8, (off_t)off) == 8;
}

static bool uw_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result,
			   void *arg)
{
	const struct uproc *p = arg;
	const struct unwind_sample *s = p->cur;
	uint64_t v;

	if (!s || addr + sizeof(v) < addr)
		return false;
	if (addr >= s->regs.sp && addr + sizeof(v) <= s->regs.sp + s->stack_len) {
		memcpy(&v, (const char *)s->stack + (addr - s->regs.sp), sizeof(v));
		*result = v;
		return true;
	}
	if (uw_read_file(p, addr, &v)) {
		*result = v;
		return true;
	}
	return false;
}

static bool uw_set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	const struct uproc *p = arg;
	const struct unwind_regs *r = &p->cur->regs;
	Dwarf_Word regs[X86_64_NREGS] = {
		r->ax, r->dx, r->cx, r->bx, r->si, r->di, r->bp, r->sp,
		r->r8, r->r9, r->r10, r->r11, r->r12, r->r13, r->r14, r->r15,
		r->ip,
	};

	return dwfl_thread_state_registers(thread, 0, X86_64_NREGS, regs);
}

static const Dwfl_Thread_Callbacks uw_callbacks = {
	.next_thread = uw_next_thread,
	.get_thread = uw_get_thread,
	.memory_read = uw_memory_read,
	.set_initial_registers = uw_set_initial_registers,
};

struct uw_walk {
	uint64_t *ips;
	size_t max, n;
	uint64_t last_sp, last_bp;
	int have_regs;
};

static int uw_frame(Dwfl_Frame *state, void *arg)
{
	struct uw_walk *w = arg;
	Dwarf_Addr pc;
	Dwarf_Word sp, bp;
	bool activation;

	if (!dwfl_frame_pc(state, &pc, &activation) || pc == 0)
		return DWARF_CB_ABORT;
	w->ips[w->n++] = pc;
	w->have_regs = dwfl_frame_reg(state, DW_RSP, &sp) == 0 &&
		       dwfl_frame_reg(state, DW_RBP, &bp) == 0;
	if (w->have_regs) {
		w->last_sp = sp;
		w->last_bp = bp;
	}
	return w->n < w->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

static bool uw_stack_word(const struct unwind_sample *s, uint64_t addr,
			  uint64_t *out)
{
	if (addr < s->regs.sp || addr + 8 > s->regs.sp + s->stack_len ||
	    addr + 8 < addr)
		return false;
	memcpy(out, (const char *)s->stack + (addr - s->regs.sp), 8);
	return true;
}

/* Continue a walk from (sp, bp) with frame pointers. */
static void uw_frame_pointers(const struct uproc *p, const struct unwind_sample *s,
			      struct uw_walk *w, uint64_t sp, uint64_t bp)
{
	while (w->n < w->max) {
		uint64_t next_bp, ret;
		const struct umap *m;

		if (bp < sp || (bp & 7) || !uw_stack_word(s, bp, &next_bp) ||
		    !uw_stack_word(s, bp + 8, &ret) || ret == 0)
			break;
		m = uproc_map(p, ret);
		if (!m)
			break;
		w->ips[w->n++] = ret;
		if (next_bp <= bp)
			break;
		sp = bp + 16;
		bp = next_bp;
	}
}

int unwind_user(struct usyms *u, const struct unwind_sample *sample,
		uint64_t *ips, size_t max)
{
	struct uw_walk w = { .ips = ips, .max = max };
	struct uproc *p;
	Dwfl *dwfl;
	int rc;

	if (!u || !sample || !ips)
		return -EINVAL;
	if (max == 0 || sample->regs.ip == 0)
		return 0;
	p = usyms_proc(u, sample->pid);
	if (!p)
		return -ESRCH;
	dwfl = uproc_dwfl(u, p);
	if (dwfl && !p->attached) {
		/* NULL ELF: libdwfl takes the machine from the first module */
		if (!dwfl_attach_state(dwfl, NULL, p->pid, &uw_callbacks, p))
			dwfl = NULL;
		else
			p->attached = 1;
	}
	if (!dwfl) {
		/* no file could be read: frame pointers are all there is */
		ips[w.n++] = sample->regs.ip;
		uw_frame_pointers(p, sample, &w, sample->regs.sp, sample->regs.bp);
		return (int)w.n;
	}
	p->cur = sample;
	rc = dwfl_getthread_frames(dwfl, sample->tid ? sample->tid : p->pid,
				   uw_frame, &w);
	p->cur = NULL;
	(void)rc;       /* the end of a stack is reported as an error too */
	if (w.n == 0) {
		ips[w.n++] = sample->regs.ip;
		w.last_sp = sample->regs.sp;
		w.last_bp = sample->regs.bp;
		w.have_regs = 1;
	}
	/* CFI ran out before the stack copy did: try frame pointers on from
	 * the last frame whose registers are known */
	if (w.n < max && w.have_regs)
		uw_frame_pointers(p, sample, &w, w.last_sp, w.last_bp);
	return (int)w.n;
}
