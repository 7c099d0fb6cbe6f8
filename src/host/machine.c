/* machine.c - small facts about the machine: how many CPUs the kernel
 * may bring online, whether it has BTF. */
#include "host.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* /sys/devices/system/cpu/possible is a list of ranges ("0-3,8-11"):
 * the count is the CPUs they name, as libbpf_num_possible_cpus counts
 * them. */
static int read_possible(void)
{
	int fd = open("/sys/devices/system/cpu/possible", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	char buf[512];
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	int err = errno;
	close(fd);
	if (n <= 0)
		return n < 0 ? -err : -EINVAL;
	buf[n] = '\0';
	long count = 0;
	for (char *p = buf; *p && *p != '\n';) {
		char *end;
		long a = strtol(p, &end, 10), b = a;
		if (end == p || a < 0)
			return -EINVAL;
		if (*end == '-') {
			p = end + 1;
			b = strtol(p, &end, 10);
			if (end == p || b < a)
				return -EINVAL;
		}
		if (b - a >= 65536 || count > 65536)
			return -EINVAL;
		count += b - a + 1;
		p = *end == ',' ? end + 1 : end;
		if (*end != ',' && *end && *end != '\n')
			return -EINVAL;
	}
	return count ? (int)count : -EINVAL;
}

int host_possible_cpus(void)
{
	static int cpus;      /* process-wide: the machine does not change */
	if (cpus <= 0)
		cpus = read_possible();
	return cpus;
}

bool host_have_btf(void)
{
	const char *f = getenv("BPFTRACE_BTF");
	if (f && *f)
		return access(f, R_OK) == 0;
	return access("/sys/kernel/btf/vmlinux", R_OK) == 0;
}
