/* stackfmt.c - kstack/ustack/ksym/usym text exactly as bpftrace 0.17 prints it. */

/*
 * bpftrace 0.17 (BPFtrace::get_stack, resolve_ksym, resolve_usym) writes
 * a stack as "\n" followed by one line per frame and nothing at all for a
 * stack that could not be read; frames are "name+offset" with a decimal
 * offset; an address that resolves to nothing prints as a C++ void*
 * ("0x55dc45dd814a"). In perf mode each line is a tab, the address in
 * bare hex, a space and the frame, with " (module)" or " ([unknown])"
 * after user frames. These were checked against bpftrace 0.17 output.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "stackfmt.h"

static int resolve(const struct stackfmt *f, uint64_t addr, struct sym *s)
{
	if (f->user) {
		if (!f->usyms)
			return -ENOENT;
		int r = usyms_lookup(f->usyms, f->pid, addr, s);
		if (r < 0 && f->site_path && addr == f->site_addr &&
		    usyms_lookup_file(f->usyms, f->site_path, f->site_vaddr,
				      s) == 0) {
			s->start = addr - s->offset;    /* run-time again */
			return 0;
		}
		return r;
	}
	return f->ksyms ? ksyms_lookup(f->ksyms, addr, s) : -ENOENT;
}

/* A pointer as libstdc++'s operator<<(const void *) writes it. */
static void put_pointer(FILE *out, uint64_t addr)
{
	if (addr)
		fprintf(out, "0x%" PRIx64, addr);
	else
		fputc('0', out);
}

int stackfmt_frame(FILE *out, const struct stackfmt *f, uint64_t addr,
		   bool show_offset, bool show_module)
{
	struct sym s;

	if (resolve(f, addr, &s) == 0 && s.name) {
		fputs(s.name, out);
		if (show_offset)
			fprintf(out, "+%" PRIu64, s.offset);
		if (show_module && f->user)
			fprintf(out, " (%s)", s.module ? s.module : "[unknown]");
	} else {
		put_pointer(out, addr);
		if (show_module && f->user)
			fputs(" ([unknown])", out);
	}
	return ferror(out) ? -EIO : 0;
}

/* A user frame as the kernel's BPF_F_USER_BUILD_ID names it: the
 * file's GNU build ID in hex and the offset in the file, read here from
 * the process's mappings; the address alone ("0x7f12ab", the kernel's
 * BPF_STACK_BUILD_ID_IP) where no file with a build ID maps it. */
static void build_id_frame(FILE *out, const struct stackfmt *f, uint64_t ip)
{
	struct umapping m;
	if (f->user && f->usyms &&
	    usyms_mapping(f->usyms, f->pid, ip, &m) == 0 && m.build_id_len) {
		for (size_t k = 0; k < m.build_id_len; k++)
			fprintf(out, "%02x", m.build_id[k]);
		fprintf(out, " 0x%" PRIx64, ip - m.start + m.pgoff);
		return;
	}
	fprintf(out, "0x%" PRIx64, ip);
}

int stackfmt_write(FILE *out, const uint64_t *ips, size_t n,
		   const struct stackfmt *f)
{
	size_t i;

	if (f->limit && n > f->limit)
		n = f->limit;
	if (n == 0)     /* bpftrace: a stack id that could not be read */
		return 0;
	fputc('\n', out);
	for (i = 0; i < n && ips[i]; i++) {
		switch (f->mode) {
		case STACK_MODE_PERF:
			fprintf(out, "\t%" PRIx64 " ", ips[i]);
			stackfmt_frame(out, f, ips[i], true, true);
			break;
		case STACK_MODE_RAW:
			fprintf(out, "%" PRIx64, ips[i]);
			break;
		case STACK_MODE_BUILD_ID:
			build_id_frame(out, f, ips[i]);
			break;
		case STACK_MODE_BPFTRACE:
		default:
			fprintf(out, "%*s", (int)f->indent, "");
			stackfmt_frame(out, f, ips[i], true, false);
			break;
		}
		fputc('\n', out);
	}
	return ferror(out) ? -EIO : 0;
}

static char *to_string(int (*fn)(FILE *, const void *, const void *, size_t),
		       const void *a, const void *b, size_t n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	int err;

	if (!m)
		return NULL;
	err = fn(m, a, b, n);
	if (fclose(m) != 0 || err < 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

static int write_stack_cb(FILE *out, const void *ips, const void *f, size_t n)
{
	return stackfmt_write(out, ips, n, f);
}

char *stackfmt_string(const uint64_t *ips, size_t n, const struct stackfmt *f)
{
	return to_string(write_stack_cb, ips, f, n);
}

int stackfmt_sym(FILE *out, const struct stackfmt *f, uint64_t addr)
{
	if (f->module_only) {
		struct sym s;
		if (resolve(f, addr, &s) != 0 || !s.name) {
			fprintf(out, "0x%" PRIx64, addr);
		} else if (!s.module) {
			fputs(f->user ? "[unknown]" : "vmlinux", out);
		} else if (f->user) {
			const char *b = strrchr(s.module, '/');
			fputs(b ? b + 1 : s.module, out);
		} else {   /* "[name]" */
			size_t n = strlen(s.module);
			if (n >= 2 && s.module[0] == '[' && s.module[n - 1] == ']')
				fprintf(out, "%.*s", (int)(n - 2), s.module + 1);
			else
				fputs(s.module, out);
		}
		return ferror(out) ? -EIO : 0;
	}
	return stackfmt_frame(out, f, addr, false, false);
}

static int write_sym_cb(FILE *out, const void *f, const void *addr, size_t n)
{
	return stackfmt_sym(out, f, *(const uint64_t *)addr);
}

char *stackfmt_sym_string(const struct stackfmt *f, uint64_t addr)
{
	return to_string(write_sym_cb, f, &addr, 0);
}
