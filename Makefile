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
CC ?= cc
CFLAGS ?= -O2 -g
CFLAGS += -std=gnu11 -Wall -Wextra -Werror
CPPFLAGS += -Iinclude/uapi

.PHONY: all kernel check unit-check vm-check demo bench vm-shell deps clean \
	distclean-cache

all:
	@mkdir -p $(BUILD)

deps:
	@scripts/deps.sh

kernel:
	@scripts/kernel-build.sh $(KERNEL_VARIANT) >/dev/null

check: deps
	@$(MAKE) --no-print-directory all kernel
	@tests/run-checks

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
