# Guest-side helpers shared by bench/guest-run.sh and the workloads in
# bench/workload/ (sourced, not run).  Everything is sized from
# BENCH_MEM_KB: the boot MemTotal that guest-run.sh exports (a daemon that
# parks regions lowers MemTotal, and the workload must not shrink with it),
# else MemTotal now.
#
#   BENCH_DIR    where workload files go (default /mnt/scratch/bench)
#   BENCH_STATE  state directory: pids, results (default /tmp/bench-state)
#   BENCH_MEM_KB memory size to scale to

BENCH_DIR=${BENCH_DIR:-/mnt/scratch/bench}
BENCH_STATE=${BENCH_STATE:-/tmp/bench-state}
mem_kib=${BENCH_MEM_KB:-$(awk '$1 == "MemTotal:" { print $2 }' /proc/meminfo)}
mkdir -p "$BENCH_DIR" "$BENCH_STATE"

vm() { awk -v k="$1" '$1 == k { print $2 }' /proc/vmstat; }
mi() { awk -v k="$1:" '$1 == k { print $2 }' /proc/meminfo; }
uptime_s() { awk '{ print $1 }' /proc/uptime; }
# The scratch disk: the only block device (the root is 9p).
bench_disk() {
	local d
	for d in /sys/block/vd*; do [ -e "$d/stat" ] && { echo "${d##*/}"; return; }; done
	echo vda
}
sectors_read() { awk '{ print $3 }' "/sys/block/$(bench_disk)/stat"; }

# percent of memory -> KiB / MiB
pct_kib() { echo $((mem_kib * $1 / 100)); }
pct_mib() { echo $((mem_kib * $1 / 100 / 1024)); }

# An anonymous holder: stress-ng --vm-keep --vm-populate of PERCENT of
# memory (KIB if the third argument is "k"), optionally touched once every
# HANG seconds (--vm-hang).  Pid in $BENCH_STATE/holder.NAME.
holder() { # name percent [hang]
	local kib=$((mem_kib * $2 / 100)) extra=()
	[ -n "${3:-}" ] && extra=(--vm-hang "$3")
	stress-ng --vm 1 --vm-bytes "${kib}k" --vm-keep --vm-populate "${extra[@]}" \
		--timeout 3600 --quiet >/dev/null 2>&1 &
	echo $! > "$BENCH_STATE/holder.$1"
}

# The stress-ng worker (a descendant of the parent we started) is what holds
# memory: the parent and all its descendants.
descendants() {
	local c
	echo "$1"
	for c in $(pgrep -P "$1" 2>/dev/null); do descendants "$c"; done
}
holder_pids() { # name
	local p
	p=$(cat "$BENCH_STATE/holder.$1" 2>/dev/null) || return 0
	descendants "$p"
}

wait_populated() { # name percent: wait until the worker's RSS reaches 90 %
	local want=$((mem_kib * $2 / 100 * 9 / 10)) i pid rss
	for i in $(seq 1 240); do
		for pid in $(holder_pids "$1"); do
			rss=$(awk '$1 == "VmRSS:" { print $2 }' "/proc/$pid/status" 2>/dev/null)
			[ "${rss:-0}" -ge "$want" ] && return 0
		done
		sleep 0.5
	done
	echo "bench: holder $1 did not populate" >&2
}

holder_kill() { # name...
	local h
	for h; do
		kill -CONT $(holder_pids "$h") 2>/dev/null
		kill -KILL $(holder_pids "$h") 2>/dev/null
		rm -f "$BENCH_STATE/holder.$h"
	done
}

holders_cleanup() {
	local f
	for f in "$BENCH_STATE"/holder.*; do
		[ -e "$f" ] || continue
		holder_kill "${f##*/holder.}"
	done
}

# Seconds since $1 (a /proc/uptime value), with one decimal.
since() { awk -v t0="$1" '{ printf "%.1f", $1 - t0 }' /proc/uptime; }

# Write KEY=VALUE lines for the hot phase's own throughput measure:
#   hot_work  what was done (bytes read, reads, page touches)
#   hot_unit  its unit
#   hot_rate  hot_work per second
#   hot_set_bytes  the size of the hot set (for the hot set's disk reads)
hot_result() { # work unit seconds hot_set_bytes
	awk -v w="$1" -v u="$2" -v s="$3" -v h="$4" 'BEGIN {
		printf "hot_work=%.0f\nhot_unit=%s\nhot_secs=%.2f\nhot_rate=%.1f\nhot_set_bytes=%.0f\n",
			w, u, s, (s > 0 ? w / s : 0), h
	}' | tee "$BENCH_STATE/hot.out"
}

# Workload command line: fill | free | hot SECS | cleanup
workload_main() {
	case "${1:-}" in
	fill) wl_fill ;;
	free) wl_free ;;
	hot) wl_hot "${2:?hot wants seconds}" ;;
	cleanup) wl_cleanup ;;
	all) wl_fill && wl_free && wl_hot "${2:-40}" ;;
	*) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2 ;;
	esac
}
