# regionpm: top-level build.
#
#   make              user space (daemon, CLI, test programs)
#   make kernel       patched Linux 6.12 test kernel (cached; KERNEL_VARIANT=debug,
#                     KERNEL_VARIANT=stock: the same source without the series)
#   make check        everything, unit tests, then the in-VM tests
#   make demo         the main job (see README.md)
#   make bench        the benchmark of docs/benchmarks.md (hours: see there)
#   make vm-shell     interactive guest on the test kernel
#   make deps         install the Debian packages needed (idempotent)
#   make deb          the regionpmd Debian package in build/deb/ (debian/)
#   make check-fresh  make check + make demo in a fresh minimal Debian 12 root (slow)
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
	$(BUILD)/tools/regionpm-dumpbench $(BUILD)/tools/regionpm-releasebench \
	$(BUILD)/tools/policybench $(BUILD)/tools/allocbench

.PHONY: all kernel kernel-src check check-debug demo bench vm-shell deps clean \
	distclean-cache regen regen-check kernel-series mm-selftests check-fresh deb

all: daemon $(TEST_PROGS) mm-selftests

# ---- regionpmd -------------------------------------------------------------
# daemon/regionpmd.c is the entry point, daemon/test-*.c are unit tests
# (cmocka, TAP output), everything else in daemon/ goes into one static
# library that both link.  Libraries are found with pkg-config.
DAEMON_PKGS := libmnl libsystemd libcgroup smartcols
DAEMON_MAIN := daemon/regionpmd.c
DAEMON_TEST_SRCS := $(wildcard daemon/test-*.c)
CTL_MAIN := daemon/regionpmctl.c
DAEMON_LIB_SRCS := $(filter-out $(DAEMON_MAIN) $(CTL_MAIN) $(DAEMON_TEST_SRCS),$(wildcard daemon/*.c))
DAEMON_LIB_OBJS := $(DAEMON_LIB_SRCS:daemon/%.c=$(BUILD)/daemon/%.o)
DAEMON_TESTS := $(DAEMON_TEST_SRCS:daemon/%.c=$(BUILD)/daemon/%)
DAEMON_CFLAGS = $(shell pkg-config --cflags $(DAEMON_PKGS)) -D_GNU_SOURCE -MMD -MP
DAEMON_LIBS = $(shell pkg-config --libs $(DAEMON_PKGS))

.PHONY: daemon
daemon: $(if $(wildcard $(DAEMON_MAIN)),$(BUILD)/regionpmd) \
	$(if $(wildcard $(CTL_MAIN)),$(BUILD)/regionpmctl) $(DAEMON_TESTS)

$(BUILD)/daemon/%.o: daemon/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(DAEMON_CFLAGS) $(CFLAGS) -c -o $@ $<

$(BUILD)/daemon/libregionpmd.a: $(DAEMON_LIB_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

$(BUILD)/regionpmd: $(BUILD)/daemon/regionpmd.o $(BUILD)/daemon/libregionpmd.a
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(DAEMON_LIBS) -lm

# regionpmctl: a D-Bus client (names in daemon/bus-api.h); of the daemon it
# links only the netlink message parser and the /proc parsers, for "check".
$(BUILD)/regionpmctl: $(BUILD)/daemon/regionpmctl.o $(BUILD)/daemon/genl.o $(BUILD)/daemon/procfs-util.o
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(shell pkg-config --libs libsystemd libmnl smartcols)

$(BUILD)/daemon/test-%: $(BUILD)/daemon/test-%.o $(BUILD)/daemon/libregionpmd.a
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(DAEMON_LIBS) $(shell pkg-config --libs cmocka) -lm

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

$(BUILD)/tools/regionpm-dumpbench: tests/tools/regionpm-dumpbench.c tests/tools/rpm-tool.h include/uapi/linux/regionpm.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(shell pkg-config --libs libmnl)

$(BUILD)/tools/allocbench: tests/tools/allocbench.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $<

# The policy's pass time on large fixtures (host only, part of make bench).
$(BUILD)/tools/policybench: tests/tools/policybench.c daemon/policy.c daemon/policy.h daemon/region.h \
		daemon/reclaim-rate.c daemon/reclaim-rate.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ tests/tools/policybench.c daemon/policy.c daemon/reclaim-rate.c

$(BUILD)/tools/regionpm-releasebench: tests/tools/regionpm-releasebench.c tests/tools/rpm-tool.h include/uapi/linux/regionpm.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(shell pkg-config --libs libmnl)

mm-selftests: | kernel-src
	@scripts/build-mm-selftests.sh $(BUILD)/mm-selftests

# Generated from the netlink spec with the kernel's ynl-gen-c.py.
regen:
	@scripts/regen.sh

regen-check:
	@scripts/regen.sh --check

# git format-patch series against the 6.12.y source Debian ships (linux-source-6.12,
# 6.12.118 here; it needs a 6.12.y with __rmqueue_claim(), not 6.12.0),
# checked by checkpatch.pl --strict.
kernel-series:
	@scripts/kernel-series.sh $(BUILD)/kernel-series

deps:
	@scripts/deps.sh

kernel:
	@scripts/kernel-build.sh $(KERNEL_VARIANT) >/dev/null

# The package is built before the suites that test it (test-deb.sh on the
# host, deb.sh in the VM); build-deb.sh does nothing when its inputs did
# not change.
check: deps
	@$(MAKE) --no-print-directory all kernel
	@scripts/kernel-build.sh stock >/dev/null
	@scripts/build-deb.sh >/dev/null
	@tests/run-checks

# The kselftest once more on the debug kernel (lockdep, KASAN, DEBUG_VM,
# DEBUG_PAGEALLOC) with the bias on: run-vm fails the suite on any splat in
# the console.
check-debug: deps
	@$(MAKE) --no-print-directory all
	@scripts/kernel-build.sh debug >/dev/null
	@REGIONPM_SUITES=kernel-regionpm-debug tests/run-checks

demo: deps
	@$(MAKE) --no-print-directory all kernel
	@scripts/demo.sh

# Four workloads x two sizes under six configurations in fresh VMs, side by
# side (BENCH_WORKLOADS, BENCH_SIZES, BENCH_CONFIGS select a part): tables,
# bench/results/<stamp>.json and .png (docs/benchmarks.md).
bench: deps
	@$(MAKE) --no-print-directory all kernel
	@echo "policy pass time (host, fixtures; issue 9 asks <= 2 ms at 4096 regions):"
	@$(BUILD)/tools/policybench
	@bench/run-bench.sh
	@bench/alloc-bench.sh
	@bench/daemon-cost.sh

# The regionpmd package (debian/), built by dpkg-buildpackage in a copy of
# the tree under build/deb/src: user space only, the cmocka unit tests run
# in dh_auto_test.  The .deb lands in build/deb/; lintian runs on a rebuild.
deb:
	@REGIONPM_DEB_LINTIAN=1 scripts/build-deb.sh

# The README's two commands in a minimal Debian 12 root built with
# mmdebstrap (git and make only), from a clone of the committed HEAD, with a
# cold cache: finds every package "make deps" forgets.  A full cold kernel
# build and every test: not part of make check.  Root only.
check-fresh:
	@scripts/fresh-machine.sh

vm-shell: kernel
	@tests/vm/run-vm --variant $(KERNEL_VARIANT) --mem $(VM_MEM) --cpus $(VM_CPUS) --shell

clean:
	rm -rf $(BUILD)

# Drops the cached kernel source, build trees and ccache (slow to rebuild).
distclean-cache:
	rm -rf $(REGIONPM_CACHE)

# ---- install / uninstall ---------------------------------------------------
# make install [PREFIX=/usr/local] [DESTDIR=]
#
# PREFIX=/usr/local (the default): units go to /usr/local/lib/systemd/system,
# which systemd searches (systemd-analyze unit-paths), so "systemctl enable
# regionpmd" works after "systemctl daemon-reload".  PREFIX=/usr: the unit
# directory comes from pkg-config systemd.  Any other prefix: the unit is
# installed under it but systemd will not find it by itself.
# dbus-daemon reads bus policies only from /usr/share/dbus-1/system.d and
# /etc/dbus-1/system.d, so with a PREFIX other than /usr the policy goes to
# /etc/dbus-1/system.d.  Activation files are read from
# /usr/local/share/dbus-1/system-services as well.
# The daemon reads /etc/regionpmd.conf (compiled in); an example is installed
# there only if no such file exists, and uninstall removes it only if it is
# still unchanged.
PREFIX ?= /usr/local
DESTDIR ?=
INSTALL ?= install
SYSCONFDIR ?= /etc
sbindir := $(PREFIX)/sbin
bindir := $(PREFIX)/bin
datadir := $(PREFIX)/share
mandir := $(datadir)/man
SYSTEMDUNITDIR ?= $(if $(filter /usr,$(PREFIX)),$(or $(shell pkg-config --variable=systemdsystemunitdir systemd 2>/dev/null),/lib/systemd/system),$(PREFIX)/lib/systemd/system)
DBUSPOLICYDIR ?= $(if $(filter /usr,$(PREFIX)),$(datadir),$(SYSCONFDIR))/dbus-1/system.d
DBUSSERVICEDIR ?= $(datadir)/dbus-1/system-services
MAN_PAGES := $(wildcard man/*.[578])
INSTALL_CTL := $(wildcard $(BUILD)/regionpmctl)

.PHONY: install uninstall
install: $(BUILD)/regionpmd
	$(INSTALL) -d $(DESTDIR)$(sbindir) $(DESTDIR)$(SYSTEMDUNITDIR) \
		$(DESTDIR)$(DBUSPOLICYDIR) $(DESTDIR)$(DBUSSERVICEDIR) \
		$(DESTDIR)$(mandir)/man5 $(DESTDIR)$(mandir)/man7 $(DESTDIR)$(mandir)/man8 \
		$(DESTDIR)$(SYSCONFDIR)
	$(INSTALL) -m 0755 $(BUILD)/regionpmd $(DESTDIR)$(sbindir)/regionpmd
	$(if $(INSTALL_CTL),$(INSTALL) -d $(DESTDIR)$(bindir))
	$(if $(INSTALL_CTL),$(INSTALL) -m 0755 $(INSTALL_CTL) $(DESTDIR)$(bindir)/regionpmctl)
	sed 's|@sbindir@|$(sbindir)|g' systemd/regionpmd.service > $(DESTDIR)$(SYSTEMDUNITDIR)/regionpmd.service.tmp
	chmod 0644 $(DESTDIR)$(SYSTEMDUNITDIR)/regionpmd.service.tmp
	mv -f $(DESTDIR)$(SYSTEMDUNITDIR)/regionpmd.service.tmp $(DESTDIR)$(SYSTEMDUNITDIR)/regionpmd.service
	$(INSTALL) -m 0644 systemd/org.regionpm1.conf $(DESTDIR)$(DBUSPOLICYDIR)/org.regionpm1.conf
	$(INSTALL) -m 0644 systemd/org.regionpm1.service $(DESTDIR)$(DBUSSERVICEDIR)/org.regionpm1.service
	for p in $(MAN_PAGES); do \
		$(INSTALL) -m 0644 $$p $(DESTDIR)$(mandir)/man$${p##*.}/$${p##*/} || exit 1; \
	done
	@if [ -e $(DESTDIR)$(SYSCONFDIR)/regionpmd.conf ]; then \
		echo "keeping existing $(DESTDIR)$(SYSCONFDIR)/regionpmd.conf"; \
	else \
		echo "$(INSTALL) -m 0644 systemd/regionpmd.conf.example $(DESTDIR)$(SYSCONFDIR)/regionpmd.conf"; \
		$(INSTALL) -m 0644 systemd/regionpmd.conf.example $(DESTDIR)$(SYSCONFDIR)/regionpmd.conf; \
	fi
	@echo "installed; now: systemctl daemon-reload && systemctl enable --now regionpmd"

uninstall:
	rm -f $(DESTDIR)$(sbindir)/regionpmd $(DESTDIR)$(bindir)/regionpmctl \
		$(DESTDIR)$(SYSTEMDUNITDIR)/regionpmd.service \
		$(DESTDIR)$(DBUSPOLICYDIR)/org.regionpm1.conf \
		$(DESTDIR)$(DBUSSERVICEDIR)/org.regionpm1.service
	for p in $(MAN_PAGES); do rm -f $(DESTDIR)$(mandir)/man$${p##*.}/$${p##*/}; done
	@if cmp -s systemd/regionpmd.conf.example $(DESTDIR)$(SYSCONFDIR)/regionpmd.conf; then \
		echo "rm -f $(DESTDIR)$(SYSCONFDIR)/regionpmd.conf"; \
		rm -f $(DESTDIR)$(SYSCONFDIR)/regionpmd.conf; \
	elif [ -e $(DESTDIR)$(SYSCONFDIR)/regionpmd.conf ]; then \
		echo "keeping $(DESTDIR)$(SYSCONFDIR)/regionpmd.conf (changed)"; \
	fi
