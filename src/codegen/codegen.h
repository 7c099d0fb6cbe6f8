/* codegen.h - AST (annotated by sema) to eBPF instructions, one program
 * per expanded probe; and the disassembler behind --dump=bpf. */
#ifndef SONDE_CODEGEN_H
#define SONDE_CODEGEN_H

#include <stdio.h>

#include "../base/diag.h"
#include "../lang/ast.h"
#include "../program.h"

/* Generate prog->probes[i].insns for every probe from its block in
 * `root`. Returns 0 or -errno with diagnostics in `d` (e.g. a program too
 * large, a stack that does not fit). */
int codegen_program(const struct node *root, struct program *prog,
		    struct diags *d);

/* One line per instruction, in the kernel's own notation:
 *   "   0: (bf) r6 = r1"  */
void bpf_disasm(FILE *out, const struct bpf_insn *insns, uint32_t n);
/* --dump=bpf for a whole program: each probe's name, then its code. */
void program_dump_bpf(FILE *out, const struct program *prog);

#endif
