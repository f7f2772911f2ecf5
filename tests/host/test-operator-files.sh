#!/bin/bash
# The operator's files: man pages, systemd unit, D-Bus policy and activation
# file, make install / uninstall.  Runs as any user, changes nothing outside
# a temporary directory.
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/lib/tap.sh"
cd "$top" || exit 1
tmp=$(mktemp -d)
cleanup() {
	# dbus_accepts runs in tap_check's command substitution (a subshell):
	# the daemon's pid comes back through a file, not a variable.
	[ -s "$tmp/dbus.pid" ] && kill "$(cat "$tmp/dbus.pid")" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

pages=(man/*.[578])

# -- man pages ------------------------------------------------------------
# "-W warning": STYLE notes ("referenced manual not found") are expected for
# pages that are not installed yet.
for p in "${pages[@]}"; do
	tap_check "mandoc -Tlint clean: $p" mandoc -Tlint -W warning "$p"
done
render() { # page: man -l renders it, with no complaint on stderr
	local out err
	out=$(MANWIDTH=80 man -l "$1" 2>"$tmp/man.err") || return 1
	err=$(cat "$tmp/man.err")
	[ -z "$err" ] || { echo "$err"; return 1; }
	[ "$(printf '%s\n' "$out" | wc -l)" -gt 20 ]
}
for p in "${pages[@]}"; do
	tap_check "man -l renders $p" render "$p"
done

# -- D-Bus policy and activation file -------------------------------------
tap_check "xmllint: systemd/org.regionpm1.conf is well-formed" \
	xmllint --noout systemd/org.regionpm1.conf
# dbus-daemon itself must accept it: a private bus that includes the policy.
cat >"$tmp/bus.conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <listen>unix:path=$tmp/bus.sock</listen>
  <auth>EXTERNAL</auth>
  <policy context="default"><allow user="*"/></policy>
  <include>$top/systemd/org.regionpm1.conf</include>
</busconfig>
CONF
dbus_accepts() {
	dbus-daemon --config-file="$tmp/bus.conf" --nofork --print-address=1 \
		>"$tmp/bus.addr" 2>"$tmp/bus.err" &
	dbus_pid=$!
	echo "$dbus_pid" > "$tmp/dbus.pid"
	for _ in $(seq 50); do
		[ -s "$tmp/bus.addr" ] && return 0
		kill -0 "$dbus_pid" 2>/dev/null || break
		sleep 0.1
	done
	cat "$tmp/bus.err"
	return 1
}
tap_check "dbus-daemon accepts the bus policy" dbus_accepts
activation_ok() {
	grep -qx '\[D-BUS Service\]' systemd/org.regionpm1.service &&
	grep -qx 'Name=org.regionpm1' systemd/org.regionpm1.service &&
	grep -qx 'SystemdService=dbus-org.regionpm1.service' systemd/org.regionpm1.service &&
	grep -qx 'BusName=org.regionpm1' systemd/regionpmd.service &&
	grep -qx 'Alias=dbus-org.regionpm1.service' systemd/regionpmd.service
}
tap_check "bus activation through the alias an enabled unit has (dbus-org.regionpm1.service)" activation_ok
# A kernel without the family: exit 6, and systemd must not restart it.
tap_check "RestartPreventExitStatus=6 (no regionpm family) in the unit, exit status 6 in regionpmd(8)" \
	bash -c "grep -qx 'RestartPreventExitStatus=6' systemd/regionpmd.service &&
		 grep -q 'EXIT_NO_KERNEL_SUPPORT 6' daemon/regionpmd.c && grep -q '^\.It 6' man/regionpmd.8"
# Reload is synchronous (the bus method), and needs nothing but systemd.
tap_check "ExecReload calls the bus method Reload with busctl" \
	grep -qx 'ExecReload=/usr/bin/busctl call --timeout=60 org.regionpm1 /org/regionpm1 org.regionpm1.Manager Reload' systemd/regionpmd.service

# -- the metrics format, judged by the Prometheus client's own parser ---------
prom_parses() {
	/usr/bin/python3 -c '
import sys
from prometheus_client.parser import text_string_to_metric_families
fams = list(text_string_to_metric_families(open(sys.argv[1]).read()))
names = [f.name for f in fams]
print(len(fams), "families:", " ".join(names))
assert len(fams) == 12 and all(f.documentation and f.type in ("gauge", "counter") for f in fams)
' daemon/fixtures/metrics/example.prom
}
tap_check "daemon/fixtures/metrics/example.prom (what test-metrics expects) parses as Prometheus text" prom_parses

# -- regionpmd on this host, which has no regionpm family -------------------
# (as root: as another user it stops earlier, at "must run as root").
# Backend=netlink: on a host without the family, auto would pick the stock
# backend and offline the host's own memory blocks.
printf '[Daemon]\nBackend=netlink\n' > "$tmp/netlink.conf"
nofam() { # extra environment for the run; prints stderr
	env "$@" "$top/build/regionpmd" --once -c "$tmp/netlink.conf" 2>"$tmp/rpmd.err" >/dev/null
	local rc=$?
	cat "$tmp/rpmd.err"
	return $rc
}
if [ "$(id -u)" = 0 ] && ! grep -qw regionpm /proc/net/netlink 2>/dev/null &&
	[ ! -d /sys/module/regionpm ]; then
	no_family_exit() {
		local out rc
		out=$(nofam)
		rc=$?
		echo "exit $rc: $out"
		[ "$rc" = 6 ] && printf '%s\n' "$out" | grep -q '^the kernel has no regionpm netlink family'
	}
	tap_check "regionpmd without the regionpm family: exit 6, a plain message on a non-journal stderr" no_family_exit
	journal_prefix() {
		local out
		: >"$tmp/rpmd.err"
		out=$(nofam JOURNAL_STREAM="$(stat -c '%d:%i' "$tmp/rpmd.err")")
		echo "$out"
		printf '%s\n' "$out" | grep -q '^<3>the kernel has no regionpm netlink family'
	}
	tap_check "regionpmd with stderr on the journal (JOURNAL_STREAM matches): <N> priority prefixes" journal_prefix
else
	tap_skip "regionpmd exit 6 without the family" "needs root on a host without regionpm"
fi

# -- make install / uninstall ---------------------------------------------
dest=$tmp/dest
tap_check "make install DESTDIR=... (PREFIX=/usr/local)" \
	make --no-print-directory -s install DESTDIR="$dest"
installed() {
	local f missing=0
	for f in /usr/local/sbin/regionpmd /usr/local/lib/systemd/system/regionpmd.service \
		/etc/dbus-1/system.d/org.regionpm1.conf \
		/usr/local/share/dbus-1/system-services/org.regionpm1.service \
		/etc/regionpmd.conf; do
		[ -f "$dest$f" ] || { echo "missing $f"; missing=1; }
	done
	for p in "${pages[@]}"; do
		f=/usr/local/share/man/man${p##*.}/${p##*/}
		[ -f "$dest$f" ] || { echo "missing $f"; missing=1; }
	done
	return $missing
}
tap_check "everything installed where systemd, dbus-daemon and man look" installed
tap_check "installed unit runs /usr/local/sbin/regionpmd" \
	grep -qx 'ExecStart=/usr/local/sbin/regionpmd' \
	"$dest/usr/local/lib/systemd/system/regionpmd.service"
