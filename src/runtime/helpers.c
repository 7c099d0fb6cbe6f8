/* helpers.c - the BPF helpers the compiler emits, in user space: what a
 * program calls when the process engine runs it (in the traced process,
 * or in sonde for BEGIN, END and interval). Each takes the five argument
 * registers and returns r0, as src/vm/ calls them; the table at the end
 * is indexed by helper id.
 *
 * What differs from the kernel, and why:
 *   - per-CPU maps have one value per slot (shm.h): a thread's own, so a
 *     program's read-modify-write needs no atomics;
 *   - pid and tid are the process's and thread's ids in its own pid
 *     namespace (the same as the kernel's when sonde and the target
 *     share one, as with -c);
 *   - comm is the thread's name, read once and again only after a rename
 *     (a system call costs half a microsecond here);
 *   - get_current_task_btf is an opaque non-zero value, and task_pt_regs
 *     of it the registers the probe saw (what ustack copies); there is
 *     no get_current_task (curtask: the kernel's task_struct, read as
 *     kernel memory), so a script using it is refused;
 *   - kernel stacks are empty (-EFAULT), and kernel memory reads fail:
 *     nothing runs in the kernel. */
#include <errno.h>
#include <linux/bpf.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>

#include "rt.h"
#include "rt_int.h"

__thread struct rt_thread rt_self;
struct rt_process rt_proc;

typedef uint64_t u64;

#define PT_WORDS 21
#define PT_BP 4
#define PT_IP 16
#define PT_SP 19

/* The context of probes that have none (BEGIN, END, interval). */
static const uint64_t zero_regs[PT_WORDS];

static const uint64_t *regs_now(void)
{
	return rt_self.regs ? rt_self.regs : zero_regs;
}

static u64 probe_read(u64 dst, u64 size, u64 src, u64 a4, u64 a5)
{
	return (u64)(int64_t)rt_read((void *)dst, (const void *)src,
				     (uint32_t)size);
}

static u64 probe_read_str(u64 dst, u64 size, u64 src, u64 a4, u64 a5)
{
	return (u64)(int64_t)rt_read_str((void *)dst, (const void *)src,
					 (uint32_t)size);
}

static u64 clock_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (u64)ts.tv_sec * 1000000000ull + (u64)ts.tv_nsec;
}

static u64 ktime_get_ns(u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	return clock_ns(CLOCK_MONOTONIC);
}

static u64 ktime_get_boot_ns(u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	return clock_ns(CLOCK_BOOTTIME);
}

static u64 ktime_get_tai_ns(u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	return clock_ns(CLOCK_TAI);
}

static uint32_t current_tid(void)
{
	if (!rt_self.tid)
		rt_self.tid = (uint32_t)syscall(SYS_gettid);
	return rt_self.tid;
}

static u64 get_current_pid_tgid(u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	return (u64)rt_proc.pid << 32 | current_tid();
}

static u64 get_current_uid_gid(u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	return (u64)getgid() << 32 | getuid();
}

static u64 get_current_comm(u64 buf, u64 size, u64 a3, u64 a4, u64 a5)
{
	char *out = (char *)buf;
	if (!size)
		return (u64)-EINVAL;
	if (rt_self.comm_gen != rt_proc.comm_gen || !rt_proc.comm_gen) {
		char name[17] = "";
		prctl(PR_GET_NAME, name, 0, 0, 0);
		rt_memcpy(rt_self.comm, name, sizeof(rt_self.comm));
		rt_self.comm_gen = rt_proc.comm_gen;
	}
	uint32_t n = 0;
	while (n + 1 < size && n < sizeof(rt_self.comm) && rt_self.comm[n]) {
		out[n] = rt_self.comm[n];
		n++;
	}
	rt_memset(out + n, 0, size - n);
	return 0;
}

static u64 get_smp_processor_id(u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	int cpu = sched_getcpu();
	return cpu < 0 ? 0 : (u64)cpu;
}

static u64 get_prandom_u32(u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	if (!rt_self.rng)
		rt_self.rng = clock_ns(CLOCK_MONOTONIC) ^
			      ((u64)current_tid() << 32) ^ 0x2545f4914f6cdd1dull;
	uint64_t x = rt_self.rng;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	rt_self.rng = x;
	return (uint32_t)((x * 0x2545f4914f6cdd1dull) >> 32);
}

