/* features.h - what this kernel's BPF can do, asked of the kernel itself
 * (features.c): for --info. Plain C: callers need no libbpf. */
#ifndef SONDE_KERNEL_FEATURES_H
#define SONDE_KERNEL_FEATURES_H

#include <stdbool.h>
#include <stdint.h>

/* A helper (BPF_FUNC_*) in a program type (BPF_PROG_TYPE_*), a map type,
 * a program type. */
bool kfeat_helper(int prog_type, int helper);
bool kfeat_map(int map_type);
bool kfeat_prog(int prog_type);
bool kfeat_btf(void);                 /* the kernel's BTF loads */
bool kfeat_fentry(void);              /* fentry programs load */
bool kfeat_iter(const char *target);  /* iter:task, iter:task_file ... */
bool kfeat_dpath(void);               /* bpf_d_path where it is allowed */
bool kfeat_skboutput(void);           /* bpf_skb_output from fentry */
uint32_t kfeat_insn_limit(void);      /* 1000000 or 4096 */
bool kfeat_loops(void);               /* bounded loops */
bool kfeat_map_batch(void);           /* BPF_MAP_LOOKUP_BATCH */
bool kfeat_raw_tp_test_run(void);     /* how BEGIN and END run */
bool kfeat_multi(bool uprobes);       /* kprobe_multi / uprobe_multi links */

#endif
