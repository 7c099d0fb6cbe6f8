/* pmu.c - the dynamic perf PMUs (kprobe, uprobe, breakpoint) as sysfs
 * describes them: their type number and the config bits of their
 * formats. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host.h"

#define PMU_DIR "/sys/bus/event_source/devices"

int pmu_type(const char *pmu, uint32_t *type)
{
	char path[256];
	snprintf(path, sizeof(path), PMU_DIR "/%s/type", pmu);
	char *text = probe_read_file(path);
	if (!text)
		return errno == ENOENT ? -EOPNOTSUPP : -errno;
	char *end;
	unsigned long v = strtoul(text, &end, 10);
	bool bad = end == text || v > UINT32_MAX;
	free(text);
	if (bad)
		return -EINVAL;
	*type = (uint32_t)v;
	return 0;
}

int pmu_format_bit(const char *pmu, const char *name, int *bit)
{
	char path[256];
	snprintf(path, sizeof(path), PMU_DIR "/%s/format/%s", pmu, name);
	char *text = probe_read_file(path);
	if (!text)
		return -errno;
	int r = -EINVAL;
	if (strncmp(text, "config:", 7) == 0) {
		char *end;
		long v = strtol(text + 7, &end, 10);
		if (end != text + 7 && v >= 0 && v < 64) {
			*bit = (int)v;
			r = 0;
		}
	}
	free(text);
	return r;
}
