/* privilege.c - see privilege.h. The effective capability set is read
 * with capget(2): no libcap needed for three bits. */
#include "privilege.h"

#include <linux/capability.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

static bool has_cap(const struct __user_cap_data_struct *d, int cap)
{
	return d[cap / 32].effective & (1u << (cap % 32));
}

bool privilege_can_trace(void)
{
	if (geteuid() == 0)
		return true;
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0,
	};
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3] = { 0 };
	if (syscall(SYS_capget, &h, d) < 0)
		return false;
	return has_cap(d, CAP_SYS_ADMIN) ||
	       (has_cap(d, CAP_BPF) && has_cap(d, CAP_PERFMON));
}
