/* mem.c - reading memory a script names (bpf_probe_read_*) without ever
 * crashing on a bad address, and the plain copies the runtime uses.
 *
 * A system call that reads safely (process_vm_readv) costs microseconds
 * in a virtual machine, as much as the kernel's uprobe trap we set out to
 * avoid, so in the traced process reads go through a copy routine whose
 * loads may fault: the agent's SIGSEGV/SIGBUS handler asks
 * rt_nofault_fixup whether the fault is inside it, and if so resumes at
 * the routine's error return (the kernel's exception tables, in user
 * space). Where there is no such handler (sonde itself), reads fall back
 * to process_vm_readv. Reads inside the running thread's stack, between
 * its stack pointer's red zone and the top of its stack mapping, cannot
 * fault and are plain copies. */
#include <errno.h>
#include <sys/uio.h>
#include <unistd.h>

#include "rt.h"

/* The fault-catching routines. Only the loads from the source can fault;
 * both resume at rt_nofault_fail, which returns -EFAULT.
 *
 *   long rt_copy_nofault(void *dst, const void *src, size_t n);
 *        0, or -EFAULT (dst partly written)
 *   long rt_strcpy_nofault(void *dst, const void *src, size_t n);
 *        bytes copied with the NUL (a string of n - 1 or more bytes is
 *        cut to n - 1 and terminated), or -EFAULT; n > 0 */
long rt_copy_nofault(void *dst, const void *src, size_t n);
long rt_strcpy_nofault(void *dst, const void *src, size_t n);
extern const char rt_nofault_start[], rt_nofault_end[], rt_nofault_fail[];

__asm__(
	".text\n"
	".p2align 4\n"
	".globl rt_copy_nofault\n"
	".hidden rt_copy_nofault\n"
	".type rt_copy_nofault,@function\n"
	"rt_copy_nofault:\n"
	"	mov %rdx, %rcx\n"
	".globl rt_nofault_start\n"
	".hidden rt_nofault_start\n"
	"rt_nofault_start:\n"
	"	rep movsb\n"
	"	xor %eax, %eax\n"
	"	ret\n"
	".size rt_copy_nofault, .-rt_copy_nofault\n"
	".globl rt_strcpy_nofault\n"
	".hidden rt_strcpy_nofault\n"
	".type rt_strcpy_nofault,@function\n"
	"rt_strcpy_nofault:\n"
	"	xor %eax, %eax\n"
	"1:	lea 1(%rax), %rcx\n"
	"	cmp %rdx, %rcx\n"
	"	jae 2f\n"
	"	movzbl (%rsi,%rax), %ecx\n"
	"	mov %cl, (%rdi,%rax)\n"
	"	inc %rax\n"
	"	test %cl, %cl\n"
	"	jnz 1b\n"
	"	ret\n"
	"2:	movb $0, (%rdi,%rax)\n"
	"	inc %rax\n"
	"	ret\n"
	".size rt_strcpy_nofault, .-rt_strcpy_nofault\n"
	".globl rt_nofault_end\n"
	".hidden rt_nofault_end\n"
	"rt_nofault_end:\n"
	".globl rt_nofault_fail\n"
	".hidden rt_nofault_fail\n"
	"rt_nofault_fail:\n"
	"	mov $-14, %rax\n"
	"	ret\n");

bool rt_nofault_fixup(uint64_t *ip)
{
	if (*ip < (uint64_t)(uintptr_t)rt_nofault_start ||
	    *ip >= (uint64_t)(uintptr_t)rt_nofault_end)
		return false;
	*ip = (uint64_t)(uintptr_t)rt_nofault_fail;
	return true;
}

#define PT_SP_INDEX 19     /* struct pt_regs: sp is the 20th word */

/* Inside the running thread's stack: from its red zone up to the top of
 * the mapping the agent found it in. */
