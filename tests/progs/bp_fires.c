/* bp_fires - does a hardware breakpoint fire on this machine? Exit 0 if a
 * write breakpoint on a global counts the writes to it, 1 if it counts
 * none (some hypervisors expose the breakpoint PMU but never deliver its
 * events), 2 if it cannot be opened. tests/system/watchpoint asks it
 * before testing watchpoints, to skip, saying why, rather than fail on a
 * machine that cannot watch memory at all. */
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static volatile uint64_t watched;

int main(void)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_BREAKPOINT;
	a.bp_type = HW_BREAKPOINT_W;
	a.bp_addr = (uintptr_t)&watched;
	a.bp_len = HW_BREAKPOINT_LEN_8;
	a.sample_period = 1;
	a.disabled = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
	if (fd < 0) {
		perror("bp_fires: perf_event_open");
		return 2;
	}
	ioctl(fd, PERF_EVENT_IOC_RESET, 0);
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	for (int i = 0; i < 5; i++)
		watched = watched + 1;
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	uint64_t n = 0;
	if (read(fd, &n, sizeof(n)) != sizeof(n)) {
		perror("bp_fires: read");
		return 2;
	}
	printf("%llu\n", (unsigned long long)n);
	return n > 0 ? 0 : 1;
}
