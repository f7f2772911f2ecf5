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
# $BENCH_STATE/hot.out (bench/lib.sh hot_result): bytes re-read per second.
#
#   BENCH_DIR, BENCH_STATE, BENCH_MEM_KB: see bench/lib.sh (files go to
#   $BENCH_DIR/frag).  The hot phase writes its result to $BENCH_STATE/hot.out.
set -uo pipefail
. "$(dirname "$0")/../lib.sh"
dir=$BENCH_DIR/frag
mkdir -p "$dir"
file_mib=$((mem_kib / 16 / 1024))
NFILES=9

wl_fill() {
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

wl_free() {
	local i
	# every other file, in scattered order
	for i in 8 2 6 4; do rm -f "$dir/f.$i"; done
	# kill two of the three cold holders
	holder_kill cold1 cold3
	sync
	sleep 1
	echo "fragment free: 4 files deleted, 2 cold holders killed"
}

wl_hot() { # seconds
	local secs=$1 t0 now bytes=0 f
	local hotfiles=("$dir/f.1" "$dir/f.3")
	t0=$(date +%s.%N)
	while :; do
		for f in "${hotfiles[@]}"; do
			dd if="$f" of=/dev/null bs=1M status=none
			bytes=$((bytes + file_mib * 1048576))
		done
		now=$(date +%s.%N)
		awk -v a="$now" -v b="$t0" -v s="$secs" 'BEGIN { exit !(a - b >= s) }' && break
	done
	hot_result "$bytes" bytes "$(awk -v a="$now" -v b="$t0" 'BEGIN { print a - b }')" \
		$((2 * file_mib * 1048576))
}

wl_cleanup() {
	holders_cleanup
	rm -rf "$dir"
}

workload_main "$@"
