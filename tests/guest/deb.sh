#!/bin/bash
# The regionpmd Debian package as an operator meets it, in the test VM
# booted with systemd as PID 1 (run-vm --systemd): TAP.
#
#   * "dpkg -i build/deb/regionpmd_*.deb" (built by make check / make deb)
#     into the guest's overlay root: dpkg in the guest changes nothing on
#     the host;
#   * the files are at the FHS paths (dpkg -L), /etc/regionpmd.conf is a
#     conffile, "man regionpmd" finds the page;
#   * dh_installsystemd's postinst enabled and started the unit (the
#     kernel has regionpm, so ConditionPathExists holds);
#   * "systemctl stop", then "systemctl start" reaches active (Type=notify);
#   * "regionpmctl status" works, as root and as nobody (the packaged bus
#     policy lets everyone read);
#   * "systemctl stop" gives every parked region back;
#   * "dpkg --purge regionpmd": no file of the package left, the conffile,
#     the unit and its enablement symlinks gone, systemd no longer knows
#     the unit, dpkg has no record of the package.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/tap.sh"
. "$top/tests/lib/mem.sh"

UNIT=regionpmd.service
CTL=/usr/bin/regionpmctl	# the packaged one (a make install copy in /usr/local would come first in PATH)
export SYSTEMD_PAGER='' SYSTEMD_COLORS=0 PAGER=cat MANPAGER=cat MANWIDTH=100
export DEBIAN_FRONTEND=noninteractive

bail() { tap_fail "$1" "$2"; tap_done; exit 1; }
diag() { sed 's/^/#   /'; }
section() { echo "# ---- $1 (uptime $(cut -d' ' -f1 /proc/uptime) s)"; }
journal() { timeout 60 journalctl -b -u "$UNIT" --no-pager "$@" 2>&1; }
# installed, config-files, ...; empty or not-installed when dpkg has no package
pkg_status() { dpkg-query -W -f='${db:Status-Status}' regionpmd 2>/dev/null; }

if [ "$(cat /proc/1/comm 2>/dev/null)" != systemd ]; then
	bail "PID 1 is systemd" "PID 1 is '$(cat /proc/1/comm 2>/dev/null)': run in run-vm --systemd"
fi
if [ ! -d /sys/module/regionpm/parameters ]; then
	bail "the kernel has regionpm (/sys/module/regionpm/parameters)" "$(uname -r)"
fi
version=$(dpkg-parsechangelog -l "$top/debian/changelog" -S Version 2>/dev/null)
deb=$top/build/deb/regionpmd_${version}_$(dpkg --print-architecture).deb
[ -f "$deb" ] || bail "the package $deb exists" "make check builds it (scripts/build-deb.sh); run 'make deb'"
echo "# $(uname -r), $(systemctl --version | head -1), $(dpkg-deb -f "$deb" Package Version | tr '\n' ' ')"
# The guest's root is the host's: if the host has the package, start from
# a guest without it (the overlay is thrown away at the end).
if [ -n "$(pkg_status)" ] && [ "$(pkg_status)" != not-installed ]; then
	echo "# the host has regionpmd installed ($(pkg_status)); purging it in the guest first"
	dpkg --purge regionpmd 2>&1 | diag
fi
# The host may be a container image whose /usr/sbin/policy-rc.d (Docker's:
# "exit 101") forbids maintainer scripts to start services; it belongs to no
# package.  The guest is a VM with systemd as PID 1, where the postinst's
# start is what an operator gets: drop it in the guest's overlay only.
if [ -e /usr/sbin/policy-rc.d ] && ! dpkg -S /usr/sbin/policy-rc.d >/dev/null 2>&1; then
	echo "# the host's /usr/sbin/policy-rc.d (no package; $(grep -m1 -o 'exit [0-9]*' /usr/sbin/policy-rc.d)) forbids service starts: removed in the guest"
	rm -f /usr/sbin/policy-rc.d