static bool on_own_stack(const void *src, uint32_t n)
{
	const uint64_t *regs = rt_self.regs;
	if (!regs || !rt_self.stack_hi)
		return false;
	uint64_t sp = regs[PT_SP_INDEX], a = (uint64_t)(uintptr_t)src;
	if (sp < rt_self.stack_lo + 128 || sp >= rt_self.stack_hi)
		return false;
	return a >= sp - 128 && a < rt_self.stack_hi &&
	       n <= rt_self.stack_hi - a;
}

/* process_vm_readv on ourselves, n bytes or nothing. */
static int read_syscall(void *dst, const void *src, size_t n)
{
	struct iovec l = { dst, n }, r = { (void *)src, n };
	ssize_t k = process_vm_readv(getpid(), &l, 1, &r, 1, 0);
	return k == (ssize_t)n ? 0 : -EFAULT;
}

/* Kernel addresses (the upper half) are never readable here. */
static bool kernel_address(const void *src)
{
	return (uint64_t)(uintptr_t)src >= 0xffff800000000000ull;
}

int rt_read(void *dst, const void *src, uint32_t n)
{
	if (n == 0)
		return 0;
	int r;
	if (kernel_address(src)) {
		rt_memset(dst, 0, n);
		return -EFAULT;
	}
	if (on_own_stack(src, n)) {
		rt_memcpy(dst, src, n);
		return 0;
	}
	if (rt_proc.nofault)
		r = (int)rt_copy_nofault(dst, src, n);
	else
		r = read_syscall(dst, src, n);
	if (r < 0)
		rt_memset(dst, 0, n);
	return r;
}

/* Without the fault handler: page by page, as far as the string goes. */
static int read_str_syscall(uint8_t *dst, const uint8_t *src, uint32_t n)
{
	uint32_t got = 0;
	while (got < n) {
		uint64_t a = (uint64_t)(uintptr_t)(src + got);
		uint32_t chunk = (uint32_t)(4096 - (a & 4095));
		if (chunk > n - got)
			chunk = n - got;
		if (read_syscall(dst + got, src + got, chunk) < 0)
			return -EFAULT;
		for (uint32_t i = got; i < got + chunk; i++)
			if (dst[i] == 0)
				return (int)i + 1;
		got += chunk;
	}
	dst[n - 1] = 0;
	return (int)n;
}

int rt_read_str(void *dst, const void *src, uint32_t n)
{
	if (n == 0)
		return 0;
	int r;
	if (kernel_address(src))
		r = -EFAULT;
	else if (rt_proc.nofault)
		r = (int)rt_strcpy_nofault(dst, src, n);
	else
		r = read_str_syscall(dst, src, n);
	if (r < 0)
		rt_memset(dst, 0, n);
	return r;
}

/* The compiler must not turn these loops back into calls to memcpy and
 * memset. */
#define NO_LIBCALLS __attribute__((optimize("no-tree-loop-distribute-patterns")))

typedef uint64_t __attribute__((aligned(1), may_alias)) u64u;

NO_LIBCALLS void rt_memcpy(void *dst, const void *src, size_t n)
{
	uint8_t *d = dst;
	const uint8_t *s = src;
	for (; n >= 8; n -= 8, d += 8, s += 8)
		*(u64u *)d = *(const u64u *)s;
	for (; n; n--)
		*d++ = *s++;
}

NO_LIBCALLS void rt_memset(void *dst, int c, size_t n)
{
	uint8_t *d = dst;
	uint64_t w = (uint8_t)c * 0x0101010101010101ull;
	for (; n >= 8; n -= 8, d += 8)
		*(u64u *)d = w;
	for (; n; n--)
		*d++ = (uint8_t)c;
}

NO_LIBCALLS bool rt_memeq(const void *a, const void *b, size_t n)
{
	const uint8_t *x = a, *y = b;
	for (; n >= 8; n -= 8, x += 8, y += 8)
		if (*(const u64u *)x != *(const u64u *)y)
			return false;
	for (; n; n--)
		if (*x++ != *y++)
			return false;
	return true;
}
