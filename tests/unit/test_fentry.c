/* test_fentry.c - fentry/fexit (kfunc/kretfunc) without attaching:
 * kernel functions and argument slots from vmlinux BTF, the provider's
 * parsing, wildcards, args record, retval type, attach requests, probe
 * names as written, and -l / -lv output. Skips when the kernel has no
 * BTF. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "compile.h"
#include "host/btf.h"
#include "probes/provider.h"
#include "unit.h"

static int collect(void *arg, const char *name)
{
	char **v = arg;
	for (int i = 0; i < 8; i++)
		if (!v[i]) {
			v[i] = strdup(name);
			return 0;
		}
	return 1;     /* enough */
}

static void t_btf(void)
{
	struct kfunc_info fi;
	CHECK(kbtf_func("vfs_read", &fi) == 0, "btf: vfs_read found");
	CHECK(fi.nargs == 4 && strcmp(fi.args[0].name, "file") == 0 &&
	      fi.args[0].is_ptr && fi.args[0].slot == 0 &&
	      strcmp(fi.args[2].name, "count") == 0 && fi.args[2].slot == 2 &&
	      fi.args[2].size == 8 && !fi.args[2].is_signed &&
	      !fi.args[2].is_ptr && fi.args[3].is_ptr && fi.args[3].slot == 3,
	      "btf: vfs_read(file, buf, count, pos): slots, sizes, pointers");
	CHECK_STR(fi.args[0].decl, "struct file *",
		  "btf: argument declarations as C");
	CHECK(fi.has_ret && fi.ret.is_signed && fi.ret.size == 8 &&
	      fi.ret.slot == 4, "btf: ssize_t retval in slot 4, signed");
	CHECK(kbtf_func("do_sys_openat2", &fi) == 0 && fi.ret.size == 4 &&
	      fi.ret.is_signed, "btf: int return is 4 bytes, signed");
	CHECK(kbtf_func("sonde_no_such_function", &fi) == -ENOENT,
	      "btf: unknown function is -ENOENT");
	char *v[8] = { 0 };
	CHECK(kbtf_funcs_each("vfs_rea*", collect, v) == 0 && v[0] &&
	      strcmp(v[0], "vfs_read") == 0, "btf: wildcard, in name order");
	bool sorted = true;
	for (int i = 1; i < 8 && v[i]; i++)
		if (strcmp(v[i - 1], v[i]) >= 0)
			sorted = false;
	CHECK(sorted, "btf: each function once, sorted");
	for (int i = 0; i < 8; i++)
		free(v[i]);
}

static struct program *comp(const char *text, struct diags *d,
			    struct diag_source *src)
{
	src->name = "test";
	src->text = text;
	diags_init(d, src);
	struct compile_opts o = { .name = "test", .text = text };
	return compile(&o, d);
}

static const char *first_tag(const struct diags *d)
{
	return d->list.n ? d->list.v[0].tag : "";
}

