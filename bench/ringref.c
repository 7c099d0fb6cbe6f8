/* ringref.c - the kernel's part of a printf per hit, measured without
 * sonde: bench/floor runs bench/hammer.c under it as it runs it under
 * sonde and bpftrace, and the difference is what the kernel itself
 * charges the traced thread on this machine.
 *
 *   ringref empty  -- CMD...   an empty program on the tracepoint
 *   ringref output -- CMD...   a 24-byte record per hit into a BPF ring
 *                               (bpf_ringbuf_output, no wake-up: the
 *                               reader drains it every 10 ms, as sonde's)
 *
 * The program is attached to syscalls:sys_enter_getppid as sonde attaches
 * a tracepoint (one perf event, a BPF link) and filters on CMD's process
 * as `/pid == cpid/` does; CMD is started once it is attached and ended
 * with it. Prints "delivered N" (records read) on stdout. Needs root. */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define TP "/sys/kernel/tracing/events/syscalls/sys_enter_getppid/id"

#define INSN(c, d, s, o, i) \
	((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), \
			    .off = (o), .imm = (i) })

static unsigned long long delivered;

static int on_record(void *ctx, void *data, size_t size)
{
	(void)ctx;
	(void)data;
	(void)size;
	delivered++;
	return 0;
}

static int die(const char *what)
{
	fprintf(stderr, "ringref: %s: %s\n", what, strerror(errno));
	return 1;
}

int main(int argc, char **argv)
{
	if (argc < 4 || strcmp(argv[2], "--") != 0 ||
	    (strcmp(argv[1], "empty") && strcmp(argv[1], "output"))) {
		fprintf(stderr, "usage: ringref empty|output -- CMD [ARGS]\n");
		return 2;
	}
	bool output = strcmp(argv[1], "output") == 0;
	int go[2];
	if (pipe(go) < 0)
		return die("pipe");
	pid_t child = fork();
	if (child == 0) {           /* waits until the program is attached */
		char c;
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		execvp(argv[3], argv + 3);
		_exit(127);
	}
	close(go[0]);

	int ring = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "ringref", 0, 0,
				  4u << 20, NULL);
	if (ring < 0)
		return die("ring");
	struct bpf_insn out[] = {
		INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_get_current_pid_tgid),
		INSN(BPF_ALU64 | BPF_MOV | BPF_X, 1, 0, 0, 0),
		INSN(BPF_ALU64 | BPF_RSH | BPF_K, 1, 0, 0, 32),
		INSN(BPF_JMP | BPF_JNE | BPF_K, 1, 0, 13, (int)child),
		INSN(BPF_ALU64 | BPF_LSH | BPF_K, 0, 0, 0, 32),
		INSN(BPF_ALU64 | BPF_RSH | BPF_K, 0, 0, 0, 32),
		INSN(BPF_ST | BPF_MEM | BPF_DW, 10, 0, -24, 0),   /* format id */
		INSN(BPF_STX | BPF_MEM | BPF_DW, 10, 0, -16, 0),  /* tid */
		INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_ktime_get_ns),
		INSN(BPF_STX | BPF_MEM | BPF_DW, 10, 0, -8, 0),   /* nsecs */
		INSN(BPF_LD | BPF_IMM | BPF_DW, 1, BPF_PSEUDO_MAP_FD, 0, ring),
		INSN(0, 0, 0, 0, 0),
		INSN(BPF_ALU64 | BPF_MOV | BPF_X, 2, 10, 0, 0),
		INSN(BPF_ALU64 | BPF_ADD | BPF_K, 2, 0, 0, -24),
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, 3, 0, 0, 24),
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, 4, 0, 0, BPF_RB_NO_WAKEUP),
		INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_ringbuf_output),
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0),
		INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	};
	struct bpf_insn empty[] = {
		INSN(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0),
		INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	};
	char log[65536];
	LIBBPF_OPTS(bpf_prog_load_opts, lo, .log_buf = log,
		    .log_size = sizeof(log), .log_level = 1);
	int prog = bpf_prog_load(BPF_PROG_TYPE_TRACEPOINT, "ringref", "GPL",
				 output ? out : empty,
				 output ? sizeof(out) / sizeof(*out) : 2, &lo);
	if (prog < 0) {
		fprintf(stderr, "%s", log);
		return die("program");
	}

	FILE *f = fopen(TP, "r");
	unsigned long long id = 0;
	if (!f || fscanf(f, "%llu", &id) != 1)
		return die(TP);
	fclose(f);
	struct perf_event_attr a = {
		.type = PERF_TYPE_TRACEPOINT, .size = sizeof(a), .config = id,
		.sample_period = 1, .wakeup_events = 1,
	};
	int pfd = (int)syscall(__NR_perf_event_open, &a, -1, 0, -1,
			       PERF_FLAG_FD_CLOEXEC);
	if (pfd < 0)
		return die("perf_event_open");
	int link = bpf_link_create(prog, pfd, BPF_PERF_EVENT, NULL);
	if (link < 0 || ioctl(pfd, PERF_EVENT_IOC_ENABLE, 0) < 0)
		return die("attach");
	struct ring_buffer *rb = ring_buffer__new(ring, on_record, NULL, NULL);
	if (!rb)
		return die("ring reader");

	if (write(go[1], "g", 1) != 1)
		return die("start");
	close(go[1]);
	int status = 0;
	for (;;) {
		/* records come without a wake-up: read on the timer */
		ring_buffer__poll(rb, 10);
		ring_buffer__consume(rb);
		pid_t r = waitpid(child, &status, WNOHANG);
		if (r == child || (r < 0 && errno != EINTR))
			break;
	}
	ring_buffer__consume(rb);
	close(link);
	close(pfd);
	ring_buffer__free(rb);
	printf("delivered %llu\n", delivered);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
