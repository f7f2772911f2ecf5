#!/bin/bash
# Install the Debian packages regionpm's build, tests and demo need.
# Idempotent and quiet when everything is already there.
set -euo pipefail

packages=(
	# kernel source and build
	linux-source-6.12 build-essential ccache flex bison bc libelf-dev
	libssl-dev cpio kmod xz-utils zstd git patch python3 python3-yaml
	# headers_install (mm selftests) copies with rsync
	rsync
	python3-jsonschema python3-ply python3-git python3-docutils
	# test VM
	qemu-system-x86 e2fsprogs util-linux
	# workloads and judges
	stress-ng fio
	# user space libraries (daemon, CLI)
	pkg-config libmnl-dev libsystemd-dev libcgroup-dev libsmartcols-dev
	libinih-dev libcmocka-dev
	# mm selftests (migration)
	libnuma-dev
	# man page lint
	mandoc
	# D-Bus policy check (xmllint)
	libxml2-utils
	# systemd as PID 1 in the VM, private and system buses, man(1) in tests
	systemd systemd-sysv dbus man-db
	# kill, ps, pgrep: the unit's ExecReload and the guest tests
	procps
	# bench plot
	gnuplot-nox
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
