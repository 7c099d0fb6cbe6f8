/* unwind_target.c - captures its own registers and stack at a known depth, as a probe would, for the unwinder's tests. */

/*
 * Built -O2 -fomit-frame-pointer (see PROG_FLAGS_unwind_target in the
 * Makefile) so only CFI can unwind it. main -> unwind_a -> unwind_b ->
 * unwind_c; unwind_c records its registers with inline asm, copies up to
 * 16 KiB of stack from its rsp (what bpf_probe_read_user would copy) and
 * writes them with /proc/self/maps to the file named by argv[1]:
 *
 *   "SONDECAP" | u64 regs[17] (ip sp bp ax bx cx dx si di r8..r15)
 *   | u64 stack_len | stack bytes | u64 maps_len | maps text
 *
 * unwind_b keeps six values live across its call so the compiler uses
 * every callee-saved register, rbp included: a frame-pointer walk cannot
 * get through it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STACK_COPY 16384

static struct {
	uint64_t ip, sp, bp, ax, bx, cx, dx, si, di;
	uint64_t r8, r9, r10, r11, r12, r13, r14, r15;
} regs;
static unsigned char stack_copy[STACK_COPY];
static char maps[1 << 16];
static const char *out_path;

/* The end of the [stack] mapping holding SP, so the copy stays in it. */
static uint64_t stack_end(uint64_t sp, const char *text)
{
	const char *line = text;

	while (line && *line) {
		unsigned long long lo, hi;

		if (sscanf(line, "%llx-%llx", &lo, &hi) == 2 && sp >= lo && sp < hi)
			return hi;
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return sp;
}

static void write_capture(size_t len, size_t maps_len)
{
	FILE *f = fopen(out_path, "w");
	uint64_t n;

	if (!f) {
		perror(out_path);
		exit(1);
	}
	fwrite("SONDECAP", 1, 8, f);
	fwrite(&regs, sizeof(regs), 1, f);
	n = len;
	fwrite(&n, sizeof(n), 1, f);
	fwrite(stack_copy, 1, len, f);
	n = maps_len;
	fwrite(&n, sizeof(n), 1, f);
	fwrite(maps, 1, maps_len, f);
	if (fclose(f) != 0) {
		perror(out_path);
		exit(1);
	}
}

__attribute__((noinline, noclone)) int unwind_c(int x)
{
	volatile char pad[64];
	size_t len, maps_len = 0;
	uint64_t end;
	FILE *f;

	pad[x & 63] = (char)x;
	__asm__ volatile(
		"lea 0(%%rip), %%rax\n\t"
		"mov %%rax, 0(%0)\n\t"
		"mov %%rsp, 8(%0)\n\t"
		"mov %%rbp, 16(%0)\n\t"
		"mov %%rbx, 32(%0)\n\t"
		"mov %%rcx, 40(%0)\n\t"
		"mov %%rdx, 48(%0)\n\t"
		"mov %%rsi, 56(%0)\n\t"
		"mov %%rdi, 64(%0)\n\t"
		"mov %%r8, 72(%0)\n\t"
		"mov %%r9, 80(%0)\n\t"
		"mov %%r10, 88(%0)\n\t"
		"mov %%r11, 96(%0)\n\t"
		"mov %%r12, 104(%0)\n\t"
		"mov %%r13, 112(%0)\n\t"
		"mov %%r14, 120(%0)\n\t"
		"mov %%r15, 128(%0)\n\t"
		: : "r"(&regs) : "rax", "memory");
	/* the copy happens after the capture; what it copies (return
	 * addresses, saved registers) does not change in between */
	f = fopen("/proc/self/maps", "r");
	if (f) {
		maps_len = fread(maps, 1, sizeof(maps) - 1, f);
		fclose(f);
	}
	maps[maps_len] = '\0';
	end = stack_end(regs.sp, maps);
	len = end - regs.sp < STACK_COPY ? end - regs.sp : STACK_COPY;
	memcpy(stack_copy, (const void *)(uintptr_t)regs.sp, len);
	write_capture(len, maps_len);
	return pad[x & 63] + x;
}

__attribute__((noinline, noclone)) int unwind_b(int x)
{
	/* six values live across the call: rbx rbp r12-r15 all in use */
	int v1 = x * 3, v2 = x ^ 0x55, v3 = x + 17, v4 = x * x, v5 = x - 9, v6 = x << 3;
	int r = unwind_c(x + 1);

	__asm__ volatile("" : "+r"(v1), "+r"(v2), "+r"(v3), "+r"(v4), "+r"(v5), "+r"(v6));
	return r + v1 + v2 + v3 + v4 + v5 + v6;
}

__attribute__((noinline, noclone)) int unwind_a(int x)
{
	char buf[300];
	int r;

	snprintf(buf, sizeof(buf), "%d", x);
	r = unwind_b((int)strlen(buf) + x);
	return r * 3 + buf[0];
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: unwind_target CAPTURE_FILE\n");
		return 2;
	}
	out_path = argv[1];
	return unwind_a(argc) > 0 ? 0 : 1;
}