fi
# Files that the purge must leave behind as they were (enablement links
# under /etc/systemd/system, deb-systemd-helper state): what is there now.
snapshot() {
	find /etc/systemd/system /var/lib/systemd/deb-systemd-helper-enabled \
		/var/lib/systemd/deb-systemd-helper-masked -name '*regionpm*' 2>/dev/null | sort
}
before_links=$(snapshot)

# ---- 1. dpkg -i ----------------------------------------------------------------
section "dpkg -i"
bus_up() { systemctl start dbus.service && systemctl is-active dbus.service; }
tap_check "the system bus runs (systemctl start dbus)" bus_up
mem_total0=$(meminfo MemTotal)
install_it() { timeout 600 dpkg -i "$deb"; }
t0=$(date +%s)
if out=$(install_it 2>&1); then
	tap_ok "dpkg -i $(basename "$deb")"
else
	bail "dpkg -i $(basename "$deb")" "$out"
fi
printf '%s\n' "$out" | diag
echo "# dpkg -i took $(( $(date +%s) - t0 )) s"
tap_check "dpkg says regionpmd is installed" test "$(pkg_status)" = installed

# ---- 2. files -------------------------------------------------------------------
section "files"
mapfile -t pkg_files < <(dpkg -L regionpmd | while read -r f; do [ -d "$f" ] || echo "$f"; done)
fhs() {
	local f rc=0
	# /lib is /usr/lib on a merged-/usr system: the unit is found at the
	# path systemd documents either way.
	for f in /usr/sbin/regionpmd /usr/bin/regionpmctl /usr/lib/systemd/system/$UNIT \
		/usr/share/dbus-1/system.d/org.regionpm1.conf \
		/usr/share/dbus-1/system-services/org.regionpm1.service /etc/regionpmd.conf \
		/usr/share/man/man8/regionpmd.8.gz /usr/share/man/man8/regionpmctl.8.gz \
		/usr/share/man/man5/regionpmd.conf.5.gz /usr/share/man/man7/regionpm.7.gz; do
		[ -f "$f" ] || { echo "missing: $f"; rc=1; }
	done
	for f in "${pkg_files[@]}"; do
		[ -e "$f" ] || { echo "dpkg -L lists $f but it is not there"; rc=1; }
	done
	[ -x /usr/sbin/regionpmd ] && [ -x "$CTL" ] || { echo "binaries not executable"; rc=1; }
	echo "${#pkg_files[@]} files"
	return $rc
}
tap_check "files at the FHS paths: /usr/sbin, /usr/bin, /usr/lib/systemd/system, /usr/share/dbus-1, /etc" fhs
tap_check "/etc/regionpmd.conf is a conffile" \
	bash -c "dpkg-query -W -f='\${Conffiles}\n' regionpmd | grep -q '^ /etc/regionpmd.conf '"
tap_check "systemd loads the packaged unit, ExecStart=/usr/sbin/regionpmd" \
	bash -c "systemctl cat $UNIT | grep -qx 'ExecStart=/usr/sbin/regionpmd' &&
		systemctl show -P FragmentPath $UNIT | grep -qE '^(/usr)?/lib/systemd/system/$UNIT\$'"
man_ok() {
	local path
	path=$(man -w regionpmd 2>&1)
	echo "man -w regionpmd: $path"
	[ "$(realpath "$path")" = /usr/share/man/man8/regionpmd.8.gz ] &&
		man regionpmd 2>/dev/null | grep -q 'regionpmd'
}
tap_check "man regionpmd finds the packaged page" man_ok