# systemd-analyze verify: ExecStart must exist, so verify a copy of the
# installed unit that runs the build tree's binary; MANPATH lets it check
# that every Documentation=man: page is installed.
mkdir -p "$tmp/verify"
sed -e "s|^ExecStart=.*|ExecStart=$top/build/regionpmd|" \
	-e "s|^ExecStopPost=[^ ]*|ExecStopPost=$top/build/regionpmd|" \
	"$dest/usr/local/lib/systemd/system/regionpmd.service" >"$tmp/verify/regionpmd.service"
verify() {
	local out
	out=$(MANPATH="$dest/usr/local/share/man" systemd-analyze verify \
		"$tmp/verify/regionpmd.service" 2>&1)
	# The host may lack an unrelated unit's binaries; only our unit counts.
	out=$(printf '%s\n' "$out" | grep -i regionpm)
	[ -z "$out" ] || { echo "$out"; return 1; }
}
tap_check "systemd-analyze verify regionpmd.service (and its man pages)" verify
tap_check "systemd-analyze security: exposure at most 2.0" \
	systemd-analyze security --offline=yes --threshold=20 "$tmp/verify/regionpmd.service"
echo '# changed' >>"$dest/etc/regionpmd.conf"
tap_check "make install keeps an existing /etc/regionpmd.conf" \
	sh -c "make --no-print-directory -s install DESTDIR='$dest' >/dev/null &&
	       grep -q '^# changed' '$dest/etc/regionpmd.conf'"
tap_check "make uninstall DESTDIR=..." make --no-print-directory -s uninstall DESTDIR="$dest"
left() {
	local files
	files=$(cd "$dest" && find . ! -type d | sort)
	[ "$files" = "./etc/regionpmd.conf" ] || { echo "left behind: $files"; return 1; }
	rm "$dest/etc/regionpmd.conf"
	make --no-print-directory -s install DESTDIR="$dest" >/dev/null &&
	make --no-print-directory -s uninstall DESTDIR="$dest" >/dev/null || return 1
	files=$(cd "$dest" && find . ! -type d)
	[ -z "$files" ] || { echo "left behind: $files"; return 1; }
}
tap_check "uninstall leaves only a changed /etc/regionpmd.conf, else nothing" left
prefix_usr() {
	local d=$tmp/usr unitdir
	unitdir=$(pkg-config --variable=systemdsystemunitdir systemd)
	make --no-print-directory -s install PREFIX=/usr DESTDIR="$d" >/dev/null || return 1
	[ -f "$d$unitdir/regionpmd.service" ] &&
	[ -f "$d/usr/share/dbus-1/system.d/org.regionpm1.conf" ] &&
	grep -qx 'ExecStart=/usr/sbin/regionpmd' "$d$unitdir/regionpmd.service" &&
	make --no-print-directory -s uninstall PREFIX=/usr DESTDIR="$d" >/dev/null &&
	[ -z "$(cd "$d" && find . ! -type d)" ]
}
tap_check "PREFIX=/usr: unit dir from pkg-config, policy in /usr/share" prefix_usr
tap_done
