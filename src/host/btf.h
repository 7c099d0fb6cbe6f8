/* btf.h - kernel functions and their arguments, from the kernel's BTF
 * (/sys/kernel/btf/vmlinux), for fentry/fexit probes and their listing.
 * The surface is libbpf-free so providers and the compiler can use it;
 * host/btf.c is the only code that reads BTF. */
#ifndef SONDE_HOST_BTF_H
#define SONDE_HOST_BTF_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define KFUNC_MAX_ARGS 12     /* MAX_BPF_FUNC_ARGS */

/* One argument (or the return value) as the trampoline passes it: in
 * 8-byte slots of the program's context, from slot 0 on. */
struct kfunc_arg {
	const char *name;       /* BTF parameter name; "retval" for the result */
	char decl[96];          /* its C type as bpftrace lists it: "struct file *" */
	uint32_t size;          /* bytes (a struct passed by value may be 16) */
	uint32_t slot;          /* first 8-byte slot in the context */
	bool is_signed, is_ptr;
	bool is_scalar;         /* integer, enum or pointer of at most 8 bytes */
};

struct kfunc_info {
	const char *name;       /* valid as long as the process runs */
	uint32_t btf_id;        /* the FUNC's id in vmlinux BTF */
	uint32_t nargs;
	struct kfunc_arg args[KFUNC_MAX_ARGS];
	bool has_ret;           /* not void */
	struct kfunc_arg ret;   /* slot: right after the last argument */
};

/* Look a function up. 0, -ENOENT when vmlinux BTF has no such function,
 * -EOPNOTSUPP when the kernel has no BTF, -E2BIG when it takes more
 * arguments than a trampoline can pass. The kernel's BTF is read once
 * per process and kept (it is immutable while the system runs). */
int kbtf_func(const char *name, struct kfunc_info *out);

/* Call FN for every function of vmlinux BTF whose name matches the glob
 * PATTERN ('*' and '?'), in name order, each once. (Whether the kernel
 * lets one be traced is the caller's question: tracefs knows.) Stops
 * early when FN returns non-zero and returns that value; 0 when done,
 * or -errno. */
int kbtf_funcs_each(const char *pattern,
		    int (*fn)(void *arg, const char *name), void *arg);

/* -l 'struct NAME' (also union, enum; NAME may hold '*' and '?'): the
 * kernel's types of that name, one "struct NAME" line each, or with
 * `verbose` (-lv) each one's C definition as libbpf's btf_dump writes
 * it, as bpftrace lists them. Returns how many, 0 when DECL names no
 * type kind or nothing matches, or -errno. */
int kbtf_types_print(const char *decl, bool verbose, FILE *out);
/* A raw tracepoint's arguments (bpftrace 0.2x's rawtracepoint args),
 * from the function __bpf_trace_EVENT of vmlinux BTF: its parameters
 * after the first (the tracepoint's data), one 8-byte slot each. 0,
 * -ENOENT for no such tracepoint, -EOPNOTSUPP without BTF. */
int kbtf_rawtp(const char *event, struct kfunc_info *out);
/* Call FN for every raw tracepoint of vmlinux BTF whose name matches the
 * glob, in name order; as kbtf_funcs_each. */
int kbtf_rawtps_each(const char *pattern,
		     int (*fn)(void *arg, const char *event), void *arg);

/* The kernel's BTF as a resolver of C types (types.h) for one program,
 * allocated in `a`: struct/union/enum tags, typedefs, enum constants and
 * lazily followed pointees, from vmlinux (or the file BPFTRACE_BTF
 * names), then the modules' BTF. Nothing is read until a lookup needs
 * it; the BTF objects are kept for the process. */
struct arena;
struct ctype_resolver;
const struct ctype_resolver *kbtf_resolver(struct arena *a);
/* Whether a lookup has loaded the kernel's BTF (for tests). */
bool kbtf_loaded(void);

#endif