# ---- 3. the service -------------------------------------------------------------
section "the service"
# postinst (dh_installsystemd): deb-systemd-helper enable, then start.
tap_check "postinst enabled the unit" bash -c "systemctl is-enabled $UNIT | grep -qx enabled"
started_by_postinst() {
	# A Type=notify start under TCG may still be finishing.
	for _ in $(seq 1 60); do
		[ "$(systemctl is-active "$UNIT")" = active ] && return 0
		sleep 1
	done
	systemctl status --no-pager -l "$UNIT"
	journal | tail -20
	return 1
}
tap_check "postinst started the unit (active)" started_by_postinst
tap_check "systemctl stop regionpmd" timeout 120 systemctl stop "$UNIT"
start_active() {
	timeout 120 systemctl start "$UNIT" || { journal | tail -20; return 1; }
	systemctl is-active "$UNIT" | grep -qx active
}
tap_check "systemctl start regionpmd reaches active (Type=notify: after READY=1)" start_active
systemctl status --no-pager -l -n 5 "$UNIT" 2>&1 | diag

ctl_show() { # description user args...: run the packaged regionpmctl, output as diagnostics
	local desc=$1 user=$2 out rc
	shift 2
	if [ "$user" = root ]; then
		out=$(timeout 120 "$CTL" "$@" 2>&1)
	else
		out=$(timeout 120 setpriv --reuid="$user" --regid=nogroup --clear-groups "$CTL" "$@" 2>&1)
	fi
	rc=$?
	if [ "$rc" = 0 ]; then
		tap_ok "$desc"
	else
		tap_fail "$desc" "regionpmctl $* as $user -> exit $rc"
	fi
	echo "# \$ regionpmctl $*  (as $user)"
	printf '%s\n' "$out" | head -40 | diag
}
ctl_show "regionpmctl status (root)" root status
# The packaged bus policy (/usr/share/dbus-1/system.d) lets everyone read.
ctl_show "regionpmctl status as nobody (read-only access through the packaged bus policy)" nobody status

stop_ok() {
	timeout 120 systemctl stop "$UNIT" || return 1
	for _ in 1 2 3 4 5; do
		[ "$(meminfo MemTotal)" = "$mem_total0" ] && break
		sleep 1
	done
	echo "is-active: $(systemctl is-active "$UNIT"); Result=$(systemctl show -P Result "$UNIT"); MemTotal $mem_total0 -> $(meminfo MemTotal) kB"
	[ "$(systemctl is-active "$UNIT")" = inactive ] &&
		[ "$(systemctl show -P Result "$UNIT")" = success ] &&
		[ "$(meminfo MemTotal)" = "$mem_total0" ]
}
tap_check "systemctl stop: clean exit, every parked region given back (MemTotal as before)" stop_ok

# ---- 4. dpkg --purge ---------------------------------------------------------------
section "dpkg --purge"
if out=$(timeout 600 dpkg --purge regionpmd 2>&1); then
	tap_ok "dpkg --purge regionpmd"
else
	tap_fail "dpkg --purge regionpmd" "$out"
fi
printf '%s\n' "$out" | diag
purged() {
	local f rc=0
	for f in "${pkg_files[@]}" /usr/lib/systemd/system/$UNIT /etc/regionpmd.conf; do
		[ -e "$f" ] && { echo "still there: $f"; rc=1; }
	done
	[ "$(snapshot)" = "$before_links" ] ||
		{ echo "enablement links or state left: $(snapshot | tr '\n' ' ')"; rc=1; }
	return $rc
}
tap_check "no file of the package left: binaries, unit, bus files, man pages, conffile, enablement links" purged
gone_for_systemd() {
	local state
	systemctl daemon-reload
	state=$(systemctl show -P LoadState "$UNIT")
	echo "LoadState=$state"
	[ "$state" = not-found ]
}
tap_check "systemd no longer knows the unit (LoadState=not-found)" gone_for_systemd
no_record() {
	local st
	st=$(pkg_status)
	echo "dpkg status: '${st}'"
	[ -z "$st" ] || [ "$st" = not-installed ]
}
tap_check "dpkg: regionpmd is not installed, not even its config files" no_record
tap_check "memory all back after the purge" test "$(meminfo MemTotal)" = "$mem_total0"

tap_done
