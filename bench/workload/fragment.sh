#!/bin/bash
# The fragmenting workload of the benchmark (issue 6); runs in the guest.
#
#   fragment.sh fill            page cache + anonymous memory over all regions
#   fragment.sh free            free a large part of it in scattered order
#   fragment.sh hot SECS        hot phase: re-read the hot file set, touch the
#                               hot anonymous memory, nothing else, for SECS
#   fragment.sh cleanup         kill the holders, remove the files
#   fragment.sh all [SECS]      the three phases in a row (default SECS 40)
#
# Everything is sized from MemTotal, so the same script fits any guest.
# Real tools only: dd writes and reads the files on the ext4 scratch disk
# (real page cache on virtio-blk), stress-ng --vm --vm-keep holds the
# anonymous memory.  Fill (about 85 % of memory in use):
#   * NFILES files of 1/16 of memory each (about 56 %) written with dd and
#     read back, interleaved with
#   * 3 cold anonymous holders of 8 % each (stopped with SIGSTOP once
#     populated: cold memory, no CPU) and one hot holder of 4 %;
# so page cache and anonymous pages alternate over the physical regions.
# Free: every other file deleted, 2 of the 3 cold holders killed (about
# 45 % of memory freed, in scattered physical order).
# Hot: the first two remaining files (1/8 of memory) are re-read with dd in a
# loop, the hot holder touches its pages once a second (stress-ng
# --vm-hang 1); the rest stays untouched.  Results (key=value) go to
# $FRAG_STATE/hot.out: bytes re-read, seconds, MB/s.
#
#   FRAG_DIR    where the files go (default /mnt/scratch/frag)
#   FRAG_STATE  state directory: pids, results (default /tmp/frag-state)
#   FRAG_MEM_KB memory size to scale to (default MemTotal now)
set -uo pipefail
dir=${FRAG_DIR:-/mnt/scratch/frag}
state=${FRAG_STATE:-/tmp/frag-state}
mkdir -p "$dir" "$state"

# Sized from FRAG_MEM_KB when given (the boot MemTotal: a daemon that parks
# regions lowers MemTotal), else from MemTotal now.
mem_kib=${FRAG_MEM_KB:-$(awk '$1 == "MemTotal:" { print $2 }' /proc/meminfo)}
file_mib=$((mem_kib / 16 / 1024))
NFILES=9

holder() { # name percent-of-memory [hang]
	local kib=$((mem_kib * $2 / 100)) extra=()
	[ -n "${3:-}" ] && extra=(--vm-hang "$3")
	stress-ng --vm 1 --vm-bytes "${kib}k" --vm-keep --vm-populate "${extra[@]}" \
		--timeout 3600 --quiet >/dev/null 2>&1 &
	echo $! > "$state/holder.$1"
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
	p=$(cat "$state/holder.$1" 2>/dev/null) || return 0
	descendants "$p"
}

wait_populated() { # name percent: wait until the worker's RSS reaches 90 %
	local want=$((mem_kib * $2 / 100 * 9 / 10)) i pid rss
	for i in $(seq 1 60); do
		for pid in $(holder_pids "$1"); do
			rss=$(awk '$1 == "VmRSS:" { print $2 }' "/proc/$pid/status" 2>/dev/null)
			[ "${rss:-0}" -ge "$want" ] && return 0
		done
		sleep 0.5
	done
	echo "fragment: holder $1 did not populate" >&2
}

fill() {
	local i h=0
	echo "fragment fill: MemTotal ${mem_kib} kB, $NFILES files of ${file_mib} MiB, anon 3 x 8 % cold + 4 % hot"
	for i in $(seq 1 "$NFILES"); do
		dd if=/dev/zero of="$dir/f.$i" bs=1M count="$file_mib" conv=fsync status=none ||
			{ echo "fragment: dd failed" >&2; return 1; }
		# an anonymous holder after every other file
		if [ $((i % 2)) = 0 ] && [ "$h" -lt 3 ]; then
			h=$((h + 1))
			holder "cold$h" 8
			wait_populated "cold$h" 8
			kill -STOP $(holder_pids "cold$h") 2>/dev/null
		fi
		if [ "$i" = 3 ]; then
			holder hot 4 1
			wait_populated hot 4
		fi
	done
	# read everything back: the files are page cache now, clean
	cat "$dir"/f.* > /dev/null
}

free_part() {
	local i
	# every other file, in scattered order
	for i in 8 2 6 4; do rm -f "$dir/f.$i"; done
	# kill two of the three cold holders
	for h in cold1 cold3; do
		kill -KILL $(holder_pids "$h") 2>/dev/null
		rm -f "$state/holder.$h"
	done
	sync
	sleep 1
	echo "fragment free: 4 files deleted, 2 cold holders killed"
}

hot() { # seconds
	local secs=$1 t0 now bytes=0 n=0 f
	local hotfiles=("$dir/f.1" "$dir/f.3")
	t0=$(date +%s.%N)
	while :; do
		for f in "${hotfiles[@]}"; do
			dd if="$f" of=/dev/null bs=1M status=none
			bytes=$((bytes + file_mib * 1048576))
			n=$((n + 1))
		done
		now=$(date +%s.%N)
		awk -v a="$now" -v b="$t0" -v s="$secs" 'BEGIN { exit !(a - b >= s) }' && break
	done
	awk -v a="$now" -v b="$t0" -v by="$bytes" -v n="$n" 'BEGIN {
		d = a - b
		printf "hot_bytes=%d\nhot_secs=%.2f\nhot_reads=%d\nhot_mbps=%.1f\n", by, d, n, by / 1048576 / d
	}' | tee "$state/hot.out"
}

cleanup() {
	local f
	for f in "$state"/holder.*; do
		[ -e "$f" ] || continue
		kill -CONT $(holder_pids "${f##*/holder.}") 2>/dev/null
		kill -KILL $(holder_pids "${f##*/holder.}") 2>/dev/null
		rm -f "$f"
	done
	rm -rf "$dir"
}

case "${1:-}" in
fill) fill ;;
free) free_part ;;
hot) hot "${2:?hot wants seconds}" ;;
cleanup) cleanup ;;
all) fill && free_part && hot "${2:-40}" ;;
*) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2 ;;
esac
