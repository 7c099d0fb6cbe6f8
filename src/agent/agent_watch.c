/* agent_watch.c - the patched sites, checked every few milliseconds by
 * the session's thread for another tracer's breakpoint over them.
 *
 * A kernel uprobe (sonde's kernel engine, bpftrace, perf) on an address
 * a patch covers writes int3 over the patch's first byte. Its hits then
 * go to the kernel, which steps the file's original instruction out of
 * line and resumes after it: whole for the process engine's patches,
 * which are made so that the kernel resumes outside them (a function's
 * entry is patched after its first instruction, livepatch.c; a patch
 * otherwise covers exactly one instruction). When the uprobe goes, the
 * kernel writes the file's first byte back, which with the rest of a
 * patch is no instruction at all. So when the watch finds int3 over a
 * patch it puts the original bytes under it (nothing runs them: the
 * int3 traps first), and the uprobe's removal leaves the original
 * instruction; when it finds the original again it patches again. A
 * Linux 6.x kernel that makes such a uprobe a call (its nop5
 * optimization) restores the whole original itself. If the removal came
 * before the watch saw the int3, the first byte is put back at once.
 *
 * While a breakpoint covers a site its probes do not run: sonde says
 * so when it comes and how long it stayed when it goes (PROTO_SITE), so
 * no hit is lost without a message. A site someone else rewrote in
 * another way is left alone, and said. */
#include <errno.h>
#include <time.h>

#include "../runtime/rt.h"
#include "agent.h"
#include "agent_int.h"
#include "fprobe.h"
#include "proto.h"

extern struct fprobe_registry sonde_fprobe_registry;

enum watch_state { W_OK, W_COVERED, W_FOREIGN };

#define INT3 0xcc
#define CALL32 0xe8
/* Function sites watched at most (livepatch.c's MAX_SITES). */
#define FSITES_MAX 20000

struct fsite_watch {
	const struct fprobe_site *site;
	uint8_t state;
	uint64_t since_ns;
};

/* The function sites sonde wrote (its registry), found again when the
 * registry grew. Only the session's thread touches this. */
static struct fsite_watch *fsites;
static uint32_t nfsites;
static uint64_t fsites_key;
static size_t fsites_bytes;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t since_ms(uint64_t since, uint64_t now)
{
	return since && now > since ? (now - since) / 1000000 : 0;
}

/* One site: its patch P and the original O, n bytes, at addr; its
 * watch state. */
static void watch_one(struct agent_session *s, uint64_t addr, const uint8_t *P,
		      const uint8_t *O, uint32_t n, uint8_t *state,
		      uint64_t *since, bool may_repair)
{
	uint8_t cur[AGENT_PATCH_BYTES + FPROBE_MAX_PATCH];
	if (n == 0 || n > sizeof(cur) || rt_read(cur, (const void *)addr, n) < 0)
		return;
	uint64_t t = now_ns();
	bool tail_ours = n == 1 || rt_memeq(cur + 1, P + 1, n - 1);
	bool tail_orig = n == 1 || rt_memeq(cur + 1, O + 1, n - 1);
	if (rt_memeq(cur, P, n)) {
		if (*state == W_COVERED)
			agent_site_event(s, PROTO_SITE_UNCOVERED, addr,
					 since_ms(*since, t));
		*state = W_OK;
		*since = t;              /* last seen whole */
		return;
	}
	if (n > 1 && cur[0] == INT3 && (tail_ours || tail_orig)) {
		/* a breakpoint over it: the original under the int3 */
		if (tail_ours && agent_code_poke(addr + 1, O + 1, n - 1) < 0)
			return;
		if (*state != W_COVERED) {
			agent_site_event(s, PROTO_SITE_COVERED, addr, 0);
			*state = W_COVERED;
			*since = t;
		}
		return;
	}
	if (n == 5 && cur[0] == CALL32 && P[0] != CALL32) {
		/* the kernel made its uprobe a call: it restores all of the
		 * original when the uprobe goes */
		if (*state != W_COVERED) {
			agent_site_event(s, PROTO_SITE_COVERED, addr, 0);
			*state = W_COVERED;
			*since = t;
		}
		return;
	}
	if (!may_repair && rt_memeq(cur, O, n))
		return;        /* maybe a library loaded again: sonde's to say */
	if (rt_memeq(cur, O, n) || (cur[0] == O[0] && tail_ours)) {
		/* the breakpoint went (with ours under it, or before the
		 * watch put the original there): patched again */
		if (agent_code_write(addr, cur, P, n) < 0)
			return;
		agent_site_event(s, *state == W_COVERED ? PROTO_SITE_UNCOVERED :
				 PROTO_SITE_REPAIRED, addr, since_ms(*since, t));
		*state = W_OK;
		*since = t;
		return;
	}
	if (*state != W_FOREIGN) {
		agent_site_event(s, PROTO_SITE_FOREIGN, addr, 0);
		*state = W_FOREIGN;
	}
}

