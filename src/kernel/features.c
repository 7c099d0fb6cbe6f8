/* features.c - what this kernel's BPF can do, asked of the kernel (tiny
 * programs loaded and maps created, then closed), never read from a
 * version number: for --info, whose sections tools read to decide what
 * to run (bpftrace 0.17's `--info`). Each answer costs a few system
 * calls; nothing is cached because --info asks each once. */
#include "features.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/bpf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine_int.h"

#define INSN(c, d, s, o, i) \
	((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), \
			    .off = (o), .imm = (i) })
#define MOV_IMM(d, i) INSN(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define MOV_REG(d, s) INSN(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define ADD_IMM(d, i) INSN(BPF_ALU64 | BPF_ADD | BPF_K, d, 0, 0, i)
#define LDX_DW(d, s, o) INSN(BPF_LDX | BPF_MEM | BPF_DW, d, s, o, 0)
#define ST_DW(d, o, i) INSN(BPF_ST | BPF_MEM | BPF_DW, d, 0, o, i)
#define CALL(h) INSN(BPF_JMP | BPF_CALL, 0, 0, 0, h)
#define EXIT() INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

static bool load_ok(enum bpf_prog_type type, const struct bpf_insn *insns,
		    size_t n, const struct bpf_prog_load_opts *o)
{
	int fd = bpf_prog_load(type, "sonde_feature", "GPL", insns, n, o);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

bool kfeat_helper(int prog_type, int helper)
{
	return libbpf_probe_bpf_helper(prog_type, helper, NULL) == 1;
}

bool kfeat_map(int map_type)
{
	return libbpf_probe_bpf_map_type(map_type, NULL) == 1;
}

bool kfeat_prog(int prog_type)
{
	return libbpf_probe_bpf_prog_type(prog_type, NULL) == 1;
}

bool kfeat_btf(void)
{
	struct btf *b = btf__load_vmlinux_btf();
	if (!b)
		return false;
	btf__free(b);
	return true;
}

/* The BTF id of a kernel function, or -errno. */
static int func_btf_id(const char *name)
{
	struct btf *b = btf__load_vmlinux_btf();
	if (!b)
		return -ENOENT;
	int id = btf__find_by_name_kind(b, name, BTF_KIND_FUNC);
	btf__free(b);
	return id;
}

/* A BTF tracing program (fentry, or iter with `iter`) attached to `func`
 * that runs `insns`: does the kernel load it? */
static bool tracing_ok(const char *func, enum bpf_attach_type type,
		       const struct bpf_insn *insns, size_t n)
{
	int id = func_btf_id(func);
	if (id < 0)
		return false;
	LIBBPF_OPTS(bpf_prog_load_opts, o, .expected_attach_type = type,
		    .attach_btf_id = (uint32_t)id);
	return load_ok(BPF_PROG_TYPE_TRACING, insns, n, &o);
}

bool kfeat_fentry(void)
{
	const struct bpf_insn p[] = { MOV_IMM(0, 0), EXIT() };
	return tracing_ok("vfs_read", BPF_TRACE_FENTRY, p, 2);
}

bool kfeat_iter(const char *target)
{
	char name[64];
	snprintf(name, sizeof(name), "bpf_iter_%s", target);
	const struct bpf_insn p[] = { MOV_IMM(0, 0), EXIT() };
	return tracing_ok(name, BPF_TRACE_ITER, p, 2);
}

/* bpf_d_path from fentry on dentry_open(const struct path *, ...), a
 * function the kernel lets call it. */
bool kfeat_dpath(void)
{
	const struct bpf_insn p[] = {
		LDX_DW(1, 1, 0),                /* r1 = path (argument 0) */
		MOV_REG(2, 10), ADD_IMM(2, -16), MOV_IMM(3, 16),
		ST_DW(10, -16, 0), ST_DW(10, -8, 0),
		CALL(BPF_FUNC_d_path), MOV_IMM(0, 0), EXIT(),
	};
	return tracing_ok("dentry_open", BPF_TRACE_FENTRY, p,
			  sizeof(p) / sizeof(p[0]));
}

/* bpf_skb_output from fentry on consume_skb(struct sk_buff *). */
bool kfeat_skboutput(void)
{
	int map = bpf_map_create(BPF_MAP_TYPE_PERF_EVENT_ARRAY, "sonde_feature",
				 4, 4, 1, NULL);
	if (map < 0)
		return false;
	const struct bpf_insn p[] = {
		LDX_DW(1, 1, 0),                /* r1 = skb (argument 0) */
		INSN(BPF_LD | BPF_DW | BPF_IMM, 2, BPF_PSEUDO_MAP_FD, 0, map),
		INSN(0, 0, 0, 0, 0),
		MOV_IMM(3, 0), ST_DW(10, -8, 0),
		MOV_REG(4, 10), ADD_IMM(4, -8), MOV_IMM(5, 8),
		CALL(BPF_FUNC_skb_output), MOV_IMM(0, 0), EXIT(),
	};
	bool ok = tracing_ok("consume_skb", BPF_TRACE_FENTRY, p,
			     sizeof(p) / sizeof(p[0]));
	close(map);
	return ok;
}

/* A program longer than the old 4096-instruction limit. */
uint32_t kfeat_insn_limit(void)
{
	enum { N = 4097 + 1 };
	struct bpf_insn *p = calloc(N, sizeof(*p));
	if (!p)
		return 4096;
	for (int i = 0; i < N - 1; i++)
		p[i] = MOV_IMM(0, 0);
	p[N - 1] = EXIT();
	bool big = load_ok(BPF_PROG_TYPE_SOCKET_FILTER, p, N, NULL);
	free(p);
	return big ? 1000000 : 4096;
}

/* A bounded loop (a backward jump), which kernels before 5.3 refuse. */
bool kfeat_loops(void)
{
	const struct bpf_insn p[] = {
		MOV_IMM(0, 0),
		ADD_IMM(0, 1),
		INSN(BPF_JMP | BPF_JLT | BPF_K, 0, 0, -2, 4),
		MOV_IMM(0, 0), EXIT(),
	};
	return load_ok(BPF_PROG_TYPE_SOCKET_FILTER, p, sizeof(p) / sizeof(p[0]),
		       NULL);
}

/* BPF_MAP_LOOKUP_BATCH on an empty hash map: ENOENT when the kernel has
 * batch operations. */
bool kfeat_map_batch(void)
{
	int map = bpf_map_create(BPF_MAP_TYPE_HASH, "sonde_feature", 4, 4, 1,
				 NULL);
	if (map < 0)
		return false;
	uint32_t keys[1], vals[1], count = 1, out;
	int r = bpf_map_lookup_batch(map, NULL, &out, keys, vals, &count, NULL);
	close(map);
	return r == 0 || r == -ENOENT;
}

/* BPF_PROG_TEST_RUN of a raw tracepoint program: how BEGIN and END run. */
bool kfeat_raw_tp_test_run(void)
{
	const struct bpf_insn p[] = { MOV_IMM(0, 0), EXIT() };
	int fd = bpf_prog_load(BPF_PROG_TYPE_RAW_TRACEPOINT, "sonde_feature",
			       "GPL", p, 2, NULL);
	if (fd < 0)
		return false;
	uint64_t ctx[1] = { 0 };
	LIBBPF_OPTS(bpf_test_run_opts, o, .ctx_in = ctx,
		    .ctx_size_in = sizeof(ctx));
	int r = bpf_prog_test_run_opts(fd, &o);
	close(fd);
	return r == 0;
}

bool kfeat_multi(bool uprobes)
{
	return engine_probe_multi(uprobes ? MULTI_UPROBE : MULTI_KPROBE);
}
