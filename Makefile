# sonde - one non-recursive Makefile.
#   make               build/sonde
#   make check         every test (unit, golden, system as root, differential)
#   make check-kernel  the kernel tier: kernel-probe tests on Debian 12's
#                      6.1 kernel under qemu (scripts/vm-run)
#   make demo          install missing packages, build, run a demo
#   make SANITIZE=1    ASan+UBSan build in build-san/ (tests pass there too)
#   make WERROR=1      warnings are errors (CI)
#   make fuzz          libFuzzer targets in build/fuzz/

CC      ?= cc
BUILD   ?= build
CFLAGS  ?= -O2 -g
CFLAGS  += -std=gnu11 -Wall -Wextra -Wshadow -Wno-unused-parameter \
           -Wno-missing-field-initializers -D_GNU_SOURCE -MMD -MP
LDLIBS  += -lbpf -lelf -ldw -lz -lZydis -lpcap

ifeq ($(WERROR),1)
CFLAGS  += -Werror
endif
ifeq ($(SANITIZE),1)
BUILD   := build-san
CFLAGS  += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDFLAGS += -fsanitize=address,undefined
endif

# Every .c under src/ is part of sonde, except the program entry point
# and the in-process agent (built separately, below).
LIB_SRCS  := $(filter-out src/main.c src/agent/%, $(wildcard src/*.c src/*/*.c))
LIB_OBJS  := $(LIB_SRCS:%.c=$(BUILD)/%.o)
MAIN_OBJ  := $(BUILD)/src/main.o
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/%)
# tests/progs/lib*.c are shared objects (loaded into processes by tests).
HELPER_SO_SRCS := $(wildcard tests/progs/lib*.c)
HELPER_SRCS := $(filter-out $(HELPER_SO_SRCS), $(wildcard tests/progs/*.c))
HELPER_CXX_SRCS := $(wildcard tests/progs/*.cc)
HELPER_BINS := $(HELPER_SRCS:tests/progs/%.c=$(BUILD)/tests/progs/%) \
               $(HELPER_CXX_SRCS:tests/progs/%.cc=$(BUILD)/tests/progs/%) \
               $(HELPER_SO_SRCS:tests/progs/%.c=$(BUILD)/tests/progs/%.so)

.PHONY: all check check-kernel demo clean fuzz unit bench
all: $(BUILD)/sonde $(BUILD)/libsonde-agent.so

$(BUILD)/sonde: $(MAIN_OBJ) $(BUILD)/libsonde.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/libsonde.a: $(LIB_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Iinclude -c -o $@ $<

# The agent the process engine loads into a traced program (LD_PRELOAD):
# its own files, the runtime and the VM, position-independent, every
# symbol hidden but its entry point, thread-locals in the static TLS
# block (a hit reads them in a few instructions), and no vector register
# anywhere (a probe site may hold live values in them). Never built with
# the sanitizers: it runs inside programs that are not.
AGENT_SRCS := $(wildcard src/agent/*.c src/runtime/*.c src/vm/*.c)
AGENT_OBJS := $(AGENT_SRCS:%.c=$(BUILD)/agent/%.o)
AGENT_CFLAGS := -O2 -g -std=gnu11 -Wall -Wextra -Wshadow -Wno-unused-parameter \
		-Wno-missing-field-initializers -D_GNU_SOURCE -MMD -MP -fPIC \
		-fvisibility=hidden -ftls-model=initial-exec -mgeneral-regs-only \
		-fno-tree-loop-distribute-patterns -fno-plt
ifeq ($(WERROR),1)
AGENT_CFLAGS += -Werror
endif

$(BUILD)/agent/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(AGENT_CFLAGS) -Iinclude -c -o $@ $<

$(BUILD)/libsonde-agent.so: $(AGENT_OBJS)
	$(CC) -shared -Wl,-z,now -Wl,-z,relro -Wl,--no-undefined -o $@ $^ -lpthread

$(BUILD)/tests/%: tests/unit/%.c tests/unit/unit.h $(BUILD)/libsonde.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Iinclude -Isrc $(LDFLAGS) -o $@ $< $(BUILD)/libsonde.a $(LDLIBS)

# Programs that system tests trace (built with frame pointers, -O0 so
# every function is a real call; PROG_FLAGS_name overrides that for the
# few that must look like distribution binaries).
PROG_FLAGS_unwind_target := -O2 -fomit-frame-pointer
PROG_FLAGS_unwind_target_fp := -g0 -O2 -fno-omit-frame-pointer -fno-asynchronous-unwind-tables -fno-unwind-tables
PROG_FLAGS_cpu_hot_nofp := -O2 -fomit-frame-pointer
PROG_FLAGS_watch_target := -no-pie
PROG_FLAGS_static_sleep := -static
$(BUILD)/tests/progs/%: tests/progs/%.c $(wildcard include/sonde/sdt.h)
	@mkdir -p $(dir $@)
	$(CC) -O0 -g -fno-omit-frame-pointer $(PROG_FLAGS_$*) -Iinclude -o $@ $<

$(BUILD)/tests/progs/%: tests/progs/%.cc $(wildcard include/sonde/sdt.h)
	@mkdir -p $(dir $@)
	$(CXX) -O0 -g -fno-omit-frame-pointer $(PROG_FLAGS_$*) -Iinclude -o $@ $<

# a stand-in agent keeps to the agent's rule: no vector registers
PROG_FLAGS_libfprobe_test := -mgeneral-regs-only
$(BUILD)/tests/progs/%.so: tests/progs/%.c $(wildcard src/agent/*.[ch])
	@mkdir -p $(dir $@)
	$(CC) -O1 -g -shared -fPIC $(PROG_FLAGS_$*) -o $@ $<

unit: $(UNIT_BINS)

check: $(BUILD)/sonde $(BUILD)/libsonde-agent.so $(UNIT_BINS) $(HELPER_BINS)
	BUILD=$(BUILD) tests/run

check-kernel: $(BUILD)/sonde $(BUILD)/libsonde-agent.so $(HELPER_BINS)
	BUILD=$(BUILD) tests/kernel/check

demo: 
	./scripts/setup-deps
	$(MAKE) $(BUILD)/sonde
	./scripts/demo $(BUILD)/sonde

fuzz:
	$(MAKE) -f tests/fuzz/Makefile.fuzz

bench: $(BUILD)/sonde
	bench/run

clean:
	rm -rf build build-san

-include $(LIB_OBJS:.o=.d) $(MAIN_OBJ:.o=.d) $(UNIT_BINS:=.d) $(AGENT_OBJS:.o=.d)
