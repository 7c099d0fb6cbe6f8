/* agent_fork.c - a fork()ed child that goes on being traced
 * (--follow-forks, proto.h): it has one thread, the one in the fork
 * handler, and a copy of everything patched. The sites sonde patched
 * (function probes, stock USDT sites: the registry, fprobe.h) become the
 * child's agent's own patches, which its session puts back at its end
 * with the protocol that is safe while threads run (agent_patch.c): sonde
 * knows nothing of the child's copy of the code. */
#include <fcntl.h>
#include <unistd.h>

#include "agent_int.h"
#include "fprobe.h"

extern struct fprobe_registry sonde_fprobe_registry;

/* Each patched site sonde wrote becomes an agent patch, and
 * FPROBE_ADOPTED (its probes still run through its trampoline); the ids
 * go into ids (at most max), their count is returned. A site that cannot
 * be (a jump through padding, longer than an agent patch, the table
 * full) is put back at once: it goes untraced in the child. */
uint32_t agent_adopt_child(uint32_t *ids, uint32_t max)
{
	static const char path[] = "/proc/self/mem";
	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return 0;
	const struct fprobe_registry *reg = &sonde_fprobe_registry;
	uint32_t n = reg->nregions < FPROBE_MAX_REGIONS ? reg->nregions
							: FPROBE_MAX_REGIONS;
	uint32_t nids = 0;
	for (uint32_t r = 0; r < n; r++) {
		uint64_t base = reg->region[r], used = reg->region_used[r];
		if (used > reg->region_len[r])
			continue;
		for (uint64_t off = 0; off + sizeof(struct fprobe_site) <= used;
		     off += 64) {
			struct fprobe_site *site = (struct fprobe_site *)(base + off);
			if (site->magic != FPROBE_SITE_MAGIC ||
			    site->state != FPROBE_PATCHED ||
			    site->patch_len > FPROBE_MAX_PATCH)
				continue;
			uint32_t id, state = FPROBE_ADOPTED;
			struct agent_patch *p;
			/* a thread that meets the int3 while the child's agent
			 * puts the bytes back goes on in the trampoline */
			if (!site->via_pad && nids < max &&
			    rt_memeq((const void *)site->addr, site->patch,
				     site->patch_len) &&
			    agent_patch_add_tramp(site->addr, site->orig,
						  site->patch_len,
						  (void *)site->tramp, site->tramp,
						  &id) == 0 &&
			    (p = agent_patch_get(id)) != NULL &&
			    rt_memeq(p->code, site->patch, site->patch_len)) {
				p->applied = true;
				ids[nids++] = id;
			} else {
				/* (an agent patch made here stays unapplied:
				 * inert) */
				if (pwrite(fd, site->orig, site->patch_len,
					   (off_t)site->addr) < 0)
					continue;
				if (site->via_pad &&
				    pwrite(fd, site->pad_orig, 5,
					   (off_t)site->pad_addr) < 0)
					continue;
				state = FPROBE_RESTORED;
			}
			if (pwrite(fd, &state, sizeof(state),
				   (off_t)(uintptr_t)&site->state) < 0)
				continue;
		}
	}
	close(fd);
	return nids;
}

