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
#include <bpf/btf.h>
#include <errno.h>
#include <stdlib.h>
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

static int cmp_u32(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
	return a < b ? -1 : a > b;
}

/* Where the program's subprograms start (the callbacks of for loops
 * over maps and len(), cg_formap.c): 0, then every target of a
 * BPF_PSEUDO_FUNC load or BPF_PSEUDO_CALL, sorted, distinct. Returns
 * how many (1: no subprogram), or -errno; *starts is malloc'd. */
static int subprog_starts(const struct bpf_insn *insns, uint32_t n,
			  uint32_t **starts)
{
	uint32_t k = 1;
	uint32_t *v = malloc(sizeof(*v));
	if (!v)
		return -ENOMEM;
	v[0] = 0;
	for (uint32_t pc = 0; pc < n; pc++) {
		const struct bpf_insn *in = &insns[pc];
		bool func = in->code == (BPF_LD | BPF_IMM | BPF_DW) &&
			in->src_reg == BPF_PSEUDO_FUNC;
		bool call = in->code == (BPF_JMP | BPF_CALL) &&
			in->src_reg == BPF_PSEUDO_CALL;
		if (func || call) {
			int64_t t = (int64_t)pc + 1 + in->imm;
			uint32_t *w = realloc(v, (k + 1) * sizeof(*v));
			if (!w) {
				free(v);
				return -ENOMEM;
			}
			v = w;
			if (t < 0 || t >= n) {
				free(v);
				return -EINVAL;
			}
			v[k++] = (uint32_t)t;
		}
		if (in->code == (BPF_LD | BPF_IMM | BPF_DW))
			pc++;
	}
	qsort(v, k, sizeof(*v), cmp_u32);
	uint32_t m = 0;
	for (uint32_t i = 0; i < k; i++)
		if (!m || v[m - 1] != v[i])
			v[m++] = v[i];
	*starts = v;
	return (int)m;
}

/* The kernel wants BTF func_info for a program with callbacks: one
 * static function (int f(void)) per subprogram. Loads that BTF and
 * fills the attributes; returns the BTF's descriptor (the caller
 * closes it), 0 when there are no subprograms, or -errno. */
static int attach_func_info(union bpf_attr *a, const struct bpf_insn *insns,
			    uint32_t n, struct bpf_func_info **fi)
{
	uint32_t *starts = NULL;
	int k = subprog_starts(insns, n, &starts);
	if (k <= 1) {
		free(starts);
		return k < 0 ? k : 0;
	}
	int fd = -ENOMEM;
	struct btf *b = btf__new_empty();
	*fi = calloc((size_t)k, sizeof(**fi));
	if (!b || !*fi)
		goto out;
	int ti = btf__add_int(b, "int", 4, BTF_INT_SIGNED);
	int proto = ti > 0 ? btf__add_func_proto(b, ti) : -1;
	int fmain = proto > 0 ? btf__add_func(b, "sonde_probe", BTF_FUNC_STATIC,
					      proto) : -1;
	int fcb = fmain > 0 ? btf__add_func(b, "sonde_callback",
					    BTF_FUNC_STATIC, proto) : -1;
	if (fcb <= 0) {
		fd = -EINVAL;
		goto out;
	}
	for (int i = 0; i < k; i++)
		(*fi)[i] = (struct bpf_func_info){ .insn_off = starts[i],
			.type_id = (uint32_t)(i ? fcb : fmain) };
	uint32_t size = 0;
	const void *raw = btf__raw_data(b, &size);
	if (!raw)
		goto out;
	union bpf_attr ba;
	memset(&ba, 0, sizeof(ba));
	ba.btf = (uint64_t)(uintptr_t)raw;
	ba.btf_size = size;
	fd = sys_bpf(BPF_BTF_LOAD, &ba, sizeof(ba));
	if (fd == -EPERM && raise_memlock())
		fd = sys_bpf(BPF_BTF_LOAD, &ba, sizeof(ba));
	if (fd >= 0) {
		a->prog_btf_fd = (uint32_t)fd;
		a->func_info = (uint64_t)(uintptr_t)*fi;
		a->func_info_rec_size = sizeof(**fi);
		a->func_info_cnt = (uint32_t)k;
	}
out:
	btf__free(b);
	free(starts);
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
	struct bpf_func_info *fi = NULL;
	int btf_fd = attach_func_info(&a, insns, ninsns, &fi);
	if (btf_fd < 0) {
		free(fi);
		return btf_fd;
	}
	int fd = -EAGAIN;
	for (int i = 0; i < PROG_LOAD_ATTEMPTS && fd == -EAGAIN; i++)
		fd = sys_bpf(BPF_PROG_LOAD, &a, sizeof(a));
	if (fd == -EPERM && raise_memlock())
		fd = sys_bpf(BPF_PROG_LOAD, &a, sizeof(a));
	if (btf_fd > 0)
		close(btf_fd);
	free(fi);
	return fd;
}
