#!/bin/bash
# regionpmd.service with the stock backend on the stock kernel, systemd as
# PID 1 (run-vm --systemd --variant stock): TAP.
#
#   * make install, the unit starts on a kernel without regionpm (its
#     ConditionPathExists= takes memory blocks too), the journal names the
#     stock backend, regionpmctl status shows it and what it cannot do;
#   * the daemon offlines empty blocks of the idle guest;
#   * "systemctl kill -s KILL": ExecStopPost= (regionpmd --restore) brings
#     MemTotal back to its value before the daemon within 5 s, before
#     Restart= starts a new daemon;
#   * "systemctl stop" leaves every block online; make uninstall.
#
#   REGIONPM_E2E_PARK_WAIT  seconds allowed for the daemon to offline (default 120)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/tap.sh"
. "$top/tests/lib/mem.sh"

WAIT=${REGIONPM_E2E_PARK_WAIT:-120}
UNIT=regionpmd.service
RECORD=/run/regionpmd/offlined-blocks
export SYSTEMD_PAGER='' SYSTEMD_COLORS=0 PAGER=cat

bail() { tap_fail "$1" "$2"; tap_done; exit 1; }
journal() { timeout 60 journalctl -b -u "$UNIT" --no-pager "$@" 2>&1; }
recorded() { [ -s "$RECORD" ] && wc -l < "$RECORD" || echo 0; }

[ "$(cat /proc/1/comm 2>/dev/null)" = systemd ] ||
	bail "PID 1 is systemd" "run in run-vm --systemd"
[ ! -d /sys/module/regionpm ] || bail "a kernel without regionpm" "$(uname -r): --variant stock"
echo "# $(uname -r), $(systemctl --version | head -1)"
echo 0 > /proc/sys/vm/compaction_proactiveness 2>/dev/null

tap_check "make install (PREFIX=/usr/local)" make -C "$top" install PREFIX=/usr/local
tap_check "ExecStopPost= runs regionpmd --restore" \
	grep -qx 'ExecStopPost=/usr/local/sbin/regionpmd --restore' /usr/local/lib/systemd/system/$UNIT
systemctl daemon-reload
systemctl start dbus.service
systemctl reload dbus.service 2>/dev/null
mem_total0=$(meminfo MemTotal)

tap_check "systemctl start regionpmd on a kernel without regionpm" timeout 120 systemctl start "$UNIT"
tap_check "the journal names the stock backend" bash -c "journalctl -b -u $UNIT --no-pager | grep -q 'stock backend'"
status_ok() {
	local out
	out=$(timeout 30 regionpmctl status 2>&1)
	echo "$out" | head -4
	echo "$out" | grep -q '^Backend: *stock' && echo "$out" | grep -q 'cannot: .*migrate'
}
tap_check "regionpmctl status: Backend stock, and what it cannot do" status_ok

wait_offline() {
	local i
	for i in $(seq 1 $((WAIT / 2))); do
		[ "$(recorded)" -gt 0 ] && [ "$(meminfo MemTotal)" -lt "$mem_total0" ] && return 0
		sleep 2
	done
	journal | tail -20
	return 1
}
tap_check "the daemon offlines blocks of the idle guest" wait_offline
echo "# offline: recorded $(recorded), MemTotal $mem_total0 -> $(meminfo MemTotal) kB"

kill_restore() {
	local t0 now ms
	t0=$(date +%s%N)
	systemctl kill -s KILL "$UNIT" || return 1
	while :; do
		now=$(date +%s%N)
		ms=$(( (now - t0) / 1000000 ))
		[ "$(meminfo MemTotal)" = "$mem_total0" ] && break
		[ "$ms" -gt 5000 ] && { echo "MemTotal $(meminfo MemTotal) after $ms ms"; journal | tail -15; return 1; }
		sleep 0.1
	done
	echo "MemTotal back to $mem_total0 kB $ms ms after SIGKILL"
	journal | grep -E 'onlining|online again' | tail -3
	journal | grep -q 'onlining .* memory block'
}
tap_check "systemctl kill -s KILL: ExecStopPost= onlines every block within 5 s" kill_restore

# Restart=on-failure brings a new daemon; then a clean stop.
sleep 8
stop_ok() {
	timeout 120 systemctl stop "$UNIT" || return 1
	echo "after stop: MemTotal $(meminfo MemTotal) kB (before $mem_total0), recorded $(recorded)"
	[ "$(meminfo MemTotal)" = "$mem_total0" ] && [ "$(recorded)" = 0 ]
}
tap_check "systemctl stop: every block online, nothing recorded" stop_ok
tap_check "make uninstall" make -C "$top" uninstall PREFIX=/usr/local
tap_done
