/* test_kfuncs.c - the traceable kernel functions of a
 * --traceable-functions file (available_filter_functions' format, "name"
 * or "name [module]"): all of them, and those of the modules a glob
 * matches, the kernel's own as "name", a module's as "module:name";
 * malformed lines are left out, not misread. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "probes/probe_util.h"
#include "unit.h"

static char *join(const struct kfuncs *t)
{
	static char buf[512];
	buf[0] = '\0';
	for (size_t i = 0; i < t->n; i++) {
		strncat(buf, t->v[i], sizeof(buf) - strlen(buf) - 2);
		strcat(buf, ",");
	}
	return buf;
}

int main(void)
{
	char path[] = "/tmp/sonde-test-kfuncs.XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0, "a temporary file");
	if (fd < 0)
		return UNIT_DONE();
	const char *text = "vfs_read\n"
		"v9fs_read [9p]\n"
		"bad[9p]\n"
		"ext4_x [ext4]\n"
		"ksys_write\n"
		"p9_io [9pnet]\n";
	CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text),
	      "written");
	close(fd);
	CHECK(kfuncs_set_source(path) == 0, "kfuncs_set_source reads it");
	unlink(path);

	struct kfuncs t;
	kfuncs_load(&t);
	CHECK(t.known && kfuncs_has(&t, "vfs_read") &&
	      kfuncs_has(&t, "v9fs_read") && !kfuncs_has(&t, "nope"),
	      "kfuncs_load: every name of the file");
	kfuncs_free(&t);

	kfuncs_load_module(&t, "vmlinux");
	CHECK_STR(join(&t), "ksys_write,vfs_read,", "vmlinux: the kernel's own");
	kfuncs_free(&t);
	kfuncs_load_module(&t, "9p");
	CHECK_STR(join(&t), "9p:v9fs_read,",
		  "a module: its names, module:name (bad[9p] left out)");
	kfuncs_free(&t);
	kfuncs_load_module(&t, "9p*");
	CHECK_STR(join(&t), "9p:v9fs_read,9pnet:p9_io,",
		  "a glob over modules");
	kfuncs_free(&t);
	kfuncs_load_module(&t, "*");
	CHECK_STR(join(&t), "9p:v9fs_read,9pnet:p9_io,ext4:ext4_x,"
		  "ksys_write,vfs_read,", "every module and the kernel");
	kfuncs_free(&t);

	CHECK(kfuncs_set_source("/dev/zero") == -EFBIG,
	      "a file without end is refused");
	CHECK(kfuncs_set_source("/sonde-no-such-file") == -ENOENT,
	      "a missing file: ENOENT");
	return UNIT_DONE();
}