static void t_compile(void)
{
	struct diags d;
	struct diag_source src;
	struct program *p = comp("kretfunc:vfs_read { @r = retval; "
				 "@c = args->count; printf(\"%s\\n\", probe); }",
				 &d, &src);
	CHECK(p && p->nprobes == 1, "fexit: compiles");
	if (p) {
		const struct probe *pr = &p->probes[0];
		CHECK_STR(pr->name, "kretfunc:vfs_read",
			  "fexit: the probe keeps bpftrace's spelling");
		CHECK(pr->prog_type == BPF_PROG_TYPE_TRACING &&
		      pr->expected_attach_type == BPF_TRACE_FEXIT,
		      "fexit: a tracing program for BPF_TRACE_FEXIT");
		const struct type *r = pr->args_type;
		CHECK(r && r->kind == TYPE_RECORD && r->nfields == 5 &&
		      strcmp(r->rfields[4].name, "retval") == 0 &&
		      r->rfields[4].offset == 32 && r->rfields[2].offset == 16,
		      "fexit: args record: arguments by slot, then retval");
		int mr = program_find_map(p, "@r"), mc = program_find_map(p, "@c");
		const struct type *vr = mr >= 0 ? p->maps[mr].value_type : NULL;
		const struct type *vc = mc >= 0 ? p->maps[mc].value_type : NULL;
		CHECK(vr && vc && vr->is_signed && !vc->is_signed,
		      "fexit: retval has the function's (signed) type");
		struct attach_req req = { 0 };
		struct kfunc_info fi;
		kbtf_func("vfs_read", &fi);
		CHECK(pr->provider->attach(pr, &req) == 1 &&
		      req.how == ATTACH_TRACING && req.btf_id == fi.btf_id &&
		      !req.optional,
		      "fexit: attach by BTF id; a named function is required");
	}
	program_free(p);
	diags_free(&d);

	p = comp("fentry:vfs_rea* { @[func] = count(); }", &d, &src);
	CHECK(p && p->nprobes >= 3, "fentry: wildcard expands");
	if (p) {
		CHECK_STR(p->probes[0].name, "fentry:vfs_read",
			  "fentry: wildcard probe names");
		struct attach_req req = { 0 };
		CHECK(p->probes[0].provider->attach(&p->probes[0], &req) == 1 &&
		      req.optional && p->probes[0].expected_attach_type ==
		      BPF_TRACE_FENTRY,
		      "fentry: wildcard matches are optional attachments");
	}
	program_free(p);
	diags_free(&d);

	p = comp("fentry:sonde_no_such_function { }", &d, &src);
	CHECK(!p && strcmp(first_tag(&d), "BAD_PROBE") == 0 &&
	      strstr(d.list.v[0].msg, "no kernel function"),
	      "fentry: unknown function is BAD_PROBE");
	diags_free(&d);

	p = comp("kfunc:vfs_read { @ = args->nosuch; }", &d, &src);
	CHECK(!p && strcmp(first_tag(&d), "BAD_FIELD") == 0,
	      "fentry: unknown argument is BAD_FIELD");
	diags_free(&d);

	p = comp("kfunc:vfs_read { @ = retval; }", &d, &src);
	CHECK(!p && strcmp(first_tag(&d), "BAD_BUILTIN") == 0,
	      "fentry: retval only in fexit");
	diags_free(&d);

	p = comp("kfunc:a:b { }", &d, &src);
	CHECK(!p && strcmp(first_tag(&d), "BAD_PROBE") == 0,
	      "fentry: one function name only");
	diags_free(&d);
}

static char *list(const char *pattern, bool verbose)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int save = log_verbose;
	log_verbose = verbose;
	for (const struct provider *const *p = providers; *p; p++)
		if ((*p)->list && (!strcmp((*p)->name, "fentry") ||
				   !strcmp((*p)->name, "fexit")))
			(*p)->list(pattern, 0, f);
	log_verbose = save;
	fclose(f);
	return buf;
}

static void t_list(void)
{
	/* bpftrace 0.17 on Debian 12's kernel (and 0.26's tests, as
	 * fentry:vmlinux:vfs_*) name the module: kfunc:vmlinux:vfs_read */
	char *s = list("kfunc:vfs_read", true);
	CHECK_STR(s, "kfunc:vmlinux:vfs_read\n"
		  "    struct file * file\n"
		  "    char * buf\n"
		  "    size_t count\n"
		  "    loff_t * pos\n"
		  "    ssize_t retval\n",
		  "-lv kfunc:vfs_read: bpftrace's format");
	free(s);
	s = list("fexit:vfs_read", false);
	CHECK_STR(s, "fexit:vmlinux:vfs_read\n", "-l fexit:vfs_read");
	free(s);
	s = list("fentry:vmlinu*:vfs_read", false);
	CHECK_STR(s, "fentry:vmlinux:vfs_read\n",
		  "-l fentry:MODULE:FUNC, the module a wildcard");
	free(s);
	s = list("fentry:ext4:vfs_read", false);
	CHECK_STR(s, "", "-l fentry:MODULE:FUNC of another module: nothing");
	free(s);
	s = list("vfs_read", false);
	CHECK_STR(s, "fentry:vmlinux:vfs_read\nfexit:vmlinux:vfs_read\n",
		  "-l without a provider lists both");
	free(s);
}

int main(void)
{
	if (access("/sys/kernel/btf/vmlinux", R_OK) != 0) {
		printf("ok - fentry # SKIP no kernel BTF\n");
		return 0;
	}
	t_btf();
	t_compile();
	t_list();
	return UNIT_DONE();
}