static u64 get_current_task(u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	return (u64)(uintptr_t)&rt_self;
}

static u64 task_pt_regs(u64 task, u64 a2, u64 a3, u64 a4, u64 a5)
{
	return (u64)(uintptr_t)regs_now();
}

static u64 get_current_cgroup_id(u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	return rt_proc.cgroup_id;
}

static u64 get_func_ip(u64 ctx, u64 a2, u64 a3, u64 a4, u64 a5)
{
	return regs_now()[PT_IP];
}

static u64 get_numa_node_id(u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	unsigned cpu, node = 0;
	if (getcpu(&cpu, &node) < 0)
		return 0;
	return node;
}

static u64 ringbuf_reserve(u64 map, u64 size, u64 flags, u64 a4, u64 a5)
{
	const struct rt_map *m = (const struct rt_map *)map;
	if (flags || !m->ring || size > UINT32_MAX)
		return 0;
	return (u64)(uintptr_t)rt_ring_reserve(m->ring, (uint32_t)size);
}

static u64 ringbuf_submit(u64 rec, u64 flags, u64 a3, u64 a4, u64 a5)
{
	rt_ring_submit(rt_proc.ring, (void *)rec, flags, false);
	return 0;
}

static u64 ringbuf_discard(u64 rec, u64 flags, u64 a3, u64 a4, u64 a5)
{
	rt_ring_submit(rt_proc.ring, (void *)rec, flags, true);
	return 0;
}

static u64 ringbuf_output(u64 map, u64 data, u64 size, u64 flags, u64 a5)
{
	const struct rt_map *m = (const struct rt_map *)map;
	if (!m->ring || size > UINT32_MAX)
		return (u64)-EINVAL;
	void *rec = rt_ring_reserve(m->ring, (uint32_t)size);
	if (!rec)
		return (u64)-EAGAIN;
	rt_memcpy(rec, (const void *)data, size);
	rt_ring_submit(m->ring, rec, flags, false);
	return 0;
}

static u64 ringbuf_query(u64 map, u64 what, u64 a3, u64 a4, u64 a5)
{
	const struct rt_map *m = (const struct rt_map *)map;
	return m->ring ? rt_ring_query(m->ring, what) : 0;
}

/* A user stack by frame pointers (what the kernel's walk does): the
 * probed instruction, then the return address of each frame. */
static int user_frames(uint64_t *ips, uint32_t max, uint32_t skip)
{
	if (!rt_self.regs)
		return -EFAULT;
	const uint64_t *regs = rt_self.regs;
	uint32_t n = 0, seen = 0;
	uint64_t fp = regs[PT_BP];
	if (seen++ >= skip && n < max)
		ips[n++] = regs[PT_IP];
	while (n < max) {
		uint64_t frame[2];
		if (!fp || fp & 7 || rt_read(frame, (const void *)fp, 16) < 0)
			break;
		if (!frame[1])
			break;
		if (seen++ >= skip)
			ips[n++] = frame[1];
		if (frame[0] <= fp)
			break;
		fp = frame[0];
	}
	return (int)n;
}

#define STACK_MAX 127

static u64 get_stackid(u64 ctx, u64 map, u64 flags, u64 a4, u64 a5)
{
	if (!(flags & BPF_F_USER_STACK))
		return (u64)-EFAULT;
	uint64_t ips[STACK_MAX];
	int n = user_frames(ips, STACK_MAX, (uint32_t)(flags & 0xff));
	if (n <= 0)
		return (u64)-EFAULT;
	return (u64)rt_stack_id((const struct rt_map *)map, ips, (uint32_t)n,
				flags);
}

static u64 get_stack(u64 ctx, u64 buf, u64 size, u64 flags, u64 a5)
{
	if (!(flags & BPF_F_USER_STACK) || size % 8) {
		rt_memset((void *)buf, 0, size);
		return (u64)-EFAULT;
	}
	uint32_t max = (uint32_t)(size / 8);
	if (max > STACK_MAX)
		max = STACK_MAX;
	int n = user_frames((uint64_t *)buf, max, (uint32_t)(flags & 0xff));
	if (n < 0)
		n = 0;
	rt_memset((uint8_t *)buf + (size_t)n * 8, 0, size - (size_t)n * 8);
	return (u64)n * 8;
}

