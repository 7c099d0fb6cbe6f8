/* bpfsys.c - creating maps and loading programs with bare bpf(2) calls.
 *
 * Why not libbpf's bpf_map_create() and bpf_prog_load(): the first time
 * either is called, libbpf 1.1 asks the kernel two questions by loading
 * a program for each (verified, JIT-compiled, announced to perf and
 * kallsyms, then freed): whether objects have names (4.15) and whether
 * BPF memory is charged to the memory cgroup (5.11; before that it
 * raises RLIMIT_MEMLOCK). They were two of the three programs
 * `BEGIN { exit(); }` loaded, some 5% of its run (issue 26). Here no
 * question is asked in advance: names are always given (a kernel without
 * them has no ring buffer either, 5.8, and cannot run sonde), and a
 * kernel that charges RLIMIT_MEMLOCK says so by refusing (EPERM): the
 * limit is raised then, and the call made again. libbpf does the rest
 * (links, the ring buffer, lookups). */
#include <errno.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "engine_int.h"

/* Attempts at a load the kernel refuses with EAGAIN (a verifier that ran
 * out of time slices under contention), as libbpf makes them. */
#define PROG_LOAD_ATTEMPTS 5

static int sys_bpf(int cmd, union bpf_attr *attr, size_t size)
{
	int fd = (int)syscall(__NR_bpf, cmd, attr, size);
	return fd < 0 ? -errno : fd;
}

/* Before memcg accounting (5.11) BPF memory counts against
 * RLIMIT_MEMLOCK, and a refusal is EPERM: raise it (as root: no limit)
 * and say whether trying again could help. */
static bool raise_memlock(void)
{
	struct rlimit r;
	if (getrlimit(RLIMIT_MEMLOCK, &r) == 0 && r.rlim_cur == RLIM_INFINITY)
		return false;
	r.rlim_cur = r.rlim_max = RLIM_INFINITY;
	return setrlimit(RLIMIT_MEMLOCK, &r) == 0;
}

static void set_name(char *dst, const char *name)
{
	/* BPF_OBJ_NAME_LEN with its NUL: engine_obj_name made it fit */
	if (name)
		strncpy(dst, name, BPF_OBJ_NAME_LEN - 1);
}

int engine_map_create(enum bpf_map_type type, const char *name, uint32_t key,
		      uint32_t value, uint32_t max_entries, uint32_t flags)
{
	union bpf_attr a;
	memset(&a, 0, sizeof(a));
	a.map_type = type;
	a.key_size = key;
	a.value_size = value;
	a.max_entries = max_entries;
	a.map_flags = flags;
	set_name(a.map_name, name);
	int fd = sys_bpf(BPF_MAP_CREATE, &a, sizeof(a));
	if (fd == -EPERM && raise_memlock())
		fd = sys_bpf(BPF_MAP_CREATE, &a, sizeof(a));
	return fd;
}

int engine_prog_load(enum bpf_prog_type type, const char *name,
		     const struct bpf_insn *insns, uint32_t ninsns,
		     const struct engine_load_opts *o)
{
	union bpf_attr a;
	memset(&a, 0, sizeof(a));
	a.prog_type = type;
	a.insns = (uint64_t)(uintptr_t)insns;
	a.insn_cnt = ninsns;
	a.license = (uint64_t)(uintptr_t)"GPL";
	set_name(a.prog_name, name);
	if (o) {
		a.expected_attach_type = o->expected_attach_type;
		a.attach_btf_id = o->attach_btf_id;
		if (o->log_buf && o->log_size) {
			a.log_buf = (uint64_t)(uintptr_t)o->log_buf;
			a.log_size = o->log_size;
			a.log_level = o->log_level;
		}
	}
	int fd = -EAGAIN;
	for (int i = 0; i < PROG_LOAD_ATTEMPTS && fd == -EAGAIN; i++)
		fd = sys_bpf(BPF_PROG_LOAD, &a, sizeof(a));
	if (fd == -EPERM && raise_memlock())
		fd = sys_bpf(BPF_PROG_LOAD, &a, sizeof(a));
	return fd;
}
