#!/bin/bash
# The converged daemon's own cost, in a guest of bench/daemon-cost.sh: run
# regionpmd (as bench/guest-run.sh does: defaults, metrics file in /run),
# fill and free a workload, let the daemon settle while the hot phase runs,
# then read its CPU time (utime + stime: the kernel's work on its behalf,
# such as rmap walks for idle samples, is in stime), its context switches
# (wake-ups) and its passes over two windows: "hot" with the hot phase
# still running, "idle" after it ended.  The guest's clock counts
# instructions when the host passes --icount, so the shares are of a core
# that runs one instruction per virtual ns, whatever else the host runs.
# Writes KEY VALUE lines to $REGIONPM_VM_OUT.
#
#   daemon-cost-guest.sh WORKLOAD SETTLE_SECS WINDOW_SECS
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
workload=${1:-fragment}
settle=${2:-150}
window=${3:-120}
wl=$top/bench/workload/$workload.sh
[ -x "$wl" ] || { echo "daemon-cost: no workload $wl" >&2; exit 2; }
work=/tmp/daemon-cost
mkdir -p "$work"
export BENCH_STATE=$work/state
export BENCH_MEM_KB=$(awk '$1 == "MemTotal:" { print $2 }' /proc/meminfo)
. "$top/bench/lib.sh"
out=${REGIONPM_VM_OUT:-/dev/stdout}
: > "$work/kv"
put() { echo "$1 $2" >> "$work/kv"; }
log() { echo "[daemon-cost $workload t=$(uptime_s)] $*"; }

printf '[Daemon]\nMetricsFile=/run/regionpmd-cost.prom\n' > "$work/regionpmd.conf"
"$top/build/regionpmd" -v -c "$work/regionpmd.conf" > "$work/regionpmd.log" 2>&1 &
dpid=$!
sleep 5
kill -0 "$dpid" 2>/dev/null || { cat "$work/regionpmd.log" >&2; exit 1; }

hz=$(getconf CLK_TCK)
# "UPTIME TICKS CTXT PASSES" of the daemon now
reading() {
	echo "$(uptime_s)" \
	     "$(awk '{ print $14 + $15 }' "/proc/$dpid/stat")" \
	     "$(awk '/^(non)?voluntary_ctxt_switches:/ { s += $2 } END { print s }' "/proc/$dpid/status")" \
	     "$(grep -c '^pass [0-9]* at' "$work/regionpmd.log")"
}
# The actions the daemon logged between two line numbers, by kind.
actions() { # from to
	sed -n "$(($1 + 1)),$2p" "$work/regionpmd.log" |
		awk '$1 ~ /^(scan|sample-idle|compact|park|unpark|hold)$/ && $2 == "region" { n[$1]++ }
		     END { for (k in n) printf "%s%s=%d", (s++ ? "," : ""), k, n[k]; if (!s) printf "none" }'
}
measure() { # name secs
	local a b l0 l1
	read -r -a a < <(reading)
	l0=$(wc -l < "$work/regionpmd.log")
	sleep "$2"
	read -r -a b < <(reading)
	l1=$(wc -l < "$work/regionpmd.log")
	put "$1.secs" "$(awk -v x="${a[0]}" -v y="${b[0]}" 'BEGIN { printf "%.1f", y - x }')"
	put "$1.ticks" $(( b[1] - a[1] ))
	put "$1.ctxt" $(( b[2] - a[2] ))
	put "$1.passes" $(( b[3] - a[3] ))
	put "$1.actions" "$(actions "$l0" "$l1")"
	log "$1: $(( b[1] - a[1] )) ticks, $(( b[2] - a[2] )) context switches, $(( b[3] - a[3] )) passes in ${2}s"
}

t0=$(uptime_s)
"$wl" fill > /dev/null
"$wl" free > /dev/null
put fill_free_secs "$(awk -v t="$t0" '{ printf "%.1f", $1 - t }' /proc/uptime)"
"$wl" hot $((settle + window + 30)) > /dev/null 2>&1 &
hot_pid=$!
sleep "$settle"
measure hot "$window"
wait "$hot_pid"
sleep 60
measure idle "$window"
put clk_tck "$hz"
put converged "$(grep '^pass [0-9]* at' "$work/regionpmd.log" | tail -1 | grep -c ', converged')"
put parks "$(grep -c ': parked' "$work/regionpmd.log")"
put maxrss_kb "$(awk '$1 == "VmHWM:" { print $2 }' "/proc/$dpid/status")"
kill -TERM "$dpid" 2>/dev/null
wait "$dpid" 2>/dev/null
"$wl" cleanup > /dev/null 2>&1
cat "$work/kv" > "$out"
[ "$out" != /dev/stdout ] && gzip -c "$work/regionpmd.log" > "$out.regionpmd.log.gz"
log done
