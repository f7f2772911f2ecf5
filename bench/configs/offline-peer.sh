#!/bin/bash
# The offline peer (make bench, configuration "offline-peer"): memory power
# management as the research systems did it on stock kernels -- offline
# every memory block that is free enough, online blocks again on pressure.
# No policy beyond that, no page cache handling, no cost model: the
# comparison shows what regionpmd's policy (stock backend) and the kernel
# helper (netlink backend) add.
#
#   offline-peer.sh [STATE_DIR]     runs until killed; every PEER_PERIOD s:
#     * pressure (PSI memory some avg10 > PEER_PSI_PCT, or MemAvailable below
#       PEER_HEADROOM_PCT of the boot MemTotal): online the block it offlined
#       last, one per period;
#     * otherwise offline, highest first, every online block whose pages are
#       at least PEER_FREE_PCT % free per /proc/kpageflags (the judge,
#       build/tools/kpageflags-regions) and hold no slab, page-table or
#       reserved page, while MemAvailable stays above the headroom; the
#       kernel migrates what is left in it.
#   STATE_DIR/offlined lists the blocks it offlined (it never onlines
#   another); STATE_DIR/stats gets "offlined N onlined N failed N".
#   On SIGTERM it onlines everything it offlined.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
judge=$top/build/tools/kpageflags-regions
state=${1:-/tmp/offline-peer}
period=${PEER_PERIOD:-5}
free_pct=${PEER_FREE_PCT:-75}
psi_pct=${PEER_PSI_PCT:-10}
headroom_pct=${PEER_HEADROOM_PCT:-10}
mem=/sys/devices/system/memory
mkdir -p "$state"
: > "$state/offlined"
offlined=0 onlined=0 failed=0

mi() { awk -v k="$1:" '$1 == k { print $2 }' /proc/meminfo; }
psi_some10() { awk '/^some/ { sub("avg10=", "", $2); print int($2) }' /proc/pressure/memory; }
block_kb=$(( 0x$(cat "$mem/block_size_bytes") / 1024 ))
headroom_kb=$(( $(mi MemTotal) * headroom_pct / 100 ))
stats() { echo "offlined $offlined onlined $onlined failed $failed" > "$state/stats"; }

online_last() {
	local b
	b=$(tail -1 "$state/offlined")
	[ -n "$b" ] || return 1
	echo online_movable > "$mem/memory$b/state" 2>/dev/null ||
		echo online > "$mem/memory$b/state" 2>/dev/null || true
	sed -i '$d' "$state/offlined"
	onlined=$((onlined + 1))
}

online_all() {
	while [ -s "$state/offlined" ]; do online_last; done
	stats
	exit 0
}
trap online_all TERM INT

stats
while sleep "$period"; do
	if [ "$(psi_some10)" -gt "$psi_pct" ] || [ "$(mi MemAvailable)" -lt "$headroom_kb" ]; then
		online_last
		stats
		continue
	fi
	# region present free unmovable kernel used (judge table), highest first
	for b in $("$judge" | awk -v pct="$free_pct" '$1 ~ /^[0-9]+$/ && $2 > 0 &&
			$4 == 0 && $3 * 100 >= $2 * pct { print $1 }' | sort -rn); do
		grep -qx online "$mem/memory$b/state" 2>/dev/null || continue
		[ $(( $(mi MemAvailable) - block_kb )) -gt "$headroom_kb" ] || break
		# the kernel retries an offline until a fatal signal: bound it
		if timeout -s KILL 20 sh -c "echo offline > $mem/memory$b/state" 2>/dev/null; then
			echo "$b" >> "$state/offlined"
			offlined=$((offlined + 1))
		else
			failed=$((failed + 1))
		fi
	done
	stats
done
