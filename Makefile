# regionpm: top-level build.
#
#   make              user space (daemon, CLI, test programs)
#   make kernel       patched Linux 6.12 test kernel (cached; KERNEL_VARIANT=debug)
#   make check        everything, unit tests, then the in-VM tests
#   make demo         the main job (see README.md)
#   make vm-shell     interactive guest on the test kernel
#   make deps         install the Debian packages needed (idempotent)
#   make clean        remove build output in this tree (the kernel cache stays)
#
# Kernel source, build trees and ccache live in $(REGIONPM_CACHE), outside the
# repo, so a fresh clone reuses them.  The kernel is only rebuilt when
# something under kernel/ (or the build scripts) changed.

REGIONPM_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/regionpm
KERNEL_VARIANT ?= default
VM_MEM ?= 2G
VM_CPUS ?= 2
export REGIONPM_CACHE

BUILD := build
KSRC := $(REGIONPM_CACHE)/src/linux-6.12
CC ?= cc
CFLAGS ?= -O2 -g
CFLAGS += -std=gnu11 -Wall -Wextra -Werror
CPPFLAGS += -Iinclude/uapi

TEST_PROGS := $(BUILD)/tests/regionpm_test $(BUILD)/tools/kpageflags-regions \
	$(BUILD)/tools/regionpm-dumpbench

.PHONY: all kernel kernel-src check check-debug demo bench vm-shell deps clean \
	distclean-cache regen regen-check kernel-series mm-selftests

all: daemon $(TEST_PROGS) mm-selftests

# ---- regionpmd -------------------------------------------------------------
# daemon/regionpmd.c is the entry point, daemon/test-*.c are unit tests
# (cmocka, TAP output), everything else in daemon/ goes into one static
# library that both link.  Libraries are found with pkg-config.
DAEMON_PKGS := libmnl libsystemd inih libcgroup
DAEMON_MAIN := daemon/regionpmd.c
DAEMON_TEST_SRCS := $(wildcard daemon/test-*.c)
DAEMON_LIB_SRCS := $(filter-out $(DAEMON_MAIN) $(DAEMON_TEST_SRCS),$(wildcard daemon/*.c))
DAEMON_LIB_OBJS := $(DAEMON_LIB_SRCS:daemon/%.c=$(BUILD)/daemon/%.o)
DAEMON_TESTS := $(DAEMON_TEST_SRCS:daemon/%.c=$(BUILD)/daemon/%)
DAEMON_CFLAGS = $(shell pkg-config --cflags $(DAEMON_PKGS)) -D_GNU_SOURCE -MMD -MP
DAEMON_LIBS = $(shell pkg-config --libs $(DAEMON_PKGS))

.PHONY: daemon
daemon: $(if $(wildcard $(DAEMON_MAIN)),$(BUILD)/regionpmd) $(DAEMON_TESTS)

$(BUILD)/daemon/%.o: daemon/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(DAEMON_CFLAGS) $(CFLAGS) -c -o $@ $<

$(BUILD)/daemon/libregionpmd.a: $(DAEMON_LIB_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

$(BUILD)/regionpmd: $(BUILD)/daemon/regionpmd.o $(BUILD)/daemon/libregionpmd.a
	$(CC) $(CFLAGS) -o $@ $^ $(DAEMON_LIBS) -lm

$(BUILD)/daemon/test-%: $(BUILD)/daemon/test-%.o $(BUILD)/daemon/libregionpmd.a
	$(CC) $(CFLAGS) -o $@ $^ $(DAEMON_LIBS) $(shell pkg-config --libs cmocka) -lm

-include $(wildcard $(BUILD)/daemon/*.d)

# The unpacked kernel source provides kselftest_harness.h and the mm tests.
kernel-src:
	@scripts/kernel-src.sh

$(BUILD)/tests/regionpm_test: tests/kselftest/regionpm_test.c include/uapi/linux/regionpm.h | kernel-src
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -I$(KSRC)/tools/testing/selftests -D_GNU_SOURCE $(CFLAGS) \
		-o $@ $< $(shell pkg-config --libs libmnl)

$(BUILD)/tools/kpageflags-regions: tests/tools/kpageflags-regions.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $<

$(BUILD)/tools/regionpm-dumpbench: tests/tools/regionpm-dumpbench.c include/uapi/linux/regionpm.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(shell pkg-config --libs libmnl)

mm-selftests: | kernel-src
	@scripts/build-mm-selftests.sh $(BUILD)/mm-selftests

# Generated from the netlink spec with the kernel's ynl-gen-c.py.
regen:
	@scripts/regen.sh

regen-check:
	@scripts/regen.sh --check

# git format-patch series against pristine 6.12, checked by checkpatch.pl --strict.
kernel-series:
	@scripts/kernel-series.sh $(BUILD)/kernel-series

deps:
	@scripts/deps.sh

kernel:
	@scripts/kernel-build.sh $(KERNEL_VARIANT) >/dev/null

check: deps
	@$(MAKE) --no-print-directory all kernel
	@tests/run-checks

# The kselftest once more on the debug kernel (lockdep, KASAN, DEBUG_VM,
# DEBUG_PAGEALLOC): run-vm fails the suite on any splat in the console.
check-debug: deps
	@$(MAKE) --no-print-directory all
	@scripts/kernel-build.sh debug >/dev/null
	@REGIONPM_SUITES=kernel-regionpm-debug tests/run-checks

demo: deps
	@$(MAKE) --no-print-directory all kernel
	@scripts/demo.sh

vm-shell: kernel
	@tests/vm/run-vm --variant $(KERNEL_VARIANT) --mem $(VM_MEM) --cpus $(VM_CPUS) --shell

clean:
	rm -rf $(BUILD)

# Drops the cached kernel source, build trees and ccache (slow to rebuild).
distclean-cache:
	rm -rf $(REGIONPM_CACHE)