/* The registry's sites, listed again when its regions changed. */
static void fsites_refresh(void)
{
	const struct fprobe_registry *reg = &sonde_fprobe_registry;
	uint32_t nr = __atomic_load_n(&reg->nregions, __ATOMIC_ACQUIRE);
	if (nr > FPROBE_MAX_REGIONS)
		nr = FPROBE_MAX_REGIONS;
	uint64_t key = nr;
	for (uint32_t r = 0; r < nr; r++)
		key = key * 1000003 + reg->region_used[r] + reg->region[r];
	if (key == fsites_key && fsites)
		return;
	if (!fsites) {
		fsites_bytes = FSITES_MAX * sizeof(*fsites);
		fsites = agent_alloc(fsites_bytes);
		if (!fsites)
			return;
	}
	fsites_key = key;
	uint32_t n = 0;
	for (uint32_t r = 0; r < nr; r++) {
		uint64_t base = reg->region[r], used = reg->region_used[r];
		if (used > reg->region_len[r])
			continue;
		for (uint64_t off = 0; off + sizeof(struct fprobe_site) <= used &&
		     n < FSITES_MAX; off += 64) {
			const struct fprobe_site *site =
				(const struct fprobe_site *)(base + off);
			uint64_t magic;
			if (rt_read(&magic, &site->magic, 8) < 0 ||
			    magic != FPROBE_SITE_MAGIC)
				continue;
			/* a site seen before keeps its state */
			uint32_t k = n;
			for (uint32_t j = n; j < nfsites; j++)
				if (fsites[j].site == site) {
					k = j;
					break;
				}
			struct fsite_watch w = { site, W_OK, 0 };
			if (k != n)
				w = fsites[k];
			fsites[n++] = w;
		}
	}
	nfsites = n;
}

void agent_watch(struct agent_session *s, bool loads_pending)
{
	agent_patch_lock();
	if (!agent_live || agent_live->session != s) {
		agent_patch_unlock();
		return;
	}
	for (uint32_t i = 0; i < s->napplied; i++) {
		struct agent_patch *p = agent_patch_get(s->applied[i]);
		if (p && p->applied && !p->gone)
			watch_one(s, p->addr, p->code, p->orig, p->len, &p->watch,
				  &p->watch_since_ns, true);
	}
	const uint32_t *adopted;
	for (uint32_t i = 0, n = agent_adopted(&adopted); i < n; i++) {
		struct agent_patch *p = agent_patch_get(adopted[i]);
		if (p && p->applied && !p->gone)
			watch_one(s, p->addr, p->code, p->orig, p->len, &p->watch,
				  &p->watch_since_ns, true);
	}
	fsites_refresh();
	for (uint32_t i = 0; i < nfsites; i++) {
		const struct fprobe_site *site = fsites[i].site;
		if (__atomic_load_n(&site->state, __ATOMIC_ACQUIRE) != FPROBE_PATCHED ||
		    site->patch_len > FPROBE_MAX_PATCH)
			continue;
		/* a library loaded since the last look, not yet told to
		 * sonde: the original bytes at one of sonde's sites may be
		 * that library's, loaded again where it was (sonde patches
		 * it afresh), not a breakpoint come and gone */
		watch_one(s, site->addr, site->patch, site->orig, site->patch_len,
			  &fsites[i].state, &fsites[i].since_ns, !loads_pending);
	}
	agent_patch_unlock();
}
