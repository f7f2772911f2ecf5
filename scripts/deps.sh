#!/bin/bash
# Install the Debian packages regionpm's build, tests and demo need.
# Idempotent and quiet when everything is already there.
set -euo pipefail

# Each group says who needs it.  A minimal Debian 12 root (mmdebstrap
# --variant=apt + git + make) has only Essential packages and apt:
# coreutils, bash, sed, grep, mawk (awk), findutils, diffutils, tar,
# gzip, util-linux (unshare, flock, setpriv, dmesg, findmnt, pivot_root),
# hostname, ncurses-bin; everything else must be listed here.
# "make check-fresh" runs make check and make demo in such a root and
# finds what is missing.
packages=(
	# kernel source (linux-source-6.12 is in bookworm-security) and the
	# kernel build: gcc/make/libc headers (build-essential), flex, bison,
	# bc, libelf-dev (objtool), libssl-dev (sign-file/extract-cert host
	# tools), cpio, kmod, xz and zstd (unpacking, compressed images),
	# perl (kernel build scripts, checkpatch.pl), python3; patch and git
	# (kernel-src.sh keeps the tree as a private git repository)
	linux-source-6.12 build-essential ccache flex bison bc libelf-dev
	libssl-dev cpio kmod xz-utils zstd git patch perl python3
	# tools/net/ynl (ynl-gen-c.py for make regen, cli.py in the tests):
	# yaml specs, validated with jsonschema
	python3-yaml python3-jsonschema
	# checkpatch.pl's SPDX check (spdxcheck.py), make kernel-series;
	# python3-docutils: checking the admin guide's reStructuredText by
	# hand (docutils); no make target calls it
	python3-ply python3-git python3-docutils
	# headers_install (mm selftests) copies with rsync
	rsync
	# test VM: QEMU (TCG), mkfs.ext4 for the scratch disk; mount, findmnt,
	# pivot_root, setsid in the guest's init (the guest runs the host's
	# root over 9p, so everything the guest tests call is a host package)
	qemu-system-x86 e2fsprogs util-linux mount
	# workloads and judges (the guest runs them from the host's root):
	# stress-ng holds anonymous memory (bench/workload/*.sh), fio does
	# the random reads of the bench's database workload; python3 (above)
	# writes the file server's small files and runs the vmhost guests
	stress-ng fio
	# user space libraries (daemon, CLI) and the unit tests (cmocka)
	pkg-config libmnl-dev libsystemd-dev libcgroup-dev libsmartcols-dev
	libcmocka-dev
	# the fleet metrics tests parse MetricsFile= with the Prometheus
	# client's own parser (operator-files, bus)
	python3-prometheus-client
	# mm selftests (migration)
	libnuma-dev
	# man page lint (mandoc -Tlint) and rendering (man -l: man-db, groff)
	mandoc man-db
	# D-Bus policy check (xmllint)
	libxml2-utils
	# systemd as PID 1 in the VM (systemctl, journalctl, busctl,
	# systemd-analyze), the system bus and private buses in the tests
	# (dbus-daemon; dbus-send, dbus-monitor from dbus-bin)
	systemd systemd-sysv dbus dbus-daemon dbus-bin
	# kill, ps, pgrep: the unit's ExecReload and the guest tests
	procps
	# bench plot (bench/aggregate.py runs gnuplot)
	gnuplot-nox
	# the Debian package: make deb (dpkg-buildpackage; dpkg-dev comes with
	# build-essential), built before make check's package suites, and the
	# lintian check of it (tests/host/test-deb.sh)
	debhelper lintian
)

missing=()
for p in "${packages[@]}"; do
	status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$status" = installed ] || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "[regionpm] installing: ${missing[*]}" >&2
if [ "$(id -u)" != 0 ]; then
	echo "error: need root to install packages (or install them by hand)" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null
apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