static u64 send_signal(u64 sig, u64 a2, u64 a3, u64 a4, u64 a5)
{
	return kill((pid_t)rt_proc.pid, (int)sig) < 0 ? (u64)-EINVAL : 0;
}

static u64 send_signal_thread(u64 sig, u64 a2, u64 a3, u64 a4, u64 a5)
{
	return syscall(SYS_tgkill, rt_proc.pid, current_tid(), (int)sig) < 0 ?
		(u64)-EINVAL : 0;
}

const rt_helper_fn rt_helpers[__BPF_FUNC_MAX_ID] = {
	[BPF_FUNC_map_lookup_elem] = rt_helper_map_lookup,
	[BPF_FUNC_map_lookup_percpu_elem] = rt_helper_map_lookup_percpu,
	[BPF_FUNC_map_update_elem] = rt_helper_map_update,
	[BPF_FUNC_map_delete_elem] = rt_helper_map_delete,
	[BPF_FUNC_for_each_map_elem] = rt_helper_for_each_map_elem,
	[BPF_FUNC_loop] = rt_helper_loop,
	[BPF_FUNC_probe_read] = probe_read,
	[BPF_FUNC_probe_read_user] = probe_read,
	[BPF_FUNC_probe_read_kernel] = probe_read,
	[BPF_FUNC_probe_read_str] = probe_read_str,
	[BPF_FUNC_probe_read_user_str] = probe_read_str,
	[BPF_FUNC_probe_read_kernel_str] = probe_read_str,
	[BPF_FUNC_ktime_get_ns] = ktime_get_ns,
	[BPF_FUNC_ktime_get_boot_ns] = ktime_get_boot_ns,
	[BPF_FUNC_ktime_get_tai_ns] = ktime_get_tai_ns,
	[BPF_FUNC_get_current_pid_tgid] = get_current_pid_tgid,
	[BPF_FUNC_get_current_uid_gid] = get_current_uid_gid,
	[BPF_FUNC_get_current_comm] = get_current_comm,
	[BPF_FUNC_get_smp_processor_id] = get_smp_processor_id,
	[BPF_FUNC_get_prandom_u32] = get_prandom_u32,
	[BPF_FUNC_get_current_task_btf] = get_current_task,
	[BPF_FUNC_task_pt_regs] = task_pt_regs,
	[BPF_FUNC_get_current_cgroup_id] = get_current_cgroup_id,
	[BPF_FUNC_get_func_ip] = get_func_ip,
	[BPF_FUNC_get_numa_node_id] = get_numa_node_id,
	[BPF_FUNC_ringbuf_output] = ringbuf_output,
	[BPF_FUNC_ringbuf_reserve] = ringbuf_reserve,
	[BPF_FUNC_ringbuf_submit] = ringbuf_submit,
	[BPF_FUNC_ringbuf_discard] = ringbuf_discard,
	[BPF_FUNC_ringbuf_query] = ringbuf_query,
	[BPF_FUNC_get_stackid] = get_stackid,
	[BPF_FUNC_get_stack] = get_stack,
	[BPF_FUNC_send_signal] = send_signal,
	[BPF_FUNC_send_signal_thread] = send_signal_thread,
};
const uint32_t rt_nhelpers = __BPF_FUNC_MAX_ID;

/* The cgroup (v2) the process is in: its directory's inode number is
 * the id bpf_get_current_cgroup_id returns. 0 when unknown. */
static uint64_t read_cgroup_id(void)
{
	char buf[512], path[600];
	int fd = open("/proc/self/cgroup", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* the v2 line: "0::/path" */
	char *line = strstr(buf, "0::");
	if (!line || (line != buf && line[-1] != '\n'))
		return 0;
	char *end = strchr(line, '\n');
	if (end)
		*end = '\0';
	snprintf(path, sizeof(path), "/sys/fs/cgroup%s", line + 3);
	struct stat st;
	return stat(path, &st) == 0 ? (uint64_t)st.st_ino : 0;
}

void rt_process_init(bool nofault)
{
	rt_proc.pid = (uint32_t)getpid();
	rt_proc.cgroup_id = read_cgroup_id();
	rt_proc.nofault = nofault;
	if (!rt_proc.comm_gen)
		rt_proc.comm_gen = 1;
}
